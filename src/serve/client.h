// A client of a running `kernrl serve`, for `kernrl eval --server URL` (docs/serve.md, "eval
// through a running service"): one POST /v1/grade, synchronous, over HTTP/1.1.
#pragma once

#include <optional>
#include <string>

namespace kernrl::serve {

struct ClientReply {
  int status = 0;    // the HTTP status
  std::string body;  // the answer's body
};

// POSTs `body` (JSON) to `path` of the server at `url` (http://HOST:PORT, no path), with the bearer
// `token` when not empty, waiting at most `timeout_s` for the answer. nullopt, with *unreachable
// set, when no connection could be made (nothing was sent: the caller may grade by itself);
// throws std::runtime_error when the exchange failed after it was sent, and UsageError for a URL
// kernrl cannot use.
std::optional<ClientReply> post_json(const std::string& url, const std::string& path,
                                     const std::string& body, const std::string& token,
                                     double timeout_s, std::string* unreachable);

}  // namespace kernrl::serve
