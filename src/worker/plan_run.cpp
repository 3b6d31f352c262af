#include "worker/plan_run.h"

#include <algorithm>
#include <thread>

#include "worker/inputs.h"
#include "worker/phases.h"
#include "worker/watchdog.h"

namespace kernrl {

CUdeviceptr ptr_of(const torch::Tensor& t) {
  return reinterpret_cast<CUdeviceptr>(t.data_ptr());
}

void poison_outputs(const ProblemSpec& p, Buffers& b, CUstream s) {
  // NaN bit patterns for floats (0xFF..), an unlikely pattern for integers and booleans (0xA5..).
  for (const auto& t : p.outputs) {
    auto& x = b.outputs.at(t.name);
    CU_CHECK(cuMemsetD8Async(ptr_of(x), t.dtype.is_float ? 0xFF : 0xA5,
                             x.numel() * x.element_size(), s));
  }
  for (auto& [n, x] : b.scratch)
    CU_CHECK(cuMemsetD8Async(ptr_of(x), 0, x.numel() * x.element_size(), s));
}

void check_kernel_result(CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return;
  KernelFault f;
  f.fatal = cu_error_is_sticky(r);
  f.status = f.fatal ? Status::RuntimeError : Status::LaunchError;
  f.message = what + ": " + cu_error_text(r);
  throw f;
}

Buffers make_buffers(const ProblemSpec& p, const LaunchPlan& plan, const GpuModule& mod,
                     const Vars& sizes, const DeviceInfo& dev, uint64_t seed) {
  Buffers b;
  torch::Device cuda(torch::kCUDA, 0);
  {
    PhaseScope ph("inputs");
    b.inputs = make_inputs(p, sizes, seed, cuda);
  }
  PhaseScope ph("buffers");
  b.outputs = alloc_outputs(p, sizes, cuda);
  Vars vars = plan_vars(p, sizes, dev.sms);
  for (const auto& s : plan.scratch) {
    int64_t n = eval_expr(s.count, vars);
    b.scratch[s.name] = torch::zeros(
        {std::max<int64_t>(n, 1)}, torch::TensorOptions().dtype(torch_dtype(s.dtype)).device(cuda));
  }
  for (const auto* m : {&b.inputs, &b.outputs, &b.scratch})
    for (const auto& [n, t] : *m) b.ptrs[n] = ptr_of(t);
  try {
    b.launches = prepare_launches(plan, mod, p, vars, b.ptrs);
  } catch (const LaunchError& e) {
    throw KernelFault{Status::LaunchError, e.what(), e.line, cu_error_is_sticky(e.code)};
  }
  return b;
}

void run_plan_once(Buffers& b) {
  const ReadyLaunch* failed = nullptr;
  CUresult r = enqueue_launches(b.launches, nullptr, &failed);
  if (r != CUDA_SUCCESS) {
    bool sticky = cu_error_is_sticky(r);
    throw KernelFault{
        sticky ? Status::RuntimeError : Status::LaunchError,
        "launching " + (failed ? failed->kernel : std::string("kernel")) + ": " + cu_error_text(r),
        failed ? failed->line : 0, sticky};
  }
  CuResult sync;
  {
    // A plan run that never ends is stopped by the watchdog (timeouts.plan_run_s). The stream is
    // polled rather than waited on, so that a fault is seen the moment the driver has it.
    Watchdog::Scope deadline("a run of the launch plan");
    while ((sync = CU_RESULT(cuStreamQuery(nullptr))).code == CUDA_ERROR_NOT_READY)
      std::this_thread::yield();
  }
  if (!sync) {
    bool sticky = sync.sticky();
    throw KernelFault{sticky ? Status::RuntimeError : Status::LaunchError,
                      "while the kernels ran: " + sync.text(), 0, sticky};
  }
}

}  // namespace kernrl
