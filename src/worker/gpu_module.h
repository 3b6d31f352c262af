// The compiled kernel file on the GPU (driver API) and the launch plan turned into ready launches.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/problem.h"
#include "protocol/launch_plan.h"
#include "worker/cuda_check.h"
#include "worker/launch_args.h"

namespace kernrl {

// Thrown when a launch cannot be prepared or started (bad arguments, configuration, shared memory).
struct LaunchError : std::runtime_error {
  LaunchError(const std::string& m, int at_line, CUresult result = CUDA_SUCCESS)
      : std::runtime_error(m), line(at_line), code(result) {}
  int line;
  CUresult code;
};

class GpuModule {
 public:
  GpuModule() = default;
  ~GpuModule();
  GpuModule(const GpuModule&) = delete;
  GpuModule& operator=(const GpuModule&) = delete;
  // Loads the cubin and looks up every kernel (launch-block name -> lowered symbol). A kernel named
  // in `modules` (Triton: one cubin per compiled kernel) is looked up in that cubin instead.
  void load(const std::string& cubin_path, const std::map<std::string, std::string>& lowered,
            const std::map<std::string, std::string>& modules = {});
  CUfunction function(const std::string& name) const { return functions_.at(name); }
  // Byte width of every parameter of `f`, from cuFuncGetParamInfo.
  const std::vector<size_t>& param_sizes(const std::string& name) const {
    return param_sizes_.at(name);
  }

 private:
  CUmodule module_ = nullptr;
  std::vector<CUmodule> extra_;  // the cubins of `modules`
  CUmodule load_one(const std::string& path);
  std::map<std::string, CUfunction> functions_;
  std::map<std::string, std::vector<size_t>> param_sizes_;
};

class TorchStep;

// One launch with every expression evaluated and every argument packed at its parameter width; or
// a torch step (`torch` set by make_buffers, which has the tensors), which runs instead of `fn`.
struct ReadyLaunch {
  CUfunction fn = nullptr;
  std::string kernel;
  int line = 0;
  size_t plan_index = 0;  // which launch of the plan (a `repeat` gives several ReadyLaunch each)
  int64_t pass = 0;       // which pass of its `repeat` (the repeat variable's value)
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {0, 0, 0};
  unsigned shared_bytes = 0;
  bool cooperative = false;
  std::vector<std::vector<unsigned char>> arg_storage;
  std::vector<void*> arg_ptrs;
  std::shared_ptr<TorchStep> torch;
  std::string error;  // why the last enqueue failed, when more is known than the CUresult
};

// What a failed enqueue says: the launch's own error where it has one, else the driver's text.
std::string launch_failure_text(const ReadyLaunch* failed, CUresult r);

// Evaluates the plan at `vars` (sizes + num_sms). Throws LaunchError.
std::vector<ReadyLaunch> prepare_launches(const LaunchPlan& plan, const GpuModule& mod,
                                          const ProblemSpec& p, const Vars& vars,
                                          const PtrMap& ptrs);

// Enqueues one launch on `stream`; returns cuLaunchKernelEx's result.
CUresult enqueue_launch(ReadyLaunch& launch, CUstream stream);

// Enqueues every launch on `stream`; returns the first failing CUresult (and which launch).
CUresult enqueue_launches(std::vector<ReadyLaunch>& launches, CUstream stream,
                          const ReadyLaunch** failed);

}  // namespace kernrl
