// The tables people read (md and html): their columns, and each cell as text. The formats differ
// only in how they lay a table out and escape its cells.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kernrl::report {

// Cell text: a number with printf format `f`; a fraction as a percentage ("12.5%"); a number with
// three decimals (or `f`); a whole number; a level ("L1"). Null (or not a number) reads "-", a
// level "(unknown)".
std::string fmt(const char* f, double v);
std::string pct(const nlohmann::json& v);
std::string dec(const nlohmann::json& v, const char* f = "%.3f");
std::string count(const nlohmann::json& v);
std::string level_text(const nlohmann::json& v);

// The report's pass@k keys ("1", "5") and fast_p keys ("0", "0.5").
std::vector<std::string> k_keys(const nlohmann::json& report);
std::vector<std::string> p_keys(const nlohmann::json& report);

// The eight statuses, then any other status found in the rows' status_counts.
std::vector<std::string> status_names(const nlohmann::json& rows);

struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  size_t left = 1;  // the first `left` columns are names (left-aligned), the rest numbers
};

// One row per metrics object of `rows`: the identity columns `ids` (run, level, problem), a rank
// first when `ranked`, then the metric columns of the report's k and p.
Table metrics_table(const nlohmann::json& report, const nlohmann::json& rows,
                    const std::vector<std::string>& ids, bool ranked);
// Scores by level: per run and level, the measure to lead with and its value, SOL fractions,
// speedups over each baseline, and whether the level is in the pooled figures.
Table level_scores_table(const nlohmann::json& report);
// The line saying which levels the pooled speedup figures leave out (or, under --pool-all, take in
// though not comparable), and why; empty when every level is comparable.
std::string pooled_note(const nlohmann::json& report);
// `t` as a GitHub-style Markdown table: the first `left` columns left-aligned, the numbers
// right-aligned, `|` in cells escaped.
std::string md_table(const Table& t);
// One CSV field (RFC 4180): null is empty, numbers as numbers, text quoted when it must be.
std::string csv_field(const nlohmann::json& v);

// Status counts per run.
Table status_table(const nlohmann::json& report);
// Where the grader's time went per run (mean ms per record); no rows when no record says.
Table grader_table(const nlohmann::json& report);
// The unattributed records per run: how many, why, with which status.
Table unattributed_table(const nlohmann::json& unattributed);
// The two sides of a comparison as metrics rows, "baseline (runs)" and "current (runs)".
Table comparison_sides_table(const nlohmann::json& report);
// The comparison problem by problem.
Table comparison_problems_table(const nlohmann::json& comparison);

}  // namespace kernrl::report
