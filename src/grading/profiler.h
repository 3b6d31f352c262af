// `--profile`: Nsight Compute (ncu) on one run of a kernel, after its evaluation, for a few key
// metrics per launch. It runs a fresh worker under ncu (one correctness trial, no timing), profiles
// only the kernel's own launches, and reads the report back as CSV. Off by default; the timings in
// the record always come from the evaluation, never from a profiled run.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "protocol/worker.h"

namespace kernrl {

struct ProfileRequest {
  EvalRequest eval;      // the evaluation to repeat under the profiler (timing is turned off)
  std::string gpu;       // the worker's CUDA_VISIBLE_DEVICES entry
  std::string ncu = "";  // the ncu binary; empty: $KERNRL_NCU, else `ncu` on PATH, else CUDA's
  double timeout_s = 600;
};

// The record's `profile` object: {tool, launches: [{kernel, duration_us, dram_throughput_pct,
// sm_throughput_pct, achieved_occupancy_pct, stalls: [{reason, ratio}]}]} on success, or
// {tool, error} saying why there is none (ncu missing, no permission for the GPU's counters, ...).
nlohmann::json profile_kernel(const ProfileRequest& req);

// Parses `ncu --import R --csv --page raw`: one object per profiled launch (exposed for tests).
nlohmann::json parse_ncu_raw_csv(const std::string& csv);

}  // namespace kernrl
