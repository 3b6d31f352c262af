// `kernrl report`: aggregate trace records into pass@k / fast_p / speedup tables (docs/report.md).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace kernrl {

struct ReportOptions {
  std::vector<std::string>
      inputs;  // trace files or directories (a directory: every *.jsonl inside, recursively)
  std::string by = "run";                             // run | level | problem
  std::vector<int> ks = {1};                          // pass@k
  std::vector<double> ps = {0, 0.5, 0.8, 1, 1.5, 2};  // fast_p thresholds
  std::string format = "md";                          // md | csv | json
  std::string sort;      // metric name for a leaderboard across runs (e.g. fast_1, pass@1,
                         // geomean_speedup, correct_rate, mean_reward)
  std::string baseline;  // another trace file/dir: compare runs (per-problem correctness and
                         // speedup deltas, regressions)
  bool fail_on_regression = false;
  std::string reward_preset;  // non-empty: rescore every record with this preset before aggregating
  std::string run;            // non-empty: only records of this run
};

// The JSON output's schema name; bumped only when a key is removed or changes meaning.
constexpr const char* kReportSchema = "kernrl.report.v2";

// Unbiased pass@k estimator 1 - C(n-c, k) / C(n, k), computed as a stable product.
// Throws std::invalid_argument unless 1 <= k <= n and 0 <= c <= n.
double pass_at_k(int n, int c, int k);

// Records with the same (run, file, source_sha256) are one sample graded twice (a resumed run):
// keeps the last of each, in its place. `dropped` (optional) gets the number removed.
std::vector<nlohmann::json> drop_duplicates(const std::vector<nlohmann::json>& records,
                                            size_t* dropped);

// The documented JSON output (docs/report.md). Applies opt.run, opt.reward_preset and duplicate
// removal itself; with opt.baseline set, reads that trace (malformed lines silently skipped) and
// fills "comparison". Throws std::invalid_argument on bad options, SpecError on a bad preset.
nlohmann::json aggregate(const std::vector<nlohmann::json>& records, const ReportOptions& opt);
// The same, with the baseline's records already read (used when opt.baseline is non-empty).
nlohmann::json aggregate(const std::vector<nlohmann::json>& records, const ReportOptions& opt,
                         const std::vector<nlohmann::json>& baseline_records);

// md (for people), csv (one table) or json (the aggregate, pretty-printed) text.
std::string render(const nlohmann::json& aggregated, const ReportOptions& opt);

// Reads inputs (malformed lines reported to `err` as "file:line: message" and skipped), aggregates,
// prints to `out`. Returns 0, or 1 when --fail-on-regression and a problem regressed, or 2 on usage
// errors (no inputs readable, bad options).
int run_report(const ReportOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace kernrl
