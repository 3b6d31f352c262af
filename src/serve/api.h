// The HTTP side of `kernrl serve`, apart from the network: OpenEnv's endpoints (/health,
// /metadata, /schema, /state, /reset, /step) and kernrl's own (/v1/..., /metrics), as functions of
// a request that answer through a Responder.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "serve/service.h"

namespace kernrl::serve {

// Items a POST /v1/grade-batch may hold.
constexpr size_t kMaxBatchItems = 1024;

struct HttpRequest {
  std::string method;  // GET, POST, ...
  std::string target;  // path and query, as sent
  std::string body;
  std::string authorization;  // the Authorization header
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// How an answer goes back: one reply, or a stream of chunks (a batch's records as they finish).
// Every call may come from any thread; the transport keeps them in order.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void reply(HttpResponse r) = 0;
  virtual void start_stream(int status, const std::string& content_type) = 0;
  virtual void chunk(std::string data) = 0;
  virtual void end_stream() = 0;
};

// Handles one request. `token`: the bearer token every endpoint but GET /health requires (empty:
// none).
void handle_http(Service& svc, const std::string& token, const HttpRequest& req,
                 const std::shared_ptr<Responder>& out);

// True when `authorization` carries the token (constant time), or when no token is set.
bool authorized(const std::string& token, const std::string& authorization);

// The endpoint a target names, for metrics ("/v1/problems/{id}", "other", ...).
std::string endpoint_name(const std::string& method, const std::string& target);

// A grade request of kernrl's API (POST /v1/grade, a batch item, a --stdio line):
// {"source", "problem"?, "label"?, "seed"?, "sample"?, "timeout_s"?}; `extra_keys` are allowed
// too (e.g. "id" for --stdio). False with *error (naming the field) when it is not valid; an
// unknown problem sets *not_found.
bool parse_grade_request(const nlohmann::json& j, const ProblemCatalog& problems,
                         const std::vector<std::string>& extra_keys, GradeRequest* out,
                         std::string* error, bool* not_found);

// The same with the request's `suite` (a suite the service offers; absent: its default
// problems): the problem is looked up in that suite and the request graded on it.
bool parse_grade_request(const nlohmann::json& j, const Service& svc,
                         const std::vector<std::string>& extra_keys, GradeRequest* out,
                         std::string* error, bool* not_found);

// A GradeResult that is not Graded as kernrl's API writes it: {"code", "reason", "message"}.
nlohmann::json api_error(const GradeResult& r);

}  // namespace kernrl::serve
