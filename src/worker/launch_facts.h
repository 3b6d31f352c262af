// The record's `launches` (docs/trace-format.md): what each launch of the plan is and costs at the
// timed size. Gathered once per evaluation, after grading and outside every timed run; the facts
// never change an answer's status.
#pragma once

#include <vector>

#include "protocol/worker.h"
#include "worker/gpu_module.h"
#include "worker/plan_run.h"

namespace kernrl {

// Per entry of the launch block: its configuration (the first repetition's), the kernel's
// resources (cuFuncGetAttribute), its theoretical occupancy and the resources that limit it.
// `launches` are the plan's ready launches at one size set. Throws CudaError when a query fails.
std::vector<trace::Launch> describe_launches(const LaunchPlan& plan,
                                             const std::vector<ReadyLaunch>& launches);

// The plan's launches at `vars` on null pointers: the configuration without buffers, for
// describe_launches when the plan is not run. Throws LaunchError.
std::vector<ReadyLaunch> launches_without_buffers(const LaunchPlan& plan, const GpuModule& mod,
                                                  const ProblemSpec& p, const Vars& vars);

// Runs the plan once on `b` (outputs poisoned, L2 flushed first) with an event after each entry of
// the launch block, and adds each entry's time and share of the plan's time to `facts`. Untimed:
// never one of the timing's samples. Throws KernelFault when the run fails, CudaError when an
// event call does; `facts` is left unchanged then.
void time_launches(const ProblemSpec& p, Buffers& b, const DeviceInfo& dev,
                   std::vector<trace::Launch>* facts);

}  // namespace kernrl
