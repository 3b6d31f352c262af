// grade-dir's printing and output files around a run (grading/run.h): the progress line, the
// pace summary, the checks that its outputs can be written, and KernelBench's files.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/trace_record.h"
#include "report/kernelbench.h"

namespace kernrl {

// The progress of a run on stderr: a line per record, or one line rewritten on a terminal.
class Progress {
 public:
  Progress(size_t total, bool tty, bool quiet) : total_(total), tty_(tty), quiet_(quiet) {
    t0_ = std::chrono::steady_clock::now();
  }
  // A record written, or (status "skipped") a file left out.
  void done(const std::string& status, const TraceRecord& rec);
  size_t count() const { return n_; }

 private:
  size_t total_, n_ = 0;
  bool tty_, quiet_;
  std::map<std::string, size_t> counts_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point t0_;
};

// The run's pace: kernels/min and each GPU's busy time (GradingSession::gpu_stats()).
void print_grader_summary(size_t n, double run_s, const nlohmann::json& gpus);

// Refuses (UsageError naming the option) a --kernelbench-json file or a --kernelbench-dir folder
// that cannot be written, creating the folders they need; empty paths are not checked.
void check_kernelbench_outputs(const std::string& json_file, const std::string& dir);

// Writes --kernelbench-json FILE (one level's eval_results.json; pass_at_k_results.json and
// unattributed.json beside it when there is something to put in them) and --kernelbench-dir DIR
// (a folder per run and level). False, with the reason on stderr, when something could not be
// written; `out` (the trace) is named there.
bool kernelbench_outputs(const KernelBenchOptions& ko, const std::vector<TraceRecord>& records,
                         const std::string& file, const std::string& dir, const std::string& out);

}  // namespace kernrl
