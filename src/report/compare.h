// A run compared with a baseline run, problem by problem (docs/report.md, "Comparison with a
// baseline").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/trace_record.h"
#include "report/options.h"

namespace kernrl::report {

// The "comparison" object: per problem the two sides' samples, correct samples and geometric-mean
// speedups, their deltas and a status (regressed, fixed, same, new, missing), plus the lists of
// regressed and fixed problems, the counts, and the metrics of each side pooled. Records without
// a problem are left out. `baseline_path` is what --baseline named.
nlohmann::json compare(const std::vector<TraceRecord>& current,
                       const std::vector<TraceRecord>& baseline, const Settings& s,
                       const std::string& baseline_path);

}  // namespace kernrl::report
