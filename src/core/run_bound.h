// The deadline of one run of a kernel's launch plan, sized to the problem: the reference's time at
// that size times `timeouts.plan_run_factor`, never under `timeouts.plan_run_floor_s`, never over
// `timeouts.plan_run_s` (docs/grading.md, "Deadlines"). A hang then costs a fraction of a second
// on a small problem, and a kernel that finishes within the bound is never cut. Pure arithmetic,
// shared by the worker (which arms it) and the tests.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/problem.h"

namespace kernrl {

struct RunBound {
  double seconds = 0;  // the deadline armed (<= 0: none)
  // Where the reference's time came from: `reference` (measured by the worker at this size),
  // `baseline` (the timed size's baseline the request carried, from the baselines store or the
  // session, scaled up when this size does more work), `ceiling` (no time known: plan_run_s).
  std::string basis = "ceiling";
  std::optional<double> reference_ms;  // the reference's time it was derived from
  nlohmann::json sizes;                // the size set of the run (the record's `watchdog.sizes`)
  double factor = 0, floor_s = 0, ceiling_s = 0;  // the settings it was derived with
  // How long past `seconds` a run is still watched for a fault the GPU has not reported yet
  // (timeouts.fault_grace_s): a hang is cut at seconds + grace_s.
  double grace_s = 0;
  // How the bound was derived, in words (the message of a run it cuts).
  std::string why() const;
  // (The record's `watchdog` object is made of it by trace::watchdog_of, protocol/parts.h.)
};

// The bound for a run whose reference takes `reference_ms` (nullopt: unknown), under `cfg`.
RunBound run_bound(std::optional<double> reference_ms, const std::string& basis, const Config& cfg);

// The reference's time at `sizes` estimated from its time at the bench size: scaled by the larger
// of the flops and bytes ratios when `sizes` does more work than the bench size, else unchanged (a
// smaller size is given the bench size's time: a looser bound, never a tighter one).
double scale_reference_ms(const ProblemSpec& p, const Vars& sizes, double bench_ms);

// The grader's own work on a problem's tensors, per GiB at the bench size (drawing inputs, copies,
// running the reference, verifying): the allowance evaluation_timeout_s adds to timeouts.run_s.
constexpr double kEvaluationSecondsPerGiB = 5.0;

// How long the grader waits for one evaluation of a kernel on `p` before it kills the worker:
// timeouts.run_s plus kEvaluationSecondsPerGiB for each GiB of the problem's tensors at the bench
// size, so that a problem with 8 GiB inputs (KernelBench's losses) is not cut for the grader's own
// work. A hung kernel is cut sooner, by the run's own bound (run_bound).
double evaluation_timeout_s(const ProblemSpec& p, const Config& cfg);

}  // namespace kernrl
