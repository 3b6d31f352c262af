// `kernrl report`: aggregate trace records into pass@k / fast_p / speedup tables and charts
// (docs/report.md). The pieces: records.h (reading traces), aggregate.h (metrics and grouping),
// compare.h (against a baseline), render.h (one renderer per output format).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "report/aggregate.h"
#include "report/options.h"
#include "report/records.h"

namespace kernrl {

// The documented JSON output (docs/report.md). Applies opt.run, opt.reward_preset and duplicate
// removal itself; with opt.baseline set, reads that trace (malformed lines silently skipped) and
// fills "comparison". Throws UsageError on bad options (SpecError on a bad preset).
nlohmann::json aggregate(const std::vector<TraceRecord>& records, const ReportOptions& opt);
// The same, with the baseline's records already read (used when opt.baseline is non-empty).
nlohmann::json aggregate(const std::vector<TraceRecord>& records, const ReportOptions& opt,
                         const std::vector<TraceRecord>& baseline_records);
// The same for records as JSON objects (read with TraceRecord::from_json).
nlohmann::json aggregate(const std::vector<nlohmann::json>& records, const ReportOptions& opt);

// The aggregate as text in opt.format. Formats that plot single samples (html) have only the
// aggregate here and leave those charts out. Throws UsageError on an unknown format.
std::string render(const nlohmann::json& aggregated, const ReportOptions& opt);

// Reads inputs (malformed lines reported to `err` as "file:line: message" and skipped), aggregates,
// prints to `out`. Returns the problems that regressed against the baseline (with
// --fail-on-regression; the caller decides what that means). Throws UsageError (SpecError for a
// bad reward preset) when nothing can be reported: no inputs readable, bad options.
std::vector<std::string> run_report(const ReportOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace kernrl
