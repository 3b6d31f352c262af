// Run settings: configs/default.yaml, then --config FILE over it, then command-line flags.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/problem.h"

namespace kernrl {

// The most spare workers a session keeps per GPU (workers.spares): each holds a CUDA context.
constexpr int kMaxSpareWorkers = 8;

struct Config {
  int trials = 5;
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 300;
  double target_rel_stderr = 0.01;
  double time_cap_s = 2.0;
  int input_sets = 2;
  bool flush_l2 = true;
  // When the problem's reference kernel (solution.cu) is timed as a second baseline
  // (docs/grading.md): auto (problems whose speedups are over it, and wherever a baseline file
  // has it), always (every problem), never (speedups always over PyTorch).
  std::string kernel_baseline = "auto";
  double compile_timeout_s = 30;
  double run_timeout_s = 60;
  double plan_run_timeout_s = 5;  // one run of the launch plan (the worker stops a hung kernel)
  // The bound of one plan run at a size: the reference's time there times this factor, at least
  // plan_run_floor_s, at most plan_run_timeout_s (docs/grading.md).
  double plan_run_factor = 100;
  double plan_run_floor_s = 0.25;
  // Past a plan run's deadline the worker keeps watching the run for this long: a fault the GPU
  // reports meanwhile is a runtime_error, a run still going at the end a timeout (docs/grading.md).
  double fault_grace_s = 0.5;
  bool spare_worker = true;  // keep started spare workers per GPU (workers.spare)
  int spare_workers = 2;     // how many per GPU (workers.spares), while spare_worker is on
  // The spares a session keeps per GPU: spare_workers, or none with workers.spare off.
  int spares() const { return spare_worker ? spare_workers : 0; }
  std::string arch = "auto";
  std::string fallback_arch = "sm_90a";
  int compile_memory_limit_mb = 8192;
  std::string cache_dir;
  int cache_max_mb = 4096;      // the compile cache is trimmed (oldest first) to stay under this
  bool compile_sandbox = true;  // refuse to compile unless the compiler's OS sandbox holds
  // Compile through one kernrl-nvrtc fork server per process (a sandboxed child per compile)
  // rather than a kernrl-nvrtc process per compile, keeping at most compile_pch_sets precompiled
  // headers (0: none) for the header sets kernels start with (docs/security.md).
  bool compile_server = true;
  int compile_pch_sets = 8;
  // Triton kernel files (docs/kernel-format.md, "Triton kernels"): the Python that has Triton
  // (empty: $KERNRL_TRITON_PYTHON, else python3 on the usual paths), extra module folders it reads
  // (PYTHONPATH, readable in the sandbox), the compile's limits and how many compile servers
  // (Triton imported, a forked process per compile) are kept started.
  std::string triton_python;
  std::string triton_path;
  double triton_timeout_s = 120;
  int triton_memory_limit_mb = 16384;
  int triton_pool = 16;
  std::map<std::string, Tolerance> tolerance_overrides;
  std::string reward_preset = "kernrl";
  // Caps on the free text of a trace record (docs/trace-format.md, "Bounded outputs").
  int64_t record_compile_log_bytes = 16384;
  int64_t record_worker_log_bytes = 16384;
  int64_t record_message_bytes = 4096;

  // Applies the keys present in a YAML file over the current values. Every value is type- and
  // range-checked; throws SpecError "FILE:LINE: section.key ..." naming the offending key.
  void merge_file(const std::filesystem::path& file);
  // The same for YAML text; `origin` names it in errors. Throws only SpecError, whatever the text.
  void merge_text(const std::string& text, const std::string& origin);
  // The defaults (not configs/default.yaml) with `text` over them: the entry point for fuzzing.
  static Config from_yaml_text(const std::string& text, const std::string& origin);
  std::filesystem::path resolved_cache_dir() const;
  nlohmann::json to_json() const;
  static Config from_json(const nlohmann::json& j);
};

// configs/default.yaml from the data directory (if found), then `user_file` if not empty.
Config load_config(const std::string& user_file);

}  // namespace kernrl
