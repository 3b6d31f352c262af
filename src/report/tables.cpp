#include "report/tables.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

#include "record/record.h"
#include "report/options.h"

namespace kernrl::report {
using nlohmann::json;

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
std::string pct(const json& v) {
  return v.is_number() ? fmt("%.1f%%", 100 * v.get<double>()) : "-";
}
std::string dec(const json& v, const char* f) {
  return v.is_number() ? fmt(f, v.get<double>()) : "-";
}
std::string count(const json& v) {
  return v.is_number() ? std::to_string(v.get<long long>()) : "-";
}
std::string level_text(const json& v) {
  return v.is_number() ? "L" + std::to_string(v.get<int>()) : "(unknown)";
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

std::vector<std::string> status_names(const json& rows) {
  std::vector<std::string> names;
  for (Status st : kAllStatuses) names.push_back(to_string(st));
  for (const auto& r : rows)
    for (const auto& kv : r["status_counts"].items())
      if (std::find(names.begin(), names.end(), kv.key()) == names.end()) names.push_back(kv.key());
  return names;
}

namespace {

// The metric columns shared by every metrics table, after its identity columns.
std::vector<std::string> metric_head(const json& a) {
  std::vector<std::string> h = {"samples", "problems", "format", "compile", "correct"};
  for (const auto& k : k_keys(a)) h.push_back("pass@" + k);
  for (const auto& p : p_keys(a)) h.push_back("fast_" + p);
  for (const char* c : {"geomean speedup", "mean reward", "median SOL", "mean SOL", "suspicious"})
    h.push_back(c);
  return h;
}
std::vector<std::string> metric_cells(const json& m, const json& a) {
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
  c.push_back(dec(m.value("mean_sol_fraction", json(nullptr))));
  c.push_back(count(m["suspicious"]));
  return c;
}

std::string speed_cell(const json& v) {
  return v.is_number() ? dec(v, "%.3fx") : "-";
}

std::string list_levels(const json& levels) {
  std::string out;
  for (const auto& l : levels) out += (out.empty() ? "" : ", ") + level_text(l);
  return out;
}

}  // namespace

Table metrics_table(const json& a, const json& rows, const std::vector<std::string>& ids,
                    bool ranked) {
  Table t;
  t.head = ids;
  if (ranked) t.head.insert(t.head.begin(), "rank");
  for (const auto& h : metric_head(a)) t.head.push_back(h);
  // Per problem, the achieved throughput in the problem's natural unit (GB/s, TFLOP/s, hashes/s).
  const bool per_problem = std::find(ids.begin(), ids.end(), "problem") != ids.end();
  if (per_problem) t.head.push_back("median throughput");
  for (const auto& r : rows) {
    std::vector<std::string> c;
    if (ranked) c.push_back(std::to_string(t.rows.size() + 1));
    for (const auto& id : ids)
      c.push_back(id == "level"       ? level_text(r["level"])
                  : r[id].is_string() ? r[id].get<std::string>()
                                      : "(unknown)");
    for (auto& x : metric_cells(r, a)) c.push_back(x);
    if (per_problem) {
      const json& tp = r.value("median_throughput", json(nullptr));
      c.push_back(tp.is_object() && tp["value"].is_number()
                      ? fmt("%.4g", tp["value"].get<double>()) + " " + tp["unit"].get<std::string>()
                      : "-");
    }
    t.rows.push_back(c);
  }
  t.left = ids.size() + ranked;
  return t;
}

Table level_scores_table(const json& a) {
  Table t;
  t.head = {"run",      "level",      "lead",    "score",        "samples",         "correct",
            "mean SOL", "median SOL", "speedup", "over PyTorch", "over ref kernel", "pooled"};
  t.left = 3;
  for (const auto& m : a.value("levels", json::array())) {
    std::string lead = m["lead"].is_string() ? m["lead"].get<std::string>() : "-";
    // The headline: mean SOL fraction where it is the better measure, else the geomean speedup.
    std::string score = lead == "sol"       ? dec(m["mean_sol_fraction"]) + " SOL"
                        : lead == "speedup" ? speed_cell(m["geomean_speedup"])
                                            : "-";
    if (score == "- SOL") score = "-";
    const json& over = m.value("geomean_speedup_over", json::object());
    const json& kinds = m.value("speedup_baselines", json::object());
    std::string against = kinds.value("kernel", 0) > 0 && kinds.value("torch", 0) > 0 ? " (mixed)"
                          : kinds.value("kernel", 0) > 0 ? " (ref kernel)"
                                                         : "";
    t.rows.push_back(
        {m["run"].get<std::string>(), level_text(m["level"]), lead == "sol" ? "SOL" : lead, score,
         count(m["samples"]), pct(m["correct_rate"]), dec(m["mean_sol_fraction"]),
         dec(m["median_sol_fraction"]),
         m["geomean_speedup"].is_number()
             ? speed_cell(m["geomean_speedup"]) + against + " (" + count(m["timed_correct"]) + ")"
             : "-",
         speed_cell(over.value("torch", json(nullptr))),
         speed_cell(over.value("kernel", json(nullptr))), m.value("pooled", true) ? "yes" : "no"});
  }
  // The torch.compile baseline (a suite's baseline file): a column only where some level has it.
  bool compile = false;
  for (const auto& m : a.value("levels", json::array()))
    compile =
        compile ||
        m.value("geomean_speedup_over", json::object()).value("compile", json(nullptr)).is_number();
  if (compile) {
    t.head.insert(t.head.end() - 1, "over torch.compile");
    size_t i = 0;
    for (const auto& m : a.value("levels", json::array())) {
      const json& over = m.value("geomean_speedup_over", json::object());
      auto& row = t.rows[i++];
      row.insert(row.end() - 1, speed_cell(over.value("compile", json(nullptr))));
    }
  }
  return t;
}

std::string pooled_note(const json& a) {
  const json& p = a.value("pooled", json::object());
  const json& nc = p.value("not_comparable", json::object());
  if (nc.value("samples", 0) == 0) return "";
  std::string levels = list_levels(nc["levels"]);
  std::string why;
  for (const auto& [level, note] : nc["notes"].items())
    why += (why.empty() ? "" : "; ") + level + ": " + note.get<std::string>();
  std::string n = count(nc["samples"]) + " sample(s) of " + std::to_string(nc["problems"].size()) +
                  " problem(s)";
  if (p.value("left_out", false))
    return "Pooled speedup figures (the runs' geomean speedup and fast_p) leave out " + levels +
           " (" + n + "): their speedups are not comparable with other levels'" +
           (why.empty() ? "" : " (" + why + ")") +
           ". Their own figures are under Scores by level; --pool-all includes them.";
  return "Pooled speedup figures include " + levels + " (" + n +
         ", --pool-all), whose speedups are not comparable with other levels'" +
         (why.empty() ? "" : " (" + why + ")") + ".";
}

Table status_table(const json& a) {
  Table t;
  std::vector<std::string> names = status_names(a["runs"]);
  t.head = {"run"};
  t.head.insert(t.head.end(), names.begin(), names.end());
  for (const auto& r : a["runs"]) {
    std::vector<std::string> c = {r["run"].get<std::string>()};
    for (const auto& s : names) c.push_back(std::to_string(r["status_counts"].value(s, 0)));
    t.rows.push_back(c);
  }
  return t;
}

Table grader_table(const json& a) {
  Table t;
  t.head = {"run",       "records",  "prepare ms",        "queue ms", "worker start ms",
            "worker ms", "total ms", "worker phases (ms)"};
  for (const auto& r : a["runs"]) {
    if (!r.contains("grader_ms")) continue;
    const json& g = r["grader_ms"];
    const json& mean = g["mean"];
    auto ms = [&](const char* k) { return dec(mean.value(k, json(nullptr)), "%.1f"); };
    std::vector<std::pair<double, std::string>> ph;
    for (const auto& [k, v] : g["phases_mean"].items()) ph.emplace_back(v.get<double>(), k);
    std::sort(ph.rbegin(), ph.rend());
    std::string phases;
    for (const auto& [v, k] : ph) phases += (phases.empty() ? "" : ", ") + k + " " + fmt("%.1f", v);
    t.rows.push_back({r["run"].get<std::string>(), count(g["records"]), ms("prepare_ms"),
                      ms("queue_ms"), ms("worker_start_ms"), ms("worker_ms"), ms("total_ms"),
                      phases});
  }
  return t;
}

Table unattributed_table(const json& un) {
  Table t;
  t.head = {"run", "records", "why", "statuses"};
  for (const auto& [run, g] : un["runs"].items()) {
    std::string reasons, statuses;
    for (const auto& [k, v] : g["reasons"].items())
      reasons += (reasons.empty() ? "" : ", ") + k + " " + count(v);
    for (const auto& [k, v] : g["status_counts"].items())
      statuses += (statuses.empty() ? "" : ", ") + k + " " + count(v);
    t.rows.push_back({run, count(g["records"]), reasons, statuses});
  }
  return t;
}

Table comparison_sides_table(const json& a) {
  const json& cmp = a["comparison"];
  json sides = json::array();
  for (const char* side : {"baseline", "current"}) {
    json m = cmp[std::string(side) + "_metrics"];
    std::string runs;
    for (const auto& r : m["runs"]) runs += (runs.empty() ? "" : ", ") + r.get<std::string>();
    m["run"] = std::string(side) + " (" + runs + ")";
    sides.push_back(m);
  }
  return metrics_table(a, sides, {"run"}, false);
}

Table comparison_problems_table(const json& cmp) {
  Table t;
  t.head = {
      "problem",       "status",       "correct (baseline)", "correct (now)", "speedup (baseline)",
      "speedup (now)", "speedup delta"};
  t.left = 2;
  auto side_text = [](const json& s) {
    return s.is_object() ? count(s["correct"]) + "/" + count(s["samples"]) : std::string("-");
  };
  auto speed_text = [](const json& s) {
    return s.is_object() ? dec(s["geomean_speedup"], "%.3fx") : std::string("-");
  };
  for (const auto& p : cmp["problems"])
    t.rows.push_back({p["problem"].get<std::string>(), p["status"].get<std::string>(),
                      side_text(p["baseline"]), side_text(p["current"]), speed_text(p["baseline"]),
                      speed_text(p["current"]), dec(p["speedup_delta"], "%+.3f")});
  return t;
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

namespace {

std::string md_cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

}  // namespace

// A GitHub-style table: the first `left` columns (names) left-aligned, the numbers right-aligned.
std::string md_table(const Table& t) {
  std::string out = "|";
  for (const auto& h : t.head) out += " " + h + " |";
  out += "\n|";
  for (size_t i = 0; i < t.head.size(); ++i) out += i < t.left ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& c : row) out += " " + md_cell(c) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace kernrl::report
