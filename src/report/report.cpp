#include "report/report.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/problem.h"
#include "record/record.h"
#include "record/reward.h"
#include "record/trace_file.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kNoRun = "(none)";

// ---- fields of one record (tolerant: a field of the wrong type reads as absent) ----

std::string text(const json& r, const char* key) {
  auto it = r.find(key);
  return it != r.end() && it->is_string() ? it->get<std::string>() : "";
}
std::string run_of(const json& r) {
  auto it = r.find("run");
  return it != r.end() && it->is_string() ? it->get<std::string>() : kNoRun;
}
std::optional<int> level_of(const json& r) {
  auto it = r.find("level");
  if (it != r.end() && it->is_number_integer()) return it->get<int>();
  return std::nullopt;
}
std::optional<std::string> problem_of(const json& r) {
  auto it = r.find("problem");
  if (it != r.end() && it->is_string()) return it->get<std::string>();
  return std::nullopt;
}
std::optional<double> number(const json& r, const char* key) {
  auto it = r.find(key);
  if (it != r.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}
bool is_correct(const json& r) {
  return text(r, "status") == "correct";
}
bool format_ok(const json& r) {
  return text(r, "status") != "format_error";
}
bool compiled(const json& r) {
  std::string s = text(r, "status");
  return s != "format_error" && s != "compile_error";
}
// The speedup that counts: only a correct kernel's, and only a positive number.
std::optional<double> counted_speedup(const json& r) {
  auto s = number(r, "speedup");
  if (!is_correct(r) || !s || !(*s > 0) || !std::isfinite(*s)) return std::nullopt;
  return s;
}

// "0.5", "1", "1.5": the key of a fast_p threshold.
std::string num_key(double p) {
  char b[40];
  std::snprintf(b, sizeof b, "%.15g", p);
  return b;
}

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

// "L1_23_Softmax" sorts as (1, 23); ids of another shape sort after, by name.
std::tuple<int, int, std::string> problem_order(const std::string& id) {
  int level = 0, number = 0;
  if (std::sscanf(id.c_str(), "L%d_%d", &level, &number) == 2) return {level, number, id};
  return {INT_MAX, INT_MAX, id};
}

// ---- options ----

struct SortMetric {
  std::string name;  // as given
  std::string kind;  // plain | pass | fast
  int k = 0;
  double p = 0;
  bool lower_is_better = false;
};

const char* const kPlainMetrics[] = {
    "samples",     "problems",        "format_rate",         "compile_rate", "correct_rate",
    "mean_reward", "geomean_speedup", "median_sol_fraction", "suspicious"};

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
  throw std::invalid_argument("unknown --sort metric '" + s + "' (one of " + all +
                              "pass@K, fast_P)");
}

// The k and p lists actually computed: the requested ones plus the --sort metric's, sorted.
struct Settings {
  std::vector<int> ks;
  std::vector<double> ps;
  std::optional<SortMetric> sort;
};

Settings settings_of(const ReportOptions& opt) {
  if (opt.by != "run" && opt.by != "level" && opt.by != "problem")
    throw std::invalid_argument("--by must be run, level or problem (got '" + opt.by + "')");
  if (opt.format != "md" && opt.format != "csv" && opt.format != "json")
    throw std::invalid_argument("--format must be md, csv or json (got '" + opt.format + "')");
  Settings s;
  std::set<int> ks(opt.ks.begin(), opt.ks.end());
  std::set<double> ps(opt.ps.begin(), opt.ps.end());
  if (!opt.sort.empty()) {
    s.sort = parse_sort(opt.sort);
    if (s.sort->kind == "pass") ks.insert(s.sort->k);
    if (s.sort->kind == "fast") ps.insert(s.sort->p);
  }
  for (int k : ks)
    if (k < 1)
      throw std::invalid_argument("--k values must be >= 1 (got " + std::to_string(k) + ")");
  for (double p : ps)
    if (!std::isfinite(p)) throw std::invalid_argument("--p values must be finite numbers");
  s.ks.assign(ks.begin(), ks.end());
  s.ps.assign(ps.begin(), ps.end());
  return s;
}

// ---- metrics of one group of records ----

json metrics(const std::vector<const json*>& recs, const Settings& s) {
  size_t n = recs.size(), n_format = 0, n_compiled = 0, n_correct = 0, n_suspicious = 0;
  std::map<std::string, std::pair<int, int>> per_problem;  // problem -> (samples, correct)
  std::vector<double> log_speedups, rewards, sols;
  json counts = json::object();
  for (const char* st : kStatuses) counts[st] = 0;
  for (const json* r : recs) {
    std::string st = text(*r, "status");
    if (st.empty()) st = "(unknown)";
    counts[st] = counts.value(st, 0) + 1;
    n_format += format_ok(*r);
    n_compiled += compiled(*r);
    n_correct += is_correct(*r);
    if (auto p = problem_of(*r)) {
      per_problem[*p].first++;
      per_problem[*p].second += is_correct(*r);
    }
    if (auto sp = counted_speedup(*r)) log_speedups.push_back(std::log(*sp));
    if (auto rw = number(*r, "reward")) rewards.push_back(*rw);
    if (auto sol = number(*r, "sol_fraction")) sols.push_back(*sol);
    auto sus = r->find("suspicious");
    n_suspicious += sus != r->end() && sus->is_boolean() && sus->get<bool>();
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
    for (const json* r : recs) {
      auto sp = counted_speedup(*r);
      faster += sp && *sp > p;
    }
    fast[num_key(p)] = rate(faster, n);
  }
  m["fast_p"] = fast;

  json gm = mean_or_null(log_speedups);
  m["geomean_speedup"] = gm.is_null() ? gm : json(std::exp(gm.get<double>()));
  m["timed_correct"] = log_speedups.size();
  m["mean_reward"] = mean_or_null(rewards);
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

struct Group {
  std::string run;
  std::optional<int> level;
  std::optional<std::string> problem;
  std::vector<const json*> recs;
};

// Groups at the --by granularity; runs first in `run_order`, then level (unknown last), then
// problem.
std::vector<Group> group_records(const std::vector<json>& recs, const std::string& by,
                                 const std::vector<std::string>& run_order) {
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (const json& r : recs) {
    Group g{run_of(r), std::nullopt, std::nullopt, {}};
    std::string key = g.run + '\x1f';
    if (by == "level") {
      g.level = level_of(r);
      key += g.level ? std::to_string(*g.level) : "-";
    } else if (by == "problem") {
      g.problem = problem_of(r);
      key += g.problem ? "p" + *g.problem : "-";
    }
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      groups.push_back(std::move(g));
    }
    Group& dst = groups[it->second];
    if (by == "problem" && !dst.level) dst.level = level_of(r);
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

// ---- preparing the records: --run, --reward, duplicates ----

std::vector<json> prepare(const std::vector<json>& records, const ReportOptions& opt,
                          bool apply_run_filter, size_t* dropped) {
  std::vector<json> kept;
  for (const json& r : records)
    if (!apply_run_filter || opt.run.empty() || run_of(r) == opt.run) kept.push_back(r);
  if (!opt.reward_preset.empty()) {
    RewardPreset preset = load_reward_preset(opt.reward_preset);
    for (json& r : kept) {
      r["reward"] = compute_reward(preset, r);
      r["reward_preset"] = preset.name;
    }
  }
  return drop_duplicates(kept, dropped);
}

// ---- comparison with a baseline ----

struct Side {
  int samples = 0, correct = 0;
  std::vector<double> log_speedups;
  std::optional<int> level;
};

std::map<std::string, Side> sides_by_problem(const std::vector<json>& recs) {
  std::map<std::string, Side> out;
  for (const json& r : recs) {
    auto p = problem_of(r);
    if (!p) continue;  // cannot be matched across runs
    Side& s = out[*p];
    s.samples++;
    s.correct += is_correct(r);
    if (auto sp = counted_speedup(r)) s.log_speedups.push_back(std::log(*sp));
    if (!s.level) s.level = level_of(r);
  }
  return out;
}

json side_json(const Side& s, json* geomean) {
  json gm = mean_or_null(s.log_speedups);
  *geomean = gm.is_null() ? gm : json(std::exp(gm.get<double>()));
  return {{"samples", s.samples},
          {"correct", s.correct},
          {"correct_rate", rate(s.correct, s.samples)},
          {"geomean_speedup", *geomean}};
}

json pooled(const std::vector<json>& recs, const Settings& s) {
  std::vector<const json*> ptrs;
  std::set<std::string> runs;
  for (const json& r : recs) {
    ptrs.push_back(&r);
    runs.insert(run_of(r));
  }
  json m = metrics(ptrs, s);
  m["runs"] = runs;
  return m;
}

json compare(const std::vector<json>& current, const std::vector<json>& baseline, const Settings& s,
             const ReportOptions& opt) {
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
    json cg = nullptr, bg = nullptr;
    json row = {{"problem", id}, {"status", status}};
    row["current"] = c ? side_json(*c, &cg) : json(nullptr);
    row["baseline"] = b ? side_json(*b, &bg) : json(nullptr);
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
  return {{"baseline", opt.baseline},
          {"problems", problems},
          {"regressions", regressions},
          {"fixed", fixed},
          {"counts", counts},
          {"current_metrics", pooled(current, s)},
          {"baseline_metrics", pooled(baseline, s)}};
}

// ---- reading inputs ----

// A file as given; a directory: every *.jsonl inside, recursively, in path order.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::ostream* err) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(
               in, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->path().extension() == ".jsonl" && it->is_regular_file(ec))
          found.push_back(it->path().string());
      std::sort(found.begin(), found.end());
      if (found.empty() && err) *err << in << ": no *.jsonl files in this directory\n";
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(in, ec)) {
      files.push_back(in);
    } else if (err) {
      *err << in << ": no such file or directory\n";
    }
  }
  return files;
}

// Reads every file; malformed lines go to `malformed` (and `err`). False when no file could be
// read.
bool read_inputs(const std::vector<std::string>& inputs, std::vector<json>* records,
                 json* files_read, json* malformed, std::ostream* err) {
  bool any = false;
  for (const std::string& file : expand_inputs(inputs, err)) {
    std::vector<TraceProblem> problems;
    std::vector<json> recs = read_trace(file, &problems);
    bool readable = true;
    for (const TraceProblem& p : problems) {
      if (p.line == 0) {
        readable = false;
        if (err) *err << p.file << ": " << p.message << "\n";
        continue;
      }
      if (err) *err << p.file << ":" << p.line << ": " << p.message << "\n";
      if (malformed)
        malformed->push_back({{"file", p.file}, {"line", p.line}, {"message", p.message}});
    }
    if (!readable) continue;
    any = true;
    if (files_read) files_read->push_back(file);
    for (json& r : recs) records->push_back(std::move(r));
  }
  return any;
}

// ---- rendering ----

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string pct(const json& v) {
  return v.is_number() ? fmt("%.1f%%", 100 * v.get<double>()) : "-";
}
std::string dec(const json& v, const char* f = "%.3f") {
  return v.is_number() ? fmt(f, v.get<double>()) : "-";
}
std::string count(const json& v) {
  return v.is_number() ? std::to_string(v.get<long long>()) : "-";
}
std::string level_text(const json& v) {
  return v.is_number() ? "L" + std::to_string(v.get<int>()) : "(unknown)";
}

std::string md_cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

// A GitHub-style table: the first `left` columns (names) left-aligned, the numbers right-aligned.
std::string md_table(const std::vector<std::string>& head,
                     const std::vector<std::vector<std::string>>& rows, size_t left = 1) {
  std::string out = "|";
  for (const auto& h : head) out += " " + h + " |";
  out += "\n|";
  for (size_t i = 0; i < head.size(); ++i) out += i < left ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const auto& c : row) out += " " + md_cell(c) + " |";
    out += "\n";
  }
  return out;
}

std::vector<std::string> k_keys(const json& a) {
  std::vector<std::string> keys;
  for (const auto& k : a["k"]) keys.push_back(std::to_string(k.get<int>()));
  return keys;
}
std::vector<std::string> p_keys(const json& a) {
  std::vector<std::string> keys;
  for (const auto& p : a["p"]) keys.push_back(num_key(p.get<double>()));
  return keys;
}

// The metric columns shared by every md table, after its identity columns.
std::vector<std::string> md_metric_head(const json& a) {
  std::vector<std::string> h = {"samples", "problems", "format", "compile", "correct"};
  for (const auto& k : k_keys(a)) h.push_back("pass@" + k);
  for (const auto& p : p_keys(a)) h.push_back("fast_" + p);
  for (const char* c : {"geomean speedup", "mean reward", "median SOL", "suspicious"})
    h.push_back(c);
  return h;
}
std::vector<std::string> md_metric_cells(const json& m, const json& a) {
  std::vector<std::string> c = {count(m["samples"]), count(m["problems"]), pct(m["format_rate"]),
                                pct(m["compile_rate"]), pct(m["correct_rate"])};
  for (const auto& k : k_keys(a)) {
    const json& pk = m["pass_at_k"][k];
    c.push_back(pk["value"].is_number() ? pct(pk["value"]) + " (" + count(pk["problems"]) + ")"
                                        : "-");
  }
  for (const auto& p : p_keys(a)) c.push_back(pct(m["fast_p"][p]));
  c.push_back(m["geomean_speedup"].is_number()
                  ? dec(m["geomean_speedup"], "%.3fx") + " (" + count(m["timed_correct"]) + ")"
                  : "-");
  c.push_back(dec(m["mean_reward"]));
  c.push_back(dec(m["median_sol_fraction"]));
  c.push_back(count(m["suspicious"]));
  return c;
}

std::vector<std::string> status_names(const json& rows) {
  std::vector<std::string> names(std::begin(kStatuses), std::end(kStatuses));
  for (const auto& r : rows)
    for (const auto& kv : r["status_counts"].items())
      if (std::find(names.begin(), names.end(), kv.key()) == names.end()) names.push_back(kv.key());
  return names;
}

std::string render_md(const json& a) {
  std::string out = "# kernrl report\n\n";
  out += count(a["records"]) + " records from " + std::to_string(a["runs"].size()) + " run(s)";
  if (a["duplicates"].get<long long>() > 0)
    out += ", " + count(a["duplicates"]) + " duplicate(s) dropped";
  if (!a["malformed_lines"].empty())
    out += ", " + std::to_string(a["malformed_lines"].size()) + " malformed line(s) skipped";
  if (a["reward_preset"].is_string())
    out += "; rewards rescored with preset '" + a["reward_preset"].get<std::string>() + "'";
  out += ".\n\n";
  const json& un = a["unattributed"];
  if (un.is_object() && un.value("records", 0) > 0)
    out +=
        count(un["records"]) +
        " unattributed record(s) (no known problem) are not counted below; see Unattributed.\n\n";

  // One row per metrics object: identity columns, then the shared metric columns.
  auto table = [&](const json& rows, const std::vector<std::string>& ids, bool ranked) {
    std::vector<std::string> head = ids;
    if (ranked) head.insert(head.begin(), "rank");
    for (const auto& h : md_metric_head(a)) head.push_back(h);
    std::vector<std::vector<std::string>> cells;
    for (const auto& r : rows) {
      std::vector<std::string> c;
      if (ranked) c.push_back(std::to_string(cells.size() + 1));
      for (const auto& id : ids)
        c.push_back(id == "level"       ? level_text(r["level"])
                    : r[id].is_string() ? r[id].get<std::string>()
                                        : "(unknown)");
      for (auto& x : md_metric_cells(r, a)) c.push_back(x);
      cells.push_back(c);
    }
    return md_table(head, cells, ids.size() + ranked);
  };

  out += "## Runs";
  if (a["leaderboard"].is_object())
    out += " (best first by " + a["leaderboard"]["metric"].get<std::string>() + ")";
  out += "\n\n" + table(a["runs"], {"run"}, a["leaderboard"].is_object());
  std::string by = a["by"];
  if (by == "level") out += "\n## By level\n\n" + table(a["groups"], {"run", "level"}, false);
  if (by == "problem")
    out += "\n## By problem\n\n" + table(a["groups"], {"run", "problem", "level"}, false);

  out += "\n## Statuses\n\n";
  std::vector<std::string> names = status_names(a["runs"]);
  std::vector<std::string> head = {"run"};
  head.insert(head.end(), names.begin(), names.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : a["runs"]) {
    std::vector<std::string> c = {r["run"].get<std::string>()};
    for (const auto& s : names) c.push_back(std::to_string(r["status_counts"].value(s, 0)));
    rows.push_back(c);
  }
  out += md_table(head, rows);

  if (un.is_object() && un.value("records", 0) > 0) {
    out +=
        "\n## Unattributed\n\nRecords whose problem is unknown: outside samples, pass@k, fast_p "
        "and every other "
        "metric above.\n\n";
    std::vector<std::vector<std::string>> urows;
    for (const auto& [run, g] : un["runs"].items()) {
      std::string reasons, statuses;
      for (const auto& [k, v] : g["reasons"].items())
        reasons += (reasons.empty() ? "" : ", ") + k + " " + count(v);
      for (const auto& [k, v] : g["status_counts"].items())
        statuses += (statuses.empty() ? "" : ", ") + k + " " + count(v);
      urows.push_back({run, count(g["records"]), reasons, statuses});
    }
    out += md_table({"run", "records", "why", "statuses"}, urows, 1);
  }

  if (a["comparison"].is_object()) {
    const json& cmp = a["comparison"];
    const json& n = cmp["counts"];
    out += "\n## Compared with the baseline\n\nbaseline: " + cmp["baseline"].get<std::string>() +
           "; " + count(n["regressed"]) + " regressed, " + count(n["fixed"]) + " fixed, " +
           count(n["same"]) + " unchanged, " + count(n["new"]) + " new, " + count(n["missing"]) +
           " missing.\n\n";
    json sides = json::array();
    for (const char* side : {"baseline", "current"}) {
      json m = cmp[std::string(side) + "_metrics"];
      std::string runs;
      for (const auto& r : m["runs"]) runs += (runs.empty() ? "" : ", ") + r.get<std::string>();
      m["run"] = std::string(side) + " (" + runs + ")";
      sides.push_back(m);
    }
    out += table(sides, {"run"}, false);
    if (!cmp["regressions"].empty()) {
      out += "\n**Regressions** (correct in the baseline, no correct sample now):";
      for (const auto& id : cmp["regressions"]) out += " " + id.get<std::string>();
      out += "\n";
    }
    std::vector<std::vector<std::string>> prow;
    auto side_text = [](const json& s) {
      return s.is_object() ? count(s["correct"]) + "/" + count(s["samples"]) : std::string("-");
    };
    auto speed_text = [](const json& s) {
      return s.is_object() ? dec(s["geomean_speedup"], "%.3fx") : std::string("-");
    };
    for (const auto& p : cmp["problems"])
      prow.push_back({p["problem"].get<std::string>(), p["status"].get<std::string>(),
                      side_text(p["baseline"]), side_text(p["current"]), speed_text(p["baseline"]),
                      speed_text(p["current"]), dec(p["speedup_delta"], "%+.3f")});
    out += "\n" + md_table({"problem", "status", "correct (baseline)", "correct (now)",
                            "speedup (baseline)", "speedup (now)", "speedup delta"},
                           prow, 2);
  }
  out +=
      "\npass@k cells: value (problems with at least k samples). fast_p: share of samples that are "
      "correct and "
      "faster than p x the baseline. geomean speedup: over correct timed samples (their count). "
      "See docs/report.md.\n";
  return out;
}

std::string csv_field(const json& v) {
  if (v.is_null()) return "";
  if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<long long>());
  if (v.is_number()) return fmt("%.10g", v.get<double>());
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_line(const std::vector<json>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

std::string render_csv(const json& a) {
  std::string out;
  if (a["comparison"].is_object()) {  // with --baseline the table is the per-problem comparison
    std::vector<json> head = {"problem", "level", "status"};
    for (const char* side : {"baseline", "current"})
      for (const char* f : {"samples", "correct", "correct_rate", "geomean_speedup"})
        head.push_back(std::string(side) + "_" + f);
    for (const char* f : {"correct_rate_delta", "speedup_delta", "speedup_ratio"})
      head.push_back(f);
    out += csv_line(head);
    for (const auto& p : a["comparison"]["problems"]) {
      std::vector<json> row = {p["problem"], p["level"], p["status"]};
      for (const char* side : {"baseline", "current"})
        for (const char* f : {"samples", "correct", "correct_rate", "geomean_speedup"})
          row.push_back(p[side].is_object() ? p[side][f] : json(nullptr));
      for (const char* f : {"correct_rate_delta", "speedup_delta", "speedup_ratio"})
        row.push_back(p[f]);
      out += csv_line(row);
    }
    return out;
  }
  std::vector<std::string> statuses = status_names(a["groups"]);
  std::vector<json> head = {"run",      "level",       "problem",      "samples",
                            "problems", "format_rate", "compile_rate", "correct_rate"};
  for (const auto& k : k_keys(a)) {
    head.push_back("pass@" + k);
    head.push_back("pass@" + k + "_problems");
  }
  for (const auto& p : p_keys(a)) head.push_back("fast_" + p);
  for (const char* f : {"geomean_speedup", "timed_correct", "mean_reward", "rewarded",
                        "median_sol_fraction", "sol_samples", "suspicious"})
    head.push_back(f);
  for (const auto& s : statuses) head.push_back("status_" + s);
  out += csv_line(head);
  for (const auto& g : a["groups"]) {
    std::vector<json> row = {g["run"],      g["level"],       g["problem"],      g["samples"],
                             g["problems"], g["format_rate"], g["compile_rate"], g["correct_rate"]};
    for (const auto& k : k_keys(a)) {
      row.push_back(g["pass_at_k"][k]["value"]);
      row.push_back(g["pass_at_k"][k]["problems"]);
    }
    for (const auto& p : p_keys(a)) row.push_back(g["fast_p"][p]);
    for (const char* f : {"geomean_speedup", "timed_correct", "mean_reward", "rewarded",
                          "median_sol_fraction", "sol_samples", "suspicious"})
      row.push_back(g[f]);
    for (const auto& s : statuses) row.push_back(g["status_counts"].value(s, 0));
    out += csv_line(row);
  }
  return out;
}

// Records with no known problem (unreadable files, an unknown or missing `problem:`): how many,
// per run, why (their `problem_unknown.reason`, "unknown" for records without one) and with
// which status.
json unattributed_json(const std::vector<json>& recs) {
  json runs = json::object();
  for (const json& r : recs) {
    json& g = runs[run_of(r)];
    if (g.is_null())
      g = {{"records", 0}, {"reasons", json::object()}, {"status_counts", json::object()}};
    g["records"] = g["records"].get<size_t>() + 1;
    std::string reason = "unknown";
    auto pu = r.find("problem_unknown");
    if (pu != r.end() && pu->is_object() && pu->contains("reason") && (*pu)["reason"].is_string())
      reason = (*pu)["reason"].get<std::string>();
    g["reasons"][reason] = g["reasons"].value(reason, 0) + 1;
    std::string st = text(r, "status");
    if (st.empty()) st = "(unknown)";
    g["status_counts"][st] = g["status_counts"].value(st, 0) + 1;
  }
  return {{"records", recs.size()}, {"runs", runs}};
}

}  // namespace

// ---- public API ----

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

std::vector<json> drop_duplicates(const std::vector<json>& records, size_t* dropped) {
  std::set<std::string> seen;
  std::vector<const json*> kept;
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    std::string sha = text(*it, "source_sha256");
    // Without a hash two records cannot be told to be the same sample: keep both.
    if (!sha.empty() &&
        !seen.insert(run_of(*it) + '\x1f' + text(*it, "file") + '\x1f' + sha).second)
      continue;
    kept.push_back(&*it);
  }
  if (dropped) *dropped = records.size() - kept.size();
  std::vector<json> out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out.push_back(**it);
  return out;
}

json aggregate(const std::vector<json>& records, const ReportOptions& opt) {
  std::vector<json> baseline;
  if (!opt.baseline.empty() && !read_inputs({opt.baseline}, &baseline, nullptr, nullptr, nullptr))
    throw std::invalid_argument("cannot read the baseline " + opt.baseline);
  return aggregate(records, opt, baseline);
}

json aggregate(const std::vector<json>& records, const ReportOptions& opt,
               const std::vector<json>& baseline_records) {
  Settings s = settings_of(opt);
  size_t dropped = 0;
  std::vector<json> recs;
  std::vector<json> unattributed;  // no known problem: outside every metric, listed on their own
  for (json& r : prepare(records, opt, true, &dropped))
    (problem_of(r) ? recs : unattributed).push_back(std::move(r));

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
  a["files"] = json::array();            // filled by run_report
  a["malformed_lines"] = json::array();  // filled by run_report
  a["records"] = recs.size();
  a["duplicates"] = dropped;
  a["unattributed"] = unattributed_json(unattributed);
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
  if (!opt.baseline.empty()) {
    size_t base_dropped = 0;
    std::vector<json> base;
    for (json& r : prepare(baseline_records, opt, false, &base_dropped))
      if (problem_of(r)) base.push_back(std::move(r));
    a["comparison"] = compare(recs, base, s, opt);
  }
  return a;
}

std::string render(const json& aggregated, const ReportOptions& opt) {
  if (opt.format == "json")
    return aggregated.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  if (opt.format == "csv") return render_csv(aggregated);
  return render_md(aggregated);
}

int run_report(const ReportOptions& opt, std::ostream& out, std::ostream& err) {
  try {
    settings_of(opt);
    if (opt.inputs.empty()) throw std::invalid_argument("no trace files given");
    if (opt.fail_on_regression && opt.baseline.empty())
      throw std::invalid_argument("--fail-on-regression needs --baseline");

    std::vector<json> records, baseline;
    json files = json::array(), malformed = json::array();
    if (!read_inputs(opt.inputs, &records, &files, &malformed, &err))
      throw std::invalid_argument("no readable trace file among the inputs");
    if (!opt.baseline.empty() && !read_inputs({opt.baseline}, &baseline, nullptr, nullptr, &err))
      throw std::invalid_argument("cannot read the baseline " + opt.baseline);
    if (!opt.run.empty()) {
      std::set<std::string> runs;
      for (const json& r : records) runs.insert(run_of(r));
      if (!runs.count(opt.run)) {
        std::string present;
        for (const auto& r : runs) present += (present.empty() ? "" : ", ") + r;
        throw std::invalid_argument("no records of run '" + opt.run + "' (runs present: " +
                                    (present.empty() ? "none" : present) + ")");
      }
    }

    json a = aggregate(records, opt, baseline);
    a["files"] = files;
    a["malformed_lines"] = malformed;
    out << render(a, opt);
    out.flush();
    if (opt.fail_on_regression && !a["comparison"]["regressions"].empty()) {
      err << "kernrl report: " << a["comparison"]["regressions"].size() << " problem(s) regressed:";
      for (const auto& id : a["comparison"]["regressions"]) err << " " << id.get<std::string>();
      err << "\n";
      return 1;
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    err << "kernrl report: " << e.what() << "\n";
  } catch (const SpecError& e) {
    err << "kernrl report: " << e.what() << "\n";
  }
  return 2;
}

}  // namespace kernrl
