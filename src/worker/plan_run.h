// The launch plan on device buffers: the buffers of one evaluation (inputs, outputs, scratch), the
// plan's launches ready on them, one run of the plan, and a kernel's failure as it leaves a run.
#pragma once

#include <cuda.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/config.h"
#include "core/problem.h"
#include "protocol/launch_plan.h"
#include "protocol/worker.h"
#include "references/reference.h"
#include "worker/gpu_module.h"

namespace kernrl {

// A sticky CUDA error or a failed launch, carried out of the grading code.
struct KernelFault {
  Status status;  // RuntimeError | LaunchError
  std::string message;
  int line = 0;
  bool fatal = false;
};

CUdeviceptr ptr_of(const torch::Tensor& t);

// Device buffers for one evaluation: the problem's tensors, the plan's outputs and scratch.
struct Buffers {
  TensorMap inputs;
  TensorMap outputs;
  TensorMap scratch;
  // Past the end of every output and scratch buffer (beyond the 512-byte block the buffer ends
  // in), kGuardBytes set to kGuardByte: a kernel that writes past a buffer changes them.
  TensorMap guards;
  PtrMap ptrs;
  std::vector<ReadyLaunch> launches;
};

constexpr int64_t kGuardBytes = 64 * 1024;
constexpr int kGuardByte = 0x5A;

// Inputs drawn from `seed` at `sizes` (phase "inputs"), outputs and scratch allocated, each with
// its guard, and the plan's launches prepared on them (phase "buffers"). A launch that cannot be
// prepared is a KernelFault.
Buffers make_buffers(const ProblemSpec& p, const LaunchPlan& plan, const GpuModule& mod,
                     const Vars& sizes, const DeviceInfo& dev, uint64_t seed);

// Fills float outputs with NaN bytes (0xFF), other outputs with 0xA5 bytes, and zeroes scratch.
void poison_outputs(const ProblemSpec& p, Buffers& b, CUstream s);

// The result of the kernel's own work (a launch, the synchronisation after its runs): a failure is
// a KernelFault, runtime_error and fatal when sticky, launch_error otherwise.
void check_kernel_result(CUresult r, const std::string& what);

// Runs the plan once; a failed launch or a fault during the run becomes a KernelFault.
void run_plan_once(Buffers& b);

// Whether the kernel wrote past the end of an output or scratch buffer (its guard changed since
// make_buffers): a fatal KernelFault (runtime_error) naming the buffer, since what lies past a
// buffer may be the grader's own memory, which a later kernel in this worker would meet. `when`
// says which run ("in trial 2 of 5 {...}").
void check_guards(const Buffers& b, const std::string& when);

}  // namespace kernrl
