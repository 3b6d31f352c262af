// The worker protocol's messages: every message survives to_json -> from_json unchanged, the status
// list is complete and stable, and malformed messages are refused.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "protocol/worker.h"
#include "record/record.h"

using namespace kernrl;
using nlohmann::json;

namespace {

TEST_CASE("every status round-trips through its name, and the names are the documented ones") {
  const char* names[] = {"correct",       "incorrect",     "compiled",
                         "format_error",  "compile_error", "launch_error",
                         "runtime_error", "timeout",       "internal_error"};
  size_t i = 0;
  for (Status s : kAllStatuses) {
    REQUIRE(i < sizeof names / sizeof *names);
    CHECK(std::string(to_string(s)) == names[i]);
    CHECK(status_from_string(names[i]) == s);
    ++i;
  }
  CHECK(i == sizeof names / sizeof *names);
  CHECK_FALSE(status_from_string("error").has_value());
  CHECK_FALSE(status_from_string("").has_value());
}

// The messages of tests/fixtures/protocol/worker_requests.jsonl, built by type: the bytes the
// hand-written serializers of protocol 6 wrote (kept byte for byte when the messages became typed
// objects).
std::vector<std::string> typed_requests() {
  std::vector<std::string> out;
  Hello h;  // a worker with a GPU
  h.hello = true;
  h.protocol = kWorkerProtocol;
  h.build_id = "2.0.0";
  DeviceInfo& d = h.device.emplace();
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sms = 132;
  d.l2_bytes = 52428800;
  d.memory_bytes = 85000000000ULL;
  d.driver = 13000;
  h.uuid = "GPU-8c9f";
  h.versions =
      std::map<std::string, std::string>{{"torch", "2.11.0"}, {"cuda", "13.0"}, {"driver", "13.0"}};
  h.startup_ms = std::map<std::string, double>{{"exec", 400.5}, {"cuda_init", 120.25}};
  out.push_back(h.to_json().dump());
  Hello n;  // one without
  n.hello = false;
  n.protocol = kWorkerProtocol;
  n.build_id = "2.0.0";
  n.error = "no CUDA device is visible";
  out.push_back(n.to_json().dump());

  EvalRequest r;  // every key
  r.problem_dir = "/p/L1/23_Softmax";
  r.cubin = "/cache/ab.cubin";
  r.lowered = std::map<std::string, std::string>{{"softmax", "_Z7softmaxPKfPfi"}};
  r.modules = std::map<std::string, std::string>{{"softmax", "/cache/softmax.cubin"}};
  LaunchPlan& plan = r.plan.emplace();
  plan.problem = "L1_23_Softmax";
  plan.line = 3;
  r.sizes = Vars{{"batch_size", 4}, {"dim", 256}};
  r.seed = 18446744073709551615ULL;
  r.time = false;
  r.cfg.emplace().trials = 7;
  r.baseline = read_object<trace::Stats>(json{{"median_ms", 1.5}, {"n", 10}});
  out.push_back(r.to_json().dump());
  EvalRequest plain;  // the defaults
  plain.problem_dir = "/p/L1/1_x";
  plain.cubin = "/cache/cd.cubin";
  plain.lowered.emplace();
  plain.plan.emplace();
  plain.seed = uint64_t{1};
  plain.cfg.emplace();
  out.push_back(plain.to_json().dump());

  BenchDeviceRequest bd;
  bd.repeats = 3;
  out.push_back(bd.to_json().dump());
  BenchReferenceRequest br;
  br.problem_dir = "/p/L1/1_x";
  br.cfg.emplace();
  br.seed = uint64_t{7};
  out.push_back(br.to_json().dump());
  out.push_back(quit_request().dump());
  return out;
}

// The answers of tests/fixtures/protocol/worker_answers.jsonl, built by type: the bytes a worker
// of protocol 6 writes (kept byte for byte when the parts became the record's).
std::vector<std::string> typed_answers() {
  std::vector<std::string> out;
  EvalAnswer a;
  a.status = Status::Correct;
  a.correctness = json{{"n_trials", 5}, {"n_passed", 5}, {"trials", json::array()}};
  trace::Timing& t = a.timing.emplace();
  t.kernel = trace::stats_of({0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  t.sizes = std::map<std::string, int64_t>{{"N", 4096}};
  t.baseline = read_object<trace::Stats>(json{{"median_ms", 1}, {"n", 10}});  // a file's, as read
  t.baseline_source = "reused";
  a.phases_ms = std::map<std::string, double>{{"kernel", 1.5}, {"other", 0.25}};
  trace::Launch k1;  // measured in full
  k1.index = 1;
  k1.kernel = "k<256>";
  k1.line = 7;
  k1.repeats = int64_t{4};
  k1.grid = std::vector<int64_t>{132, 2, 1};
  k1.block = std::vector<int64_t>{256, 1, 1};
  k1.cluster = std::vector<int64_t>{2, 1, 1};
  k1.dynamic_shared_bytes = int64_t{49152};
  k1.static_shared_bytes = int64_t{1024};
  k1.registers = int64_t{128};
  k1.local_bytes = int64_t{96};
  k1.max_threads_per_block = int64_t{512};
  trace::Occupancy& o = k1.occupancy.emplace();
  o.active_blocks_per_sm = 2;
  o.active_warps_per_sm = 16;
  o.max_warps_per_sm = 64;
  o.fraction = 0.25;
  o.limited_by = std::vector<std::string>{"registers"};
  o.block_limits = std::map<std::string, int>{
      {"registers", 2}, {"shared_memory", 4}, {"warps", 8}, {"blocks", 32}};
  k1.ms = 0.8125;
  k1.share = 0.8;
  trace::Launch k2;  // static facts only: the plan was not run at the timed size
  k2.index = 2;
  k2.kernel = "k2";
  k2.line = 12;
  k2.repeats = int64_t{1};
  k2.grid = std::vector<int64_t>{8, 1, 1};
  k2.block = std::vector<int64_t>{32, 1, 1};
  for (auto* f : {&k2.dynamic_shared_bytes, &k2.static_shared_bytes, &k2.local_bytes}) *f = 0;
  k2.registers = int64_t{32};
  k2.max_threads_per_block = int64_t{1024};
  trace::Launch k3;  // `repeat` gave no launch at these sizes
  k3.index = 3;
  k3.kernel = "k3";
  k3.line = 0;
  k3.repeats = 0;
  a.launches = std::vector<trace::Launch>{k1, k2, k3};
  RunBound bound;
  bound.seconds = 0.25;
  bound.basis = "reference";
  bound.reference_ms = 0.01;
  bound.sizes = {{"N", 64}};
  bound.grace_s = 0.25;
  a.watchdog = trace::watchdog_of(bound);
  out.push_back(a.to_json().dump());

  EvalAnswer f;
  f.status = Status::RuntimeError;
  f.error = trace::make_error(Status::RuntimeError, "illegal address", 12, "log");
  f.fatal = true;
  f.correctness = json{{"trials", json::array()}};
  out.push_back(f.to_json().dump());

  EvalAnswer i;
  i.status = Status::InternalError;
  i.error = trace::make_error(Status::InternalError, "no reference");
  out.push_back(i.to_json().dump());

  BenchAnswer b;
  b.ok = true;
  b.result = json{{"problem", "L1_1_x"}, {"baseline", {{"median_ms", 2.0}}}};
  out.push_back(b.to_json().dump());
  BenchAnswer be;
  be.error = "no reference";
  be.fatal = true;
  out.push_back(be.to_json().dump());

  EvalAnswer tuned;  // a Triton answer with an autotuned group (protocol 6)
  tuned.status = Status::Correct;
  AutotuneChoice ch;
  ch.group = "matmul";
  ch.config = 2;
  ch.times_ms = std::vector<std::optional<double>>{0.4, std::nullopt, 0.3};
  tuned.autotune = std::vector<AutotuneChoice>{ch};
  out.push_back(tuned.to_json().dump());
  return out;
}

std::vector<std::string> fixture_lines(const char* name) {
  std::ifstream in(std::string(KERNRL_TEST_DIR) + "/fixtures/protocol/" + name);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

TEST_CASE("answers are written byte for byte as the protocol's fixtures, and read back whole") {
  std::vector<std::string> want = fixture_lines("worker_answers.jsonl");
  std::vector<std::string> got = typed_answers();
  REQUIRE(want.size() == got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    CAPTURE(k);
    CHECK(got[k] == want[k]);
    json j = json::parse(want[k]);
    std::string again = j.contains("ok") ? BenchAnswer::from_json(j).to_json().dump()
                                         : EvalAnswer::from_json(j).to_json().dump();
    CHECK(again == want[k]);
  }
  EvalAnswer back = EvalAnswer::from_json(json::parse(want[0]));
  REQUIRE(back.launches);
  CHECK(back.launches->at(0).occupancy->block_limits->at("shared_memory") == 4);
  CHECK(*back.launches->at(0).share == doctest::Approx(0.8));
  CHECK_FALSE(back.launches->at(1).ms);
  CHECK(*back.timing->kernel->median_ms == 0.5);
  CHECK(*back.watchdog->bound_s == 0.25);
  CHECK(*back.watchdog->grace_s == 0.25);
  EvalAnswer fault = EvalAnswer::from_json(json::parse(want[1]));
  CHECK(fault.is_fatal());
  CHECK(*fault.error->line == 12);
  CHECK(*fault.error->log == "log");
  CHECK(BenchAnswer::from_json(json::parse(want[3])).succeeded());
  CHECK_FALSE(BenchAnswer::from_json(json::parse(want[4])).succeeded());
  EvalAnswer tuned = EvalAnswer::from_json(json::parse(want[5]));
  REQUIRE(tuned.autotune);
  REQUIRE(tuned.autotune->size() == 1);
  const AutotuneChoice& ch = tuned.autotune->at(0);
  CHECK(*ch.group == "matmul");
  CHECK(*ch.config == 2);
  REQUIRE(ch.times_ms->size() == 3);
  CHECK_FALSE(ch.times_ms->at(1).has_value());
  CHECK(*ch.times_ms->at(2) == 0.3);
}

TEST_CASE("hellos and requests are written byte for byte as the protocol's fixtures") {
  std::vector<std::string> want = fixture_lines("worker_requests.jsonl");
  std::vector<std::string> got = typed_requests();
  REQUIRE(want.size() == got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    CAPTURE(k);
    CHECK(got[k] == want[k]);
    json j = json::parse(want[k]);
    std::string cmd = request_command(j);
    std::string again = cmd == "eval"           ? EvalRequest::from_json(j).to_json().dump()
                        : cmd == "bench_device" ? BenchDeviceRequest::from_json(j).to_json().dump()
                        : cmd == "bench_reference"
                            ? BenchReferenceRequest::from_json(j).to_json().dump()
                        : cmd == "quit" ? quit_request().dump()
                                        : Hello::from_json(j).to_json().dump();
    CHECK(again == want[k]);
  }
  Hello h = Hello::from_json(json::parse(want[0]));
  CHECK(h.ok());
  CHECK(h.device->arch() == "sm_90a");
  CHECK(h.device->sms == 132);
  CHECK(h.startup_ms->at("exec") == 400.5);
  Hello none = Hello::from_json(json::parse(want[1]));
  CHECK_FALSE(none.ok());
  CHECK(*none.error == "no CUDA device is visible");
  EvalRequest r = EvalRequest::from_json(json::parse(want[2]));
  CHECK(*r.seed == 18446744073709551615ULL);
  CHECK(r.cfg->trials == 7);
  CHECK(r.plan->line == 3);
  CHECK(*r.baseline->median_ms == 1.5);
  CHECK_FALSE(*r.time);
  EvalRequest plain = EvalRequest::from_json(json::parse(want[3]));
  CHECK(plain.sizes.is_null());
  CHECK(plain.baseline.is_null());
  CHECK(plain.modules.absent());
  CHECK(*plain.time);
  CHECK(*BenchDeviceRequest::from_json(json::parse(want[4])).repeats == 3);
  CHECK(*BenchReferenceRequest::from_json(json::parse(want[5])).seed == 7);
}

TEST_CASE("a required key with a default must still be given") {
  // `ok` defaults to false for the writer; a reader still refuses an answer without it.
  CHECK_THROWS_WITH_AS(BenchAnswer::from_json(json{{"fatal", false}}),
                       doctest::Contains("'ok' is missing"), ProtocolError);
  CHECK_THROWS_WITH_AS(BenchAnswer::from_json(json{{"ok", nullptr}}),
                       doctest::Contains("'ok' is null"), ProtocolError);
  CHECK(BenchAnswer::from_json(json{{"ok", true}}).succeeded());
}

TEST_CASE("hellos and requests are read strictly") {
  // An old worker without a version is told apart.
  CHECK(Hello::from_json(json{{"hello", false}, {"error", "x"}}).protocol_version() == 0);
  CHECK_THROWS_WITH_AS(Hello::from_json(json{{"protocol", 6}}), doctest::Contains("'hello'"),
                       ProtocolError);
  // A worker with a GPU must say which.
  CHECK_THROWS_WITH_AS(Hello::from_json(json{{"hello", true}, {"protocol", 6}}),
                       doctest::Contains("'device'"), ProtocolError);
  json good = json::parse(fixture_lines("worker_requests.jsonl").at(3));
  json no_seed = good;
  no_seed.erase("seed");
  CHECK_THROWS_WITH_AS(EvalRequest::from_json(no_seed), doctest::Contains("'seed' is missing"),
                       ProtocolError);
  json bad_plan = good;
  bad_plan["plan"] = "launch everything";
  CHECK_THROWS_WITH_AS(EvalRequest::from_json(bad_plan), doctest::Contains("'plan'"),
                       ProtocolError);
  // A request of another kind is refused rather than misread.
  CHECK_THROWS(EvalRequest::from_json(BenchDeviceRequest{}.to_json()));
  CHECK_THROWS(BenchReferenceRequest::from_json(good));
  CHECK(BenchDeviceRequest::from_json(json{{"cmd", "bench_device"}}).repeats == 1);
  CHECK(request_command(json{{"cmd", 3}}).empty());
}

TEST_CASE("autotune choices are read strictly (protocol 6)") {
  CHECK(kWorkerProtocol >= 6);
  EvalAnswer none;
  none.status = Status::Correct;
  CHECK_FALSE(none.to_json().contains("autotune"));
  CHECK(EvalAnswer::from_json(none.to_json()).autotune.absent());
  json missing = {{"status", "correct"}, {"autotune", {{{"group", "g"}, {"times_ms", {1.0}}}}}};
  CHECK_THROWS_WITH_AS(EvalAnswer::from_json(missing), doctest::Contains("autotune[0].config"),
                       ProtocolError);
  json mistyped = {{"status", "correct"},
                   {"autotune", {{{"group", "g"}, {"config", 0}, {"times_ms", {"fast"}}}}}};
  CHECK_THROWS_AS(EvalAnswer::from_json(mistyped), ProtocolError);
}

TEST_CASE("a literal 0 assigned to a field is the value 0, not null") {
  Field<int64_t> n = int64_t{5};
  n = 0;
  REQUIRE(n.has_value());
  CHECK(*n == 0);
  Field<double> d;
  d = 0;
  CHECK(d.has_value());
  CHECK(*d == 0.0);
  d = nullptr;
  CHECK(d.is_null());
}

TEST_CASE("the request's config carries the fault grace the worker arms (protocol 5)") {
  CHECK(kWorkerProtocol >= 5);
  Config cfg;
  cfg.fault_grace_s = 0.75;
  EvalRequest req;
  req.cfg = cfg;
  CHECK(req.to_json()["config"]["fault_grace_s"] == 0.75);
  CHECK(EvalRequest{}.to_json().contains("config") == false);
  CHECK(Config::from_json(req.to_json()["config"]).fault_grace_s == 0.75);
}

TEST_CASE("a worker may leave out the keys with wire defaults") {
  EvalAnswer a = EvalAnswer::from_json(json{{"status", "correct"}});
  CHECK(a.error.is_null());
  CHECK_FALSE(a.is_fatal());
  CHECK(a.phases_ms->empty());
  CHECK(a.launches.absent());
  CHECK(a.watchdog.absent());
  CHECK(a.to_json() == json{{"status", "correct"},
                            {"error", nullptr},
                            {"fatal", false},
                            {"phases_ms", json::object()}});
  // No facts, no watchdog: no key.
  EvalAnswer none;
  none.status = Status::Correct;
  CHECK_FALSE(none.to_json().contains("launches"));
  CHECK_FALSE(none.to_json().contains("watchdog"));
  BenchAnswer b = BenchAnswer::from_json(json{{"ok", false}});
  CHECK(b.result.is_null());
  CHECK(b.error.absent());
}

// The message of the ProtocolError reading `j` as an eval answer ("" when it reads).
std::string refusal(const json& j) {
  try {
    EvalAnswer::from_json(j);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("answers are read strictly: a missing required key or a wrong type names the key") {
  json good = json::parse(fixture_lines("worker_answers.jsonl").at(0));
  CHECK(refusal(good).empty());
  CHECK(refusal(json::object()) == "eval answer: key 'status' is missing");
  CHECK(refusal(json{{"status", nullptr}}) == "eval answer: key 'status' is null");
  CHECK(refusal(json{{"status", "error"}}) ==
        "eval answer: key 'status' has an unexpected value: \"error\"");
  CHECK(refusal(json::array()) == "eval answer: not a JSON object");
  json bad = good;
  bad["launches"][0].erase("kernel");
  CHECK(refusal(bad) == "eval answer: key 'launches[0].kernel' is missing");
  bad = good;
  bad["launches"][1]["grid"] = "8x1x1";
  CHECK(refusal(bad) == "eval answer: key 'launches[1].grid' has an unexpected value: \"8x1x1\"");
  bad = good;
  bad["timing"]["kernel"]["median_ms"] = "fast";
  CHECK(refusal(bad) ==
        "eval answer: key 'timing.kernel.median_ms' has an unexpected value: "
        "\"fast\"");
  bad = good;
  bad["launches"][0]["occupancy"].erase("fraction");
  CHECK(refusal(bad) == "eval answer: key 'launches[0].occupancy.fraction' is missing");
  bad = good;
  bad["phases_ms"]["kernel"] = "x";
  CHECK(refusal(bad).find("key 'phases_ms'") != std::string::npos);
  bad = good;
  bad["error"] = {{"message", "no category"}};
  CHECK(refusal(bad) == "eval answer: key 'error.category' is missing");
  bad = good;
  bad["fatal"] = 1;
  CHECK(refusal(bad) == "eval answer: key 'fatal' has an unexpected value: 1");
  // Keys the answer does not know are kept, as the record keeps them.
  json later = good;
  later["timing"]["p99_ms"] = 0.6;
  later["gpu_clock_mhz"] = 1980;
  EvalAnswer kept = EvalAnswer::from_json(later);
  CHECK(kept.to_json() == later);
  CHECK_THROWS_AS(BenchAnswer::from_json(json{{"ok", "yes"}}), ProtocolError);
}

}  // namespace
