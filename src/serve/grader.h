// What `kernrl serve` grades through: answers in, trace records out, on every GPU at once.
//
// The service (sessions, cache, admission, trace) talks to a Grader only through this interface
// (tests put a stand-in behind it); make_grader() builds the real one, over the grading library's
// session (src/grading/session.h): the pipeline of `eval` and `grade-dir`, with a CPU compile pool,
// one warm GPU worker per GPU and one queue shared by every GPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "grading/convert.h"
#include "grading/outcome.h"

namespace kernrl::serve {

using Clock = std::chrono::steady_clock;

// One answer to grade.
struct Job {
  std::string source;         // the answer's text: a kernel file or a model's markdown answer
  std::string label;          // the record's "file" field: a name only, never opened
  std::string problem;        // a problem id kernrl has; empty: the launch block's `problem:`
  std::string problems_root;  // the suite's problems folder `problem` is in; empty: the default
  std::string run;            // the record's "run"
  std::optional<int> sample;
  uint64_t seed = 0;  // the trial seed
  // A job that has not started on a GPU by then is not graded (Outcome::Expired); one that has
  // started finishes within the run timeout.
  Clock::time_point deadline = Clock::time_point::max();
};

// What became of a job: the grading session's outcome (Graded, Expired, Cancelled or Failed).
using kernrl::Outcome;
using Done = std::function<void(Outcome)>;

struct GraderOptions {
  std::vector<int> gpus;      // GPU indices; empty: every visible GPU
  bool compile_only = false;  // nothing runs: records say "compiled"
  int compile_jobs = 0;       // parallel compiles; 0: the number of cores
  std::string baselines;      // a baseline file; empty: baselines/<gpu>.json when present
  Converters converters;      // the conversion stage (grading/convert.h)
};

class Grader {
 public:
  virtual ~Grader() = default;
  // Queues a job; `done` is called exactly once, on a grader thread, when it is graded or dropped.
  virtual void submit(Job job, Done done) = 0;
  // Jobs waiting to compile or for a GPU.
  virtual size_t queued() const = 0;
  // Jobs compiling or running now.
  virtual size_t running() const = 0;
  // One object per GPU worker: {index, name, busy_seconds, evaluations, restarts}.
  virtual nlohmann::json gpus() const = 0;
  // The GPU the way OpenEnv's observation states it ("NVIDIA H100 80GB HBM3 (79.6 GB)"), or why
  // nothing runs.
  virtual std::string gpu_info() const = 0;
  // True when nothing runs on a GPU (no GPU, or compile-only).
  virtual bool compile_only() const = 0;
  // The longest a kernel may run on a GPU before it is stopped with status `timeout`.
  virtual double run_timeout_s() const = 0;
  // Drops every job not yet started (Outcome::Cancelled), lets the running ones finish, then
  // returns.
  // Later submissions are dropped at once. Idempotent.
  virtual void stop() = 0;
};

// The name an answer is read under, which decides how it is read, from its text: "answer.md" (a
// markdown answer: it has a fenced code block, or nothing kernrl recognises), "answer.cu" (a kernel
// file: no fence, a /* kernrl launch block), "answer.py" (Python: no fence, Python statements). A
// kernel file read as markdown could lose lines CommonMark takes for indented code blocks.
std::string answer_file_name(const std::string& source);

}  // namespace kernrl::serve

namespace kernrl {
struct Config;
}  // namespace kernrl

namespace kernrl::serve {

// The grader over a grading session with this config (its reward preset included). Starts one
// worker per GPU (or none: compile-only) and returns when they are ready.
std::unique_ptr<Grader> make_grader(const Config& cfg, const GraderOptions& opt);

}  // namespace kernrl::serve
