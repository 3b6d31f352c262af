#include "worker/evaluate.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>

#include "core/draws.h"
#include "worker/autotune.h"
#include "worker/checks.h"
#include "worker/compare.h"
#include "worker/compare_gpu.h"
#include "worker/cuda_check.h"
#include "worker/gpu_module.h"
#include "worker/inputs.h"
#include "worker/launch_facts.h"
#include "worker/phases.h"
#include "worker/plan_run.h"
#include "worker/scrub.h"
#include "worker/timer.h"
#include "worker/torchscript_reference.h"
#include "worker/watchdog.h"

namespace kernrl {
using nlohmann::json;

namespace {

json sizes_json(const ProblemSpec& p, const Vars& v) {
  json o = json::object();
  for (const auto& n : p.size_names) o[n] = v.at(n);
  return o;
}

// Overwrites every block the caching allocator holds free (worker/scrub.h): what earlier
// references, baselines and evaluations left there, before the kernel runs again.
void scrub() {
  PhaseScope ph("scrub");
  scrub_free_device_memory();
}

// A problem's spec, parsed once per worker and reused while its problem.yaml reads the same.
const ProblemSpec& cached_problem(const std::string& dir) {
  static std::map<std::string, std::pair<std::string, ProblemSpec>> cache;
  std::string text = read_problem_yaml(dir);
  auto it = cache.find(dir);
  if (it == cache.end() || it->second.first != text)
    it = cache.insert_or_assign(dir, std::make_pair(text, problem_from_yaml(dir, text))).first;
  return it->second.second;
}

// The reference's time at each size this worker has run it at, in ms (the best seen): the wall
// time of a trial's reference with its wait, or the timed baseline's median. Keyed by problem
// folder and sizes.
std::map<std::string, double>& known_reference_ms() {
  static std::map<std::string, double> known;
  return known;
}

std::string reference_key(const std::string& dir, const ProblemSpec& p, const Vars& sizes) {
  return dir + '\x1f' + sizes_json(p, sizes).dump();
}

void note_reference_ms(const std::string& dir, const ProblemSpec& p, const Vars& sizes, double ms) {
  auto [it, fresh] = known_reference_ms().emplace(reference_key(dir, p, sizes), ms);
  if (!fresh) it->second = std::min(it->second, ms);
}

// What the steps of one evaluation share.
struct Evaluation {
  const EvalRequest& req;
  const DeviceInfo& dev;
  const ProblemSpec& p;
  const GpuModule& mod;
  Vars bench;  // the timed size: the bench sizes, or the request's only size set
  EvalAnswer& res;
  json trials = json::array();
  bool bench_ran = false;                 // the plan has run at the timed size without a fault
  std::vector<Buffers> timing_bufs = {};  // the timing loop's input sets, kept for the launch facts
  LaunchPlan plan = {};  // the request's plan, with the autotuned configs kept (autotune.h)

  void fail(Status status, const std::string& msg, int line) {
    res.status = status;
    res.error = trace::make_error(status, msg, line);
  }

  // Sets the watchdog's deadline for plan runs at `sizes` (core/run_bound.h) and keeps the
  // largest armed for the answer's `watchdog`.
  void arm(const Vars& sizes) {
    RunBound b = bound_at(sizes);
    b.sizes = sizes_json(p, sizes);
    Watchdog::set_bound(b);
    if (!res.watchdog || b.seconds > res.watchdog->bound_s.value_or(0.0))
      res.watchdog = trace::watchdog_of(b);
  }

  // The reference's time at `sizes`: as this worker measured it there, else from the baseline the
  // request carried (the timed size's), else measured now on a draw of its own (inputs no trial
  // uses: the answer it leaves on the device is for other inputs).
  RunBound bound_at(const Vars& sizes) {
    const Config& cfg = *req.cfg;
    auto known = known_reference_ms().find(reference_key(*req.problem_dir, p, sizes));
    if (known != known_reference_ms().end()) return run_bound(known->second, "reference", cfg);
    if (req.baseline && req.baseline->median_ms)
      return run_bound(scale_reference_ms(p, sizes, *req.baseline->median_ms), "baseline", cfg);
    if (cfg.plan_run_timeout_s <= cfg.plan_run_floor_s) return run_bound(std::nullopt, "", cfg);
    PhaseScope ph("bound_reference");
    try {
      TensorMap in = make_inputs(p, sizes, draws::bound(*req.seed), torch::Device(torch::kCUDA, 0));
      auto t0 = std::chrono::steady_clock::now();
      run_reference(p, in, sizes);
      CU_CHECK(cuStreamSynchronize(nullptr));
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      note_reference_ms(*req.problem_dir, p, sizes, ms);
      return run_bound(ms, "reference", cfg);
    } catch (const std::exception& err) {
      // Not the kernel's doing (it has not run at these sizes yet): the ceiling, and the trial's
      // own reference says what is wrong.
      std::fprintf(stderr, "kernrl-worker: the reference's time is unknown: %s\n", err.what());
      return run_bound(std::nullopt, "", cfg);
    }
  }
};

// Correctness: every size set at least once, fresh inputs per trial, in a seeded random order.
// Sets res.correctness; false when a trial failed (res says why). A kernel's fault leaves as
// KernelFault, with the trials so far in e.trials.
bool run_trials(Evaluation& e, const std::vector<Vars>& size_sets) {
  const EvalRequest& req = e.req;
  const ProblemSpec& p = e.p;
  const Config& cfg = *req.cfg;
  std::vector<Vars> order;
  int n_trials = std::max<int>(cfg.trials, static_cast<int>(size_sets.size()));
  for (int i = 0; i < n_trials; ++i) order.push_back(size_sets[i % size_sets.size()]);
  std::mt19937_64 rng(draws::trial_order(*req.seed));
  std::shuffle(order.begin(), order.end(), rng);
  bool all_passed = true;
  // Each trial: fresh inputs, the plan run twice on the same buffers (outputs poisoned before
  // each run), and only then the reference, on a copy of the inputs regenerated from the trial's
  // seed. While the kernel runs, no answer for its inputs exists anywhere on the device, and the
  // leftovers of earlier trials' references are answers for other inputs. A kernel that skips
  // work when it recognises a pointer, a flag or the data fails the second run, every time.
  torch::Device cuda(torch::kCUDA, 0);
  for (int t = 0; t < n_trials && all_passed; ++t) {
    uint64_t seed = draws::trial(*req.seed, t);
    e.arm(order[t]);
    // What earlier trials and the deadline's reference run computed is gone before this trial's
    // buffers are taken from the freed memory.
    scrub();
    Buffers b = make_buffers(p, e.plan, e.mod, order[t], e.dev, seed);
    TensorMap first;
    {
      PhaseScope ph("kernel");
      poison_outputs(p, b, nullptr);
      run_plan_once(b);
      for (const auto& [n, x] : b.outputs) first[n] = x.clone();
      poison_outputs(p, b, nullptr);
      run_plan_once(b);
      check_guards(b, "in trial " + std::to_string(t + 1) + " of " + std::to_string(n_trials) +
                          " " + sizes_json(p, order[t]).dump());
    }
    if (order[t] == e.bench) e.bench_ran = true;
    TensorMap pristine, want;
    {
      PhaseScope ph("inputs");
      pristine = make_inputs(p, order[t], seed, cuda);
    }
    {
      PhaseScope ph("reference");
      auto t0 = std::chrono::steady_clock::now();
      want = run_reference(p, pristine, order[t]);
      // The reference's kernels run asynchronously: wait, so their time counts here, not in the
      // comparison after them.
      CU_CHECK(cuStreamSynchronize(nullptr));
      note_reference_ms(
          *req.problem_dir, p, order[t],
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    PhaseScope ph("check");
    json trial = {{"sizes", sizes_json(p, order[t])}};
    TrialChecks c = check_trial(p, first, b.outputs, want, pristine, b.inputs, cfg);
    trial["outputs"] = c.outputs;
    const std::vector<std::string>& changed = c.changed;
    trial["modified_inputs"] = changed;
    bool passed = c.first_passed && changed.empty();
    std::string rerun_why;
    if (passed) {
      trial["rerun_passed"] = c.rerun_passed;
      rerun_why = c.rerun_why;
      passed = c.rerun_passed;
    }
    trial["passed"] = passed;
    e.trials.push_back(trial);
    if (!passed) {
      all_passed = false;
      std::string why;
      if (!rerun_why.empty())
        why = "run a second time on the same buffers and inputs, " + rerun_why +
              " (the kernel must compute its result on every call)";
      if (!changed.empty()) why = "the kernel modified input '" + changed[0] + "'";
      if (why.empty()) why = first_failure(trial["outputs"]);
      e.fail(Status::Incorrect,
             "trial " + std::to_string(t + 1) + " of " + std::to_string(n_trials) + " " +
                 trial["sizes"].dump() + ": " + why,
             0);
    }
  }
  e.res.correctness = json{{"trials", e.trials},
                           {"n_trials", n_trials},
                           {"n_passed", static_cast<int>(e.trials.size()) - (all_passed ? 0 : 1)}};
  return all_passed;
}

// Timing on the bench size. Before every timed run (untimed) its input set is overwritten with a
// fresh draw, so no two timed runs see the same data: a kernel that memoises by pointer, flag or
// content has to compute every time. Every timed run is verified before the next one starts: its
// inputs unchanged (the fingerprint taken after the draw, with a key drawn for that run, against
// one taken afterwards) and its outputs against the reference run on them; no copy of the inputs
// or answer a kernel could find and rewrite is on the device while it runs. The warm-up runs share
// the sets' first draw and are not verified: their outputs are not used, and the first timed run
// of each set gets a fresh draw. Sets res.timing, or fails res as incorrect.
void time_kernel(Evaluation& e) {
  const EvalRequest& req = e.req;
  const ProblemSpec& p = e.p;
  const Config& cfg = *req.cfg;
  const Vars& bench = e.bench;
  EvalAnswer& res = e.res;
  auto& phases = phase_totals();
  torch::Device cuda(torch::kCUDA, 0);
  int sets = std::max(1, cfg.input_sets);
  std::vector<Buffers>& bufs = e.timing_bufs;
  // Nothing the trials' references left is readable during the timed runs, nor in the memory the
  // timing sets are taken from.
  scrub();
  for (int k = 0; k < sets; ++k)
    bufs.push_back(make_buffers(p, e.plan, e.mod, bench, e.dev, draws::timing_set(*req.seed, k)));
  std::vector<uint64_t> last_seed(sets, 0);
  std::vector<int> last_sample(sets, 0);
  // Per set: the key of its last draw's fingerprints and the fingerprints, input by input.
  static std::mt19937_64 keys(std::random_device{}());
  std::vector<uint64_t> key(sets, 0);
  std::vector<std::map<std::string, uint64_t>> drawn(sets);
  GpuTally& tally = GpuTally::get();
  // The fingerprints of set k's inputs now, under its key: one kernel per input, one read-back.
  auto fingerprints = [&](int k) {
    tally.clear();
    std::map<std::string, int> slots;
    for (const auto& [n, x] : bufs[k].inputs) {
      slots[n] = tally.add_fingerprint(x, key[k]);
      if (slots[n] < 0) throw std::runtime_error("cannot fingerprint input '" + n + "'");
    }
    tally.read();
    std::map<std::string, uint64_t> f;
    for (const auto& [n, slot] : slots) f[n] = tally.fingerprint(slot);
    return f;
  };
  // The inputs of set k that differ from its last draw.
  auto changed_inputs = [&](int k) {
    std::vector<std::string> changed;
    for (const auto& [n, f] : fingerprints(k))
      if (f != drawn[k].at(n)) changed.push_back(n);
    return changed;
  };
  int unchecked = -1;  // the set whose last timed run has not been verified yet
  std::string timed_failure;
  auto verify = [&](int k) {
    TensorMap want;
    std::vector<std::string> changed;
    {
      PhaseScope ph("verify_inputs");
      check_kernel_result(CU_RESULT(cuStreamSynchronize(nullptr)).code, "during timing");
      check_guards(bufs[k], "in timed run " + std::to_string(last_sample[k]));
      changed = changed_inputs(k);
    }
    {
      PhaseScope ph("verify_reference");
      // On the run's own inputs, now known to be the draw; when the kernel changed them, on the
      // draw regenerated (for the record's comparison).
      want = run_reference(
          p, changed.empty() ? bufs[k].inputs : make_inputs(p, bench, last_seed[k], cuda), bench);
      CU_CHECK(cuStreamSynchronize(nullptr));  // its GPU time counts here
    }
    PhaseScope ph("verify_compare");
    // The verdict first, from one read-back; the comparison in words only for the record of a
    // failure.
    bool passed = changed.empty() && outputs_pass_quickly(p, bufs[k].outputs, want, cfg);
    json outs;
    if (!passed) outs = compare_with_reference(p, bufs[k].outputs, want, cfg, &passed, true);
    if (!changed.empty())
      timed_failure = "the kernel modified input '" + changed[0] + "' during timing";
    else if (!passed)
      timed_failure = "the output of timed run " + std::to_string(last_sample[k]) +
                      " is wrong (the kernel gives different results when called repeatedly)";
    if (!timed_failure.empty()) res.correctness.emplace()["timed_check"] = outs;
  };
  L2Flusher& flusher = L2Flusher::shared(e.dev.l2_bytes);
  CUresult err = CUDA_SUCCESS;
  int sample = 0;
  auto timing_t0 = std::chrono::steady_clock::now();
  auto verify_ms = [&] {
    return phases["verify_inputs"] + phases["verify_reference"] + phases["verify_compare"] +
           phases["fresh_inputs"];
  };
  double before_timing = verify_ms();
  trace::Stats kt = time_runs(
      [&](int k) {
        if (!timed_failure.empty()) return CUDA_ERROR_NOT_PERMITTED;  // stop: already wrong
        const ReadyLaunch* failed = nullptr;
        return enqueue_launches(bufs[k].launches, nullptr, &failed);
      },
      [&](int k, bool timed) {
        if (!timed) {  // a warm-up run: the set's draw as it is, scratch zeroed as before any run
          poison_outputs(p, bufs[k], nullptr);
          return;
        }
        if (unchecked >= 0 && timed_failure.empty()) verify(unchecked);
        last_seed[k] = draws::sample(*req.seed, sample);
        last_sample[k] = ++sample;
        PhaseScope ph("fresh_inputs");
        refill_inputs(p, bench, last_seed[k], bufs[k].inputs);
        poison_outputs(p, bufs[k], nullptr);
        key[k] = keys();
        drawn[k] = fingerprints(k);  // waits for the draw: its GPU time counts here
        unchecked = k;
      },
      sets, cfg, nullptr, &flusher, &err);
  phases["timing"] +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - timing_t0)
          .count() -
      (verify_ms() - before_timing);
  if (timed_failure.empty()) {
    check_kernel_result(err, "during timing");
    if (unchecked >= 0) verify(unchecked);
    for (int k = 0; k < sets; ++k) check_guards(bufs[k], "during timing");
    // The last run could have rewritten the other sets' inputs.
    for (int k = 0; k < sets && timed_failure.empty(); ++k) {
      if (k == unchecked || !last_seed[k]) continue;
      auto changed = changed_inputs(k);
      if (!changed.empty())
        timed_failure =
            "the kernel modified input '" + changed[0] + "' of another input set during timing";
    }
  }
  if (!timed_failure.empty()) {
    e.fail(Status::Incorrect, timed_failure, 0);
    return;
  }
  trace::Timing timing;
  timing.kernel = kt;
  Vars named;  // the problem's sizes (the plan's own variables left out)
  for (const auto& n : p.size_names) named[n] = bench.at(n);
  timing.sizes = named;
  if (req.baseline) {
    timing.baseline = *req.baseline;
    timing.baseline_source = "reused";
  } else {
    // On draws of its own, which no run of the kernel gets; what its runs leave in memory is
    // overwritten before the kernel runs again.
    std::vector<TensorMap> sets_inputs;
    {
      PhaseScope ph("inputs");
      for (int k = 0; k < sets; ++k) {
        refill_inputs(p, bench, draws::baseline(*req.seed, k), bufs[k].inputs);
        sets_inputs.push_back(bufs[k].inputs);
      }
    }
    trace::Stats bt;
    {
      PhaseScope ph("baseline");
      bt = time_reference(p, sets_inputs, bench, cfg, &flusher, &err);
    }
    check_kernel_result(err, "while timing the reference");
    scrub();
    note_reference_ms(*req.problem_dir, p, bench, *bt.median_ms);
    timing.baseline = std::move(bt);
    timing.baseline_source = "measured";
  }
  res.timing = timing;
}

// The record's `launches`, after grading: each launch's configuration, resources and occupancy at
// the timed size and, when the plan has already run there without a fault, each launch's time
// from one more (untimed) run. The facts never change the answer's status: when they cannot be
// gathered they are left out (what failed goes to the worker's log), and a failure that broke the
// CUDA context only makes the answer fatal, so the worker restarts.
void add_launch_facts(Evaluation& e) {
  EvalAnswer& res = e.res;
  auto note = [](const std::string& why) {
    std::fprintf(stderr, "kernrl-worker: no launch facts: %s\n", why.c_str());
  };
  try {
    if (e.bench_ran) {
      // The timing loop's first input set when there is one, with a fresh draw; new buffers
      // otherwise.
      uint64_t seed = draws::launches(*e.req.seed);
      Buffers made;
      if (e.timing_bufs.empty()) made = make_buffers(e.p, e.plan, e.mod, e.bench, e.dev, seed);
      Buffers& b = e.timing_bufs.empty() ? made : e.timing_bufs.front();
      if (!e.timing_bufs.empty()) {
        PhaseScope ph("inputs");
        refill_inputs(e.p, e.bench, seed, b.inputs);
      }
      PhaseScope ph("launches");
      std::vector<trace::Launch> facts = describe_launches(e.plan, b.launches);
      time_launches(e.p, b, e.dev, &facts);
      if (!facts.empty()) res.launches = std::move(facts);
      check_guards(b, "in the run that measured each launch");
    } else {
      PhaseScope ph("launches");
      Vars vars;
      try {
        vars = plan_vars(e.plan, e.p, e.bench, e.dev.sms);  // the launch block's values too
      } catch (const ExprError& x) {
        throw KernelFault{Status::LaunchError, x.what(), e.plan.line, false};
      }
      std::vector<trace::Launch> facts =
          describe_launches(e.plan, launches_without_buffers(e.plan, e.mod, e.p, vars));
      if (!facts.empty()) res.launches = std::move(facts);
    }
  } catch (const KernelFault& f) {
    note(f.message);
    res.fatal = res.is_fatal() || f.fatal;
  } catch (const CudaError& err) {
    note(err.what());
    res.fatal = res.is_fatal() || err.sticky();
  } catch (const c10::Error& err) {
    note(std::string("torch: ") + err.what_without_backtrace());
    res.fatal = res.is_fatal() || !CU_RESULT(cuCtxSynchronize());
  } catch (const std::exception& err) {
    note(err.what());
  }
}

// At the end of an evaluation: nothing its references and baselines computed is left readable to
// the next evaluation in this worker. A failure here never changes the status; one that broke the
// context makes the answer fatal, so the worker restarts.
void scrub_after(EvalAnswer& res) {
  try {
    scrub();
  } catch (const CudaError& err) {
    std::fprintf(stderr, "kernrl-worker: could not overwrite freed memory: %s\n", err.what());
    res.fatal = true;
  } catch (const std::exception& err) {
    std::fprintf(stderr, "kernrl-worker: could not overwrite freed memory: %s\n", err.what());
  }
}

}  // namespace

trace::Stats time_reference(const ProblemSpec& p, const std::vector<TensorMap>& inputs,
                            const Vars& sizes, const Config& cfg, L2Flusher* flusher,
                            CUresult* err) {
  const ReferenceEntry* entry = reference_for(p);
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
      [](int, bool) {}, static_cast<int>(inputs.size()), cfg, nullptr, flusher, err);
}

EvalAnswer evaluate(const EvalRequest& req, const DeviceInfo& dev) {
  auto& phases = phase_totals();
  phases.clear();
  auto eval_t0 = std::chrono::steady_clock::now();
  EvalAnswer res;
  res.status = Status::Correct;
  const ProblemSpec& p = cached_problem(*req.problem_dir);
  GpuModule mod;
  std::vector<Vars> size_sets = p.tests;
  size_sets.push_back(p.bench);
  if (req.sizes) size_sets = {*req.sizes};
  Evaluation e{req, dev, p, mod, req.sizes ? *req.sizes : p.bench, res};
  e.plan = *req.plan;

  auto finish = [&]() -> EvalAnswer {
    double attributed = 0;
    for (const auto& [k, v] : phases) attributed += v;
    phases["other"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - eval_t0)
            .count() -
        attributed;
    res.phases_ms = phases;
    return res;
  };
  bool loaded = false;  // the module is loaded: from here on the kernel runs
  try {
    try {
      PhaseScope ph("module_load");
      mod.load(*req.cubin, *req.lowered,
               req.modules.value_or(std::map<std::string, std::string>{}));
    } catch (const LaunchError& err) {
      throw KernelFault{Status::LaunchError, err.what(), err.line, cu_error_is_sticky(err.code)};
    }
    loaded = true;
    if (req.time.value_or(true)) {
      // Autotuned Triton kernels: each config timed at the bench size, the fastest kept; then
      // the kept configs are checked and timed as any kernel.
      e.arm(e.bench);
      std::vector<AutotuneChoice> tuned =
          autotune_plan(e.plan, p, mod, e.bench, dev, *req.cfg, draws::autotune(*req.seed));
      if (!tuned.empty()) res.autotune = std::move(tuned);
    }
    if (run_trials(e, size_sets) && req.time.value_or(true)) time_kernel(e);
  } catch (const KernelFault& f) {
    e.fail(f.status, f.message, f.line);
    res.fatal = f.fatal;
    if (!res.correctness) res.correctness = json{{"trials", e.trials}};
  } catch (const CudaError& err) {
    // One of the grader's own driver calls failed. A sticky error means the context is unusable:
    // once the kernel has run, the kernel broke it (a fault its own runs did not report) and the
    // worker restarts. Any other error is kernrl's failure, not the kernel's.
    if (err.sticky() && loaded) {
      e.fail(
          Status::RuntimeError,
          "the kernel faulted: " + err.error_text() + " (reported by " + err.site().where() + ")",
          0);
    } else {
      e.fail(Status::InternalError, err.what(), 0);
    }
    res.fatal = err.sticky() || !CU_RESULT(cuCtxSynchronize());
    if (!res.correctness) res.correctness = json{{"trials", e.trials}};
  } catch (const c10::Error& err) {
    // A torch call failing after the kernel ran means the context is broken: report and restart.
    CuResult r = CU_RESULT(cuCtxSynchronize());
    e.fail(Status::RuntimeError,
           !r ? r.text() : std::string("torch: ") + err.what_without_backtrace(), 0);
    res.fatal = true;
    if (!res.correctness) res.correctness = json{{"trials", e.trials}};
  }
  if (loaded && !res.is_fatal() &&
      (res.status_is(Status::Correct) || res.status_is(Status::Incorrect) ||
       res.status_is(Status::LaunchError)))
    add_launch_facts(e);
  if (!res.is_fatal()) scrub_after(res);
  return finish();
}

}  // namespace kernrl
