// kernrl grade-dir: grade a directory of generations. The run (grading/run.h) grades: compiles on
// a CPU thread pool while one worker per GPU grades, every record appended and flushed as soon as
// it is known. This file declares the options and prints.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/grade_dir_output.h"
#include "core/paths.h"
#include "core/safe_text.h"
#include "grading/run.h"
#include "grading/session.h"
#include "import/kernelbench_import.h"
#include "report/report.h"

namespace kernrl {
namespace fs = std::filesystem;

namespace {

struct Opts {
  std::string dir, out, run, gpus, shard, config, level_problem, kernelbench_json, kernelbench_dir,
      baselines, reward, seed;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int level = 0;
  bool resume = true, compile_only = false, quiet = false, profile = false;
};

// After the grading: KernelBench's files and the run's summary, from this run's records; the exit
// code.
int finish_run(const Opts& o, const Run& run, const Selection& sel, size_t unreadable_folders,
               size_t internal_errors) {
  std::string out = escape_invalid_utf8(run.trace());
  std::vector<TraceRecord> mine = run.records();
  int rc = kExitOk;
  if (!o.kernelbench_json.empty() || !o.kernelbench_dir.empty()) {
    // KernelBench's files, from this run's records of the selected level and problem.
    std::vector<TraceRecord> selected;
    for (const auto& r : mine)
      if (sel.only_problem.empty() || !r.problem || *r.problem == sel.only_problem)
        selected.push_back(r);
    KernelBenchOptions ko;
    ko.run = run.name();
    if (o.level) ko.level = o.level;
    if (!kernelbench_outputs(ko, selected, o.kernelbench_json, o.kernelbench_dir, out))
      rc = kExitUsage;
  }
  if (!o.quiet) {  // the run's summary, as `kernrl report` prints it
    ReportOptions rep;
    rep.run = run.name();
    std::cout << render(aggregate(mine, rep), rep);
  }
  if (rc == kExitOk && (unreadable_folders || internal_errors)) {
    std::fprintf(stderr,
                 "kernrl grade-dir: the run completed, but %zu folder(s) could not be read and "
                 "%zu file(s) hit an internal error (named above)\n",
                 unreadable_folders, internal_errors);
    rc = kExitFail;
  }
  return rc;
}

int grade_dir(const Opts& o) {
  Config cfg = load_config(o.config);
  if (!o.reward.empty()) cfg.reward_preset = o.reward;
  require_sandbox(cfg);  // fail closed, before anything is graded
  load_reward_preset(cfg.reward_preset);
  Selection sel;
  sel.shard = Shard::parse(o.shard);
  sel.only_level = o.level;
  if (!o.level_problem.empty())
    sel.only_problem = problem_id_of_dir(find_problem_dir(problems_dir(), o.level_problem));
  // The outputs first: an unwritable one stops the run before anything is graded.
  RunOptions ro;
  ro.name = o.run.empty() ? Run::name_for(o.dir) : o.run;
  if (!o.seed.empty()) ro.seed = parse_seed(o.seed);
  ro.trace = o.out.empty() ? (fs::path(o.dir) / "kernrl-traces.jsonl").string() : o.out;
  ro.resume = o.resume;
  Run run(std::move(ro));
  check_kernelbench_outputs(o.kernelbench_json, o.kernelbench_dir);
  // What to grade: discovered files (never kernrl's own outputs), this shard and selection,
  // minus what --resume finds already graded.
  Discovery found;
  try {
    found = discover_files(o.dir, {run.trace(), o.kernelbench_json});
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  for (const auto& w : found.warnings) std::fprintf(stderr, "kernrl grade-dir: %s\n", w.c_str());
  size_t already = 0;
  std::vector<DiscoveredFile> todo = run.select(found.files, sel, &already);
  std::string out = escape_invalid_utf8(run.trace());
  if (!o.quiet)
    std::fprintf(stderr,
                 "kernrl grade-dir: %zu files found, %zu to grade (%zu already graded), run '%s', "
                 "out %s\n",
                 found.files.size(), todo.size(), already, run.name().c_str(), out.c_str());
  SessionOptions so;
  so.cfg = cfg;
  so.gpus = o.gpus.empty() ? std::vector<int>{} : parse_gpu_list(o.gpus);
  so.compile_only = o.compile_only;
  so.profile = o.profile;
  so.baselines_path = o.baselines;
  so.compile_jobs = o.jobs;
  so.converters = {kernelbench_converter()};  // KernelBench modules (.py) are graded too
  GradingSession session(so);
  Progress progress(todo.size(), isatty(2), o.quiet);
  auto t_run = std::chrono::steady_clock::now();
  RunTally tally = run.grade(
      session, todo, sel, [&](const std::string& s, const TraceRecord& r) { progress.done(s, r); });
  double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count();
  if (!tally.write_error.empty()) {
    std::fprintf(stderr,
                 "kernrl grade-dir: %s; the run stopped (a --resume run goes on from the records "
                 "written)\n",
                 escape_invalid_utf8(tally.write_error).c_str());
    return kExitUsage;
  }
  if (!o.quiet && progress.count())
    print_grader_summary(progress.count(), run_s, session.gpu_stats());
  return finish_run(o, run, sel, found.unreadable_folders, tally.internal_errors);
}

}  // namespace

CommandRun add_grade_dir_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("grade-dir",
                                 "Grade every kernel file in a directory (KernelBench layout, "
                                 "folder per problem, or files naming their problem).");
  cmd->footer(
      "Layouts (docs/grade-dir.md): level_{L}_problem_{P}_sample_{S}_kernel.{cu,md,txt} -> problem "
      "L{L}_{P}_*;\n"
      "DIR/<problem id>/<anything>.{cu,md,txt} (samples numbered in name order); any file whose "
      "launch block\n"
      "names its problem. Records are appended to --out as they finish; with --resume (default) a "
      "rerun skips\n"
      "samples already graded (same run, path and source hash). Exit 0 when the run completed, "
      "whatever the\n"
      "kernels did; 1 when it completed but some of DIR could not be read or a file hit an "
      "internal error (each\n"
      "named on stderr); 2 when it could not run or an output could not be written.");
  auto o = std::make_shared<Opts>();
  cmd->add_option("DIR", o->dir, "Directory of generations")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option(
      "--out", o->out,
      "Trace file (JSONL) to append to (default DIR/kernrl-traces.jsonl; its folder is created)");
  cmd->add_option("--run", o->run, "Run name written into every record (default: the folder name)");
  cmd->add_option("--gpus", o->gpus, "GPU indices to use, e.g. 0,1 (default: all visible)");
  cmd->add_option("--jobs,-j", o->jobs, "Parallel compiles (default: number of cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--level", o->level, "Only problems of this level")->check(CLI::Range(1, 10));
  cmd->add_option("--problem", o->level_problem, "Only this problem (id or unique prefix)");
  cmd->add_option("--shard", o->shard,
                  "I/N: grade only the I-th (0-based) of N deterministic slices");
  cmd->add_flag(
      "--resume,!--no-resume", o->resume,
      "Skip samples already in --out for this run with the same path and source hash (default on)");
  cmd->add_flag("--compile-only", o->compile_only, "Extract, parse and compile only");
  cmd->add_flag("--profile", o->profile,
                "Also profile every kernel that ran with Nsight Compute (see `kernrl eval "
                "--help`); seconds per file");
  cmd->add_flag("--quiet,-q", o->quiet, "No progress output");
  cmd->add_option("--seed", o->seed,
                  "Run seed, 0 to 2^64-1 (default: fresh, recorded in every record)");
  cmd->add_option("--config", o->config, "Config file over configs/default.yaml");
  cmd->add_option("--baselines", o->baselines,
                  "Baseline file (default: baselines/<gpu>.json if present)");
  cmd->add_option("--reward", o->reward, "Reward preset (default from the config)");
  cmd->add_option("--kernelbench-json", o->kernelbench_json,
                  "Also write KernelBench's eval_results.json shape here (its folder is created)");
  cmd->add_option("--kernelbench-dir", o->kernelbench_dir,
                  "Also write KernelBench's run folders here: <run>_level_<L>/eval_results.json "
                  "(+ pass_at_k_results.json)");
  return [o]() { return grade_dir(*o); };
}

}  // namespace kernrl
