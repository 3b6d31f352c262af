// --format html: one self-contained page (docs/report.md, "html"): the tables of the md format
// and charts drawn as inline SVG (svg.h). The page loads nothing and runs no script; its
// Content-Security-Policy forbids both.
#include <map>
#include <optional>

#include "report/records.h"
#include "report/render.h"
#include "report/scoring.h"
#include "report/svg.h"
#include "report/tables.h"
#include "report/views.h"

namespace kernrl::report {
using nlohmann::json;

namespace {

const char* const kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:24px auto;max-width:1240px;padding:0 16px}
h1{font-size:24px;margin:0 0 8px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd}h3{font-size:15px;margin:18px 0 6px}
p.note,li.note{color:#555;font-size:13px}nav a{margin-right:12px}
.wide{overflow-x:auto}
table{border-collapse:collapse;font-size:12px;margin:6px 0 16px}
th,td{border:1px solid #ddd;padding:3px 7px;white-space:nowrap}th{background:#f3f3f3;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:12px 28px;align-items:flex-start}
svg.chart{max-width:100%;height:auto;font-family:inherit;font-size:11px;overflow:visible}
svg text{fill:#222}svg .title{font-weight:600;font-size:12px}svg .note{fill:#777;font-style:italic}
svg .caption{fill:#555}svg .grid{stroke:#e8e8e8}svg .axis{stroke:#888}
svg .reference{stroke:#444;stroke-dasharray:4 3}svg .whisker{stroke:#777}
svg .median{stroke:#111;stroke-width:2}svg rect.box{fill-opacity:.3;stroke:#333;stroke-width:.8}
svg circle.mark{fill-opacity:.75}svg rect.key{stroke:none}
)";

std::string status_color(const std::string& status) {
  static const std::map<std::string, std::string> colors = {
      {to_string(Status::Correct), "#009e73"},      {to_string(Status::Incorrect), "#e69f00"},
      {to_string(Status::Compiled), "#56b4e9"},     {to_string(Status::FormatError), "#999999"},
      {to_string(Status::CompileError), "#cc79a7"}, {to_string(Status::LaunchError), "#d55e00"},
      {to_string(Status::RuntimeError), "#882255"}, {to_string(Status::Timeout), "#332288"}};
  auto it = colors.find(status);
  return it != colors.end() ? it->second : "#bbbbbb";
}

std::string compare_color(const std::string& status) {
  static const std::map<std::string, std::string> colors = {{"regressed", "#d55e00"},
                                                            {"fixed", "#009e73"},
                                                            {"same", "#0072b2"},
                                                            {"new", "#56b4e9"},
                                                            {"missing", "#999999"}};
  auto it = colors.find(status);
  return it != colors.end() ? it->second : "#bbbbbb";
}

std::string html_table(const Table& t) {
  std::string out = "<div class=\"wide\"><table><thead><tr>";
  for (size_t i = 0; i < t.head.size(); ++i)
    out +=
        std::string(i < t.left ? "<th>" : "<th class=\"num\">") + svg::escape(t.head[i]) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i)
      out +=
          std::string(i < t.left ? "<td>" : "<td class=\"num\">") + svg::escape(row[i]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string level_name(const std::optional<int>& level) {
  return level ? "L" + std::to_string(*level) : "(unknown)";
}

// What the charts need, gathered once.
struct ChartData {
  std::vector<std::string> runs;  // report order
  std::map<std::string, std::string> color;
  std::vector<std::optional<int>> levels;  // every level present, unknown last
  // run -> level -> metrics object (from the records, or the report's level groups)
  std::map<std::string, std::map<std::optional<int>, json>> level_metrics;
  // run -> level -> records (only with the records at hand)
  std::map<std::string, std::map<std::optional<int>, std::vector<const TraceRecord*>>> records;
  bool pool_all = false;  // --pool-all
  bool left_out = false;  // the runs' pooled figures leave levels out
};

bool level_less(const std::optional<int>& a, const std::optional<int>& b) {
  if (a && b) return *a < *b;
  return a.has_value() && !b.has_value();
}

ChartData chart_data(const ReportData& d) {
  const json& a = d.report;
  ChartData c;
  c.pool_all = d.settings.pool_all;
  c.left_out = a.value("pooled", json::object()).value("left_out", false);
  for (const auto& r : a["runs"]) {
    std::string name = r["run"].get<std::string>();
    c.color[name] = svg::palette(c.runs.size());
    c.runs.push_back(name);
  }
  auto add_level = [&](const std::optional<int>& l) {
    for (const auto& x : c.levels)
      if (x == l) return;
    c.levels.push_back(l);
  };
  if (d.prepared) {
    for (const Group& g : group_records(d.prepared->records, "level", c.runs)) {
      add_level(g.level);
      c.level_metrics[g.run][g.level] = group_json(g, d.settings);
      c.records[g.run][g.level] = g.recs;
    }
  } else if (a["by"] == "level") {
    for (const auto& g : a["groups"]) {
      std::optional<int> l;
      if (g["level"].is_number_integer()) l = g["level"].get<int>();
      add_level(l);
      c.level_metrics[g["run"].get<std::string>()][l] = g;
    }
  }
  std::stable_sort(c.levels.begin(), c.levels.end(), level_less);
  return c;
}

std::string speed_text(double v) {
  return svg::number(v) + "x";
}

// Who a record is, for a tooltip: run, problem, file.
std::string record_tip(const TraceRecord& r) {
  std::string tip = rec::run_of(r) + " \u00b7 " + rec::problem_of(r).value_or("?");
  std::string file = r.file.value_or("");
  if (!file.empty()) tip += " \u00b7 " + file;
  return tip;
}

std::string speedup_distribution(const ChartData& c) {
  svg::DistributionChart ch;
  ch.title =
      "Speedup of correct samples over their baseline (PyTorch, or the reference kernel where "
      "a problem says so), per run and level";
  ch.x_label = "speedup (log scale): dots are samples, boxes the middle half, bars the median";
  ch.reference_label = "1x";
  for (const auto& run : c.runs) {
    auto it = c.records.find(run);
    if (it == c.records.end()) continue;
    auto row_of = [&](const std::string& label, const std::vector<const TraceRecord*>& recs) {
      svg::DistributionChart::Row row{label, c.color.at(run), {}, {}};
      for (const TraceRecord* r : recs)
        if (auto s = rec::counted_speedup(*r)) {
          row.values.push_back(*s);
          row.tips.push_back(record_tip(*r) + ": " + speed_text(*s));
        }
      return row;
    };
    if (it->second.size() > 1) {
      // The levels pooled in the run's figures (all of them under --pool-all).
      std::vector<const TraceRecord*> all;
      bool left_out = false;
      for (const auto& [level, recs] : it->second)
        for (const TraceRecord* r : recs) {
          if (!c.pool_all && !score_of_record(*r).pooled) {
            left_out = true;
            continue;
          }
          all.push_back(r);
        }
      ch.rows.push_back(
          row_of(run + " \u00b7 " + (left_out ? "pooled levels" : "all levels"), all));
    }
    for (const auto& level : c.levels)
      if (auto l = it->second.find(level); l != it->second.end()) {
        bool pooled = l->second.empty() || score_of_record(*l->second.front()).pooled;
        ch.rows.push_back(row_of(
            run + " \u00b7 " + level_name(level) + (pooled ? "" : " (not pooled)"), l->second));
      }
  }
  if (ch.rows.empty()) return "<p class=\"note\">No record with a known problem.</p>\n";
  return svg::distribution_chart(ch);
}

// One small chart per pass@K and per fast_P: categories are the levels and "all", series the runs.
std::string level_metric_charts(const json& a, const ChartData& c) {
  std::vector<svg::Series> series;
  for (const auto& run : c.runs) series.push_back({run, c.color.at(run)});
  std::vector<std::string> categories;
  for (const auto& l : c.levels) categories.push_back(level_name(l));
  categories.push_back("all");
  std::map<std::string, const json*> totals;
  for (const auto& r : a["runs"]) totals[r["run"].get<std::string>()] = &r;

  auto chart = [&](const std::string& title, auto value_of) {
    svg::BarChart ch;
    ch.title = title;
    ch.series = series;
    ch.categories = categories;
    for (const auto& run : c.runs) {
      std::vector<std::optional<double>> vals;
      for (const auto& l : c.levels) {
        std::optional<double> v;
        auto rl = c.level_metrics.find(run);
        if (rl != c.level_metrics.end())
          if (auto m = rl->second.find(l); m != rl->second.end()) v = value_of(m->second);
        vals.push_back(v);
      }
      vals.push_back(value_of(*totals.at(run)));
      ch.values.push_back(vals);
    }
    return svg::bar_chart(ch);
  };
  auto num = [](const json& v) -> std::optional<double> {
    if (v.is_number()) return v.get<double>();
    return std::nullopt;
  };
  std::string out;
  for (const auto& k : k_keys(a))
    out += chart("pass@" + k + " (mean over problems with " + k + " or more samples)",
                 [&](const json& m) { return num(m["pass_at_k"][k]["value"]); });
  for (const auto& p : p_keys(a))
    out += chart("fast_" + p + " (correct and faster than " + p + "x)" +
                     (c.left_out ? "; all: pooled levels" : ""),
                 [&](const json& m) { return num(m["fast_p"][p]); });
  return out;
}

// Mean SOL fraction per level and run: how close to the hardware limit, where speedups say little.
std::string sol_by_level_chart(const json& a, const ChartData& c) {
  svg::BarChart ch;
  ch.title = "Mean SOL fraction of timed samples, by level";
  ch.percent = false;
  for (const auto& run : c.runs) ch.series.push_back({run, c.color.at(run)});
  for (const auto& l : c.levels) ch.categories.push_back(level_name(l));
  ch.categories.push_back("all");
  bool any = false;
  for (const auto& run : c.runs) {
    std::vector<std::optional<double>> vals;
    auto value = [&](const json& m) -> std::optional<double> {
      const json& v = m.value("mean_sol_fraction", json(nullptr));
      if (!v.is_number()) return std::nullopt;
      any = true;
      return v.get<double>();
    };
    for (const auto& l : c.levels) {
      std::optional<double> v;
      auto rl = c.level_metrics.find(run);
      if (rl != c.level_metrics.end())
        if (auto m = rl->second.find(l); m != rl->second.end()) v = value(m->second);
      vals.push_back(v);
    }
    std::optional<double> total;
    for (const auto& r : a["runs"])
      if (r["run"] == run) total = value(r);
    vals.push_back(total);
    ch.values.push_back(vals);
  }
  return any ? svg::bar_chart(ch) : "";
}

std::string sol_scatter(const ChartData& c) {
  svg::ScatterChart ch;
  ch.title = "Fraction of the hardware limit (sol_fraction) against speedup, correct timed samples";
  ch.x_label = "speedup (log scale)";
  ch.y_label = "sol_fraction";
  for (size_t i = 0; i < c.runs.size(); ++i) {
    ch.series.push_back({c.runs[i], c.color.at(c.runs[i])});
    auto it = c.records.find(c.runs[i]);
    if (it == c.records.end()) continue;
    for (const auto& [level, recs] : it->second)
      for (const TraceRecord* r : recs) {
        auto s = rec::counted_speedup(*r);
        auto sol = r->sol_fraction ? std::optional<double>(*r->sol_fraction) : std::nullopt;
        if (!s || !sol || !std::isfinite(*sol)) continue;
        ch.points.push_back(
            {*s, *sol, i,
             record_tip(*r) + ": " + speed_text(*s) + ", sol_fraction " + svg::number(*sol)});
      }
  }
  if (ch.points.empty()) return "";
  return svg::scatter_chart(ch);
}

std::string status_breakdown(const json& a, const ChartData& c) {
  svg::StackedChart ch;
  ch.title = "Statuses per run and level";
  std::vector<std::string> names = status_names(a["runs"]);
  for (const auto& s : names) ch.parts.push_back({s, status_color(s)});
  auto row = [&](const std::string& label, const json& m) {
    svg::StackedChart::Row r{label, {}};
    for (const auto& s : names) r.counts.push_back(m["status_counts"].value(s, 0));
    ch.rows.push_back(r);
  };
  for (const auto& m : a["runs"]) {
    std::string run = m["run"].get<std::string>();
    row(run, m);
    auto it = c.level_metrics.find(run);
    if (it == c.level_metrics.end() || it->second.size() < 2) continue;
    for (const auto& l : c.levels)
      if (auto lm = it->second.find(l); lm != it->second.end())
        row(run + " \u00b7 " + level_name(l), lm->second);
  }
  return svg::stacked_chart(ch);
}

std::string comparison_charts(const json& cmp) {
  svg::DeltaChart speed, correct;
  speed.title = "Speedup now / in the baseline, per problem";
  speed.x_label = "ratio of geomean speedups (log scale)";
  correct.title = "Correct rate now minus in the baseline, per problem";
  correct.x_label = "difference in correct rate";
  correct.log = false;
  for (const char* s : {"regressed", "fixed", "same", "new", "missing"}) {
    speed.legend.push_back({s, compare_color(s)});
    correct.legend.push_back({s, compare_color(s)});
  }
  auto side = [](const json& s) {
    return s.is_object() ? count(s["correct"]) + "/" + count(s["samples"]) + " correct"
                         : std::string("absent");
  };
  for (const auto& p : cmp["problems"]) {
    std::string id = p["problem"].get<std::string>(), status = p["status"].get<std::string>();
    std::string who =
        id + " (" + status + "): baseline " + side(p["baseline"]) + ", now " + side(p["current"]);
    svg::DeltaChart::Row r{id, std::nullopt, compare_color(status), status, who};
    if (p["speedup_ratio"].is_number()) {
      r.value = p["speedup_ratio"].get<double>();
      r.tip = who + "; speedup " + dec(p["baseline"]["geomean_speedup"], "%.3fx") + " -> " +
              dec(p["current"]["geomean_speedup"], "%.3fx");
    } else if (status == "same") {
      r.note = "no speedup on both sides";
    }
    speed.rows.push_back(r);
    svg::DeltaChart::Row q{id, std::nullopt, compare_color(status), status, who};
    if (p["correct_rate_delta"].is_number()) q.value = p["correct_rate_delta"].get<double>();
    correct.rows.push_back(q);
  }
  return svg::delta_chart(speed) + svg::delta_chart(correct);
}

std::string summary(const json& a) {
  std::string s =
      count(a["records"]) + " records from " + std::to_string(a["runs"].size()) + " run(s)";
  if (a["duplicates"].get<long long>() > 0)
    s += ", " + count(a["duplicates"]) + " duplicate(s) dropped";
  if (!a["malformed_lines"].empty())
    s += ", " + std::to_string(a["malformed_lines"].size()) + " malformed line(s) skipped";
  if (a["reward_preset"].is_string())
    s += "; rewards rescored with preset '" + a["reward_preset"].get<std::string>() + "'";
  return s + ".";
}

}  // namespace

std::string render_html(const ReportData& d) {
  const json& a = d.report;
  ChartData c = chart_data(d);
  const json& un = a["unattributed"];
  bool unattributed = un.is_object() && un.value("records", 0) > 0;
  bool compared = a["comparison"].is_object();

  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"kernrl report\">\n"
      "<title>kernrl report</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<h1>kernrl report</h1>\n";
  out += "<p>" + svg::escape(summary(a)) + "</p>\n";
  if (std::string note = pooled_note(a); !note.empty())
    out += "<p class=\"note\">" + svg::escape(note) + "</p>\n";
  if (unattributed)
    out += "<p class=\"note\">" + svg::escape(count(un["records"])) +
           " unattributed record(s) (no known problem) are not counted below; see "
           "<a href=\"#unattributed\">Unattributed</a>.</p>\n";
  Table level_scores = level_scores_table(a);
  out += "<nav><a href=\"#charts\">Charts</a><a href=\"#runs\">Runs</a>";
  if (!level_scores.rows.empty()) out += "<a href=\"#levels\">Scores by level</a>";
  if (a["by"] == "level" || a["by"] == "problem")
    out += "<a href=\"#groups\">By " + svg::escape(a["by"].get<std::string>()) + "</a>";
  if (a.value("trajectories", json()).is_object())
    out += "<a href=\"#trajectories\">Trajectories</a>";
  if (a.value("curves", json()).is_object()) out += "<a href=\"#curves\">Training curves</a>";
  out += "<a href=\"#statuses\">Statuses</a>";
  if (unattributed) out += "<a href=\"#unattributed\">Unattributed</a>";
  if (compared) out += "<a href=\"#comparison\">Compared with the baseline</a>";
  out += "<a href=\"#inputs\">Inputs</a></nav>\n";

  // ---- charts ----
  out += "<h2 id=\"charts\">Charts</h2>\n";
  out +=
      "<p class=\"note\">Hover a mark for its numbers and, for a sample, its run, problem and "
      "file.</p>\n";
  if (d.prepared) {
    out += "<h3>Speedup distribution</h3>\n" + speedup_distribution(c);
  }
  out += "<h3>pass@k and fast_p by level</h3>\n<div class=\"charts\">\n" +
         level_metric_charts(a, c) + "</div>\n";
  if (std::string sol = sol_by_level_chart(a, c); !sol.empty())
    out += "<h3>Speed of light by level</h3>\n" + sol;
  if (d.prepared) {
    out += "<h3>Speed of light against speedup</h3>\n";
    std::string scatter = sol_scatter(c);
    out += scatter.empty() ? "<p class=\"note\">No correct timed sample has a sol_fraction (a "
                             "device with known ceilings is needed).</p>\n"
                           : scatter;
  }
  out += views_html_charts(a);
  out += "<h3>Statuses</h3>\n" + status_breakdown(a, c);
  if (compared)
    out += "<h3>Against the baseline</h3>\n<div class=\"charts\">\n" +
           comparison_charts(a["comparison"]) + "</div>\n";

  // ---- tables ----
  out += "<h2 id=\"runs\">Runs";
  if (a["leaderboard"].is_object())
    out += " (best first by " + svg::escape(a["leaderboard"]["metric"].get<std::string>()) + ")";
  out += "</h2>\n" + html_table(metrics_table(a, a["runs"], {"run"}, a["leaderboard"].is_object()));
  if (!level_scores.rows.empty())
    out +=
        "<h2 id=\"levels\">Scores by level</h2>\n<p class=\"note\">score: the level's lead "
        "measure (mean SOL fraction where speedups over the baseline say little, else the geomean "
        "speedup); speedup: geomean over the baseline each problem's records are against.</p>\n" +
        html_table(level_scores);
  if (a["by"] == "level")
    out += "<h2 id=\"groups\">By level</h2>\n" +
           html_table(metrics_table(a, a["groups"], {"run", "level"}, false));
  if (a["by"] == "problem")
    out += "<h2 id=\"groups\">By problem</h2>\n" +
           html_table(metrics_table(a, a["groups"], {"run", "problem", "level"}, false));
  out += views_html_tables(a, html_table);
  out += "<h2 id=\"statuses\">Statuses</h2>\n" + html_table(status_table(a));
  if (unattributed)
    out +=
        "<h2 id=\"unattributed\">Unattributed</h2>\n<p>Records whose problem is unknown: "
        "outside samples, pass@k, fast_p and every other metric above.</p>\n" +
        html_table(unattributed_table(un));
  if (compared) {
    const json& cmp = a["comparison"];
    const json& n = cmp["counts"];
    out += "<h2 id=\"comparison\">Compared with the baseline</h2>\n<p>baseline: " +
           svg::escape(cmp["baseline"].get<std::string>()) + "; " + count(n["regressed"]) +
           " regressed, " + count(n["fixed"]) + " fixed, " + count(n["same"]) + " unchanged, " +
           count(n["new"]) + " new, " + count(n["missing"]) + " missing.</p>\n";
    out += html_table(comparison_sides_table(a));
    if (!cmp["regressions"].empty()) {
      out += "<p><strong>Regressions</strong> (correct in the baseline, no correct sample now):";
      for (const auto& id : cmp["regressions"]) out += " " + svg::escape(id.get<std::string>());
      out += "</p>\n";
    }
    out += html_table(comparison_problems_table(cmp));
  }
  out += "<h2 id=\"inputs\">Inputs</h2>\n<ul>\n";
  for (const auto& f : a["files"]) out += "<li>" + svg::escape(f.get<std::string>()) + "</li>\n";
  for (const auto& m : a["malformed_lines"])
    out += "<li class=\"note\">skipped " + svg::escape(m["file"].get<std::string>()) + ":" +
           count(m["line"]) + ": " + svg::escape(m["message"].get<std::string>()) + "</li>\n";
  out +=
      "</ul>\n<p class=\"note\">pass@k: mean over problems with at least k samples of the "
      "unbiased estimator. fast_p: share of samples that are correct and faster than p x the "
      "baseline. geomean speedup: over correct timed samples (their count). See "
      "docs/report.md.</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace kernrl::report
