// The CLI's side of a GPU worker (grading/worker_client.h) against a stand-in worker that speaks
// the protocol without a GPU: the hello and its start-up breakdown, answers, a worker that crashes,
// one that hangs and one that reports a fatal error; a fresh worker after each, and which record
// the wait for a worker's start is reported on.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "grading/worker_client.h"
#include "test_dirs.h"

using namespace kernrl;

namespace {

// What the stand-in does with an eval request is chosen by its seed: 1 answers `correct`, 2 writes
// to its log and exits 1, 3 never answers, 4 answers with `fatal` and exits.
std::string stand_in_worker() {
  auto dir = fresh_test_dir("worker-client");
  auto path = dir / "fake-worker";
  std::ofstream(path) << R"(#!/usr/bin/env python3
import json, sys, time
time.sleep(0.2)
print(json.dumps({"hello": True, "protocol": )"
                      << kWorkerProtocol << R"(, "build_id": "test",
    "device": {"name": "Stand-in", "compute_capability": "9.0", "sms": 132, "l2_bytes": 1,
               "memory_bytes": 1, "driver": 13000},
    "uuid": "", "versions": {"torch": "0", "cuda": "13.0", "driver": "13.0"},
    "startup_ms": {"exec": 12.5, "cuda_init": 1.0, "context": 2.0, "torch": 0.5}}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    seed = req.get("seed")
    if seed == 2:
        print("stand-in: crashing now", file=sys.stderr, flush=True)
        sys.exit(1)
    if seed == 3:
        time.sleep(60)
    answer = {"status": "correct", "phases_ms": {"kernel": 1.0}, "fatal": seed == 4}
    print(json.dumps(answer), flush=True)
    if seed == 4:
        sys.exit(3)
)";
  chmod(path.c_str(), 0755);
  return path.string();
}

EvalRequest request(uint64_t seed) {
  EvalRequest r;
  r.seed = seed;
  return r;
}

}  // namespace

TEST_CASE("worker client: hello, answers, and the start reported once on the first request") {
  WorkerClient w(0, stand_in_worker());
  w.spawn();
  std::string err;
  REQUIRE(w.wait_ready(&err));
  CHECK(w.device().name == "Stand-in");
  EvalAnswer a = w.eval(request(1), 10);
  CHECK(a.status == Status::Correct);
  auto start = w.take_start();
  REQUIRE(start);
  CHECK(start->ms >= 0);
  CHECK(start->phases.at("exec") == 12.5);
  CHECK_FALSE(w.take_start());  // once
  CHECK(w.eval(request(1), 10).status == Status::Correct);
  CHECK_FALSE(w.take_start());  // the same worker
  CHECK(w.last_request_ms() < 5000);
  CHECK(w.restarts() == 0);
}

TEST_CASE(
    "worker client: a crash is the kernel's runtime_error, with its log, and a fresh worker "
    "answers the next request") {
  WorkerClient w(0, stand_in_worker());
  // Started by the first request: its start is reported on that request even though the
  // request broke the worker.
  EvalAnswer a = w.eval(request(2), 10);
  CHECK(a.status == Status::RuntimeError);
  REQUIRE(a.error);
  CHECK(a.error->message.find("exited with code 1") != std::string::npos);
  CHECK(a.error->log.find("stand-in: crashing now") != std::string::npos);
  CHECK(w.restarts() == 1);
  auto first = w.take_start();
  REQUIRE(first);
  CHECK(first->ms > 100);  // it waited for the hello (0.2 s)
  // The replacement is already starting; the request after the crash waits for it, and that wait
  // is not part of the request's own round trip.
  EvalAnswer b = w.eval(request(1), 10);
  CHECK(b.status == Status::Correct);
  CHECK(w.take_start());
  CHECK(w.last_request_ms() < 150);
}

TEST_CASE("worker client: a hang is a timeout; a fatal answer restarts the worker") {
  WorkerClient w(0, stand_in_worker());
  EvalAnswer a = w.eval(request(3), 1);
  CHECK(a.status == Status::Timeout);
  REQUIRE(a.error);
  CHECK(a.error->message.find("did not finish within 1 s") != std::string::npos);
  CHECK(w.restarts() == 1);
  CHECK(w.take_start());
  EvalAnswer f = w.eval(request(4), 10);
  CHECK(f.status == Status::Correct);
  CHECK(f.fatal);
  CHECK(w.restarts() == 2);
  CHECK(w.take_start());
  CHECK(w.eval(request(1), 10).status == Status::Correct);
  CHECK(w.take_start());
  CHECK(w.restarts() == 2);
}

TEST_CASE("worker client: a missing worker program is said, not hidden") {
  WorkerClient w(0, "/nonexistent/kernrl-worker");
  w.spawn();
  std::string err;
  CHECK_FALSE(w.wait_ready(&err));
  CHECK(err.find("kernrl-worker") != std::string::npos);
}
