// The trajectory view and the training curves as each output format shows them (docs/report.md,
// "Trajectories" and "Training curves"): their tables (md, html), the one table of csv under
// --by turn | trajectory | step, and the html charts (a per-turn chart, solved within T turns,
// curves over the trainer's steps or time).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "report/tables.h"

namespace kernrl::report {

// Per run: trajectories, solved, solved within T turns, mean turns to the first correct answer,
// geomean best speedup, mean return.
Table trajectory_runs_table(const nlohmann::json& report);
// Per run and turn: trajectories reaching it, format/compile/correct rates, mean reward and return.
Table per_turn_table(const nlohmann::json& report);
// One row per trajectory.
Table trajectory_list_table(const nlohmann::json& report);
// One row per point of each curve.
Table curves_table(const nlohmann::json& report);

// The Markdown sections (empty when the report has neither).
std::string views_md(const nlohmann::json& report);
// The csv table of --by turn, trajectory or step; empty for the other --by values.
std::string views_csv(const nlohmann::json& report);
// The html charts (under "Charts") and the html tables, each empty when there is nothing to show;
// `table` lays out a Table as html.
std::string views_html_charts(const nlohmann::json& report);
std::string views_html_tables(const nlohmann::json& report, std::string (*table)(const Table&));

}  // namespace kernrl::report
