// The CLI's side of a GPU worker (grading/worker_client.h) against a stand-in worker that speaks
// the protocol without a GPU: the hello and its start-up breakdown, answers, a worker that crashes,
// one that hangs and one that reports a fatal error; a fresh worker after each, and which record
// the wait for a worker's start is reported on.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "grading/worker_client.h"
#include "stand_in_worker.h"

using namespace kernrl;

namespace {

EvalRequest request(uint64_t seed) {
  EvalRequest r;
  r.seed = seed;
  return r;
}

}  // namespace

TEST_CASE("the stand-in worker speaks this protocol version") {
  std::ifstream in(stand_in_worker());
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("PROTOCOL = " + std::to_string(kWorkerProtocol) + "  #") !=
        std::string::npos);
}

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
  CHECK(a.error->message->find("exited with code 1") != std::string::npos);
  CHECK(a.error->log->find("stand-in: crashing now") != std::string::npos);
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
  CHECK(a.error->message->find("did not finish within 1 s") != std::string::npos);
  CHECK(w.restarts() == 1);
  CHECK(w.take_start());
  EvalAnswer f = w.eval(request(4), 10);
  CHECK(f.status == Status::Correct);
  CHECK(f.is_fatal());
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

TEST_CASE(
    "worker client: with a spare, the kernel after a crash or hang goes to the started spare, and "
    "a new spare starts") {
  WorkerClient w(0, stand_in_worker());
  w.set_spares(1);
  w.spawn();
  std::string err;
  REQUIRE(w.wait_ready(&err));
  CHECK(w.starts() == 2);  // the active worker, then the spare once the first was up
  REQUIRE(w.spare_ready(10));
  CHECK(w.eval(request(1), 10).status == Status::Correct);
  CHECK(w.last_worker() == 1);
  auto first = w.take_start();
  REQUIRE(first);
  CHECK_FALSE(first->spare);
  CHECK(first->phases.count("warm_up") == 0);  // the first worker starts without a warm-up

  // A crash: the spare (worker 2, its hello already read) takes the next kernel; a third starts.
  EvalAnswer crash = w.eval(request(2), 10);
  CHECK(crash.status == Status::RuntimeError);
  CHECK(crash.error->message->find("exited with code 1") != std::string::npos);
  CHECK(crash.error->log->find("stand-in: crashing now") != std::string::npos);
  CHECK(w.restarts() == 1);
  CHECK(w.spare_takeovers() == 1);
  CHECK(w.starts() == 3);
  EvalAnswer next = w.eval(request(1), 10);
  CHECK(next.status == Status::Correct);
  CHECK(w.last_worker() == 2);
  auto took_over = w.take_start();
  REQUIRE(took_over);
  CHECK(took_over->spare);
  CHECK(took_over->phases.at("exec") == 12.5);
  CHECK(took_over->phases.count("warm_up") == 1);  // a spare warms up before its hello
  CHECK(w.restart_wait_ms() == 0);  // its hello was read before the crash: no wait at all

  // A hang: worker 3, the new spare, takes over once its hello is in.
  REQUIRE(w.spare_ready(10));
  EvalAnswer hang = w.eval(request(3), 1);
  CHECK(hang.status == Status::Timeout);
  CHECK(w.restarts() == 2);
  CHECK(w.spare_takeovers() == 2);
  CHECK(w.starts() == 4);
  CHECK(w.eval(request(1), 10).status == Status::Correct);
  CHECK(w.last_worker() == 3);
  CHECK(w.restart_wait_ms() == 0);
  // A fatal answer hands over the same way.
  REQUIRE(w.spare_ready(10));
  EvalAnswer fatal = w.eval(request(4), 10);
  CHECK(fatal.is_fatal());
  CHECK(w.eval(request(1), 10).status == Status::Correct);
  CHECK(w.last_worker() == 4);
  CHECK(w.starts() == 5);
}

TEST_CASE(
    "worker client: with three spares, one starts at first and all three from the first crash; "
    "crashes in a row go to the ready spares in start order, each replaced at once") {
  WorkerClient w(0, stand_in_worker());
  w.set_spares(3);
  w.spawn();
  std::string err;
  REQUIRE(w.wait_ready(&err));
  CHECK(w.starts() == 2);  // the active worker, then one spare: no kernel has failed yet
  CHECK(w.spares_running() == 1);
  REQUIRE(w.spare_ready(10));
  CHECK(w.eval(request(2), 10).status == Status::RuntimeError);
  CHECK(w.starts() == 5);  // worker 2 took over; the pool grew to three (3, 4, 5)
  CHECK(w.spares_running() == 3);
  REQUIRE(w.spare_ready(10));
  // Two more crashes back to back: workers 3 and 4 take over in turn, each crash starting one
  // more spare, so three stay started.
  for (int i = 0; i < 2; ++i) {
    CHECK(w.eval(request(2), 10).status == Status::RuntimeError);
    CHECK(w.spares_running() == 3);
  }
  CHECK(w.restarts() == 3);
  CHECK(w.spare_takeovers() == 3);
  CHECK(w.starts() == 7);
  CHECK(w.eval(request(1), 10).status == Status::Correct);
  CHECK(w.last_worker() == 4);
  CHECK(w.restart_wait_ms() == 0);  // each hello was read before it was needed
}

TEST_CASE("worker client: without a spare, a restart starts a fresh worker as before") {
  WorkerClient w(0, stand_in_worker());
  CHECK(w.eval(request(2), 10).status == Status::RuntimeError);
  CHECK(w.starts() == 2);  // the first, and its replacement started at once
  CHECK(w.eval(request(1), 10).status == Status::Correct);
  CHECK(w.last_worker() == 2);
  CHECK(w.spare_takeovers() == 0);
  auto s = w.take_start();
  REQUIRE(s);
  CHECK_FALSE(s->spare);
}
