#include "report/aggregate.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "record/record.h"
#include "record/reward.h"
#include "report/compare.h"
#include "report/records.h"

namespace kernrl {
using nlohmann::json;

double pass_at_k(int n, int c, int k) {
  if (k < 1 || k > n || c < 0 || c > n)
    throw std::invalid_argument("pass@k needs 1 <= k <= n and 0 <= c <= n (n=" + std::to_string(n) +
                                ", c=" + std::to_string(c) + ", k=" + std::to_string(k) + ")");
  if (n - c < k) return 1.0;  // every k-subset holds a correct sample
  // C(n-c, k) / C(n, k) = prod_{i=n-c+1..n} (1 - k/i): no factorials, no overflow.
  double miss = 1.0;
  for (int i = n - c + 1; i <= n; ++i) miss *= 1.0 - double(k) / i;
  return 1.0 - miss;
}

namespace report {

json mean_or_null(const std::vector<double>& v) {
  if (v.empty()) return nullptr;
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}
json median_or_null(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}
json rate(size_t num, size_t den) {
  return den ? json(double(num) / den) : json(nullptr);
}

std::tuple<int, int, std::string> problem_order(const std::string& id) {
  int level = 0, number = 0;
  if (std::sscanf(id.c_str(), "L%d_%d", &level, &number) == 2) return {level, number, id};
  return {INT_MAX, INT_MAX, id};
}

// ---- metrics of one group of records ----

json metrics(const std::vector<const TraceRecord*>& recs, const Settings& s) {
  size_t n = recs.size(), n_format = 0, n_compiled = 0, n_correct = 0, n_suspicious = 0, n_ran = 0;
  std::map<std::string, std::pair<int, int>> per_problem;  // problem -> (samples, correct)
  std::vector<double> log_speedups, rewards, sols;
  json counts = json::object();
  for (Status st : kAllStatuses) counts[to_string(st)] = 0;
  for (const TraceRecord* r : recs) {
    std::string st = r->status_text();
    if (st.empty()) st = "(unknown)";
    counts[st] = counts.value(st, 0) + 1;
    n_format += rec::format_ok(*r);
    n_compiled += rec::compiled(*r);
    n_correct += rec::is_correct(*r);
    if (auto p = rec::problem_of(*r)) {
      per_problem[*p].first++;
      per_problem[*p].second += rec::is_correct(*r);
    }
    if (auto sp = rec::counted_speedup(*r)) log_speedups.push_back(std::log(*sp));
    if (r->reward) rewards.push_back(*r->reward);
    if (r->sol_fraction) sols.push_back(*r->sol_fraction);
    n_suspicious += r->suspicious.value_or(false);
    n_ran += rec::ran(*r);
  }

  json m;
  m["samples"] = n;
  m["problems"] = per_problem.size();
  m["format_rate"] = rate(n_format, n);
  m["compile_rate"] = rate(n_compiled, n);
  m["correct_rate"] = rate(n_correct, n);
  m["status_counts"] = counts;

  json pass = json::object();
  for (int k : s.ks) {
    std::vector<double> vals;
    for (const auto& [id, nc] : per_problem)
      if (nc.first >= k) vals.push_back(pass_at_k(nc.first, nc.second, k));
    pass[std::to_string(k)] = {{"value", mean_or_null(vals)}, {"problems", vals.size()}};
  }
  m["pass_at_k"] = pass;

  json fast = json::object();
  for (double p : s.ps) {
    size_t faster = 0;
    for (const TraceRecord* r : recs) {
      auto sp = rec::counted_speedup(*r);
      faster += sp && *sp > p;
    }
    fast[num_key(p)] = rate(faster, n);
  }
  m["fast_p"] = fast;

  json gm = mean_or_null(log_speedups);
  m["geomean_speedup"] = gm.is_null() ? gm : json(std::exp(gm.get<double>()));
  m["timed_correct"] = log_speedups.size();
  m["mean_reward"] = mean_or_null(rewards);
  // Where the grader's time went (the records' `grader` objects), mean ms per record that has one;
  // absent when none has.
  size_t n_grader = 0;
  json g_sum = json::object(), ph_sum = json::object();
  for (const TraceRecord* r : recs) {
    if (!r->grader) continue;
    ++n_grader;
    // Every number of the object, those of a later kernrl's keys included.
    const json g = Codec<trace::Grader>::encode(*r->grader);
    for (const auto& [k, v] : g.items()) {
      if (v.is_number()) g_sum[k] = g_sum.value(k, 0.0) + v.get<double>();
      if (k == "phases" && v.is_object())
        for (const auto& [pk, pv] : v.items())
          if (pv.is_number()) ph_sum[pk] = ph_sum.value(pk, 0.0) + pv.get<double>();
    }
  }
  if (n_grader) {
    double d = static_cast<double>(n_grader);
    for (auto& [k, v] : g_sum.items()) v = v.get<double>() / d;
    for (auto& [k, v] : ph_sum.items()) v = v.get<double>() / d;
    m["grader_ms"] = {{"records", n_grader}, {"mean", g_sum}, {"phases_mean", ph_sum}};
  }
  // Nothing ran on a GPU (a compile-only run, or no GPU): correctness and speed were not measured,
  // so their figures are null ("-"), not 0%.
  m["ran"] = n_ran;
  if (n > 0 && n_ran == 0) {
    m["correct_rate"] = nullptr;
    for (auto& [k, v] : m["pass_at_k"].items()) v["value"] = nullptr;
    for (auto& [k, v] : m["fast_p"].items()) v = nullptr;
  }
  m["rewarded"] = rewards.size();
  m["median_sol_fraction"] = median_or_null(sols);
  m["sol_samples"] = sols.size();
  m["suspicious"] = n_suspicious;
  return m;
}

std::optional<double> metric_value(const json& m, const SortMetric& s) {
  const json* v = nullptr;
  if (s.kind == "pass")
    v = &m["pass_at_k"][std::to_string(s.k)]["value"];
  else if (s.kind == "fast")
    v = &m["fast_p"][num_key(s.p)];
  else
    v = &m[s.name];
  if (v->is_number()) return v->get<double>();
  return std::nullopt;
}

// ---- grouping ----

std::vector<Group> group_records(const std::vector<TraceRecord>& recs, const std::string& by,
                                 const std::vector<std::string>& run_order) {
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (const TraceRecord& r : recs) {
    Group g{rec::run_of(r), std::nullopt, std::nullopt, {}};
    std::string key = g.run + '\x1f';
    if (by == "level") {
      g.level = rec::level_of(r);
      key += g.level ? std::to_string(*g.level) : "-";
    } else if (by == "problem") {
      g.problem = rec::problem_of(r);
      key += g.problem ? "p" + *g.problem : "-";
    }
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      groups.push_back(std::move(g));
    }
    Group& dst = groups[it->second];
    if (by == "problem" && !dst.level) dst.level = rec::level_of(r);
    dst.recs.push_back(&r);
  }
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < run_order.size(); ++i) rank[run_order[i]] = i;
  auto order = [&](const Group& g) {
    auto p = g.problem ? problem_order(*g.problem)
                       : std::make_tuple(INT_MAX, INT_MAX, std::string("\x7f"));
    return std::make_tuple(rank[g.run], g.level ? *g.level : INT_MAX, p);
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const Group& a, const Group& b) { return order(a) < order(b); });
  return groups;
}

json group_json(const Group& g, const Settings& s) {
  json m = metrics(g.recs, s);
  m["run"] = g.run;
  m["level"] = g.level ? json(*g.level) : json(nullptr);
  m["problem"] = g.problem ? json(*g.problem) : json(nullptr);
  return m;
}

namespace {

// Runs in report order: by name, or best first by the --sort metric (missing values last).
std::vector<std::string> run_order(const std::map<std::string, json>& run_metrics,
                                   const Settings& s) {
  std::vector<std::string> names;
  for (const auto& kv : run_metrics) names.push_back(kv.first);
  if (!s.sort) return names;
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    auto va = metric_value(run_metrics.at(a), *s.sort),
         vb = metric_value(run_metrics.at(b), *s.sort);
    if (!va || !vb) return va.has_value() && !vb.has_value();
    return s.sort->lower_is_better ? *va < *vb : *va > *vb;
  });
  return names;
}

// --run (when `apply_run_filter`), --reward, then duplicate removal.
std::vector<TraceRecord> select(const std::vector<TraceRecord>& records, const ReportOptions& opt,
                                const RewardPreset* preset, bool apply_run_filter,
                                size_t* dropped) {
  std::vector<TraceRecord> kept;
  for (const TraceRecord& r : records)
    if (!apply_run_filter || opt.run.empty() || rec::run_of(r) == opt.run) kept.push_back(r);
  if (preset)
    for (TraceRecord& r : kept) {
      std::optional<double> reward = compute_reward(*preset, r);
      r.reward = reward ? Field<double>(*reward) : Field<double>(nullptr);
      r.reward_preset = preset->name;
    }
  return drop_duplicates(kept, dropped);
}

// Records with no known problem (unreadable files, an unknown or missing `problem:`): how many,
// per run, why (their `problem_unknown.reason`, "unknown" for records without one) and with
// which status.
json unattributed_json(const std::vector<TraceRecord>& recs) {
  json runs = json::object();
  for (const TraceRecord& r : recs) {
    json& g = runs[rec::run_of(r)];
    if (g.is_null())
      g = {{"records", 0}, {"reasons", json::object()}, {"status_counts", json::object()}};
    g["records"] = g["records"].get<size_t>() + 1;
    std::string reason =
        r.problem_unknown ? r.problem_unknown->reason.value_or("unknown") : "unknown";
    g["reasons"][reason] = g["reasons"].value(reason, 0) + 1;
    std::string st = r.status_text();
    if (st.empty()) st = "(unknown)";
    g["status_counts"][st] = g["status_counts"].value(st, 0) + 1;
  }
  return {{"records", recs.size()}, {"runs", runs}};
}

}  // namespace

Prepared prepare(const std::vector<TraceRecord>& records, const ReportOptions& opt,
                 const std::vector<TraceRecord>& baseline_records) {
  std::optional<RewardPreset> preset;
  if (!opt.reward_preset.empty()) preset = load_reward_preset(opt.reward_preset);
  Prepared p;
  for (TraceRecord& r : select(records, opt, preset ? &*preset : nullptr, true, &p.duplicates))
    (rec::problem_of(r) ? p.records : p.unattributed).push_back(std::move(r));
  p.has_baseline = !opt.baseline.empty();
  if (p.has_baseline)
    for (TraceRecord& r :
         select(baseline_records, opt, preset ? &*preset : nullptr, false, nullptr))
      if (rec::problem_of(r)) p.baseline.push_back(std::move(r));
  return p;
}

json aggregate(const Prepared& prepared, const ReportOptions& opt, const Settings& s) {
  const std::vector<TraceRecord>& recs = prepared.records;
  std::map<std::string, json> run_metrics;
  for (const Group& g : group_records(recs, "run", {})) run_metrics[g.run] = group_json(g, s);
  std::vector<std::string> order = run_order(run_metrics, s);

  json a;
  a["schema"] = kReportSchema;
  a["by"] = opt.by;
  a["k"] = s.ks;
  a["p"] = s.ps;
  a["run_filter"] = opt.run.empty() ? json(nullptr) : json(opt.run);
  a["reward_preset"] = opt.reward_preset.empty() ? json(nullptr) : json(opt.reward_preset);
  a["inputs"] = opt.inputs;
  a["files"] = json::array();            // filled by the caller, who read them
  a["malformed_lines"] = json::array();  // likewise
  a["records"] = recs.size();
  a["duplicates"] = prepared.duplicates;
  a["unattributed"] = unattributed_json(prepared.unattributed);
  a["runs"] = json::array();
  for (const auto& name : order) a["runs"].push_back(run_metrics[name]);
  a["groups"] = json::array();
  if (opt.by == "run") {
    a["groups"] = a["runs"];
  } else {
    for (const Group& g : group_records(recs, opt.by, order))
      a["groups"].push_back(group_json(g, s));
  }
  a["leaderboard"] = nullptr;
  if (s.sort) {
    json entries = json::array();
    for (size_t i = 0; i < order.size(); ++i) {
      auto v = metric_value(run_metrics[order[i]], *s.sort);
      entries.push_back(
          {{"rank", i + 1}, {"run", order[i]}, {"value", v ? json(*v) : json(nullptr)}});
    }
    a["leaderboard"] = {{"metric", s.sort->name},
                        {"order", s.sort->lower_is_better ? "ascending" : "descending"},
                        {"entries", entries}};
  }
  a["comparison"] = nullptr;
  if (prepared.has_baseline) a["comparison"] = compare(recs, prepared.baseline, s, opt.baseline);
  return a;
}

}  // namespace report
}  // namespace kernrl
