#include "worker/autotune.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "worker/phases.h"
#include "worker/plan_run.h"
#include "worker/timer.h"

namespace kernrl {

namespace {

std::vector<std::string> tuning_groups(const LaunchPlan& plan) {
  std::vector<std::string> groups;
  for (const auto& l : plan.launches)
    if (!l.autotune.empty() &&
        std::find(groups.begin(), groups.end(), l.tune_group) == groups.end())
      groups.push_back(l.tune_group);
  return groups;
}

// Puts choice `c` into every launch of `group`.
void choose(LaunchPlan& plan, const std::string& group, size_t c) {
  for (auto& l : plan.launches)
    if (l.tune_group == group && c < l.autotune.size()) l.choose(c);
}

// The median time of the plan as it stands on `b`, or nothing when it cannot be launched so.
std::optional<double> time_choice(LaunchPlan& plan, const ProblemSpec& p, const GpuModule& mod,
                                  const Vars& vars, Buffers& b, const Config& cfg,
                                  L2Flusher& flusher, const std::string& what) {
  try {
    b.launches = prepare_launches(plan, mod, p, vars, b.ptrs);
  } catch (const LaunchError& e) {
    if (cu_error_is_sticky(e.code)) throw KernelFault{Status::RuntimeError, e.what(), e.line, true};
    return std::nullopt;
  }
  CUresult err = CUDA_SUCCESS;
  trace::Stats s = time_runs(
      [&](int) {
        const ReadyLaunch* failed = nullptr;
        return enqueue_launches(b.launches, nullptr, &failed);
      },
      [&](int, bool) { poison_outputs(p, b, nullptr); }, 1, cfg, nullptr, &flusher, &err);
  if (err != CUDA_SUCCESS) {
    if (cu_error_is_sticky(err)) check_kernel_result(err, what);
    return std::nullopt;  // the config cannot be launched (resources): Triton skips it too
  }
  return s.median_ms ? std::optional<double>(*s.median_ms) : std::nullopt;
}

}  // namespace

std::vector<AutotuneChoice> autotune_plan(LaunchPlan& plan, const ProblemSpec& p,
                                          const GpuModule& mod, const Vars& bench,
                                          const DeviceInfo& dev, const Config& cfg, uint64_t seed) {
  std::vector<std::string> groups = tuning_groups(plan);
  if (groups.empty()) return {};
  Buffers b = make_buffers(p, plan, mod, bench, dev, seed);
  PhaseScope ph("autotune");
  Vars vars = plan_vars(plan, p, bench, dev.sms);
  Config tc = cfg;
  tc.warmup = 1;
  tc.min_samples = tc.max_samples = kAutotuneSamples;
  L2Flusher& flusher = L2Flusher::shared(dev.l2_bytes);
  std::vector<AutotuneChoice> out;
  for (const std::string& g : groups) {
    const LaunchSpec* first = nullptr;
    for (const auto& l : plan.launches)
      if (l.tune_group == g && !first) first = &l;
    const std::vector<LaunchChoice> choices = first->autotune;
    AutotuneChoice ch;
    ch.group = g;
    int configs = 0;
    for (const auto& c : choices) configs = std::max(configs, c.config + 1);
    std::vector<std::optional<double>>& times = ch.times_ms.emplace();
    times.assign(static_cast<size_t>(configs), std::nullopt);
    size_t best = 0;
    double best_ms = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < choices.size(); ++c) {
      choose(plan, g, c);
      std::optional<double> ms = time_choice(
          plan, p, mod, vars, b, tc, flusher,
          "while timing autotune config " + std::to_string(choices[c].config + 1) + " of " + g);
      times[static_cast<size_t>(choices[c].config)] = ms;
      if (ms && *ms < best_ms) {
        best_ms = *ms;
        best = c;
      }
    }
    choose(plan, g, best);
    ch.config = choices[best].config;
    out.push_back(ch);
  }
  return out;
}

}  // namespace kernrl
