#include "core/run_bound.h"

#include <algorithm>
#include <sstream>

namespace kernrl {

std::string RunBound::why() const {
  std::ostringstream o;
  o.precision(4);
  if (!reference_ms) {
    o << "timeouts.plan_run_s: no time of the reference at these sizes is known";
    return o.str();
  }
  o << factor << " x the reference's " << *reference_ms << " ms at these sizes ("
    << (basis == "reference" ? "measured by the worker" : "from the timed size's baseline")
    << "), at least " << floor_s << " s, at most " << ceiling_s
    << " s: timeouts.plan_run_factor, plan_run_floor_s, plan_run_s";
  return o.str();
}

RunBound run_bound(std::optional<double> reference_ms, const std::string& basis,
                   const Config& cfg) {
  RunBound b;
  b.seconds = b.ceiling_s = cfg.plan_run_timeout_s;
  b.factor = cfg.plan_run_factor;
  b.floor_s = cfg.plan_run_floor_s;
  b.grace_s = cfg.fault_grace_s;
  if (!reference_ms || *reference_ms < 0 || cfg.plan_run_timeout_s <= 0) return b;
  b.basis = basis;
  b.reference_ms = *reference_ms;
  double sized = *reference_ms / 1000 * cfg.plan_run_factor;
  b.seconds = std::min(cfg.plan_run_timeout_s, std::max(cfg.plan_run_floor_s, sized));
  return b;
}

double scale_reference_ms(const ProblemSpec& p, const Vars& sizes, double bench_ms) {
  double ratio = 1;
  auto grow = [&](double at, double bench) {
    if (at > 0 && bench > 0) ratio = std::max(ratio, at / bench);
  };
  try {
    grow(static_cast<double>(p.flops_at(sizes)), static_cast<double>(p.flops_at(p.bench)));
    grow(static_cast<double>(p.bytes_at(sizes)), static_cast<double>(p.bytes_at(p.bench)));
  } catch (const std::exception&) {
    // Work that cannot be computed at these sizes: the bench size's time as it is.
  }
  return bench_ms * ratio;
}

double evaluation_timeout_s(const ProblemSpec& p, const Config& cfg) {
  double gib = 0;
  try {
    gib = static_cast<double>(p.bytes_at(p.bench)) / (1024.0 * 1024.0 * 1024.0);
  } catch (const std::exception&) {
    gib = 0;  // a problem whose bytes cannot be computed: the configured timeout alone
  }
  return cfg.run_timeout_s + kEvaluationSecondsPerGiB * gib;
}

}  // namespace kernrl
