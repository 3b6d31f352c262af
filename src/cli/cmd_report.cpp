// kernrl report: pass@k, fast_p, speedups, rewards and statuses from trace files (docs/report.md).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "report/kernelbench.h"
#include "report/render.h"
#include "report/report.h"

namespace kernrl {

CommandRun add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "Aggregate trace files (JSONL records from eval --trace / grade-dir) into tables per run, "
      "level or\n"
      "problem: samples; format, compile and correct rates; pass@k; fast_p; geometric-mean speedup "
      "of\n"
      "correct samples; mean reward; median sol_fraction; suspicious records; status counts.\n"
      "\n"
      "Definitions (exact ones in docs/report.md):\n"
      "  - Records with the same (run, file, source_sha256) are one sample graded twice (a resumed "
      "run):\n"
      "    the last one counts. Shards of one run (several files, same run name) merge. A record "
      "whose\n"
      "    run is null belongs to the run \"(none)\".\n"
      "  - pass@k of a problem: 1 - C(n-c, k) / C(n, k), n = its samples in the run, c = the "
      "correct ones.\n"
      "    A run's (or level's) pass@k is the mean over its problems with n >= k; the number of "
      "problems\n"
      "    that covers is printed beside it.\n"
      "  - fast_p: share of ALL samples of the selection that are correct AND have speedup > p "
      "(strictly:\n"
      "    a speedup of exactly 1.0 is not in fast_1). KernelBench's definition, counted per "
      "sample.\n"
      "  - geomean speedup: geometric mean of the speedups of correct samples that were timed.\n"
      "\n"
      "Malformed lines (e.g. the cut-off last line of a killed run) are reported on stderr as\n"
      "FILE:LINE: message and skipped; the report covers the rest.\n"
      "\n"
      "Exit codes: 0 report printed; 1 --fail-on-regression and a problem regressed; 2 usage "
      "error\n"
      "(no readable input, bad option, unknown reward preset, unknown --run).");
  auto o = std::make_shared<ReportOptions>();
  cmd->add_option(
         "traces", o->inputs,
         "TRACE.jsonl files or directories (a directory: every *.jsonl inside, recursively)")
      ->required()
      ->type_name("TRACE.jsonl|DIR");
  cmd->add_option("--by", o->by,
                  "Table granularity: run (default), level (run x level) or problem (run x "
                  "problem);\n"
                  "turn, trajectory: multi-turn trajectories per turn or one by one; step: "
                  "training curves\n"
                  "over the trainer's steps (time buckets when no record has a step)")
      ->check(CLI::IsMember({"run", "level", "problem", "turn", "trajectory", "step"}))
      ->capture_default_str();
  cmd->add_option("--gamma", o->gamma,
                  "Discount of trajectories' returns R_t = s_t + gamma s_{t+1} + ... (default "
                  "0.4)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--k", o->ks,
                  "pass@k values, comma-separated (default 1); a k is shown only over problems "
                  "with >= k samples")
      ->delimiter(',')
      ->type_name("K,...");
  cmd->add_option("--p", o->ps, "fast_p thresholds, comma-separated (default 0,0.5,0.8,1,1.5,2)")
      ->delimiter(',')
      ->type_name("P,...");
  std::string formats;
  for (const std::string& name : report::report_formats())
    formats += (formats.empty() ? "" : "\n") + name + ": " + report::find_format(name)->summary;
  formats += "\nkernelbench: KernelBench's eval_results.json per run and level, into --out DIR";
  std::vector<std::string> allowed = report::report_formats();
  allowed.push_back("kernelbench");
  cmd->add_option("--format", o->format, formats)
      ->check(CLI::IsMember(allowed))
      ->capture_default_str();
  auto kb_out = std::make_shared<std::string>();
  cmd->add_option("--out", *kb_out,
                  "--format kernelbench: the folder for the <run>_level_<L>/ folders of\n"
                  "eval_results.json (and pass_at_k_results.json); created if missing")
      ->type_name("DIR");
  cmd->add_option("--sort", o->sort,
                  "Leaderboard across runs, best first by this metric: pass@K, fast_P, "
                  "correct_rate, compile_rate,\n"
                  "format_rate, geomean_speedup, mean_reward, median_sol_fraction, "
                  "mean_sol_fraction, samples,\n"
                  "problems, suspicious "
                  "(suspicious: fewest first). Its k or p is computed even when not in --k/--p.")
      ->type_name("METRIC");
  cmd->add_option("--baseline", o->baseline,
                  "Compare with another trace file or directory: per problem, correct samples and "
                  "geomean speedup\n"
                  "before and now, their deltas, and the regressions (a problem with a correct "
                  "sample in the\n"
                  "baseline and none now). The baseline is not filtered by --run.")
      ->type_name("FILE|DIR");
  cmd->add_flag("--fail-on-regression", o->fail_on_regression,
                "Exit 1 when any problem regressed against --baseline (for CI gates)");
  cmd->add_option("--reward", o->reward_preset,
                  "Rescore every record (and the baseline's) with this reward preset "
                  "(configs/rewards/NAME.yaml,\n"
                  "or a .yaml path) before aggregating")
      ->type_name("PRESET");
  cmd->add_option("--run", o->run,
                  "Only the records of this run (records with a null run: \"(none)\")")
      ->type_name("NAME");
  cmd->add_flag("--pool-all", o->pool_all,
                "Pool every level in the runs' geomean speedup and fast_p, also levels whose "
                "speedups are not\n"
                "comparable with other levels' (problem.yaml score.pooled: false, e.g. L10), "
                "which are left out by default");
  cmd->footer(
      "Examples:\n"
      "  kernrl report runs/model-a.jsonl\n"
      "  kernrl report runs/ --by level --k 1,5,10\n"
      "  kernrl report runs/*.jsonl --sort fast_1                 # leaderboard across runs\n"
      "  kernrl report new.jsonl --baseline main.jsonl --fail-on-regression\n"
      "  kernrl report runs/a.jsonl --format json | jq '.runs[0].pass_at_k[\"1\"].value'\n"
      "  kernrl report runs/ --by level --format html > report.html   # tables and charts, one "
      "file\n"
      "  kernrl report runs/a.jsonl --format kernelbench --out kb/   # KernelBench's result files");
  return [o, kb_out]() {
    if (o->format == "kernelbench" || !kb_out->empty()) {
      if (o->format != "kernelbench" || kb_out->empty()) {
        std::cerr << "kernrl report: --format kernelbench and --out DIR go together\n";
        return kExitUsage;
      }
      KernelBenchOptions ko;
      ko.ks = o->ks;
      ko.run = o->run;
      run_kernelbench_report(o->inputs, ko, *kb_out, std::cout, std::cerr);
      return kExitOk;
    }
    std::vector<std::string> regressed = run_report(*o, std::cout, std::cerr);
    if (regressed.empty()) return kExitOk;
    std::cerr << "kernrl report: " << regressed.size() << " problem(s) regressed:";
    for (const auto& id : regressed) std::cerr << " " << id;
    std::cerr << "\n";
    return kExitFail;
  };
}

}  // namespace kernrl
