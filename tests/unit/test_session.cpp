// The grading session (src/grading/session.h) without a GPU: compile-only (answers given as text
// or files, concurrent submissions, the grade-dir selection, what a session says about its GPUs),
// and on a stand-in worker (tests/unit/stand_in_worker.h): the records of answers and crashes.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <vector>

#include "core/draws.h"
#include "core/paths.h"
#include "grading/session.h"
#include "stand_in_worker.h"
#include "test_dirs.h"

using namespace kernrl;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string solution_text() {
  std::ifstream in(problems_dir() / "L1" / "23_Softmax" / "solution.cu", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

SessionOptions compile_only() {
  SessionOptions so;
  so.compile_only = true;
  so.compile_jobs = 2;
  return so;
}

}  // namespace

TEST_CASE("a compile-only session grades an answer given as text") {
  GradingSession session(compile_only());
  CHECK(session.no_gpu_reason() == "--compile-only");
  CHECK(session.device().is_null());
  Submission s;
  s.file = "answer-from-memory.cu";  // a label: never opened
  s.source = solution_text();
  s.opt.seed = 3;
  Outcome out = session.grade(s);
  REQUIRE(out.kind != Outcome::Failed);
  CHECK(out.usage_error.empty());
  REQUIRE(out.kind == Outcome::Graded);
  const json r = out.record.to_json();
  CHECK(r["status"] == "compiled");
  CHECK(r["ran"] == false);
  CHECK(r["not_run_reason"] == "--compile-only");
  CHECK(r["problem"] == "L1_23_Softmax");  // from the launch block
  CHECK(r["file"] == "answer-from-memory.cu");
  CHECK(r["seed"] == 3);
  CHECK(r["grader"]["prepare_ms"].get<double>() > 0);
  CHECK(r["grader"]["total_ms"] == r["wall_ms"]);
  CHECK(r.contains("reward"));
}

TEST_CASE("a missing file is a record and a usage error, not an exception") {
  GradingSession session(compile_only());
  Submission s;
  s.file = (fresh_test_dir("session") / "missing.cu").string();
  s.opt.problem = "L1_23_Softmax";
  Outcome out = session.grade(s);
  CHECK(out.kind != Outcome::Failed);
  CHECK(out.record.to_json()["status"] == "format_error");
  CHECK(out.usage_error.find("missing.cu") != std::string::npos);
}

TEST_CASE("many submissions at once: one outcome each, then the session is idle") {
  GradingSession session(compile_only());
  std::string sol = solution_text();
  std::mutex mu;
  std::set<std::string> seen;
  std::atomic<int> calls{0};
  for (int i = 0; i < 12; ++i) {
    Submission s;
    s.file = "sample-" + std::to_string(i) + ".cu";
    // Every third answer is broken: its outcome must still arrive, with its own status.
    s.source = i % 3 == 2 ? std::string("no code here") : sol;
    s.opt.problem = "L1_23_Softmax";
    session.submit(s, [&](Outcome o) {
      ++calls;
      std::lock_guard<std::mutex> l(mu);
      seen.insert(o.record.file.value_or("") + ":" + o.record.status_text());
    });
  }
  session.drain();
  CHECK(calls == 12);
  CHECK(session.queued() == 0);
  CHECK(seen.size() == 12);
  CHECK(seen.count("sample-0.cu:compiled"));
  CHECK(seen.count("sample-2.cu:format_error"));
}

TEST_CASE("grade-dir's selection skips a file whose launch block names another problem") {
  GradingSession session(compile_only());
  Submission s;
  s.file = "elsewhere.cu";
  s.source = solution_text();  // names L1_23_Softmax
  s.only_problem = "L1_26_GELU_";
  Outcome out = session.grade(s);
  CHECK(out.kind == Outcome::Skipped);
  CHECK(out.record.to_json()["problem"] == "L1_23_Softmax");
  // Named by the caller, the file is graded for that problem whatever its launch block says.
  s.opt.problem = "L1_23_Softmax";
  s.only_problem = "L1_23_Softmax";
  CHECK(session.grade(s).kind == Outcome::Graded);
}

TEST_CASE("a session grades on a worker: records of answers, crashes and the worker's start") {
  SessionOptions so;
  so.gpus = {0};
  so.compile_jobs = 1;
  so.worker_exe = stand_in_worker();
  GradingSession session(so);
  REQUIRE(session.no_gpu_reason().empty());
  CHECK(session.device()["name"] == "Stand-in");
  auto grade = [&](uint64_t seed) {
    Submission s;
    s.file = "answer.cu";
    s.source = solution_text();
    s.opt.seed = seed;
    Outcome out = session.grade(s);
    REQUIRE(out.kind != Outcome::Failed);
    REQUIRE(out.kind == Outcome::Graded);
    return out.record.to_json();
  };
  json first = grade(1);
  CHECK(first["status"] == "correct");
  CHECK(first["ran"] == true);
  CHECK(first["device"]["name"] == "Stand-in");
  CHECK(first["speedup"].get<double>() == doctest::Approx(2.0));
  CHECK(first["grader"]["worker_start_ms"].get<double>() >= 0);
  CHECK(first["grader"]["worker_start"]["exec"] == 12.5);
  CHECK(first["grader"]["phases"]["timing"] == 2.0);
  json second = grade(1);
  CHECK(second["status"] == "correct");
  CHECK_FALSE(second["grader"].contains("worker_start_ms"));  // the same worker
  json crashed = grade(2);
  CHECK(crashed["status"] == "runtime_error");
  CHECK(crashed["error"]["message"].get<std::string>().find("exited with code 1") !=
        std::string::npos);
  json after = grade(1);
  CHECK(after["status"] == "correct");
  CHECK(after["grader"].contains("worker_start_ms"));  // another worker: the started spare
  CHECK(after["grader"]["worker_spare"] == true);      // workers.spare is on by default
  CHECK_FALSE(second["grader"].contains("worker_spare"));
  json stats = session.gpu_stats();
  REQUIRE(stats.size() == 1);
  CHECK(stats[0]["evaluations"] == 4);
  CHECK(stats[0]["worker_restarts"] == 1);
  CHECK(stats[0]["spare_takeovers"] == 1);
}

TEST_CASE("the reference kernel is graded on draws of its own, never the submission's") {
  // timing.kernel_baseline: always grades the problem's solution.cu before the first submission;
  // its evaluation must not compute (and leave in memory) answers to the submission's inputs.
  const fs::path log = fresh_test_dir("session-draws") / "requests.jsonl";
  setenv("KERNRL_STANDIN_REQUESTS", log.c_str(), 1);
  SessionOptions so;
  so.gpus = {0};
  so.compile_jobs = 1;
  so.worker_exe = stand_in_worker();
  so.cfg.kernel_baseline = "always";
  std::vector<json> requests;
  {
    GradingSession session(so);
    REQUIRE(session.no_gpu_reason().empty());
    std::string text = solution_text();
    // The submission's kernel under another name, so its request is told from the reference's.
    for (size_t at; (at = text.find("softmax_rows")) != std::string::npos;)
      text.replace(at, 12, "submitted_rows");
    for (uint64_t seed : {7u, 8u}) {
      Submission s;
      s.file = "answer.cu";
      s.source = text;
      s.opt.seed = seed;
      Outcome out = session.grade(s);
      REQUIRE(out.kind == Outcome::Graded);
      const json r = out.record.to_json();
      CHECK(r["status"] == "correct");
      CHECK(r["timing"]["kernel_baseline_source"] == (seed == 7 ? "measured" : "reused"));
    }
  }
  unsetenv("KERNRL_STANDIN_REQUESTS");
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) requests.push_back(json::parse(line));
  // The reference kernel once (reused for the second submission), then each submission.
  REQUIRE(requests.size() == 3);
  CHECK(requests[0]["kernels"] == json::array({"softmax_rows"}));
  CHECK(requests[0]["seed"].get<uint64_t>() == draws::reference_kernel(7));
  CHECK(requests[0]["seed"].get<uint64_t>() != 7);
  CHECK(requests[1]["kernels"] == json::array({"submitted_rows"}));
  CHECK(requests[1]["seed"] == 7);
  CHECK(requests[2]["seed"] == 8);
}
