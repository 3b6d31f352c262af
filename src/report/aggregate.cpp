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
#include "report/curves.h"
#include "report/records.h"
#include "report/scoring.h"
#include "report/trajectories.h"

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

namespace {

// The measure to lead with for these records: "speedup" or "sol" when all their problems agree,
// "mixed" when not, null for no records.
json lead_of(const std::vector<const TraceRecord*>& recs) {
  std::set<std::string> leads;
  for (const TraceRecord* r : recs) leads.insert(score_of_record(*r).lead);
  if (leads.empty()) return nullptr;
  return leads.size() == 1 ? json(*leads.begin()) : json("mixed");
}

// The median achieved throughput of the records' timed samples in their problem's natural unit
// (the record's `throughput.natural`), when they all share one unit: {value, unit}; else null.
json median_throughput(const std::vector<const TraceRecord*>& recs) {
  std::set<std::string> units;
  std::vector<double> values;
  for (const TraceRecord* r : recs) {
    if (!rec::is_correct(*r) || !r->throughput || !r->throughput->natural) continue;
    // The number `natural` names, among the object's keys (a later kernrl's included).
    const json t = Codec<trace::Throughput>::encode(*r->throughput);
    std::string key = *r->throughput->natural;
    if (!t.contains(key) || !t[key].is_number()) continue;
    std::string unit = key == "gb_s"      ? "GB/s"
                       : key == "tflop_s" ? "TFLOP/s"
                                          : t.value("unit", std::string("units")) + "/s";
    units.insert(unit);
    values.push_back(t[key].get<double>());
  }
  if (units.size() != 1) return nullptr;
  return {{"value", median_or_null(values)}, {"unit", *units.begin()}, {"samples", values.size()}};
}

json geomean_or_null(const std::vector<double>& logs) {
  json m = mean_or_null(logs);
  return m.is_null() ? m : json(std::exp(m.get<double>()));
}

}  // namespace

json metrics(const std::vector<const TraceRecord*>& recs_in, const Settings& s, bool pooled) {
  // Speedups of problems that stay out of pooled figures: set apart (unless --pool-all).
  std::vector<const TraceRecord*> speed_recs;
  std::set<std::string> unpooled_problems;
  std::set<int> unpooled_levels;
  size_t n_unpooled = 0, unpooled_timed = 0;
  for (const TraceRecord* r : recs_in) {
    if (pooled && !s.pool_all && !score_of_record(*r).pooled) {
      ++n_unpooled;
      unpooled_timed += rec::counted_speedup(*r).has_value();
      if (auto p = rec::problem_of(*r)) unpooled_problems.insert(*p);
      if (auto l = rec::level_of(*r)) unpooled_levels.insert(*l);
      continue;
    }
    speed_recs.push_back(r);
  }
  const std::vector<const TraceRecord*>& recs = recs_in;
  size_t n = recs.size(), n_format = 0, n_compiled = 0, n_correct = 0, n_suspicious = 0, n_ran = 0;
  std::map<std::string, std::pair<int, int>> per_problem;  // problem -> (samples, correct)
  std::vector<double> log_speedups, rewards, sols;
  // "torch"/"kernel"/"compile" -> ln speedup
  std::map<std::string, std::vector<double>> log_by_kind;
  json kinds = {{"torch", 0}, {"kernel", 0}};
  for (const TraceRecord* r : speed_recs) {
    if (auto sp = rec::counted_speedup(*r)) {
      log_speedups.push_back(std::log(*sp));
      std::string k = speedup_kind(*r);
      kinds[k] = kinds.value(k, 0) + 1;
    }
    for (const char* k : {"torch", "kernel", "compile"})
      if (auto v = speedup_over(*r, k)) log_by_kind[k].push_back(std::log(*v));
  }
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
    for (const TraceRecord* r : speed_recs) {
      auto sp = rec::counted_speedup(*r);
      faster += sp && *sp > p;
    }
    fast[num_key(p)] = rate(faster, speed_recs.size());
  }
  m["fast_p"] = fast;

  m["geomean_speedup"] = geomean_or_null(log_speedups);
  m["timed_correct"] = log_speedups.size();
  m["speedup_baselines"] = kinds;
  m["geomean_speedup_over"] = {{"torch", geomean_or_null(log_by_kind["torch"])},
                               {"kernel", geomean_or_null(log_by_kind["kernel"])},
                               {"compile", geomean_or_null(log_by_kind["compile"])}};
  m["timed_over_compile"] = log_by_kind["compile"].size();
  m["unpooled"] = nullptr;
  if (n_unpooled)
    m["unpooled"] = {{"samples", n_unpooled},
                     {"timed_correct", unpooled_timed},
                     {"levels", unpooled_levels},
                     {"problems", unpooled_problems}};
  m["lead"] = lead_of(recs);
  // Units differ between problems: only a single problem's records have a median throughput.
  m["median_throughput"] = per_problem.size() == 1 ? median_throughput(recs) : json(nullptr);
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
  m["mean_sol_fraction"] = mean_or_null(sols);
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
    Group g{rec::run_of(r), std::nullopt, std::nullopt, {}, by == "run"};
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
  json m = metrics(g.recs, s, g.pooled);
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
      r.reward_preset_version = preset->version;
    }
  return drop_duplicates(std::move(kept), dropped);
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

// Which records stay out of the pooled speedup figures: every level holding a problem whose
// problem.yaml says `score.pooled: false`, with the problems, the samples and each level's note.
json pooled_json(const std::vector<TraceRecord>& recs, const Settings& s) {
  std::set<int> levels;
  std::set<std::string> problems;
  json notes = json::object();
  size_t samples = 0;
  for (const TraceRecord& r : recs) {
    const ScoreSpec& sc = score_of_record(r);
    if (sc.pooled) continue;
    ++samples;
    if (auto p = rec::problem_of(r)) problems.insert(*p);
    if (auto l = rec::level_of(r)) {
      levels.insert(*l);
      if (!sc.note.empty()) notes["L" + std::to_string(*l)] = sc.note;
    }
  }
  return {{"all_levels", s.pool_all},
          {"not_comparable",
           {{"levels", levels}, {"problems", problems}, {"samples", samples}, {"notes", notes}}},
          {"left_out", !s.pool_all && samples > 0}};
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
  a["pooled"] = pooled_json(recs, s);
  a["levels"] = json::array();
  for (const Group& g : group_records(recs, "level", order)) {
    json m = group_json(g, s);
    const ScoreSpec& sc = score_of_record(*g.recs.front());
    m["pooled"] = sc.pooled;
    m["note"] = sc.note.empty() ? json(nullptr) : json(sc.note);
    a["levels"].push_back(std::move(m));
  }
  a["groups"] = json::array();
  if (opt.by != "level" && opt.by != "problem") {  // run, and the views below (by run)
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
  a["gamma"] = opt.gamma;
  a["trajectories"] = trajectories_json(recs, opt.gamma, order);
  a["curves"] = nullptr;
  bool has_step = false;
  for (const TraceRecord& r : recs) has_step = has_step || (r.training && r.training->step);
  if (opt.by == "step" || has_step) a["curves"] = curves_json(recs, order);
  a["comparison"] = nullptr;
  if (prepared.has_baseline) a["comparison"] = compare(recs, prepared.baseline, s, opt.baseline);
  return a;
}

}  // namespace report
}  // namespace kernrl
