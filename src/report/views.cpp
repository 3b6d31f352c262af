#include "report/views.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/curves.h"
#include "report/svg.h"

namespace kernrl::report {
using nlohmann::json;

namespace {

bool has(const json& a, const char* key) {
  return a.contains(key) && a[key].is_object();
}

int max_turn(const json& a) {
  int m = 0;
  for (const auto& r : a["trajectories"]["runs"])
    for (const auto& t : r["per_turn"]) m = std::max(m, t["turn"].get<int>());
  return m;
}

std::string gamma_text(const json& a) {
  return fmt("%g", a["trajectories"]["gamma"].get<double>());
}

std::string speed(const json& v) {
  return v.is_number() ? fmt("%.3gx", v.get<double>()) : "-";
}

std::string x_key(const json& a) {
  return a["curves"]["x"] == "step" ? "step" : "time";
}

// The x value of a curve point: its step, or minutes since the first bucket of the report.
double x_of(const json& a, const json& p, double t0) {
  if (x_key(a) == "step") return p["step"].get<double>();
  return (timestamp_seconds(p["time"].get<std::string>()).value_or(t0) - t0) / 60.0;
}

double first_time(const json& a) {
  double t0 = 1e300;
  if (x_key(a) == "time")
    for (const auto& s : a["curves"]["series"])
      for (const auto& p : s["points"])
        t0 = std::min(t0, timestamp_seconds(p["time"].get<std::string>()).value_or(t0));
  return t0;
}

// A table as data: each column's csv key, its heading for people and how its cells read
// ('s' text, 'n' count, 'p' percentage, 'd' decimal, 'x' speedup).
struct Column {
  std::string key, head;
  char kind;
};
struct RawTable {
  std::vector<Column> cols;
  std::vector<std::vector<json>> rows;
  size_t left = 1;
};

Table shown(const RawTable& r) {
  Table t;
  t.left = r.left;
  for (const auto& c : r.cols) t.head.push_back(c.head);
  for (const auto& row : r.rows) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < row.size(); ++i) {
      const json& v = row[i];
      switch (r.cols[i].kind) {
        case 's':
          cells.push_back(v.is_string() ? v.get<std::string>() : v.is_null() ? "-" : v.dump());
          break;
        case 'n':
          cells.push_back(count(v));
          break;
        case 'p':
          cells.push_back(pct(v));
          break;
        case 'x':
          cells.push_back(speed(v));
          break;
        default:
          cells.push_back(dec(v, "%.3f"));
      }
    }
    t.rows.push_back(cells);
  }
  return t;
}

RawTable runs_raw(const json& a) {
  RawTable t;
  int turns = has(a, "trajectories") ? max_turn(a) : 0;
  t.cols = {{"run", "run", 's'}, {"trajectories", "trajectories", 'n'}, {"solved", "solved", 'n'}};
  for (int i = 1; i <= turns; ++i)
    t.cols.push_back({"solved_within_" + std::to_string(i), "within " + std::to_string(i), 'p'});
  t.cols.push_back({"mean_turns_to_correct", "mean turns to correct", 'd'});
  t.cols.push_back({"geomean_best_speedup", "geomean best speedup", 'x'});
  t.cols.push_back({"mean_return", "mean return", 'd'});
  if (!turns) return t;
  for (const auto& r : a["trajectories"]["runs"]) {
    std::vector<json> row = {r["run"], r["trajectories"], r["solved"]};
    for (int i = 1; i <= turns; ++i)
      row.push_back(r["solved_within"].value(std::to_string(i), json()));
    row.push_back(r["mean_turns_to_correct"]);
    row.push_back(r["geomean_best_speedup"]);
    row.push_back(r["mean_return"]);
    t.rows.push_back(row);
  }
  return t;
}

RawTable per_turn_raw(const json& a) {
  RawTable t;
  t.cols = {{"run", "run", 's'},
            {"turn", "turn", 'n'},
            {"trajectories", "trajectories", 'n'},
            {"format_rate", "format", 'p'},
            {"compile_rate", "compile", 'p'},
            {"correct_rate", "correct", 'p'},
            {"mean_reward", "mean reward", 'd'},
            {"mean_return", "mean return", 'd'}};
  t.left = 2;
  if (!has(a, "trajectories")) return t;
  for (const auto& r : a["trajectories"]["runs"])
    for (const auto& p : r["per_turn"]) {
      std::vector<json> row = {r["run"]};
      for (size_t i = 1; i < t.cols.size(); ++i) row.push_back(p[t.cols[i].key]);
      t.rows.push_back(row);
    }
  return t;
}

RawTable list_raw(const json& a) {
  RawTable t;
  t.cols = {{"run", "run", 's'},
            {"trajectory", "trajectory", 's'},
            {"problem", "problem", 's'},
            {"turns", "turns", 'n'},
            {"first_correct_turn", "first correct", 'n'},
            {"best_speedup", "best speedup", 'x'},
            {"return", "return", 'd'}};
  t.left = 3;
  if (!has(a, "trajectories")) return t;
  for (const auto& r : a["trajectories"]["list"])
    t.rows.push_back({r["run"], r["trajectory"], r["problem"], json(r["turns"].size()),
                      r["first_correct_turn"], r["best_speedup"],
                      r["returns"].empty() ? json(nullptr) : r["returns"][0]});
  return t;
}

RawTable curves_raw(const json& a) {
  RawTable t;
  std::string x = has(a, "curves") ? x_key(a) : "step";
  t.cols = {{"series", "series", 's'},           {x, x, x == "step" ? 'n' : 's'},
            {"samples", "samples", 'n'},         {"format_rate", "format", 'p'},
            {"compile_rate", "compile", 'p'},    {"correct_rate", "correct", 'p'},
            {"mean_reward", "mean reward", 'd'}, {"reward_std", "reward std", 'd'},
            {"speedup_p10", "speedup p10", 'x'}, {"speedup_p50", "speedup p50", 'x'},
            {"speedup_p90", "speedup p90", 'x'}, {"suspicious_rate", "suspicious", 'p'}};
  t.left = 2;
  if (!has(a, "curves")) return t;
  for (const auto& s : a["curves"]["series"])
    for (const auto& p : s["points"]) {
      std::vector<json> row = {s["series"]};
      for (size_t i = 1; i < t.cols.size(); ++i) row.push_back(p[t.cols[i].key]);
      t.rows.push_back(row);
    }
  return t;
}

// Per run, the per-turn rates; and solved within T turns, a bar per run.
std::string trajectory_charts(const json& a) {
  std::string out = "<h3>Trajectories</h3>\n<div class=\"charts\">\n";
  {
    int turns = max_turn(a);
    std::vector<std::string> cats;
    for (int i = 1; i <= turns; ++i) cats.push_back("turn " + std::to_string(i));
    size_t ri = 0;
    svg::BarChart within;
    within.title = "Solved within T turns (share of trajectories)";
    within.categories = cats;
    for (const auto& r : a["trajectories"]["runs"]) {
      std::string run = r["run"].get<std::string>();
      svg::BarChart ch;
      ch.title = "Per-turn rates: " + run;
      ch.categories = cats;
      const char* names[] = {"format", "compile", "correct"};
      const char* keys[] = {"format_rate", "compile_rate", "correct_rate"};
      for (int k = 0; k < 3; ++k) {
        ch.series.push_back({names[k], svg::palette(static_cast<size_t>(k))});
        std::vector<std::optional<double>> vals(cats.size());
        for (const auto& p : r["per_turn"])
          if (p[keys[k]].is_number()) vals[p["turn"].get<size_t>() - 1] = p[keys[k]].get<double>();
        ch.values.push_back(vals);
      }
      out += svg::bar_chart(ch);
      within.series.push_back({run, svg::palette(ri++)});
      std::vector<std::optional<double>> vals;
      for (int i = 1; i <= turns; ++i) {
        const json& v = r["solved_within"].value(std::to_string(i), json());
        vals.push_back(v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt);
      }
      within.values.push_back(vals);
    }
    out += svg::bar_chart(within) + "</div>\n";
  }
  return out;
}

// The curves over training, one chart per figure, a line per series.
std::string curve_charts(const json& a) {
  std::string out;
  {
    bool step = x_key(a) == "step";
    double t0 = first_time(a);
    std::string x_label = step ? "training step" : "minutes since the first record";
    auto curve = [&](const std::string& title, const std::vector<const char*>& keys, bool percent) {
      svg::ScatterChart ch;
      ch.title = title;
      ch.x_label = x_label;
      ch.log_x = false;
      ch.lines = true;
      ch.y_percent = percent;
      ch.y_lo = 0;
      ch.y_hi = percent ? 1 : 0;
      ch.width = 430;
      for (const auto& s : a["curves"]["series"])
        for (const char* k : keys) {
          std::string name = s["series"].get<std::string>();
          if (keys.size() > 1) name += " " + std::string(k);
          size_t si = ch.series.size();
          ch.series.push_back({name, svg::palette(si)});
          for (const auto& p : s["points"])
            if (p[k].is_number()) {
              double x = x_of(a, p, t0), y = p[k].get<double>();
              std::string where = step ? "step " + count(p["step"]) : p["time"].get<std::string>();
              ch.points.push_back({x, y, si,
                                   name + ", " + where + ": " +
                                       (percent ? pct(p[k]) : svg::number(y)) + " (" +
                                       count(p["samples"]) + " samples)"});
            }
        }
      return ch.points.empty() ? std::string() : svg::scatter_chart(ch);
    };
    out += "<h3>Training curves</h3>\n<div class=\"charts\">\n" +
           curve("Correct rate over training", {"correct_rate"}, true) +
           curve("Format and compile rates over training", {"format_rate", "compile_rate"}, true) +
           curve("Mean reward over training", {"mean_reward"}, false) +
           curve("Reward spread (standard deviation) over training", {"reward_std"}, false) +
           curve("Speedup quantiles of correct samples over training",
                 {"speedup_p10", "speedup_p50", "speedup_p90"}, false) +
           curve("Suspicious rate over training", {"suspicious_rate"}, true) + "</div>\n";
  }
  return out;
}

}  // namespace

Table trajectory_runs_table(const json& a) {
  return shown(runs_raw(a));
}
Table per_turn_table(const json& a) {
  return shown(per_turn_raw(a));
}
Table trajectory_list_table(const json& a) {
  return shown(list_raw(a));
}
Table curves_table(const json& a) {
  return shown(curves_raw(a));
}

std::string views_md(const json& a) {
  std::string out;
  if (has(a, "trajectories")) {
    out +=
        "\n## Trajectories\n\nMulti-turn trajectories (records with `trajectory` and `turn`); "
        "returns discounted with gamma " +
        gamma_text(a) +
        ": R_t = s_t + gamma s_{t+1} + ..., the return of a trajectory is R_1.\n\n" +
        md_table(trajectory_runs_table(a)) + "\n### Per turn\n\n" + md_table(per_turn_table(a));
    if (a["by"] == "trajectory")
      out += "\n### Each trajectory\n\n" + md_table(trajectory_list_table(a));
  }
  if (has(a, "curves"))
    out += "\n## Training curves\n\nBy " +
           std::string(x_key(a) == "step"
                           ? "the trainer's step (`training.step`)"
                           : "time buckets of " + fmt("%g", a["curves"]["bucket_s"].get<double>()) +
                                 " s (no record has a training step)") +
           ".\n\n" + md_table(curves_table(a));
  return out;
}

std::string views_csv(const json& a) {
  std::string by = a["by"];
  RawTable t;
  if (by == "turn")
    t = per_turn_raw(a);
  else if (by == "trajectory")
    t = list_raw(a);
  else if (by == "step")
    t = curves_raw(a);
  else
    return "";
  std::string out;
  for (size_t i = 0; i < t.cols.size(); ++i) out += (i ? "," : "") + csv_field(t.cols[i].key);
  out += "\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_field(row[i]);
    out += "\n";
  }
  return out;
}

std::string views_html_charts(const json& a) {
  return (has(a, "trajectories") ? trajectory_charts(a) : "") +
         (has(a, "curves") ? curve_charts(a) : "");
}

std::string views_html_tables(const json& a, std::string (*table)(const Table&)) {
  std::string out;
  if (has(a, "trajectories")) {
    out +=
        "<h2 id=\"trajectories\">Trajectories</h2>\n<p class=\"note\">Returns discounted with "
        "gamma " +
        gamma_text(a) + ": R_t = s_t + gamma s_{t+1} + ...; a trajectory's return is R_1.</p>\n" +
        table(trajectory_runs_table(a)) + "<h3>Per turn</h3>\n" + table(per_turn_table(a)) +
        "<h3>Each trajectory</h3>\n" + table(trajectory_list_table(a));
  }
  if (has(a, "curves")) out += "<h2 id=\"curves\">Training curves</h2>\n" + table(curves_table(a));
  return out;
}

}  // namespace kernrl::report
