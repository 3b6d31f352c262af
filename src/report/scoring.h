// How the problem set scores each problem's speed (problem.yaml `score`, docs/problem-format.md),
// looked up by the problem id a record names: whether its speedups join pooled (cross-level)
// figures, and which measure reports lead with. A problem kernrl does not have scores as the
// defaults (pooled, led by speedup).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/problem.h"
#include "record/trace_record.h"

namespace kernrl::report {

// The `score` of `problem` in the problem set (data_dir()/problems), read once per id.
const ScoreSpec& score_of(const std::string& problem);

// The record's problem's score (defaults for a record without a problem).
const ScoreSpec& score_of_record(const TraceRecord& r);

// Which baseline a record's `speedup` is against: the record's `baseline.kind`, "torch" for
// records without one (written before kernrl timed reference kernels).
std::string speedup_kind(const TraceRecord& r);

// The record's speedup over `kind` ("torch" or "kernel"): from `baseline.speedups`, or its
// `speedup` when that is against `kind`. Only a correct record's, and only a finite positive one.
std::optional<double> speedup_over(const TraceRecord& r, const std::string& kind);

}  // namespace kernrl::report
