// kernrl: grade GPU kernels written by language models. This binary never loads libtorch or
// creates a CUDA context: compiles run in kernrl-nvrtc, GPU work in kernrl-worker.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "core/problem.h"
#include "core/safe_text.h"
#include "extract/extract.h"

namespace kernrl {
bool use_color() {
  const char* nc = std::getenv("NO_COLOR");
  return isatty(1) && !(nc && *nc);
}
}  // namespace kernrl

int main(int argc, char** argv) {
  using namespace kernrl;
  CLI::App app{
      "kernrl " KERNRL_VERSION
      ": grade CUDA kernels against PyTorch references - compile (NVRTC), check on fresh random "
      "inputs,\n"
      "time against the eager baseline, and report pass@k / fast_p / speedups and RL rewards.\n"
      "Kernel files: device-only CUDA C++ with a /* kernrl */ launch block "
      "(docs/kernel-format.md)."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kernrl " KERNRL_VERSION);
  app.footer(
      "Examples:\n"
      "  kernrl list --level 1\n"
      "  kernrl show L1_23_Softmax --prompt > prompt.md\n"
      "  kernrl eval answer.md --problem L1_23_Softmax\n"
      "  kernrl grade-dir runs/model-a --out runs/model-a.jsonl\n"
      "  kernrl report runs/*.jsonl --by level --k 1,5\n"
      "  kernrl suite add kernelbench ~/KernelBench && kernrl list --suite kernelbench\n"
      "Exit codes (every command; docs/cli.md): 0 success / correct, 1 graded and not correct (or "
      "a\n"
      "failed gate), 2 usage or config error, 3 nothing ran (eval without a usable GPU), 4 "
      "internal error.");
  CommandRun runs[] = {add_list_command(app),      add_show_command(app),   add_eval_command(app),
                       add_grade_dir_command(app), add_report_command(app), add_bench_command(app),
                       add_import_command(app),    add_export_command(app), add_serve_command(app),
                       add_suite_command(app)};
  auto apply_suite = add_suite_option(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "kernrl: " << e.what() << " (see kernrl --help)\n";
    return kExitUsage;
  }
  // The one place errors become exit codes (core/errors.h): kernrl's inputs -> 2, a bug -> 4.
  CLI::App* sub = app.get_subcommands().front();
  std::string name = "kernrl " + sub->get_name();
  try {
    static const char* names[] = {
        "list",   "show",  "eval", "grade-dir", "report", "bench", "import-kernelbench",
        "export", "serve", "suite"};
    apply_suite();
    for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
      if (sub->get_name() == names[i]) return runs[i]();
  } catch (const UsageError& e) {
    std::cerr << name << ": " << escape_invalid_utf8(e.what()) << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << name << ": internal error: " << escape_invalid_utf8(e.what())
              << " (a bug in kernrl; please report it with the command line)\n";
    return kExitInternal;
  }
  return kExitInternal;
}
