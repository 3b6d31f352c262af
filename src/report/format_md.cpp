// --format md: the report for people, as GitHub-style Markdown tables (docs/report.md, "md").
#include "report/render.h"
#include "report/tables.h"
#include "report/views.h"

namespace kernrl::report {
using nlohmann::json;

std::string render_md(const ReportData& data) {
  const json& a = data.report;
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
  bool unattributed = un.is_object() && un.value("records", 0) > 0;
  if (unattributed)
    out +=
        count(un["records"]) +
        " unattributed record(s) (no known problem) are not counted below; see Unattributed.\n\n";

  if (std::string note = pooled_note(a); !note.empty()) out += note + "\n\n";

  out += "## Runs";
  if (a["leaderboard"].is_object())
    out += " (best first by " + a["leaderboard"]["metric"].get<std::string>() + ")";
  out += "\n\n" + md_table(metrics_table(a, a["runs"], {"run"}, a["leaderboard"].is_object()));
  if (Table t = level_scores_table(a); !t.rows.empty())
    out +=
        "\n## Scores by level\n\nscore: the level's lead measure (mean SOL fraction where "
        "speedups over the baseline say little, else the geomean speedup); speedup: geomean over "
        "the baseline each problem's records are against (its correct timed samples).\n\n" +
        md_table(t);
  std::string by = a["by"];
  if (by == "level")
    out += "\n## By level\n\n" + md_table(metrics_table(a, a["groups"], {"run", "level"}, false));
  if (by == "problem")
    out += "\n## By problem\n\n" +
           md_table(metrics_table(a, a["groups"], {"run", "problem", "level"}, false));

  out += views_md(a);

  out += "\n## Statuses\n\n" + md_table(status_table(a));

  if (Table g = grader_table(a); !g.rows.empty())
    out +=
        "\n## Grader time\n\nMean milliseconds per record, from the records' `grader` objects "
        "(docs/trace-format.md).\n\n" +
        md_table(g);

  if (unattributed)
    out +=
        "\n## Unattributed\n\nRecords whose problem is unknown: outside samples, pass@k, fast_p "
        "and every other metric above.\n\n" +
        md_table(unattributed_table(un));

  if (a["comparison"].is_object()) {
    const json& cmp = a["comparison"];
    const json& n = cmp["counts"];
    out += "\n## Compared with the baseline\n\nbaseline: " + cmp["baseline"].get<std::string>() +
           "; " + count(n["regressed"]) + " regressed, " + count(n["fixed"]) + " fixed, " +
           count(n["same"]) + " unchanged, " + count(n["new"]) + " new, " + count(n["missing"]) +
           " missing.\n\n";
    out += md_table(comparison_sides_table(a));
    if (!cmp["regressions"].empty()) {
      out += "\n**Regressions** (correct in the baseline, no correct sample now):";
      for (const auto& id : cmp["regressions"]) out += " " + id.get<std::string>();
      out += "\n";
    }
    out += "\n" + md_table(comparison_problems_table(cmp));
  }
  out +=
      "\npass@k cells: value (problems with at least k samples). fast_p: share of samples that are "
      "correct and faster than p x the baseline. geomean speedup: over correct timed samples "
      "(their count). See docs/report.md.\n";
  bool nothing_ran = false;
  for (const auto& r : a["runs"])
    nothing_ran |= r.value("samples", 0) > 0 && r.value("ran", 1) == 0;
  if (nothing_ran)
    out +=
        "`-` under correct, pass@k and fast_p: nothing of that run ran on a GPU (compile-only, or "
        "no GPU), so correctness and speed were not measured.\n";
  return out;
}

}  // namespace kernrl::report
