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
  json j = h.to_json();
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
