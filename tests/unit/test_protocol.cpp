// The worker protocol's messages: every message survives to_json -> from_json unchanged, the status
// list is complete and stable, and malformed messages are refused.
#include <doctest/doctest.h>

#include "protocol/status.h"
#include "protocol/worker.h"
#include "record/record.h"

using namespace kernrl;
using nlohmann::json;

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

TEST_CASE("hello round-trips, with and without a GPU") {
  Hello h;
  h.ok = true;
  h.build_id = "9.9.9";
  h.device.name = "NVIDIA H100 80GB HBM3";
  h.device.cc_major = 9;
  h.device.cc_minor = 0;
  h.device.sms = 132;
  h.device.l2_bytes = 52428800;
  h.device.memory_bytes = 85045395456ULL;
  h.device.driver = 13000;
  h.uuid = "GPU-8c9f0a1b-2c3d-4e5f-6071-8293a4b5c6d7";
  h.versions = {{"torch", "2.11.0"}, {"cuda", "13.0"}, {"driver", "13.0"}};
  h.startup_ms = {{"exec", 310.0}, {"cuda_init", 40.5}, {"context", 120.0}, {"torch", 30.25}};
  json j = h.to_json();
  CHECK(j["startup_ms"]["context"] == 120.0);
  CHECK(j["uuid"] == h.uuid);
  CHECK(j["protocol"] == kWorkerProtocol);
  CHECK(j["device"]["arch"] == "sm_90a");
  Hello back = Hello::from_json(json::parse(j.dump()));
  CHECK(back.to_json() == j);
  CHECK(back.device.arch() == "sm_90a");

  Hello none;
  none.ok = false;
  none.error = "no CUDA device is visible";
  Hello nb = Hello::from_json(none.to_json());
  CHECK_FALSE(nb.ok);
  CHECK(nb.error == none.error);
  CHECK(nb.protocol == kWorkerProtocol);
  // An old worker without a version is told apart.
  CHECK(Hello::from_json(json{{"hello", false}, {"error", "x"}}).protocol == 0);
  // The start-up breakdown is optional.
  json old = j;
  old.erase("startup_ms");
  CHECK(Hello::from_json(old).startup_ms.empty());
}

TEST_CASE("eval request round-trips") {
  EvalRequest r;
  r.problem_dir = "/p/L1/23_Softmax";
  r.cubin = "/cache/ab.cubin";
  r.lowered = {{"softmax", "_Z7softmaxPKfPfi"}};
  r.plan.problem = "L1_23_Softmax";
  r.sizes = Vars{{"batch_size", 4}, {"dim", 256}};
  r.seed = 18446744073709551615ULL;
  r.time = false;
  r.baseline = json{{"median_ms", 1.5}};
  json j = r.to_json();
  CHECK(j["cmd"] == "eval");
  EvalRequest back = EvalRequest::from_json(json::parse(j.dump()));
  CHECK(back.to_json() == j);
  CHECK(back.seed == r.seed);
  CHECK(request_command(j) == "eval");
  // A request of another kind is refused rather than misread.
  CHECK_THROWS(EvalRequest::from_json(BenchDeviceRequest{}.to_json()));
}

TEST_CASE("bench requests and quit round-trip") {
  BenchDeviceRequest d;
  d.repeats = 3;
  CHECK(BenchDeviceRequest::from_json(d.to_json()).repeats == 3);
  BenchReferenceRequest b;
  b.problem_dir = "/p/L1/1_x";
  b.seed = 7;
  BenchReferenceRequest bb = BenchReferenceRequest::from_json(b.to_json());
  CHECK(bb.to_json() == b.to_json());
  CHECK(request_command(quit_request()) == "quit");
  CHECK(request_command(json{{"cmd", 3}}).empty());
}

TEST_CASE("eval answers round-trip; unknown statuses are refused") {
  EvalAnswer a;
  a.status = Status::Incorrect;
  a.error = ErrorInfo{Status::Incorrect, "trial 1 of 5: output 'y' differs", 0, ""};
  a.correctness = {{"n_trials", 5}, {"n_passed", 0}};
  a.phases_ms = {{"reference", 1.5}, {"kernel", 0.25}};
  json j = a.to_json();
  CHECK(j["error"]["category"] == "incorrect");
  EvalAnswer back = EvalAnswer::from_json(json::parse(j.dump()));
  CHECK(back.to_json() == j);
  CHECK(back.status == Status::Incorrect);

  EvalAnswer fault;
  fault.status = Status::RuntimeError;
  fault.error = ErrorInfo{Status::RuntimeError, "illegal address", 12, "log"};
  fault.fatal = true;
  EvalAnswer fb = EvalAnswer::from_json(fault.to_json());
  CHECK(fb.fatal);
  CHECK(fb.error->line == 12);
  CHECK(fb.error->log == "log");
  CHECK(fb.correctness.is_null());

  CHECK_THROWS(EvalAnswer::from_json(json{{"status", "error"}}));
  CHECK_THROWS(EvalAnswer::from_json(json::object()));
}

TEST_CASE("eval answers carry the watchdog's bound (protocol 4) and its fault grace (protocol 5)") {
  CHECK(kWorkerProtocol == 5);
  EvalAnswer a;
  a.status = Status::Timeout;
  a.watchdog = {{"bound_s", 0.25},
                {"basis", "reference"},
                {"reference_ms", 0.01},
                {"sizes", {{"N", 64}}},
                {"grace_s", 0.25}};
  EvalAnswer back = EvalAnswer::from_json(json::parse(a.to_json().dump()));
  CHECK(back.watchdog == a.watchdog);
  EvalAnswer none;
  none.status = Status::Correct;
  CHECK_FALSE(none.to_json().contains("watchdog"));
  CHECK(EvalAnswer::from_json(none.to_json()).watchdog.is_null());
  // The request's config carries the grace the worker arms (timeouts.fault_grace_s).
  Config cfg;
  cfg.fault_grace_s = 0.75;
  EvalRequest req;
  req.cfg = cfg;
  CHECK(req.to_json()["config"]["fault_grace_s"] == 0.75);
  CHECK(Config::from_json(req.to_json()["config"]).fault_grace_s == 0.75);
}

TEST_CASE("eval answers carry each launch's facts (protocol 3)") {
  EvalAnswer a;
  a.status = Status::Correct;
  LaunchFacts k1;  // measured in full
  k1.index = 1;
  k1.kernel = "k_partial<256>";
  k1.line = 7;
  k1.repeats = 4;
  k1.grid = {{132, 2, 1}};
  k1.block = {{256, 1, 1}};
  k1.cluster = {{2, 1, 1}};
  k1.dynamic_shared_bytes = 49152;
  k1.static_shared_bytes = 1024;
  k1.registers = 128;
  k1.local_bytes = 96;
  k1.max_threads_per_block = 512;
  LaunchOccupancy o;
  o.active_blocks_per_sm = 2;
  o.active_warps_per_sm = 16;
  o.max_warps_per_sm = 64;
  o.fraction = 0.25;
  o.limited_by = {"registers"};
  o.block_limits = {{"registers", 2}, {"shared_memory", 4}, {"warps", 8}, {"blocks", 32}};
  k1.occupancy = o;
  k1.ms = 0.8125;
  k1.share = 0.8;
  LaunchFacts k2;  // static facts only: the plan was not run at the timed size
  k2.index = 2;
  k2.kernel = "k_reduce";
  k2.line = 12;
  k2.registers = 32;
  k2.max_threads_per_block = 1024;
  LaunchFacts k3;  // `repeat` gave no launch at these sizes
  k3.index = 3;
  k3.kernel = "k_tail";
  k3.repeats = 0;
  a.launches = {k1, k2, k3};
  json j = a.to_json();
  REQUIRE(j["launches"].size() == 3);
  CHECK(j["launches"][0]["grid"] == json::array({132, 2, 1}));
  CHECK(j["launches"][0]["cluster"] == json::array({2, 1, 1}));
  CHECK(j["launches"][0]["occupancy"]["limited_by"] == json::array({"registers"}));
  CHECK(j["launches"][0]["ms"] == 0.8125);
  CHECK_FALSE(j["launches"][1].contains("cluster"));
  CHECK_FALSE(j["launches"][1].contains("occupancy"));
  CHECK_FALSE(j["launches"][1].contains("ms"));
  CHECK_FALSE(j["launches"][1].contains("share"));
  CHECK(j["launches"][2] == json{{"index", 3}, {"kernel", "k_tail"}, {"line", 0}, {"repeats", 0}});
  EvalAnswer back = EvalAnswer::from_json(json::parse(j.dump()));
  CHECK(back.to_json() == j);
  REQUIRE(back.launches.size() == 3);
  CHECK(back.launches[0].occupancy->block_limits.at("shared_memory") == 4);
  CHECK(*back.launches[0].share == doctest::Approx(0.8));
  CHECK_FALSE(back.launches[1].ms.has_value());
  CHECK(launches_to_json(back.launches) == j["launches"]);
  // No facts: no key (answers of workers that gathered none, and every failure before a run).
  CHECK_FALSE(EvalAnswer{}.to_json().contains("launches"));
  CHECK(EvalAnswer::from_json(json{{"status", "correct"}}).launches.empty());
  // A launch without its index or kernel is malformed.
  json bad = j;
  bad["launches"][0].erase("kernel");
  CHECK_THROWS(EvalAnswer::from_json(bad));
}

TEST_CASE("bench answers round-trip") {
  BenchAnswer b;
  b.ok = true;
  b.result = {{"problem", "L1_23_Softmax"}, {"baseline", {{"median_ms", 2.0}}}};
  CHECK(BenchAnswer::from_json(b.to_json()).to_json() == b.to_json());
  BenchAnswer e;
  e.error = "no reference";
  BenchAnswer eb = BenchAnswer::from_json(e.to_json());
  CHECK_FALSE(eb.ok);
  CHECK(eb.error == "no reference");
}
