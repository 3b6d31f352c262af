#include "serve/api.h"

#include <atomic>
#include <cctype>
#include <climits>
#include <cstring>
#include <map>
#include <random>

#include "record/trace_file.h"
#include "serve/api_prompt.h"
#include "serve/openenv.h"

namespace kernrl::serve {
using nlohmann::json;

namespace {

// "%41" -> "A"; a malformed escape is kept as it is.
std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Target {
  std::string path;
  std::map<std::string, std::string> query;
};

Target split_target(const std::string& target) {
  Target t;
  size_t q = target.find('?');
  t.path = target.substr(0, q);
  if (t.path.size() > 1 && t.path.back() == '/') t.path.pop_back();
  if (q == std::string::npos) return t;
  std::string rest = target.substr(q + 1);
  for (size_t pos = 0; pos <= rest.size();) {
    size_t amp = rest.find('&', pos);
    std::string kv = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = kv.find('=');
    if (!kv.empty())
      t.query[percent_decode(kv.substr(0, eq))] =
          eq == std::string::npos ? "" : percent_decode(kv.substr(eq + 1));
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return t;
}

HttpResponse json_response(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = json_line(body);
  return r;
}

// OpenEnv's endpoints answer errors as FastAPI does: {"detail": ...}.
HttpResponse detail(int status, const json& what, const json& extra = json::object()) {
  json body = {{"detail", what}};
  for (const auto& [k, v] : extra.items()) body[k] = v;
  return json_response(status, body);
}

// kernrl's endpoints: {"error": {"code", "message"}}.
HttpResponse api_failure(int status, const std::string& code, const std::string& message) {
  return json_response(status, {{"error", {{"code", code}, {"message", message}}}});
}

int status_for(const GradeResult& r) {
  switch (r.kind) {
    case GradeResult::Refused:
    case GradeResult::Stopped:
      return 503;
    case GradeResult::Expired:
      return 504;
    default:
      return 500;
  }
}

void add_retry_after(HttpResponse& r, const GradeResult& g) {
  if (g.kind == GradeResult::Refused) r.headers.emplace_back("Retry-After", "1");
}

// FastAPI's answer to a body that is not JSON.
HttpResponse json_invalid(const std::string& what) {
  return detail(422, json::array({{{"type", "json_invalid"},
                                   {"loc", {"body"}},
                                   {"msg", "JSON decode error"},
                                   {"ctx", {{"error", what}}}}}));
}

json body_loc(json errors, std::initializer_list<const char*> prefix) {
  for (auto& e : errors) {
    json loc = json::array();
    for (const char* p : prefix) loc.push_back(p);
    for (const auto& l : e["loc"]) loc.push_back(l);
    e["loc"] = loc;
  }
  return errors;
}

// POST /reset: OpenEnv's ResetRequest ({seed?, episode_id?, ...}, here with problem_id).
HttpResponse http_reset(Service& svc, const std::string& body) {
  json j = json::object();
  if (!body.empty()) {
    try {
      j = parse_client_json(body);
    } catch (const std::exception& e) {
      return json_invalid(e.what());
    }
  }
  json errors = json::array();
  if (!j.is_object()) {
    errors.push_back(
        {{"type", "model_attributes_type"},
         {"loc", {"body"}},
         {"msg", "Input should be a valid dictionary or object to extract fields from"},
         {"input", small_input(j)}});
    return detail(422, errors);
  }
  if (j.contains("seed") && !j["seed"].is_null() && !is_seed(j["seed"]))
    errors.push_back({{"type", "int_type"},
                      {"loc", {"body", "seed"}},
                      {"msg", "Input should be a non-negative integer"},
                      {"input", small_input(j["seed"])}});
  if (j.contains("episode_id") && !j["episode_id"].is_null() &&
      (!j["episode_id"].is_string() || j["episode_id"].get_ref<const std::string&>().size() > 255))
    errors.push_back({{"type", "string_type"},
                      {"loc", {"body", "episode_id"}},
                      {"msg", "Input should be a string of at most 255 characters"},
                      {"input", small_input(j["episode_id"])}});
  if (j.contains("problem_id") && !j["problem_id"].is_null() && !j["problem_id"].is_string())
    errors.push_back({{"type", "string_type"},
                      {"loc", {"body", "problem_id"}},
                      {"msg", "Input should be a valid string"},
                      {"input", small_input(j["problem_id"])}});
  if (j.contains("language") && !j["language"].is_null() &&
      (!j["language"].is_string() || (j["language"] != "cuda" && j["language"] != "triton")))
    errors.push_back({{"type", "literal_error"},
                      {"loc", {"body", "language"}},
                      {"msg", "Input should be 'cuda' or 'triton'"},
                      {"input", small_input(j["language"])}});
  if (j.contains("suite") && !j["suite"].is_null() && !j["suite"].is_string())
    errors.push_back({{"type", "string_type"},
                      {"loc", {"body", "suite"}},
                      {"msg", "Input should be a valid string"},
                      {"input", small_input(j["suite"])}});
  if (!errors.empty()) return detail(422, errors);
  std::string language = j.contains("language") && j["language"].is_string()
                             ? j["language"].get<std::string>()
                             : "cuda";
  std::string suite =
      j.contains("suite") && j["suite"].is_string() ? j["suite"].get<std::string>() : "";
  const ProblemCatalog* suite_cat = svc.problems(suite);
  if (!suite_cat) return detail(404, svc.unknown_suite(suite));
  const ProblemCatalog& cat = *suite_cat;
  const ProblemInfo* p = nullptr;
  if (j.contains("problem_id") && j["problem_id"].is_string() &&
      !j["problem_id"].get_ref<const std::string&>().empty()) {
    std::string want = j["problem_id"].get<std::string>();
    p = cat.find_openenv(want);
    if (!p) return detail(404, "Problem " + want + " not found");
  } else {
    p = &cat.pick(j.contains("seed") && is_seed(j["seed"]) ? j["seed"].get<uint64_t>()
                                                           : std::random_device{}());
  }
  json payload = reset_payload(*p, svc.grader().gpu_info(), svc.options().max_turns, language);
  BuiltPrompt task = svc.prompts().task(*p, -1, false, language);
  if (!task.examples.empty()) payload["observation"]["problem_description"] = task.text;
  return json_response(200, payload);
}

// POST /step: OpenEnv's StepRequest ({action, timeout_s?, request_id?, ...}). HTTP keeps no
// episode, so the problem comes with the request (action.problem_id or problem_id) or from the
// answer's launch block, and the step is the episode's first.
void http_step(Service& svc, const std::string& body, const std::shared_ptr<Responder>& out) {
  json j;
  try {
    j = parse_client_json(body);
  } catch (const std::exception& e) {
    return out->reply(json_invalid(e.what()));
  }
  json errors = json::array();
  if (!j.is_object()) {
    errors.push_back(
        {{"type", "model_attributes_type"},
         {"loc", {"body"}},
         {"msg", "Input should be a valid dictionary or object to extract fields from"},
         {"input", small_input(j)}});
    return out->reply(detail(422, errors));
  }
  if (!j.contains("action")) {
    errors.push_back({{"type", "missing"},
                      {"loc", {"body", "action"}},
                      {"msg", "Field required"},
                      {"input", small_input(j)}});
  } else {
    for (auto& e : body_loc(validate_action(j["action"], true), {"body", "action"}))
      errors.push_back(e);
  }
  if (j.contains("timeout_s") && !j["timeout_s"].is_null() &&
      (!j["timeout_s"].is_number() || j["timeout_s"].get<double>() <= 0))
    errors.push_back({{"type", "greater_than"},
                      {"loc", {"body", "timeout_s"}},
                      {"msg", "Input should be greater than 0"},
                      {"input", small_input(j["timeout_s"])}});
  if (j.contains("request_id") && !j["request_id"].is_null() &&
      (!j["request_id"].is_string() || j["request_id"].get_ref<const std::string&>().size() > 255))
    errors.push_back({{"type", "string_type"},
                      {"loc", {"body", "request_id"}},
                      {"msg", "Input should be a string of at most 255 characters"},
                      {"input", small_input(j["request_id"])}});
  if (j.contains("problem_id") && !j["problem_id"].is_null() && !j["problem_id"].is_string())
    errors.push_back({{"type", "string_type"},
                      {"loc", {"body", "problem_id"}},
                      {"msg", "Input should be a valid string"},
                      {"input", small_input(j["problem_id"])}});
  if (j.contains("suite") && !j["suite"].is_null() && !j["suite"].is_string())
    errors.push_back({{"type", "string_type"},
                      {"loc", {"body", "suite"}},
                      {"msg", "Input should be a valid string"},
                      {"input", small_input(j["suite"])}});
  if (!errors.empty()) return out->reply(detail(422, errors));
  std::string suite =
      j.contains("suite") && j["suite"].is_string() ? j["suite"].get<std::string>() : "";
  const ProblemCatalog* cat = svc.problems(suite);
  if (!cat) return out->reply(detail(404, svc.unknown_suite(suite)));

  const json& action = j["action"];
  std::string want;
  if (action.contains("problem_id") && action["problem_id"].is_string())
    want = action["problem_id"].get<std::string>();
  else if (j.contains("problem_id") && j["problem_id"].is_string())
    want = j["problem_id"].get<std::string>();
  const ProblemInfo* p = nullptr;
  if (!want.empty()) {
    p = cat->find_openenv(want);
    if (!p) return out->reply(detail(404, "Problem " + want + " not found"));
  }
  GradeRequest req;
  req.source = action["code"].get<std::string>();
  req.problem = p ? p->id : "";
  req.suite = suite;
  req.label = svc.make_label("http-step");
  if (action.contains("metadata")) read_action_metadata(action["metadata"], &req.tags);
  std::string source = req.source;
  if (j.contains("request_id") && j["request_id"].is_string())
    req.label += "/" + j["request_id"].get<std::string>();
  if (j.contains("timeout_s") && j["timeout_s"].is_number())
    req.timeout_s = j["timeout_s"].get<double>();
  std::string gpu = svc.grader().gpu_info();
  Service* s = &svc;
  svc.grade(std::move(req), [s, p, cat, gpu, out, source](GradeResult r) {
    if (r.kind != GradeResult::Graded) {
      HttpResponse resp =
          detail(status_for(r), r.message, {{"code", r.code()}, {"reason", r.reason()}});
      add_retry_after(resp, r);
      return out->reply(resp);
    }
    const ProblemInfo* shown = p;
    if (!shown && r.record.problem) shown = cat->find_openenv(*r.record.problem);
    Episode e;
    e.max_turns = s->options().max_turns;
    e.problem_id = shown ? shown->id : "";
    e.count(r.record);
    json payload = step_payload(shown, e, r.record, gpu);
    if (shown)
      payload["observation"]["prompt"] = s->prompts().next_turn(*shown, source, &r.record, 1).text;
    HttpResponse resp = json_response(200, payload);
    resp.headers.emplace_back("X-Kernrl-Cache", r.cache);
    out->reply(resp);
  });
}

json info(const Service& svc) {
  const ServiceOptions& o = svc.options();
  return {{"schema", kServeSchema},
          {"kernrl_version", KERNRL_VERSION},
          {"trace_schema", "kernrl.trace.v1"},
          {"compile_only", svc.grader().compile_only()},
          {"gpu_info", svc.grader().gpu_info()},
          {"gpus", svc.grader().gpus()},
          {"run", o.run},
          {"reward_preset", o.reward_preset},
          {"max_sessions", o.max_sessions},
          {"sessions", svc.sessions()},
          {"max_queue", o.max_queue},
          {"queued", svc.grader().queued()},
          {"step_timeout_s", o.step_timeout_s},
          {"run_timeout_s", svc.grader().run_timeout_s()},
          {"max_turns", o.max_turns},
          {"cache_bytes", o.cache_bytes},
          {"examples", o.examples},
          {"problems", svc.problems().all().size()},
          {"suites", svc.suite_names()}};
}

void v1_grade(Service& svc, const std::string& body, const std::shared_ptr<Responder>& out) {
  json j;
  try {
    j = parse_client_json(body);
  } catch (const std::exception& e) {
    return out->reply(api_failure(400, "INVALID_JSON", std::string("Invalid JSON: ") + e.what()));
  }
  GradeRequest req;
  std::string error;
  bool not_found = false;
  if (!parse_grade_request(j, svc, {}, &req, &error, &not_found))
    return out->reply(api_failure(not_found ? 404 : 400,
                                  not_found ? "UNKNOWN_PROBLEM" : "VALIDATION_ERROR", error));
  svc.grade(std::move(req), [out](GradeResult r) {
    if (r.kind != GradeResult::Graded) {
      HttpResponse resp = json_response(status_for(r), {{"error", api_error(r)}});
      add_retry_after(resp, r);
      return out->reply(resp);
    }
    HttpResponse resp = json_response(200, r.record.to_json());
    resp.headers.emplace_back("X-Kernrl-Cache", r.cache);
    out->reply(resp);
  });
}

void v1_grade_batch(Service& svc, const std::string& body, const std::shared_ptr<Responder>& out) {
  json j;
  try {
    j = parse_client_json(body);
  } catch (const std::exception& e) {
    return out->reply(api_failure(400, "INVALID_JSON", std::string("Invalid JSON: ") + e.what()));
  }
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array())
    return out->reply(
        api_failure(400, "VALIDATION_ERROR", "expected an object {\"items\": [grade requests]}"));
  for (const auto& [k, v] : j.items())
    if (k != "items")
      return out->reply(
          api_failure(400, "VALIDATION_ERROR", "unknown field '" + k + "' (fields: items)"));
  if (j["items"].size() > kMaxBatchItems)
    return out->reply(api_failure(413, "TOO_MANY_ITEMS",
                                  "a batch holds at most " + std::to_string(kMaxBatchItems) +
                                      " items (this one " + std::to_string(j["items"].size()) +
                                      "); send several"));
  std::vector<GradeRequest> reqs;
  for (size_t i = 0; i < j["items"].size(); ++i) {
    GradeRequest req;
    std::string error;
    bool not_found = false;
    if (!parse_grade_request(j["items"][i], svc, {}, &req, &error, &not_found))
      return out->reply(api_failure(not_found ? 404 : 400,
                                    not_found ? "UNKNOWN_PROBLEM" : "VALIDATION_ERROR",
                                    "items[" + std::to_string(i) + "]: " + error));
    reqs.push_back(std::move(req));
  }
  out->start_stream(200, "application/x-ndjson");
  struct Batch {
    std::atomic<size_t> left;
    std::atomic<size_t> graded{0}, not_graded{0};
    explicit Batch(size_t n) : left(n) {}
  };
  auto b = std::make_shared<Batch>(reqs.size());
  auto finish = [b, out] {
    out->chunk(
        json_line(
            {{"done", true}, {"graded", b->graded.load()}, {"not_graded", b->not_graded.load()}}) +
        "\n");
    out->end_stream();
  };
  if (reqs.empty()) return finish();
  for (size_t i = 0; i < reqs.size(); ++i) {
    svc.grade(std::move(reqs[i]), [b, out, i, finish](GradeResult r) {
      json line = {{"index", i}};
      if (r.kind == GradeResult::Graded) {
        line["cache"] = r.cache;
        line["record"] = r.record.to_json();
        ++b->graded;
      } else {
        line["error"] = api_error(r);
        ++b->not_graded;
      }
      out->chunk(json_line(line) + "\n");
      if (--b->left == 0) finish();
    });
  }
}

}  // namespace

bool authorized(const std::string& token, const std::string& authorization) {
  if (token.empty()) return true;
  const std::string want = "Bearer " + token;
  if (authorization.size() != want.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < want.size(); ++i)
    diff |= static_cast<unsigned char>(authorization[i] ^ want[i]);
  return diff == 0;
}

std::string endpoint_name(const std::string& method, const std::string& target) {
  std::string path = split_target(target).path;
  // Labels come from a closed set: three methods, the endpoints below, and "other".
  if (method != "GET" && method != "HEAD" && method != "POST") return "other";
  static const char* const fixed[] = {
      "/health",  "/metadata", "/schema",   "/state",          "/reset",       "/step",     "/ws",
      "/metrics", "/v1",       "/v1/grade", "/v1/grade-batch", "/v1/problems", "/v1/prompt"};
  for (const char* f : fixed)
    if (path == f) return method + " " + f;
  if (path.rfind("/v1/problems/", 0) == 0)
    return method + (path.size() > 7 && path.compare(path.size() - 7, 7, "/prompt") == 0
                         ? " /v1/problems/{id}/prompt"
                         : " /v1/problems/{id}");
  return "other";
}

json api_error(const GradeResult& r) {
  const char* code = r.kind == GradeResult::Refused   ? "CAPACITY_REACHED"
                     : r.kind == GradeResult::Expired ? "DEADLINE_EXCEEDED"
                     : r.kind == GradeResult::Stopped ? "SHUTTING_DOWN"
                                                      : "INTERNAL_ERROR";
  return {{"code", code}, {"reason", r.reason()}, {"message", r.message}};
}

void handle_http(Service& svc, const std::string& token, const HttpRequest& req,
                 const std::shared_ptr<Responder>& out) {
  Target t = split_target(req.target);
  const std::string& m = req.method;
  bool v1 = t.path == "/v1" || t.path.rfind("/v1/", 0) == 0;
  if (!(m == "GET" && t.path == "/health") && !authorized(token, req.authorization)) {
    HttpResponse r = v1 ? api_failure(401, "UNAUTHORIZED", "a bearer token is required")
                        : detail(401, "Not authenticated");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return out->reply(r);
  }
  auto method_is = [&](const char* want) {
    if (m == want || (std::strcmp(want, "GET") == 0 && m == "HEAD")) return true;
    HttpResponse r = v1 ? api_failure(405, "METHOD_NOT_ALLOWED", "use " + std::string(want))
                        : detail(405, "Method Not Allowed");
    r.headers.emplace_back("Allow", want);
    out->reply(r);
    return false;
  };
  if (svc.shutting_down() && m == "POST") {
    HttpResponse r = v1 ? api_failure(503, "SHUTTING_DOWN", "the server is shutting down")
                        : detail(503, "the server is shutting down");
    return out->reply(r);
  }

  if (t.path == "/health") {
    if (method_is("GET")) out->reply(json_response(200, {{"status", svc.health()}}));
  } else if (t.path == "/metadata") {
    if (method_is("GET")) out->reply(json_response(200, openenv_metadata()));
  } else if (t.path == "/schema") {
    if (method_is("GET")) out->reply(json_response(200, openenv_schema()));
  } else if (t.path == "/state") {
    if (method_is("GET"))
      out->reply(json_response(200, openenv_fresh_state(svc.options().max_turns)));
  } else if (t.path == "/reset") {
    if (method_is("POST")) out->reply(http_reset(svc, req.body));
  } else if (t.path == "/step") {
    if (method_is("POST")) http_step(svc, req.body, out);
  } else if (t.path == "/metrics") {
    if (method_is("GET")) {
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = svc.metrics_text();
      out->reply(r);
    }
  } else if (t.path == "/v1") {
    if (method_is("GET")) out->reply(json_response(200, info(svc)));
  } else if (t.path == "/v1/grade") {
    if (method_is("POST")) v1_grade(svc, req.body, out);
  } else if (t.path == "/v1/prompt") {
    if (method_is("POST")) out->reply(v1_prompt(svc, req.body));
  } else if (t.path == "/v1/grade-batch") {
    if (method_is("POST")) v1_grade_batch(svc, req.body, out);
  } else if (t.path == "/v1/problems") {
    if (!method_is("GET")) return;
    int level = 0;
    if (t.query.count("level")) {
      try {
        level = std::stoi(t.query["level"]);
      } catch (const std::exception&) {
        return out->reply(api_failure(400, "VALIDATION_ERROR", "level must be a number"));
      }
    }
    const std::string suite = t.query.count("suite") ? t.query["suite"] : "";
    const ProblemCatalog* cat = svc.problems(suite);
    if (!cat) return out->reply(api_failure(404, "UNKNOWN_SUITE", svc.unknown_suite(suite)));
    json list = json::array();
    for (const auto& p : cat->all())
      if (!level || p.level == level) list.push_back(p.summary);
    out->reply(json_response(200, {{"schema", kServeSchema}, {"problems", list}}));
  } else if (t.path.rfind("/v1/problems/", 0) == 0) {
    if (!method_is("GET")) return;
    std::string rest = t.path.substr(std::strlen("/v1/problems/"));
    bool prompt = false;
    if (rest.size() > 7 && rest.compare(rest.size() - 7, 7, "/prompt") == 0) {
      prompt = true;
      rest.resize(rest.size() - 7);
    }
    const std::string suite = t.query.count("suite") ? t.query["suite"] : "";
    const ProblemCatalog* cat = svc.problems(suite);
    if (!cat) return out->reply(api_failure(404, "UNKNOWN_SUITE", svc.unknown_suite(suite)));
    std::string error;
    const ProblemInfo* p = cat->find_kernrl(percent_decode(rest), &error);
    if (!p) return out->reply(api_failure(404, "UNKNOWN_PROBLEM", error));
    std::string language = t.query.count("language") ? t.query["language"] : "cuda";
    if (language != "cuda" && language != "triton")
      return out->reply(api_failure(400, "VALIDATION_ERROR", "language must be cuda or triton"));
    if (prompt) {
      HttpResponse r;
      r.content_type = "text/markdown; charset=utf-8";
      r.body = p->prompt_for(language);
      return out->reply(r);
    }
    out->reply(json_response(
        200,
        {{"schema", kServeSchema}, {"problem", p->spec}, {"prompt", p->prompt_for(language)}}));
  } else {
    out->reply(v1 ? api_failure(404, "NOT_FOUND", "no such endpoint: " + t.path)
                  : detail(404, "Not Found"));
  }
}

}  // namespace kernrl::serve
