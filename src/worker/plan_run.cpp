#include "worker/plan_run.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "worker/inputs.h"
#include "worker/phases.h"
#include "worker/torch_step.h"
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
  // A scratch buffer may have no elements at a size set (rows only where a counted step runs):
  // its pointer is null then, and there is nothing to zero.
  for (auto& [n, x] : b.scratch)
    if (x.numel() > 0) CU_CHECK(cuMemsetD8Async(ptr_of(x), 0, x.numel() * x.element_size(), s));
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

// The plan's torch step `spec` on the buffers of `b` (docs/kernel-format.md, "PyTorch
// operators"); a step that does not fit its operator is the file's launch_error.
std::shared_ptr<TorchStep> make_torch_step(const LaunchSpec& spec, const LaunchPlan& plan,
                                           const ProblemSpec& p, const Vars& vars,
                                           const Buffers& b) {
  const std::string where =
      "torch step " + spec.torch + " (line " + std::to_string(spec.line) + ")";
  auto tensor = [&](const std::string& n) -> torch::Tensor {
    for (const auto* m : {&b.inputs, &b.outputs, &b.scratch})
      if (auto it = m->find(n); it != m->end()) return it->second;
    throw KernelFault{Status::LaunchError, where + ": no tensor '" + n + "'", spec.line, false};
  };
  std::vector<TorchStepArg> args;
  for (const auto& a : spec.args) {
    TorchStepArg v;
    v.text = a.text;
    switch (a.kind) {
      case ArgKind::Tensor:
      case ArgKind::Scratch:
        v.kind = TorchStepArg::Tensor;
        v.tensor = tensor(a.text);
        break;
      case ArgKind::Scalar: {
        const ScalarSpec* s = p.find_scalar(a.text);
        if (s && s->is_float()) {
          v.kind = TorchStepArg::Float;
          v.f = s->value;
        } else {
          v.kind = TorchStepArg::Int;
          v.i = s ? static_cast<int64_t>(s->value) : eval_expr(a.text, vars);
        }
        break;
      }
      case ArgKind::FloatLiteral:
        v.kind = TorchStepArg::Float;
        v.f = std::strtod(a.text.c_str(), nullptr);
        break;
      case ArgKind::FloatExpr:
        v.kind = TorchStepArg::Float;
        v.f = eval_real_expr(a.text, vars, plan_reals(plan, p, vars));
        break;
      case ArgKind::IntExpr:
        v.kind = TorchStepArg::Int;
        v.i = eval_expr(a.text, vars);
        break;
      case ArgKind::IntList: {
        v.kind = TorchStepArg::IntList;
        for (const auto& item : split_top_level(a.text)) v.list.push_back(eval_expr(item, vars));
        break;
      }
      case ArgKind::Bool:
        v.kind = TorchStepArg::Bool;
        v.b = a.text == "true";
        break;
      case ArgKind::None:
        v.kind = TorchStepArg::None;
        break;
      case ArgKind::TensorList:
        v.kind = TorchStepArg::TensorList;
        for (const auto& item : split_top_level(a.text)) v.tensors.push_back(tensor(item));
        break;
      case ArgKind::Offset:  // refused by the launch block's check
        throw KernelFault{Status::LaunchError,
                          where + ": argument '" + a.text +
                              "' is a pointer into a buffer; a torch step takes whole tensors",
                          spec.line, false};
      case ArgKind::Accessor:
        throw KernelFault{Status::LaunchError,
                          where + ": a tensor accessor is an argument of CUDA kernels", spec.line,
                          false};
      case ArgKind::Struct:  // refused by the launch block's check
        throw KernelFault{Status::LaunchError, where + ": a struct is an argument of CUDA kernels",
                          spec.line, false};
    }
    args.push_back(v);
  }
  // Outputs and scratch buffers are contiguous: the result may land in one of the same element
  // count seen in the result's shape (`return self.fc(h).squeeze(1)`).
  const bool flat = true;
  try {
    return std::make_shared<TorchStep>(spec.torch, args, tensor(spec.out), flat, where,
                                       spec.result);
  } catch (const TorchStepError& e) {
    throw KernelFault{Status::LaunchError, e.what(), spec.line, false};
  }
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
  Vars vars;
  try {
    vars = plan_vars(plan, p, sizes, dev.sms);  // the launch block's values too
  } catch (const ExprError& e) {
    throw KernelFault{Status::LaunchError, e.what(), plan.line, false};
  }
  for (const auto& s : plan.scratch) {
    std::vector<int64_t> shape;
    for (const auto& d : s.shape) shape.push_back(eval_expr(d, vars));
    if (shape.empty()) shape = {std::max<int64_t>(eval_expr(s.count, vars), 1)};
    b.scratch[s.name] =
        guarded(shape, torch::TensorOptions().dtype(torch_dtype(s.dtype)).device(cuda),
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
  for (auto& l : b.launches) {
    const LaunchSpec& spec = plan.launches[l.plan_index];
    if (spec.torch.empty()) continue;
    Vars at = vars;
    if (!spec.repeat_var.empty()) at[spec.repeat_var] = l.pass;
    l.torch = make_torch_step(spec, plan, p, at, b);
  }
  return b;
}

void run_plan_once(Buffers& b) {
  const ReadyLaunch* failed = nullptr;
  CUresult r = enqueue_launches(b.launches, nullptr, &failed);
  if (r != CUDA_SUCCESS) {
    bool sticky = cu_error_is_sticky(r);
    throw KernelFault{sticky ? Status::RuntimeError : Status::LaunchError,
                      "launching " + (failed ? failed->kernel : std::string("kernel")) + ": " +
                          launch_failure_text(failed, r),
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
