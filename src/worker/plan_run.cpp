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

namespace {

// An uninitialised buffer of `shape` and `opts` and, past the 512-byte block it ends in, its guard
// of kGuardBytes set to kGuardByte (in *guard, which keeps the allocation alive with it). The
// block's unused tail is set too, so that nothing earlier is left readable there.
torch::Tensor guarded(const std::vector<int64_t>& shape, const torch::TensorOptions& opts,
                      torch::Tensor* guard) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const int64_t item = static_cast<int64_t>(opts.dtype().itemsize());
  const int64_t start = (n * item + 511) / 512 * 512;
  torch::Tensor raw = torch::empty({(start + kGuardBytes + item - 1) / item}, opts);
  *guard = torch::from_blob(
      static_cast<char*>(raw.data_ptr()) + start, {kGuardBytes}, [raw](void*) {},
      torch::TensorOptions().dtype(torch::kUInt8).device(opts.device()));
  CU_CHECK(
      cuMemsetD8Async(ptr_of(raw) + n * item, kGuardByte, start + kGuardBytes - n * item, nullptr));
  return raw.narrow(0, 0, n).view(shape);
}

}  // namespace

Buffers make_buffers(const ProblemSpec& p, const LaunchPlan& plan, const GpuModule& mod,
                     const Vars& sizes, const DeviceInfo& dev, uint64_t seed) {
  Buffers b;
  torch::Device cuda(torch::kCUDA, 0);
  {
    PhaseScope ph("inputs");
    b.inputs = make_inputs(p, sizes, seed, cuda);
  }
  PhaseScope ph("buffers");
  for (const auto& t : p.outputs)
    b.outputs[t.name] = guarded(p.shape_of(t, sizes),
                                torch::TensorOptions().dtype(torch_dtype(t.dtype)).device(cuda),
                                &b.guards["output '" + t.name + "'"]);
  Vars vars = plan_vars(p, sizes, dev.sms);
  for (const auto& s : plan.scratch) {
    int64_t n = eval_expr(s.count, vars);
    b.scratch[s.name] = guarded({std::max<int64_t>(n, 1)},
                                torch::TensorOptions().dtype(torch_dtype(s.dtype)).device(cuda),
                                &b.guards["scratch buffer '" + s.name + "'"])
                            .zero_();
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

void check_guards(const Buffers& b, const std::string& when) {
  if (b.guards.empty()) return;
  std::vector<torch::Tensor> changed;
  for (const auto& [n, g] : b.guards) changed.push_back(g.ne(kGuardByte).any());
  torch::Tensor flags = torch::stack(changed).cpu();  // waits for the kernel's runs
  int i = 0;
  for (const auto& [n, g] : b.guards) {
    if (flags[i++].item<bool>())
      throw KernelFault{Status::RuntimeError,
                        "the kernel wrote past the end of " + n + " " + when +
                            ": the bytes after it changed (an out-of-bounds write; what lies "
                            "past a buffer may be other data, so the worker is replaced)",
                        0, true};
  }
}

}  // namespace kernrl
