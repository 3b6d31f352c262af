#include "report/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "report/aggregate.h"
#include "report/records.h"
#include "report/scoring.h"

namespace kernrl::report {
using nlohmann::json;

namespace {

struct Side {
  int samples = 0, correct = 0;
  std::vector<double> log_speedups;                 // the records' own speedups
  std::map<std::string, std::vector<double>> over;  // ln speedup over "torch" / "kernel"
  std::set<std::string> kinds;                      // the baselines the own speedups are over
  std::optional<int> level;
};

std::map<std::string, Side> sides_by_problem(const std::vector<TraceRecord>& recs) {
  std::map<std::string, Side> out;
  for (const TraceRecord& r : recs) {
    auto p = rec::problem_of(r);
    if (!p) continue;  // cannot be matched across runs
    Side& s = out[*p];
    s.samples++;
    s.correct += rec::is_correct(r);
    if (auto sp = rec::counted_speedup(r)) {
      s.log_speedups.push_back(std::log(*sp));
      s.kinds.insert(speedup_kind(r));
    }
    for (const char* k : {"torch", "kernel"})
      if (auto v = speedup_over(r, k)) s.over[k].push_back(std::log(*v));
    if (!s.level) s.level = rec::level_of(r);
  }
  return out;
}

// `kind`: the baseline both sides' speedups are compared over ("" for the records' own).
json side_json(const Side& s, const std::string& kind, json* geomean) {
  const std::vector<double>* logs = &s.log_speedups;
  if (!kind.empty()) {
    static const std::vector<double> none;
    auto it = s.over.find(kind);
    logs = it != s.over.end() ? &it->second : &none;
  }
  json gm = mean_or_null(*logs);
  *geomean = gm.is_null() ? gm : json(std::exp(gm.get<double>()));
  return {{"samples", s.samples},
          {"correct", s.correct},
          {"correct_rate", rate(s.correct, s.samples)},
          {"geomean_speedup", *geomean}};
}

json pooled(const std::vector<TraceRecord>& recs, const Settings& s) {
  std::vector<const TraceRecord*> ptrs;
  std::set<std::string> runs;
  for (const TraceRecord& r : recs) {
    ptrs.push_back(&r);
    runs.insert(rec::run_of(r));
  }
  json m = metrics(ptrs, s, true);  // one side across levels: pooled speedups
  m["runs"] = runs;
  return m;
}

}  // namespace

json compare(const std::vector<TraceRecord>& current, const std::vector<TraceRecord>& baseline,
             const Settings& s, const std::string& baseline_path) {
  auto cur = sides_by_problem(current), base = sides_by_problem(baseline);
  std::set<std::string> ids;
  for (const auto& kv : cur) ids.insert(kv.first);
  for (const auto& kv : base) ids.insert(kv.first);
  std::vector<std::string> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) {
    return problem_order(a) < problem_order(b);
  });

  json problems = json::array(), regressions = json::array(), fixed = json::array();
  std::map<std::string, int> counts = {
      {"regressed", 0}, {"fixed", 0}, {"same", 0}, {"new", 0}, {"missing", 0}};
  for (const std::string& id : sorted) {
    const Side* c = cur.count(id) ? &cur.at(id) : nullptr;
    const Side* b = base.count(id) ? &base.at(id) : nullptr;
    std::string status = !b                                  ? "new"
                         : !c                                ? "missing"
                         : b->correct > 0 && c->correct == 0 ? "regressed"
                         : b->correct == 0 && c->correct > 0 ? "fixed"
                                                             : "same";
    counts[status]++;
    if (status == "regressed") regressions.push_back(id);
    if (status == "fixed") fixed.push_back(id);
    // Speedups are compared over one baseline: the records' own where both sides' are over the
    // same one, else over PyTorch, which every record gives (a trace from before the reference
    // kernel against a newer one).
    std::set<std::string> kinds;
    if (c) kinds.insert(c->kinds.begin(), c->kinds.end());
    if (b) kinds.insert(b->kinds.begin(), b->kinds.end());
    std::string kind = kinds.size() <= 1 ? "" : "torch";
    json cg = nullptr, bg = nullptr;
    json row = {{"problem", id}, {"status", status}};
    row["current"] = c ? side_json(*c, kind, &cg) : json(nullptr);
    row["baseline"] = b ? side_json(*b, kind, &bg) : json(nullptr);
    row["speedup_over"] = !kind.empty()   ? json(kind)
                          : kinds.empty() ? json(nullptr)
                                          : json(*kinds.begin());
    std::optional<int> level = c && c->level ? c->level : b ? b->level : std::nullopt;
    row["level"] = level ? json(*level) : json(nullptr);
    row["correct_rate_delta"] = c && b ? json(row["current"]["correct_rate"].get<double>() -
                                              row["baseline"]["correct_rate"].get<double>())
                                       : json(nullptr);
    bool both = cg.is_number() && bg.is_number();
    row["speedup_delta"] = both ? json(cg.get<double>() - bg.get<double>()) : json(nullptr);
    row["speedup_ratio"] = both ? json(cg.get<double>() / bg.get<double>()) : json(nullptr);
    problems.push_back(row);
  }
  return {{"baseline", baseline_path},
          {"problems", problems},
          {"regressions", regressions},
          {"fixed", fixed},
          {"counts", counts},
          {"current_metrics", pooled(current, s)},
          {"baseline_metrics", pooled(baseline, s)}};
}

}  // namespace kernrl::report
