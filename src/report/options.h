// The options of `kernrl report` (docs/report.md, "Options") and the settings they resolve to.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kernrl {

struct ReportOptions {
  std::vector<std::string>
      inputs;  // trace files or directories (a directory: every *.jsonl inside, recursively)
  std::string by = "run";     // run | level | problem | turn | trajectory | step
  double gamma = 0.4;         // the discount of trajectories' returns (docs/report.md)
  std::vector<int> ks = {1};  // pass@k
  std::vector<double> ps = {0, 0.5, 0.8, 1, 1.5, 2};  // fast_p thresholds
  std::string format = "md";                          // a name of report_formats()
  std::string sort;      // metric name for a leaderboard across runs (e.g. fast_1, pass@1,
                         // geomean_speedup, correct_rate, mean_reward)
  std::string baseline;  // another trace file/dir: compare runs (per-problem correctness and
                         // speedup deltas, regressions)
  bool fail_on_regression = false;
  std::string reward_preset;  // non-empty: rescore every record with this preset before aggregating
  std::string run;            // non-empty: only records of this run
  // Pool every level's speedups in the run-wide figures, also those of problems whose
  // problem.yaml says `score.pooled: false` (left out by default).
  bool pool_all = false;
};

namespace report {

// A --sort metric: a plain metric key, pass@K or fast_P.
struct SortMetric {
  std::string name;  // as given
  std::string kind;  // plain | pass | fast
  int k = 0;
  double p = 0;
  bool lower_is_better = false;
};

// Throws UsageError naming the metrics there are.
SortMetric parse_sort(const std::string& s);

// What the options resolve to: the k and p lists actually computed (the requested ones plus the
// --sort metric's, sorted, without repeats) and the sort metric.
struct Settings {
  std::vector<int> ks;
  std::vector<double> ps;
  std::optional<SortMetric> sort;
  bool pool_all = false;  // --pool-all
};

// Checks --by, --format, --sort, --k and --p; throws UsageError on a bad value.
Settings settings_of(const ReportOptions& opt);

// "0.5", "1", "1.5": the key of a fast_p threshold (shortest form).
std::string num_key(double p);

}  // namespace report
}  // namespace kernrl
