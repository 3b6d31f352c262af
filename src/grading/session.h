// The grading library's entry point: a session owns the config, the reward preset, the baselines,
// one GPU worker per GPU, a compile pool, and one queue between them shared by every GPU. `eval`,
// `grade-dir`, `serve` and the tests grade through it; what happens to one file is in prepare.h
// (CPU steps, here) and in the worker (GPU steps, src/worker).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/config.h"
#include "grading/baselines.h"
#include "grading/gpu_monitor.h"
#include "grading/outcome.h"
#include "grading/prepare.h"
#include "grading/worker_client.h"
#include "record/reward.h"
#include "record/trace_record.h"

namespace kernrl {

struct SessionOptions {
  Config cfg;                  // with cfg.reward_preset the preset to load
  std::vector<int> gpus;       // GPU indices; empty: every visible GPU
  bool compile_only = false;   // no workers: extract, parse and compile only
  std::string baselines_path;  // --baselines (empty: baselines/<gpu>.json if present)
  int compile_jobs = 0;        // parallel compiles (0: one per core)
  // After each evaluation in which the kernel ran, profile one more run of it under Nsight Compute
  // (grading/profiler.h) and add the record's `profile` object. Slow; never changes timings.
  bool profile = false;
  std::string ncu;  // the ncu binary (empty: KERNRL_NCU, PATH, CUDA's bin)
  // A baseline document in memory, used instead of any baseline file (`kernrl bench` while it
  // writes one); `baselines_label` names it in records.
  std::optional<nlohmann::json> baselines_doc;
  std::string baselines_label;
  std::string worker_exe;  // the GPU worker program; empty: kernrl-worker (tests use a stand-in)
  // The conversion stage (convert.h): answers one of these reads are converted into kernel files
  // before extraction. None: answers are kernel files or model answers.
  Converters converters;
};

// One answer to grade: a file to read, or its text.
struct Submission {
  std::string file;                   // the path to read, or (with `source`) the record's label
  std::optional<std::string> source;  // the answer's text (never read from `file` then)
  GradeOptions opt;                   // problem, sizes, seed, run, sample...
  // grade-dir's selection: a file whose launch block names a problem outside it is skipped.
  std::string only_problem;
  int only_level = 0;
  // Not started on a GPU unless a whole run (the config's run timeout) still fits before this,
  // nor compiled after it: then nothing is graded (Outcome::Expired).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

class GradingSession {
 public:
  // Loads the reward preset and starts the workers (without waiting for them).
  explicit GradingSession(SessionOptions options);
  ~GradingSession();  // finishes queued work, stops the threads and the workers
  GradingSession(const GradingSession&) = delete;
  GradingSession& operator=(const GradingSession&) = delete;

  // Waits for the workers' hellos (once). Returns the number of usable GPUs.
  size_t wait_ready();
  // Why nothing runs on a GPU, as a record says it ("--compile-only", "no GPU: <cause>"); empty
  // when a GPU is ready.
  std::string no_gpu_reason();
  // The cause alone ("--compile-only", or why no GPU is usable); empty when a GPU is ready.
  std::string no_gpu_cause();
  // The first ready GPU (the record's `device`), or null.
  nlohmann::json device();

  // Grades asynchronously; `done` runs on a session thread once the outcome is known. Thread-safe.
  void submit(Submission s, std::function<void(Outcome)> done);
  // Grades and waits.
  Outcome grade(Submission s);
  // Waits until everything submitted so far is done.
  void drain();
  // Ends every submission not yet started, now and from now on, as Outcome::Cancelled:
  // those waiting to compile, and those compiled and waiting for a GPU (or done compiling later).
  // Submissions compiling or running on a GPU finish as usual. For a service shutting down.
  void cancel_queued();
  // Submissions waiting to compile or for a GPU.
  size_t queued();
  // Per GPU: evaluations, busy milliseconds, worker restarts, and NVML's mean utilisation since
  // the workers were ready (`nvml_utilization_pct`, null with `nvml` saying why when unknown).
  nlohmann::json gpu_stats();

  const Config& config() const { return opt_.cfg; }
  const RewardPreset& preset() const { return preset_; }

 private:
  struct Job {
    Submission sub;
    std::function<void(Outcome)> done;
    std::chrono::steady_clock::time_point t0;
    Prepared prep;
    std::chrono::steady_clock::time_point queued_at;
  };
  struct Gpu {
    std::unique_ptr<WorkerClient> worker;
    uint64_t evaluations = 0;
    double busy_ms = 0;
  };
  void compile_loop();
  void gpu_loop(Gpu* g);
  void finish(Job& job, Outcome out);
  std::optional<trace::Stats> baseline_for(int gpu, const ProblemSpec& p, std::string* source);
  // The problem's reference kernel (solution.cu) as a second baseline (docs/grading.md).
  struct KernelBaseline {
    std::optional<trace::Stats> timing;  // its timing stats, when known
    std::string source;                  // measured | reused | file:<path>
    std::string error;                   // why there is none, when it was wanted
    bool wanted = false;                 // the problem's speedups are over it
    double measured_ms = 0;              // time spent timing it for this submission
    // The submission's `timing` completed with it: the kernel baseline and its source, and
    // `speedup_baseline` (with the error when it is missing) where the problem wants it.
    void complete(trace::Timing& t) const;
  };
  // From the baseline file, measured earlier on this GPU, or (when the problem's speedups are over
  // it, or timing.kernel_baseline is always) graded now through the same path as a submission. A
  // PyTorch baseline measured on the way goes into `req` (and `torch_source`) for reuse.
  KernelBaseline kernel_baseline_for(Gpu* g, const ProblemSpec& p, uint64_t seed, EvalRequest* req,
                                     std::string* torch_source);
  // Runs the prepared reference kernel on `g`: its timing when it graded correct, else the error.
  KernelBaseline grade_reference_kernel(Gpu* g, const ProblemSpec& p, const Prepared& kp,
                                        uint64_t seed, EvalRequest* req, std::string* torch_source,
                                        const std::pair<int, std::string>& key);
  Prepared prepare(const Submission& s, const std::string& arch, int64_t sms);

  SessionOptions opt_;
  RewardPreset preset_;
  BaselineStore baselines_;
  // The baseline store of `p`'s problems folder: baselines_ for the session's own problems, else
  // (a suite's problem graded beside them, `GradeOptions::problems_root`) the suite's
  // baselines/<gpu>.json, loaded once.
  const BaselineStore& store_for(const ProblemSpec& p);
  std::map<std::string, std::unique_ptr<BaselineStore>> suite_baselines_;  // by problems folder
  nlohmann::json device_json_, versions_json_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<Gpu*> ready_;
  std::once_flag ready_once_;
  std::string no_gpu_;  // the cause (no_gpu_cause())
  std::string arch_;
  int64_t sms_ = 132;

  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Job> compile_q_, gpu_q_;
  size_t in_flight_ = 0;
  bool stopping_ = false;
  bool cancelled_ = false;
  std::vector<std::thread> threads_;
  std::map<std::pair<int, std::string>, trace::Stats> measured_baselines_;
  GpuMonitor monitor_;
  // (gpu, problem folder) -> its timing or error: each reference kernel graded once per GPU per
  // session.
  std::map<std::pair<int, std::string>, KernelBaseline> measured_kernel_baselines_;
};

// GPUs visible to this process without touching CUDA: /dev/nvidiaN, narrowed by
// CUDA_VISIBLE_DEVICES.
std::vector<int> visible_gpus();
// "0,1,2" -> {0,1,2}; throws UsageError.
std::vector<int> parse_gpu_list(const std::string& text);
// A fresh random run seed.
uint64_t fresh_seed();

}  // namespace kernrl
