#include "serve/client.h"

// Boost 1.74's Beast headers use std::uint32_t without including <cstdint> (g++ 13 no longer
// pulls it in), so it comes first.
#include <cstdint>
// clang-format off
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on
#include <chrono>

#include "core/errors.h"

namespace kernrl::serve {
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

struct Address {
  std::string host, port;
};

// http://HOST[:PORT] (a trailing slash allowed); nothing else.
Address parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0)
    throw UsageError("--server " + url + ": expected http://HOST:PORT");
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty() || rest.find('/') != std::string::npos)
    throw UsageError("--server " + url + ": expected http://HOST:PORT, without a path");
  Address a{rest, "80"};
  size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']') == std::string::npos) {
    a.host = rest.substr(0, colon);
    a.port = rest.substr(colon + 1);
  }
  if (a.host.empty() || a.port.empty())
    throw UsageError("--server " + url + ": expected http://HOST:PORT");
  return a;
}

}  // namespace

std::optional<ClientReply> post_json(const std::string& url, const std::string& path,
                                     const std::string& body, const std::string& token,
                                     double timeout_s, std::string* unreachable) {
  Address a = parse_url(url);
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  try {
    tcp::resolver resolver(io);
    stream.expires_after(std::chrono::seconds(5));
    stream.connect(resolver.resolve(a.host, a.port));
  } catch (const std::exception& e) {
    *unreachable = "no kernrl serve at " + url + ": " + e.what();
    return std::nullopt;
  }
  http::request<http::string_body> req{http::verb::post, path, 11};
  req.set(http::field::host, a.host);
  req.set(http::field::content_type, "application/json");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.body() = body;
  req.prepare_payload();
  stream.expires_after(std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000)));
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256u << 20);
  http::read(stream, buffer, parser);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  ClientReply r;
  r.status = static_cast<int>(parser.get().result_int());
  r.body = parser.get().body();
  return r;
}

}  // namespace kernrl::serve
