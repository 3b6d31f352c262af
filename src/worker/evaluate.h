// Steps 4-6 on the GPU, inside the worker: run the plan on fresh inputs at every size set, check
// the outputs against the reference, then time kernel and reference on the bench size.
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/problem.h"
#include "protocol/launch_plan.h"
#include "protocol/worker.h"

namespace kernrl {

// Times the problem's registered reference, called as a PyTorch user would call the module, on
// each of `inputs` in turn with the grading protocol (L2 flush, warm-up, adaptive sampling).
class L2Flusher;
trace::Stats time_reference(const ProblemSpec& p,
                            const std::vector<std::map<std::string, at::Tensor>>& inputs,
                            const Vars& sizes, const Config& cfg, L2Flusher* flusher,
                            CUresult* err);

// Grades one kernel. The answer's `fatal` says the CUDA context is no longer usable (the worker
// must exit after answering); `phases_ms` where the time went.
EvalAnswer evaluate(const EvalRequest& req, const DeviceInfo& dev);

}  // namespace kernrl
