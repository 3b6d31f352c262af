// Each subcommand registers itself on the CLI11 app; the callback runs it and returns an exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "core/errors.h"
#include "core/problem.h"

namespace kernrl {

// The subcommand's work, run after parsing; returns the process exit code.
using CommandRun = std::function<int()>;

CommandRun add_list_command(CLI::App& app);
CommandRun add_show_command(CLI::App& app);
CommandRun add_eval_command(CLI::App& app);
CommandRun add_grade_dir_command(CLI::App& app);
CommandRun add_report_command(CLI::App& app);
CommandRun add_bench_command(CLI::App& app);
CommandRun add_import_command(CLI::App& app);
CommandRun add_export_command(CLI::App& app);
CommandRun add_serve_command(CLI::App& app);

// True when stdout is a terminal and NO_COLOR is unset.
bool use_color();

}  // namespace kernrl
