// The checks every HTTP request (and WebSocket upgrade) of `kernrl serve` passes once its header
// is read and before any of its body is: the method, the header's size and shape, the transfer
// coding, the Host and Origin a browser sends, the bearer token and the body's media type
// (docs/security.md, "The service"). A request that fails one is answered and its connection
// closed without its body being read.
#pragma once

// Boost 1.74's Beast headers use std::uint32_t without including <cstdint> (g++ 13 no longer
// pulls it in), so it comes first.
#include <cstdint>
// clang-format off
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
// clang-format on
#include <optional>
#include <string>
#include <vector>

#include "serve/api.h"

namespace kernrl::serve {

// Header fields a request may carry (its bytes are bounded by the header limit too).
constexpr size_t kMaxHeaderFields = 100;
// Bytes of chunk extensions over all the chunks of one request body.
constexpr size_t kMaxChunkExtensions = 4096;

struct GuardOptions {
  std::string token;                         // bearer token; empty: none
  std::vector<std::string> allowed_origins;  // Origin values allowed ("*": any)
  // Host names (without port) a request may name; empty: any (a non-loopback bind).
  std::vector<std::string> allowed_hosts;
};

// The names a loopback bind answers to: localhost, 127.0.0.1, [::1] and `host` itself, plus
// `extra` (--allow-host), lower case.
std::vector<std::string> loopback_hosts(const std::string& host,
                                        const std::vector<std::string>& extra);

// The Host header's name without its port, lower case, without a trailing dot ("[::1]:8000" ->
// "[::1]").
std::string host_name(const std::string& host_header);

// The refusal for a request header, or nothing when it may be read on.
std::optional<HttpResponse> check_request_head(const boost::beast::http::request_header<>& h,
                                               const GuardOptions& opt);

// A refusal as the endpoint named by `target` writes its errors: kernrl's {"error": {code,
// message}} under /v1, OpenEnv's {"detail": message} elsewhere.
HttpResponse refusal(const std::string& target, int status, const std::string& code,
                     const std::string& message);

}  // namespace kernrl::serve
