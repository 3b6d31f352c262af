// Triton's @triton.autotune on the GPU: each config of an autotuned launch timed at the bench size
// (the kernel timing's method: L2 flushed before every run, CUDA events, the median of a few runs),
// the fastest kept in the plan before correctness is checked (docs/kernel-format.md, "Autotune
// and heuristics").
#pragma once

#include <cstdint>
#include <vector>

#include "core/config.h"
#include "core/problem.h"
#include "protocol/launch_plan.h"
#include "protocol/worker.h"
#include "worker/gpu_module.h"

namespace kernrl {

// Runs per config: one warm-up, then this many timed runs.
inline constexpr int kAutotuneSamples = 5;

// Times every choice of each tuning group of `plan` (LaunchSpec::autotune) at `bench` on inputs
// drawn from `seed`, and leaves the fastest chosen in `plan`. A config whose launch fails (too
// many resources) is skipped; a fault that breaks the context leaves as a KernelFault
// (plan_run.h). Returns one choice per group, in the plan's order; empty when nothing is tuned.
std::vector<AutotuneChoice> autotune_plan(LaunchPlan& plan, const ProblemSpec& p,
                                          const GpuModule& mod, const Vars& bench,
                                          const DeviceInfo& dev, const Config& cfg, uint64_t seed);

}  // namespace kernrl
