// Training curves in `kernrl report` (docs/report.md, "Training curves"): records grouped by the
// trainer's step (`training.step`), or into time buckets of their `timestamp` where no record has
// a step, per series (the trainer's run, else the record's run), with format, compile and correct
// rates, reward mean and spread, speedup quantiles and the suspicious rate of each point.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "record/trace_record.h"

namespace kernrl::report {

// Seconds since the epoch of an ISO 8601 UTC timestamp ("2026-01-02T03:04:05Z", fractions and
// "+00:00" accepted); nullopt when it is not one.
std::optional<double> timestamp_seconds(const std::string& iso);

// The `curves` object (null when no record has a step or a timestamp): {x: "step" | "time",
// bucket_s (time only), series: [{series, points: [{step | time, samples, format_rate,
// compile_rate, correct_rate, mean_reward, reward_std, speedup_p10, speedup_p50, speedup_p90,
// timed, suspicious_rate}]}]}.
nlohmann::json curves_json(const std::vector<TraceRecord>& recs,
                           const std::vector<std::string>& run_order);

// The quantile q (0..1) of sorted values, linearly interpolated.
double quantile(const std::vector<double>& sorted, double q);

}  // namespace kernrl::report
