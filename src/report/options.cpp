#include "report/options.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "core/errors.h"
#include "report/render.h"

namespace kernrl::report {

namespace {

const char* const kPlainMetrics[] = {
    "samples",     "problems",        "format_rate",         "compile_rate", "correct_rate",
    "mean_reward", "geomean_speedup", "median_sol_fraction", "suspicious",   "mean_sol_fraction"};

}  // namespace

SortMetric parse_sort(const std::string& s) {
  SortMetric m;
  m.name = s;
  for (const char* name : kPlainMetrics)
    if (s == name) {
      m.kind = "plain";
      m.lower_is_better = s == "suspicious";
      return m;
    }
  try {
    size_t used = 0;
    if (s.rfind("pass@", 0) == 0) {
      m.kind = "pass";
      m.k = std::stoi(s.substr(5), &used);
      if (used == s.size() - 5 && m.k >= 1) return m;
    } else if (s.rfind("fast_", 0) == 0) {
      m.kind = "fast";
      m.p = std::stod(s.substr(5), &used);
      if (used == s.size() - 5) return m;
    }
  } catch (const std::exception&) {
  }
  std::string all;
  for (const char* name : kPlainMetrics) all += std::string(name) + ", ";
  throw UsageError("unknown --sort metric '" + s + "' (one of " + all + "pass@K, fast_P)");
}

Settings settings_of(const ReportOptions& opt) {
  if (opt.by != "run" && opt.by != "level" && opt.by != "problem" && opt.by != "turn" &&
      opt.by != "trajectory" && opt.by != "step")
    throw UsageError("--by must be run, level, problem, turn, trajectory or step (got '" + opt.by +
                     "')");
  if (!(opt.gamma >= 0 && opt.gamma <= 1)) throw UsageError("--gamma must be from 0 to 1");
  if (!find_format(opt.format)) {
    std::vector<std::string> names = report_formats();
    std::string list;
    for (size_t i = 0; i < names.size(); ++i)
      list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    throw UsageError("--format must be " + list + " (got '" + opt.format + "')");
  }
  Settings s;
  std::set<int> ks(opt.ks.begin(), opt.ks.end());
  std::set<double> ps(opt.ps.begin(), opt.ps.end());
  if (!opt.sort.empty()) {
    s.sort = parse_sort(opt.sort);
    if (s.sort->kind == "pass") ks.insert(s.sort->k);
    if (s.sort->kind == "fast") ps.insert(s.sort->p);
  }
  for (int k : ks)
    if (k < 1) throw UsageError("--k values must be >= 1 (got " + std::to_string(k) + ")");
  for (double p : ps)
    if (!std::isfinite(p)) throw UsageError("--p values must be finite numbers");
  s.pool_all = opt.pool_all;
  s.ks.assign(ks.begin(), ks.end());
  s.ps.assign(ps.begin(), ps.end());
  return s;
}

std::string num_key(double p) {
  char b[40];
  std::snprintf(b, sizeof b, "%.15g", p);
  return b;
}

}  // namespace kernrl::report
