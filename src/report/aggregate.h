// Aggregation of trace records: the metrics of a group of records (pass@k, fast_p, geometric-mean
// speedup, rates, status counts), grouping by run, level or problem, run order, and the whole
// `kernrl.report.v3` object (docs/report.md, "Metrics" and "json").
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "record/trace_record.h"
#include "report/options.h"

namespace kernrl {

// The JSON output's schema name; bumped only when a key is removed or changes meaning.
constexpr const char* kReportSchema = "kernrl.report.v3";

// Unbiased pass@k estimator 1 - C(n-c, k) / C(n, k), computed as a stable product.
// Throws std::invalid_argument unless 1 <= k <= n and 0 <= c <= n.
double pass_at_k(int n, int c, int k);

namespace report {

// The records a report counts, after --run (not on the baseline), --reward and duplicate removal.
struct Prepared {
  std::vector<TraceRecord> records;       // with a known problem: these are aggregated
  std::vector<TraceRecord> unattributed;  // no known problem: outside every metric
  size_t duplicates = 0;                  // records dropped as duplicates
  bool has_baseline = false;              // opt.baseline was given
  std::vector<TraceRecord> baseline;      // the baseline's records with a known problem
};

// Throws SpecError on a bad reward preset.
Prepared prepare(const std::vector<TraceRecord>& records, const ReportOptions& opt,
                 const std::vector<TraceRecord>& baseline_records);

// The report object of docs/report.md; "files" and "malformed_lines" are left empty for the
// caller, who read the files.
nlohmann::json aggregate(const Prepared& prepared, const ReportOptions& opt, const Settings& s);

// The metrics object of one group of records (without its run/level/problem keys). With `pooled`
// (a group spanning levels: a run, a side of a comparison) and without s.pool_all, the speedup
// figures (geomean_speedup, timed_correct, fast_p) leave out records of problems whose
// problem.yaml says `score.pooled: false`, and `unpooled` says which.
nlohmann::json metrics(const std::vector<const TraceRecord*>& recs, const Settings& s,
                       bool pooled = false);

// A metrics object's value for a --sort metric, when it is a number.
std::optional<double> metric_value(const nlohmann::json& m, const SortMetric& s);

struct Group {
  std::string run;
  std::optional<int> level;
  std::optional<std::string> problem;
  std::vector<const TraceRecord*> recs;
  bool pooled = false;  // a run: its speedup figures are pooled across levels (metrics())
};

// Groups at the granularity `by` (run, level or problem): runs in `run_order` first (runs not in
// it first of all), then level (unknown last), then problem (problem_order).
std::vector<Group> group_records(const std::vector<TraceRecord>& recs, const std::string& by,
                                 const std::vector<std::string>& run_order);

// metrics() of the group plus its run, level and problem; a run group's speedup figures pooled
// (metrics()), a level's or a problem's over all of its records.
nlohmann::json group_json(const Group& g, const Settings& s);

// "L1_23_Softmax" sorts as (1, 23); ids of another shape sort after, by name.
std::tuple<int, int, std::string> problem_order(const std::string& id);

// Small statistics shared by the aggregation and the baseline comparison: null when empty.
nlohmann::json mean_or_null(const std::vector<double>& v);
nlohmann::json median_or_null(std::vector<double> v);
nlohmann::json rate(size_t num, size_t den);

}  // namespace report
}  // namespace kernrl
