// kernrl serve without the network: OpenEnv's messages and observations, kernrl's request
// parsing, the cache, admission and shutdown of the service, over a grader that returns made-up
// records.
#include <doctest/doctest.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "core/paths.h"
#include "serve/api.h"
#include "serve/grader.h"
#include "serve/openenv.h"
#include "serve/service.h"

using namespace kernrl;
using namespace kernrl::serve;
using nlohmann::json;

namespace {

Outcome outcome_of(Outcome::Kind kind, TraceRecord record = {}) {
  Outcome o;
  o.kind = kind;
  o.record = std::move(record);
  return o;
}

// A grader that answers with `make(job)`, at once or when the test releases it.
class FakeGrader : public Grader {
 public:
  std::function<json(const Job&)> make = [](const Job& j) {
    return json{{"schema", "kernrl.trace.v1"},
                {"status", "compiled"},
                {"file", j.label},
                {"problem", j.problem},
                {"reward", nullptr},
                {"feedback", "ok"},
                {"ran", false},
                {"compile", {{"ms", 1}}}};
  };
  bool hold = false;
  bool keep = false;  // keep each callback after calling it, as a grader's job may outlive it
  std::mutex mu;
  std::deque<std::pair<Job, Done>> held;
  std::vector<Done> kept;
  int submitted = 0;
  bool stopped = false;

  void submit(Job job, Done done) override {
    std::unique_lock<std::mutex> l(mu);
    ++submitted;
    if (stopped) {
      l.unlock();
      return done(outcome_of(Outcome::Cancelled));
    }
    if (hold) {
      held.emplace_back(std::move(job), std::move(done));
      return;
    }
    l.unlock();
    json rec = make(job);
    done(outcome_of(Outcome::Graded, TraceRecord::from_json(rec)));
  }
  void release_all(Outcome::Kind kind = Outcome::Graded) {
    std::deque<std::pair<Job, Done>> h;
    {
      std::lock_guard<std::mutex> l(mu);
      h.swap(held);
    }
    for (auto& [job, done] : h) {
      done(outcome_of(kind, TraceRecord::from_json(kind == Outcome::Graded ? make(job) : json())));
      std::lock_guard<std::mutex> l(mu);
      if (keep) kept.push_back(std::move(done));
    }
  }
  size_t queued() const override { return 0; }
  size_t running() const override { return 0; }
  json gpus() const override { return json::array(); }
  std::string gpu_info() const override { return "no GPU: test"; }
  bool compile_only() const override { return true; }
  double run_timeout_s() const override { return 25; }
  void stop() override {
    {
      std::lock_guard<std::mutex> l(mu);
      stopped = true;
    }
    release_all(Outcome::Cancelled);
  }
};

std::shared_ptr<const ProblemCatalog> catalog() {
  static auto c = std::make_shared<ProblemCatalog>(problems_dir().string(), nullptr);
  return c;
}

struct Fixture {
  std::shared_ptr<FakeGrader> grader = std::make_shared<FakeGrader>();
  std::unique_ptr<Service> svc;
  explicit Fixture(ServiceOptions o = {}) { svc = std::make_unique<Service>(o, grader, catalog()); }
};

// Sends `text` to a session and returns the reply (and whether it asked to close).
json send(WsSession& s, const std::string& text, bool* close = nullptr) {
  std::string out;
  bool c = false;
  s.handle(text, [&](std::string reply, bool cl) {
    out = std::move(reply);
    c = cl;
  });
  if (close) *close = c;
  return out.empty() ? json(nullptr) : json::parse(out);
}

}  // namespace

TEST_CASE("serve: the file name an answer is graded under") {
  CHECK(answer_file_name("Here it is:\n```cuda\n__global__ void k() {}\n```\n") == "answer.md");
  CHECK(answer_file_name("/* kernrl\nlaunches: []\n*/\n__global__ void k() {}\n") == "answer.cu");
  CHECK(answer_file_name("import torch\nimport triton\n\n@triton.jit\ndef k(): pass\n") ==
        "answer.py");
  CHECK(answer_file_name("I cannot do that.") == "answer.md");
  CHECK(answer_file_name("  ~~~\ncode\n~~~\n") == "answer.md");
}

TEST_CASE("serve: problem lookup, OpenEnv's way and kernrl's") {
  auto c = catalog();
  REQUIRE(!c->all().empty());
  const ProblemInfo* p = c->find_openenv("L1_23_Softmax");
  REQUIRE(p);
  CHECK(p->id == "L1_23_Softmax");
  CHECK(p->prompt.find("# Problem L1_23_Softmax") != std::string::npos);
  CHECK(p->prompt.find("/* kernrl") != std::string::npos);
  CHECK(!p->reference_code.empty());
  const ProblemInfo* sub = c->find_openenv("Softmax");  // substring, as OpenEnv does it
  REQUIRE(sub);
  CHECK(sub->id.find("Softmax") != std::string::npos);
  CHECK(c->find_openenv("no such thing") == nullptr);
  CHECK(c->find_openenv("") == nullptr);
  std::string err;
  const ProblemInfo* k = c->find_kernrl("L1_23", &err);
  REQUIRE(k);
  CHECK(k->id == "L1_23_Softmax");
  // kernrl's rule: id, unique prefix or unique part of one; several matches are named.
  CHECK(c->find_kernrl("Softmax", &err) == nullptr);
  CHECK(err.find("ambiguous") != std::string::npos);
  CHECK(err.find("L1_23_Softmax") != std::string::npos);
  REQUIRE(c->find_kernrl("sum_reduction", &err));
  CHECK(c->find_kernrl("L1_23_Softmx", &err) == nullptr);
  CHECK(err.find("did you mean L1_23_Softmax") != std::string::npos);
  CHECK(c->find_kernrl("../../etc/passwd", &err) == nullptr);
}

TEST_CASE("serve: OpenEnv WebSocket messages") {
  Fixture f;
  WsSession s(*f.svc);
  json r = send(s, "{not json");
  CHECK(r["type"] == "error");
  CHECK(r["data"]["code"] == "INVALID_JSON");
  r = send(s, "[1, 2]");
  CHECK(r["data"]["code"] == "VALIDATION_ERROR");
  r = send(s, R"({"type": "dance"})");
  CHECK(r["data"]["code"] == "UNKNOWN_TYPE");
  CHECK(r["data"]["message"] == "Unknown message type: dance");
  r = send(s, R"({"data": {}})");
  CHECK(r["data"]["code"] == "UNKNOWN_TYPE");
  r = send(s, R"({"type": "step", "data": {"code": "x"}})");
  CHECK(r["data"]["code"] == "EXECUTION_ERROR");
  CHECK(r["data"]["message"] == "Must call reset() before step()");
  r = send(s, R"({"type": "reset", "data": {"problem_id": "L99_nothing"}})");
  CHECK(r["data"]["code"] == "EXECUTION_ERROR");
  CHECK(r["data"]["message"] == "Problem L99_nothing not found");
  r = send(s, R"({"type": "reset", "data": {"problem_id": 7}})");
  CHECK(r["data"]["code"] == "VALIDATION_ERROR");
  r = send(s, R"({"type": "state", "data": {}})");
  CHECK(r["data"]["code"] == "VALIDATION_ERROR");  // extra fields are forbidden, as in OpenEnv
  r = send(s, R"({"type": "state"})");
  CHECK(r["type"] == "state");
  CHECK(r["data"]["episode_id"].is_null());
  CHECK(r["data"]["max_turns"] == 10);

  r = send(s, R"({"type": "reset", "data": {"problem_id": "L1_23_Softmax", "episode_id": "e1"}})");
  REQUIRE(r["type"] == "observation");
  const json& o = r["data"]["observation"];
  CHECK(o["problem_id"] == "L1_23_Softmax");
  CHECK(o["turn"] == 0);
  CHECK(o["max_turns"] == 10);
  CHECK(o["compilation_success"] == true);
  CHECK(o["gpu_info"] == "no GPU: test");
  CHECK(o["problem_description"].get<std::string>().find("kernrl") != std::string::npos);
  CHECK(r["data"]["reward"] == 0.0);
  CHECK(r["data"]["done"] == false);
  CHECK(!o.contains("reward"));
  CHECK(!o.contains("metadata"));

  r = send(s, R"({"type": "step", "data": {"code": ""}})");
  CHECK(r["data"]["code"] == "VALIDATION_ERROR");
  CHECK(r["data"]["errors"][0]["type"] == "string_too_short");
  r = send(s, R"({"type": "step", "data": {"code": "x", "problem_id": "L1_23"}})");
  CHECK(r["data"]["code"] == "VALIDATION_ERROR");
  CHECK(r["data"]["errors"][0]["type"] == "extra_forbidden");
  r = send(s, R"({"type": "step"})");
  CHECK(r["data"]["code"] == "VALIDATION_ERROR");
  CHECK(f.grader->submitted == 0);

  r = send(s, R"({"type": "step", "data": {"code": "some kernel"}})");
  REQUIRE(r["type"] == "observation");
  CHECK(r["data"]["observation"]["turn"] == 1);
  CHECK(r["data"]["observation"]["compilation_success"] == true);
  CHECK(r["data"]["observation"]["correctness_pass"].is_null());  // nothing ran
  CHECK(r["data"]["observation"]["status"] == "compiled");
  CHECK(r["data"]["reward"].is_null());
  CHECK(r["data"]["done"] == false);
  CHECK(f.grader->submitted == 1);
  r = send(s, R"({"type": "state"})");
  CHECK(r["data"]["episode_id"] == "e1");
  CHECK(r["data"]["step_count"] == 1);
  CHECK(r["data"]["problem_id"] == "L1_23_Softmax");

  bool close = false;
  r = send(s, R"({"type": "close"})", &close);
  CHECK(r.is_null());
  CHECK(close);
}

TEST_CASE("serve: observations from records") {
  Fixture f;
  f.grader->make = [](const Job& j) {
    return json{{"status", "correct"},
                {"problem", j.problem},
                {"ran", true},
                {"compile", {{"ms", 5}}},
                {"speedup", 1.5},
                {"reward", 0.5},
                {"feedback", "Status: correct"},
                {"correctness",
                 {{"trials",
                   {{{"outputs", {{{"max_abs_err", 1e-6}}, {{"max_abs_err", "nan"}}}}},
                    {{"outputs", {{{"max_abs_err", 3e-6}}}}}}}}}};
  };
  ServiceOptions o;
  o.max_turns = 3;
  Fixture g(o);
  g.grader->make = f.grader->make;
  WsSession s(*g.svc);
  send(s, R"({"type": "reset", "data": {"problem_id": "Softmax"}})");
  json r = send(s, R"({"type": "step", "data": {"code": "k"}})");
  const json& ob = r["data"]["observation"];
  CHECK(ob["correctness_pass"] == true);
  CHECK(ob["speedup"] == 1.5);
  CHECK(ob["max_diff"].get<double>() == doctest::Approx(3e-6));
  CHECK(ob["max_turns"] == 3);
  CHECK(r["data"]["reward"] == 0.5);
  CHECK(r["data"]["done"] == true);  // solved: correct and more than 1.05x faster
  json st = send(s, R"({"type": "state"})");
  CHECK(st["data"]["solved"] == true);
  CHECK(st["data"]["best_speedup"] == 1.5);

  // A compile error: the compiler's message and error lines.
  json rec = {{"status", "compile_error"},
              {"compile", {{"ms", 3}}},
              {"ran", false},
              {"error",
               {{"category", "compile_error"},
                {"message", "NVRTC: compilation failed"},
                {"log", "answer.md(7): error: identifier \"x\" is undefined\n1 error detected\n"}}},
              {"reward", -0.5},
              {"feedback", "Status: compile_error"}};
  Episode e;
  e.count(TraceRecord::from_json(rec));
  json p = step_payload(nullptr, e, TraceRecord::from_json(rec), "gpu");
  CHECK(p["observation"]["compilation_success"] == false);
  std::string ce = p["observation"]["compilation_error"];
  CHECK(ce.find("NVRTC: compilation failed") != std::string::npos);
  CHECK(ce.find("identifier \"x\" is undefined") != std::string::npos);
  CHECK(p["observation"]["correctness_pass"].is_null());
  CHECK(p["reward"] == -0.5);
  CHECK(e.best_speedup == 0);
  // A format error before compiling names its line.
  json fe = {{"status", "format_error"},
             {"compile", nullptr},
             {"error", {{"message", "this answer is a Triton kernel"}, {"line", 3}}}};
  p = step_payload(nullptr, e, TraceRecord::from_json(fe), "gpu");
  CHECK(p["observation"]["compilation_error"] == "line 3: this answer is a Triton kernel");
}

TEST_CASE("serve: the action's validation, as pydantic reports it") {
  CHECK(validate_action({{"code", "x"}}, false).empty());
  CHECK(validate_action({{"code", "x"}, {"metadata", {{"a", 1}}}}, false).empty());
  CHECK(validate_action({{"code", 5}}, false)[0]["type"] == "string_type");
  CHECK(validate_action(json::object(), false)[0]["type"] == "missing");
  CHECK(validate_action({{"code", "x"}, {"problem_id", "L1"}}, false)[0]["type"] ==
        "extra_forbidden");
  CHECK(validate_action({{"code", "x"}, {"problem_id", "L1"}}, true).empty());
  CHECK(validate_action("text", false)[0]["type"] == "model_type");
}

TEST_CASE("serve: kernrl's grade requests") {
  auto c = catalog();
  GradeRequest r;
  std::string err;
  bool nf = false;
  CHECK(parse_grade_request({{"source", "x"}, {"problem", "L1_23"}, {"seed", 5}, {"sample", 2}}, *c,
                            {}, &r, &err, &nf));
  CHECK(r.problem == "L1_23_Softmax");
  CHECK(*r.seed == 5);
  CHECK(*r.sample == 2);
  CHECK(!parse_grade_request({{"code", "x"}}, *c, {}, &r, &err, &nf));
  CHECK(err.find("unknown field 'code'") != std::string::npos);
  CHECK(!parse_grade_request({{"source", "x"}, {"seed", -1}}, *c, {}, &r, &err, &nf));
  CHECK(err.find("seed") != std::string::npos);
  CHECK(!parse_grade_request({{"source", "x"}, {"problem", "L42_x"}}, *c, {}, &r, &err, &nf));
  CHECK(nf);
  CHECK(!parse_grade_request({{"source", "x"}, {"timeout_s", 0}}, *c, {}, &r, &err, &nf));
  CHECK(parse_grade_request({{"source", "x"}, {"id", 3}}, *c, {"id"}, &r, &err, &nf));
  CHECK(authorized("", ""));
  CHECK(authorized("s3cret", "Bearer s3cret"));
  CHECK(!authorized("s3cret", "Bearer s3cre"));
  CHECK(!authorized("s3cret", "s3cret"));
  CHECK(endpoint_name("GET", "/v1/problems/L1_23?x=1") == "GET /v1/problems/{id}");
  CHECK(endpoint_name("GET", "/v1/problems/L1_23/prompt") == "GET /v1/problems/{id}/prompt");
  CHECK(endpoint_name("GET", "/../../etc") == "other");
}

TEST_CASE("serve: cache, coalescing, admission, shutdown") {
  ServiceOptions o;
  o.max_queue = 2;
  o.run_seed = 77;
  Fixture f(o);
  f.grader->hold = true;
  std::vector<GradeResult> got;
  std::mutex mu;
  auto collect = [&](GradeResult r) {
    std::lock_guard<std::mutex> l(mu);
    got.push_back(std::move(r));
  };
  GradeRequest a;
  a.source = "same answer";
  a.label = "first";
  GradeRequest b = a;
  b.label = "second";
  f.svc->grade(a, collect);
  f.svc->grade(b, collect);  // the same answer: waits for the first one's record
  CHECK(f.grader->submitted == 1);
  GradeRequest c;
  c.source = "another";
  f.svc->grade(c, collect);
  GradeRequest d;
  d.source = "a third";
  f.svc->grade(d, collect);  // the queue holds 2: refused at once
  REQUIRE(got.size() == 1);
  CHECK(got[0].kind == GradeResult::Refused);
  CHECK(std::string(got[0].code()) == "CAPACITY_REACHED");
  f.grader->release_all();
  REQUIRE(got.size() == 4);
  int coalesced = 0;
  for (auto& r : got)
    if (r.kind == GradeResult::Graded && std::string(r.cache) == "coalesced") {
      ++coalesced;
      CHECK(r.record.file.value_or("") == "second");  // each answer keeps its own name
    }
  for (auto& r : got)  // the service's run stamps its seed on every record
    if (r.kind == GradeResult::Graded) CHECK(r.record.run_seed.value_or(0) == 77u);
  CHECK(coalesced == 1);
  f.svc->grade(a, collect);  // now from the cache
  REQUIRE(got.size() == 5);
  CHECK(std::string(got[4].cache) == "hit");
  CHECK(f.grader->submitted == 2);
  std::string m = f.svc->metrics_text();
  CHECK(m.find("kernrl_serve_cache_total{result=\"hit\"} 1") != std::string::npos);
  CHECK(m.find("kernrl_serve_cache_total{result=\"coalesced\"} 1") != std::string::npos);
  CHECK(m.find("kernrl_serve_not_graded_total{reason=\"capacity\"} 1") != std::string::npos);
  CHECK(m.find("kernrl_serve_evaluations_total{status=\"compiled\"} 4") != std::string::npos);
  CHECK(m.find("kernrl_serve_step_latency_seconds_count 4") != std::string::npos);

  // An answer that could not be graded is not cached: the next request grades it.
  GradeRequest e;
  e.source = "expires";
  f.svc->grade(e, collect);
  f.grader->release_all(Outcome::Expired);
  REQUIRE(got.size() == 6);
  CHECK(got[5].kind == GradeResult::Expired);
  CHECK(std::string(got[5].reason()) == "deadline");
  CHECK(got[5].message.find("step deadline") != std::string::npos);
  f.svc->grade(e, collect);
  CHECK(f.grader->submitted == 4);

  // Shutdown: what is queued gets an explicit error, and so does anything new.
  f.svc->begin_shutdown();
  f.svc->stop_grader();
  REQUIRE(got.size() == 7);
  CHECK(got[6].kind == GradeResult::Stopped);
  CHECK(got[6].message.find("shutting down") != std::string::npos);
  GradeRequest late;
  late.source = "late";
  f.svc->grade(late, collect);
  REQUIRE(got.size() == 8);
  CHECK(got[7].kind == GradeResult::Stopped);
  f.svc->wait_answered();
  CHECK(f.svc->health() == "unhealthy");
}

TEST_CASE("serve: an answered request holds nothing of its caller's once it counts as answered") {
  // At shutdown the network side is destroyed once every answer is given, while the grader may
  // still hold the job's callback; the caller's callback (holding its connection) must be gone.
  Fixture f;
  f.grader->hold = true;
  f.grader->keep = true;
  auto connection = std::make_shared<int>(0);
  std::weak_ptr<int> alive = connection;
  int answers = 0;
  GradeRequest req;
  req.source = "held";
  f.svc->grade(req, [&answers, connection](GradeResult) { ++answers; });
  connection.reset();
  CHECK(!alive.expired());  // the pending request holds it
  f.grader->release_all();
  f.svc->wait_answered();
  CHECK(answers == 1);
  CHECK(f.grader->kept.size() == 1);  // the grader still holds the job's callback
  CHECK(alive.expired());
}

TEST_CASE("serve: sessions are admitted against capacity") {
  ServiceOptions o;
  o.max_sessions = 2;
  Fixture f(o);
  size_t active = 0, max = 0;
  CHECK(f.svc->open_session(&active, &max));
  CHECK(f.svc->open_session(&active, &max));
  CHECK(!f.svc->open_session(&active, &max));
  CHECK(active == 2);
  CHECK(max == 2);
  f.svc->close_session();
  CHECK(f.svc->open_session(&active, &max));
}

TEST_CASE("serve: client JSON is depth-checked before it is parsed") {
  CHECK(parse_client_json(R"({"a": [[1]], "s": "[[[[[[["})")["a"][0][0] == 1);
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  CHECK_THROWS(parse_client_json(deep));
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  CHECK_NOTHROW(parse_client_json(ok));
  CHECK_THROWS(parse_client_json("{"));
  CHECK(small_input(std::string(10000, 'x')).get<std::string>().size() == 259);
  CHECK(small_input(json::array({1, 2})) == json::array({1, 2}));
  CHECK(small_input(json::array({json::array({1})})).is_null());
  Fixture f;
  WsSession s(*f.svc);
  json r = send(s, "{\"type\": \"step\", \"data\": {\"code\": " + deep + "}}");
  CHECK(r["data"]["code"] == "INVALID_JSON");
}

TEST_CASE("serve: OpenEnv's schema and metadata") {
  json s = openenv_schema();
  CHECK(s["action"]["required"] == json::array({"code"}));
  CHECK(s["observation"]["properties"].contains("compilation_error"));
  CHECK(s["state"]["properties"].contains("best_speedup"));
  CHECK(openenv_metadata()["name"] == "kernrl");
  json st = openenv_fresh_state(10);
  CHECK(st["step_count"] == 0);
  CHECK(st["solved"] == false);
}
