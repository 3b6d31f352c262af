#include "worker/gpu_module.h"

#include <algorithm>
#include <type_traits>

#include "protocol/tensor_accessor.h"
#include "worker/torch_step.h"

namespace kernrl {

GpuModule::~GpuModule() {
  if (module_) CU_CLEANUP(cuModuleUnload(module_));
  for (CUmodule m : extra_) CU_CLEANUP(cuModuleUnload(m));
}

CUmodule GpuModule::load_one(const std::string& path) {
  CUmodule m = nullptr;
  CuResult r = CU_RESULT(cuModuleLoad(&m, path.c_str()));
  if (!r) throw LaunchError("cannot load the compiled module: " + r.text(), 0, r.code);
  return m;
}

void GpuModule::load(const std::string& cubin_path,
                     const std::map<std::string, std::string>& lowered,
                     const std::map<std::string, std::string>& modules) {
  std::map<std::string, CUmodule> by_path;
  if (modules.empty() || !cubin_path.empty()) module_ = load_one(cubin_path);
  for (const auto& [name, path] : modules)
    if (!by_path.count(path)) {
      by_path[path] = load_one(path);
      extra_.push_back(by_path[path]);
    }
  CuResult r;
  for (const auto& [name, symbol] : lowered) {
    CUfunction f;
    auto in = modules.find(name);
    r = CU_RESULT(cuModuleGetFunction(&f, in == modules.end() ? module_ : by_path.at(in->second),
                                      symbol.c_str()));
    if (!r)
      throw LaunchError("kernel '" + name + "' not found in the module: " + r.text(), 0, r.code);
    functions_[name] = f;
    std::vector<size_t> sizes;
    for (size_t i = 0;; ++i) {
      size_t offset = 0, size = 0;
      r = CU_RESULT(cuFuncGetParamInfo(f, i, &offset, &size));
      if (r.code == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
      r.check();
      sizes.push_back(size);
    }
    param_sizes_[name] = sizes;
  }
}

namespace {

static_assert(std::is_same<CUdeviceptr, DevicePtr>::value, "DevicePtr is the driver's CUdeviceptr");

unsigned dim_value(const std::string& e, const Vars& vars, const std::string& what,
                   const ReadyLaunch& l) {
  int64_t v;
  try {
    v = eval_expr(e, vars);
  } catch (const ExprError& err) {
    throw LaunchError(what + " of " + l.kernel + ": " + err.what(), l.line);
  }
  if (v < 0 || v > 0xffffffffLL)
    throw LaunchError(what + " of " + l.kernel + " is " + std::to_string(v) + ", out of range",
                      l.line);
  return static_cast<unsigned>(v);
}

// A Triton launch as compiled for the size set of `vars` (the launch itself when it has one
// variant).
LaunchSpec with_variant(const LaunchSpec& spec, const Vars& vars) {
  if (spec.variants.empty()) return spec;
  for (const auto& v : spec.variants) {
    bool match = std::all_of(v.sizes.begin(), v.sizes.end(), [&](const auto& kv) {
      auto it = vars.find(kv.first);
      return it != vars.end() && it->second == kv.second;
    });
    if (!match) continue;
    LaunchSpec s = spec;
    s.kernel = v.kernel;
    s.block = v.block;
    s.cluster = v.cluster;
    s.shared_bytes = v.shared_bytes;
    s.cooperative = v.cooperative;
    return s;
  }
  throw LaunchError("no compiled variant of " + spec.kernel + " for these sizes", spec.line);
}

}  // namespace

std::vector<ReadyLaunch> prepare_launches(const LaunchPlan& plan, const GpuModule& mod,
                                          const ProblemSpec& p, const Vars& base_vars,
                                          const PtrMap& ptrs) {
  std::vector<ReadyLaunch> out;
  for (size_t index = 0; index < plan.launches.size(); ++index) {
    if (!plan.launches[index].torch.empty()) {
      // One per pass of its repeat, none where the count is 0, as for a kernel; make_buffers
      // sets each one's TorchStep (its arguments at that pass).
      const LaunchSpec& spec = plan.launches[index];
      int64_t reps = eval_expr(spec.repeat_count, base_vars);
      for (int64_t rep = 0; rep < reps; ++rep) {
        ReadyLaunch l;
        l.kernel = "torch step " + spec.torch;
        l.line = spec.line;
        l.plan_index = index;
        l.pass = rep;
        out.push_back(std::move(l));
      }
      continue;
    }
    const LaunchSpec& spec = with_variant(plan.launches[index], base_vars);
    int64_t reps = eval_expr(spec.repeat_count, base_vars);
    for (int64_t rep = 0; rep < reps; ++rep) {
      Vars vars = base_vars;
      if (!spec.repeat_var.empty()) vars[spec.repeat_var] = rep;
      ReadyLaunch l;
      l.kernel = spec.kernel;
      l.line = spec.line;
      l.plan_index = index;
      l.pass = rep;
      l.fn = mod.function(spec.kernel);
      l.cooperative = spec.cooperative;
      for (size_t i = 0; i < spec.grid.size(); ++i)
        l.grid[i] = dim_value(spec.grid[i], vars, "grid", l);
      for (size_t i = 0; i < spec.block.size(); ++i)
        l.block[i] = dim_value(spec.block[i], vars, "block", l);
      for (size_t i = 0; i < spec.cluster.size(); ++i)
        l.cluster[i] = dim_value(spec.cluster[i], vars, "cluster", l);
      l.shared_bytes = dim_value(spec.shared_bytes, vars, "shared_bytes", l);
      const auto& widths = mod.param_sizes(spec.kernel);
      if (widths.size() != spec.args.size())
        throw LaunchError("kernel " + spec.kernel + " takes " + std::to_string(widths.size()) +
                              " parameters but the launch block passes " +
                              std::to_string(spec.args.size()),
                          spec.line);
      for (size_t i = 0; i < spec.args.size(); ++i) {
        const auto& a = spec.args[i];
        std::string where =
            "argument " + std::to_string(i + 1) + " ('" + a.text + "') of " + spec.kernel;
        try {
          l.arg_storage.push_back(pack_kernel_arg(a, widths[i], plan, p, vars, ptrs, where));
        } catch (const ArgError& e) {
          throw LaunchError(e.what(), spec.line);
        }
      }
      for (auto& s : l.arg_storage) l.arg_ptrs.push_back(s.data());
      if (l.shared_bytes > 48 * 1024) {
        CuResult r =
            CU_RESULT(cuFuncSetAttribute(l.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(l.shared_bytes)));
        if (!r)
          throw LaunchError(spec.kernel + " asks for " + std::to_string(l.shared_bytes) +
                                " bytes of dynamic shared memory: " + r.text(),
                            spec.line, r.code);
      }
      out.push_back(std::move(l));
    }
  }
  return out;
}

std::string launch_failure_text(const ReadyLaunch* failed, CUresult r) {
  if (failed && !failed->error.empty()) return failed->error;
  return cu_error_text(r);
}

CUresult enqueue_launch(ReadyLaunch& l, CUstream stream) {
  if (l.torch) {
    // The operator runs on libtorch's current stream, which is the legacy default stream that
    // the plan's kernels use (every launch of the worker passes stream 0).
    try {
      l.torch->run();
      return CUDA_SUCCESS;
    } catch (const TorchStepError& e) {
      l.error = e.what();
      CUresult q = CU_RESULT(cuStreamQuery(stream)).code;
      return cu_error_is_sticky(q) ? q : CUDA_ERROR_INVALID_VALUE;
    }
  }
  CUlaunchConfig cfg{};
  cfg.gridDimX = l.grid[0];
  cfg.gridDimY = l.grid[1];
  cfg.gridDimZ = l.grid[2];
  cfg.blockDimX = l.block[0];
  cfg.blockDimY = l.block[1];
  cfg.blockDimZ = l.block[2];
  cfg.sharedMemBytes = l.shared_bytes;
  cfg.hStream = stream;
  CUlaunchAttribute attrs[2];
  unsigned n = 0;
  if (l.cooperative) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[n].value.cooperative = 1;
    ++n;
  }
  if (l.cluster[0]) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = l.cluster[0];
    attrs[n].value.clusterDim.y = l.cluster[1] ? l.cluster[1] : 1;
    attrs[n].value.clusterDim.z = l.cluster[2] ? l.cluster[2] : 1;
    ++n;
  }
  cfg.attrs = n ? attrs : nullptr;
  cfg.numAttrs = n;
  // The caller maps a failure: a launch the driver refuses is the kernel's launch_error.
  return CU_RESULT(cuLaunchKernelEx(&cfg, l.fn, l.arg_ptrs.data(), nullptr)).code;
}

CUresult enqueue_launches(std::vector<ReadyLaunch>& launches, CUstream stream,
                          const ReadyLaunch** failed) {
  for (auto& l : launches) {
    CUresult r = enqueue_launch(l, stream);
    if (r != CUDA_SUCCESS) {
      if (failed) *failed = &l;
      return r;
    }
  }
  return CUDA_SUCCESS;
}

}  // namespace kernrl
