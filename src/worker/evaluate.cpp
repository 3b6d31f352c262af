#include "worker/evaluate.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "worker/compare.h"
#include "worker/gpu_module.h"
#include "worker/inputs.h"
#include "worker/timer.h"

namespace kernrl {
using nlohmann::json;

namespace {

// Wall time per grading phase in ms, for the record's `grader` object. The worker grades one
// kernel at a time, so one accumulator serves; a phase ends at a host synchronisation point or
// where the next begins.
std::map<std::string, double> g_phases;

class PhaseScope {
 public:
  explicit PhaseScope(const char* name) : name_(name), t0_(std::chrono::steady_clock::now()) {}
  ~PhaseScope() {
    g_phases[name_] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

// A sticky CUDA error or a failed launch, carried out of the grading code.
struct KernelFault {
  Status status;  // RuntimeError | LaunchError
  std::string message;
  int line = 0;
  bool fatal = false;
};

CUdeviceptr ptr_of(const torch::Tensor& t) {
  return reinterpret_cast<CUdeviceptr>(t.data_ptr());
}

json sizes_json(const ProblemSpec& p, const Vars& v) {
  json o = json::object();
  for (const auto& n : p.size_names) o[n] = v.at(n);
  return o;
}

// Device buffers for one evaluation: the problem's tensors, the plan's outputs and scratch.
struct Buffers {
  TensorMap inputs;
  TensorMap outputs;
  TensorMap scratch;
  TensorMap ref_cpu;  // expected outputs, kept on the host while the kernel runs
  PtrMap ptrs;
  std::vector<ReadyLaunch> launches;
};

void poison_outputs(const ProblemSpec& p, Buffers& b, CUstream s) {
  // NaN bit patterns for floats (0xFF..), an unlikely pattern for integers and booleans (0xA5..).
  for (const auto& t : p.outputs) {
    auto& x = b.outputs.at(t.name);
    cuMemsetD8Async(ptr_of(x), t.dtype.is_float ? 0xFF : 0xA5, x.numel() * x.element_size(), s);
  }
  for (auto& [n, x] : b.scratch) cuMemsetD8Async(ptr_of(x), 0, x.numel() * x.element_size(), s);
}

void check_cu(CUresult r, const std::string& what) {
  if (r == CUDA_SUCCESS) return;
  KernelFault f;
  f.fatal = cu_error_is_sticky(r);
  f.status = f.fatal ? Status::RuntimeError : Status::LaunchError;
  f.message = what + ": " + cu_error_text(r);
  throw f;
}

// Expected outputs moved to the host, and the device copies overwritten before they are freed, so
// the kernel under test never finds the answer in memory it can reach.
// Zeroes device memory the reference's temporaries occupied: the caching allocator hands its free
// blocks back to the driver, then that much memory is taken, zeroed and freed again.
void scrub_freed_reference_memory() {
  size_t free_before = 0, free_after = 0, total = 0;
  cuMemGetInfo(&free_before, &total);
  c10::cuda::CUDACachingAllocator::emptyCache();
  cuMemGetInfo(&free_after, &total);
  if (free_after <= free_before) return;
  size_t margin = size_t{256} << 20;
  size_t n = std::min(free_after - free_before + (size_t{64} << 20),
                      free_after > margin ? free_after - margin : 0);
  CUdeviceptr scratch;
  if (n && cuMemAlloc(&scratch, n) == CUDA_SUCCESS) {
    cuMemsetD8Async(scratch, 0, n, nullptr);
    cuStreamSynchronize(nullptr);
    cuMemFree(scratch);
  }
}

TensorMap reference_to_host(const ProblemSpec& p, const TensorMap& inputs, const Vars& sizes) {
  TensorMap ref = run_reference(p, inputs, sizes);
  TensorMap host;
  for (auto& [n, t] : ref) {
    host[n] = t.to(torch::kCPU);
    bool aliases_input =
        false;  // a pass-through output may be a view of an input: leave that alone
    for (const auto& [in, x] : inputs) aliases_input |= t.is_alias_of(x);
    if (!aliases_input) cuMemsetD8Async(ptr_of(t), 0, t.numel() * t.element_size(), nullptr);
  }
  ref.clear();
  scrub_freed_reference_memory();
  return host;
}

Buffers make_buffers(const ProblemSpec& p, const LaunchPlan& plan, const GpuModule& mod,
                     const Vars& sizes, const DeviceInfo& dev, uint64_t seed) {
  Buffers b;
  torch::Device cuda(torch::kCUDA, 0);
  {
    PhaseScope ph("inputs");
    b.inputs = make_inputs(p, sizes, seed, cuda);
  }
  {
    PhaseScope ph("reference");
    b.ref_cpu = reference_to_host(p, b.inputs, sizes);
  }
  PhaseScope ph("buffers");
  b.outputs = alloc_outputs(p, sizes, cuda);
  Vars vars = plan_vars(sizes, dev.sms);
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

// Runs the plan once; a failed launch or a fault during the run becomes a KernelFault.
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
  r = cuStreamSynchronize(nullptr);
  if (r != CUDA_SUCCESS) {
    bool sticky = cu_error_is_sticky(r);
    throw KernelFault{sticky ? Status::RuntimeError : Status::LaunchError,
                      "while the kernels ran: " + cu_error_text(r), 0, sticky};
  }
}

json check_against_reference(const ProblemSpec& p, Buffers& b, const Config& cfg, bool* passed) {
  TensorMap ref_gpu;
  for (auto& [n, t] : b.ref_cpu) ref_gpu[n] = t.to(torch::Device(torch::kCUDA, 0));
  auto ov = cfg.tolerance_overrides.find(p.id);
  auto checks = compare_outputs(p, b.outputs, ref_gpu,
                                ov == cfg.tolerance_overrides.end() ? nullptr : &ov->second);
  json outs = json::array();
  *passed = true;
  for (const auto& c : checks) {
    outs.push_back(c.to_json());
    *passed &= c.passed;
  }
  return outs;
}

std::vector<std::string> modified_inputs(const TensorMap& before, const TensorMap& after) {
  std::vector<std::string> changed;
  for (const auto& [n, t] : before)
    if (!torch::equal(t.to(after.at(n).device()), after.at(n))) changed.push_back(n);
  return changed;
}

}  // namespace

TimingStats time_reference(const ProblemSpec& p, const std::vector<TensorMap>& inputs,
                           const Vars& sizes, const Config& cfg, L2Flusher* flusher,
                           CUresult* err) {
  const ReferenceEntry* entry = find_reference(p.id);
  if (!entry) throw std::runtime_error("no reference is registered for " + p.id);
  auto scalars = p.scalar_values();
  std::vector<RefContext> ctxs;
  for (const auto& in : inputs)
    ctxs.push_back(RefContext{in, sizes, scalars, torch::Device(torch::kCUDA, 0)});
  torch::NoGradGuard no_grad;
  return time_runs(
      [&](int k) {
        entry->run(ctxs[k]);
        return CUDA_SUCCESS;
      },
      [](int) {}, static_cast<int>(inputs.size()), cfg, nullptr, flusher, err);
}

EvalAnswer evaluate(const EvalRequest& req, const DeviceInfo& dev) {
  g_phases.clear();
  EvalAnswer res;
  res.status = Status::Correct;
  ProblemSpec p = load_problem(req.problem_dir);
  const Config& cfg = req.cfg;
  GpuModule mod;
  std::vector<Vars> size_sets = p.tests;
  size_sets.push_back(p.bench);
  if (req.sizes) size_sets = {*req.sizes};
  Vars bench = req.sizes ? *req.sizes : p.bench;

  json trials = json::array();
  auto fail = [&](Status status, const std::string& msg, int line) {
    res.status = status;
    res.error = ErrorInfo{status, msg, line, ""};
  };
  auto finish = [&]() -> EvalAnswer {
    res.phases_ms = g_phases;
    return res;
  };
  try {
    try {
      PhaseScope ph("module_load");
      mod.load(req.cubin, req.lowered);
    } catch (const LaunchError& e) {
      throw KernelFault{Status::LaunchError, e.what(), e.line, cu_error_is_sticky(e.code)};
    }
    // Correctness: every size set at least once, fresh inputs per trial, in a seeded random order.
    std::vector<Vars> order;
    int n_trials = std::max<int>(cfg.trials, static_cast<int>(size_sets.size()));
    for (int i = 0; i < n_trials; ++i) order.push_back(size_sets[i % size_sets.size()]);
    std::mt19937_64 rng(derive_seed(req.seed, "order"));
    std::shuffle(order.begin(), order.end(), rng);
    bool all_passed = true;
    for (int t = 0; t < n_trials && all_passed; ++t) {
      Buffers b = make_buffers(p, req.plan, mod, order[t], dev,
                               derive_seed(req.seed, "trial" + std::to_string(t)));
      TensorMap before;  // on the host, where the kernel cannot rewrite them to match
      {
        PhaseScope ph("inputs");
        for (const auto& [n, x] : b.inputs) before[n] = x.to(torch::kCPU);
        poison_outputs(p, b, nullptr);
      }
      {
        PhaseScope ph("kernel");
        run_plan_once(b);
      }
      bool passed = false;
      json trial = {{"sizes", sizes_json(p, order[t])}};
      std::vector<std::string> changed;
      {
        PhaseScope ph("check");
        trial["outputs"] = check_against_reference(p, b, cfg, &passed);
        changed = modified_inputs(before, b.inputs);
      }
      trial["modified_inputs"] = changed;
      passed &= changed.empty();
      // The same plan again on the very same buffers and inputs, outputs poisoned anew: a kernel
      // that skips work when it recognises a pointer, a flag or the data fails here, every time.
      std::string rerun_why;
      if (passed) {
        {
          PhaseScope ph("kernel");
          poison_outputs(p, b, nullptr);
          run_plan_once(b);
        }
        PhaseScope ph("check");
        bool again = false;
        json rerun = check_against_reference(p, b, cfg, &again);
        auto changed_again = modified_inputs(before, b.inputs);
        trial["rerun_passed"] = again && changed_again.empty();
        if (!changed_again.empty()) rerun_why = "it modified input '" + changed_again[0] + "'";
        for (const auto& o : rerun)
          if (!o["passed"].get<bool>() && rerun_why.empty())
            rerun_why =
                "output '" + o["name"].get<std::string>() + "': " + o["reason"].get<std::string>();
        passed = trial["rerun_passed"].get<bool>();
      }
      trial["passed"] = passed;
      trials.push_back(trial);
      if (!passed) {
        all_passed = false;
        std::string why;
        if (!rerun_why.empty())
          why = "run a second time on the same buffers and inputs, " + rerun_why +
                " (the kernel must compute its result on every call)";
        if (!changed.empty()) why = "the kernel modified input '" + changed[0] + "'";
        for (const auto& o : trial["outputs"])
          if (!o["passed"].get<bool>() && why.empty())
            why =
                "output '" + o["name"].get<std::string>() + "': " + o["reason"].get<std::string>();
        fail(Status::Incorrect,
             "trial " + std::to_string(t + 1) + " of " + std::to_string(n_trials) + " " +
                 trial["sizes"].dump() + ": " + why,
             0);
      }
    }
    res.correctness = {{"trials", trials},
                       {"n_trials", n_trials},
                       {"n_passed", static_cast<int>(trials.size()) - (all_passed ? 0 : 1)}};
    if (!all_passed || !req.time) return finish();

    // Timing on the bench size. Before every sample (untimed) the input set is overwritten with a
    // fresh draw, so no two timed runs see the same data: a kernel that memoises by pointer, flag
    // or content has to compute every time. Every timed run is verified before the next one starts,
    // against the reference for a draw regenerated from its seed (no copy a kernel could find and
    // rewrite stays on the device while it runs): skipping or deferring work in any run fails.
    int sets = std::max(1, cfg.input_sets);
    torch::Device cuda(torch::kCUDA, 0);
    std::vector<Buffers> bufs;
    for (int k = 0; k < sets; ++k)
      bufs.push_back(make_buffers(p, req.plan, mod, bench, dev,
                                  derive_seed(req.seed, "timing" + std::to_string(k))));
    std::vector<uint64_t> last_seed(sets, 0);
    std::vector<int> last_sample(sets, 0);
    int unchecked = -1;  // the set whose last run has not been verified yet
    std::string timed_failure;
    auto verify = [&](int k) {
      PhaseScope ph("verify");
      check_cu(cuStreamSynchronize(nullptr), "during timing");
      TensorMap want_inputs = make_inputs(p, bench, last_seed[k], cuda);
      auto changed = modified_inputs(want_inputs, bufs[k].inputs);
      TensorMap want = run_reference(p, want_inputs, bench);
      auto ov = cfg.tolerance_overrides.find(p.id);
      auto checks = compare_outputs(p, bufs[k].outputs, want,
                                    ov == cfg.tolerance_overrides.end() ? nullptr : &ov->second);
      bool passed = true;
      json outs = json::array();
      for (const auto& c : checks) outs.push_back(c.to_json()), passed &= c.passed;
      if (!changed.empty())
        timed_failure = "the kernel modified input '" + changed[0] + "' during timing";
      else if (!passed)
        timed_failure = "the output of timed run " + std::to_string(last_sample[k]) +
                        " is wrong (the kernel gives different results when called repeatedly)";
      if (!timed_failure.empty()) res.correctness["timed_check"] = outs;
    };
    L2Flusher flusher(dev.l2_bytes);
    CUresult err = CUDA_SUCCESS;
    int sample = 0;
    auto timing_t0 = std::chrono::steady_clock::now();
    double before_timing = g_phases["verify"] + g_phases["fresh_inputs"];
    TimingStats kt = time_runs(
        [&](int k) {
          if (!timed_failure.empty()) return CUDA_ERROR_NOT_PERMITTED;  // stop: already wrong
          const ReadyLaunch* failed = nullptr;
          return enqueue_launches(bufs[k].launches, nullptr, &failed);
        },
        [&](int k) {
          if (unchecked >= 0 && timed_failure.empty()) verify(unchecked);
          last_seed[k] = derive_seed(req.seed, "sample" + std::to_string(sample));
          last_sample[k] = ++sample;
          PhaseScope ph("fresh_inputs");
          TensorMap fresh = make_inputs(p, bench, last_seed[k], cuda);
          for (auto& [n, x] : bufs[k].inputs) x.copy_(fresh.at(n));
          fresh.clear();
          poison_outputs(p, bufs[k], nullptr);
          unchecked = k;
        },
        sets, cfg, nullptr, &flusher, &err);
    g_phases["timing"] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - timing_t0)
            .count() -
        (g_phases["verify"] + g_phases["fresh_inputs"] - before_timing);
    if (timed_failure.empty()) {
      check_cu(err, "during timing");
      if (unchecked >= 0) verify(unchecked);
      // The last run could have rewritten the other sets' inputs, on which the baseline is timed
      // next.
      for (int k = 0; k < sets && timed_failure.empty(); ++k) {
        if (k == unchecked || !last_seed[k]) continue;
        auto changed = modified_inputs(make_inputs(p, bench, last_seed[k], cuda), bufs[k].inputs);
        if (!changed.empty())
          timed_failure =
              "the kernel modified input '" + changed[0] + "' of another input set during timing";
      }
    }
    if (!timed_failure.empty()) {
      fail(Status::Incorrect, timed_failure, 0);
      return finish();
    }
    json timing = {{"kernel", kt.to_json()}, {"sizes", sizes_json(p, bench)}};
    if (req.baseline) {
      timing["baseline"] = *req.baseline;
      timing["baseline_source"] = "reused";
    } else {
      PhaseScope ph("baseline");
      std::vector<TensorMap> sets_inputs;
      for (auto& b : bufs) sets_inputs.push_back(b.inputs);
      TimingStats bt = time_reference(p, sets_inputs, bench, cfg, &flusher, &err);
      check_cu(err, "while timing the reference");
      timing["baseline"] = bt.to_json();
      timing["baseline_source"] = "measured";
    }
    res.timing = timing;
  } catch (const KernelFault& f) {
    fail(f.status, f.message, f.line);
    res.fatal = f.fatal;
    if (res.correctness.is_null()) res.correctness = {{"trials", trials}};
  } catch (const c10::Error& e) {
    // A torch call failing after the kernel ran means the context is broken: report and restart.
    CUresult r = cuCtxSynchronize();
    fail(Status::RuntimeError,
         r != CUDA_SUCCESS ? cu_error_text(r) : std::string("torch: ") + e.what_without_backtrace(),
         0);
    res.fatal = true;
    if (res.correctness.is_null()) res.correctness = {{"trials", trials}};
  }
  return finish();
}

}  // namespace kernrl
