// kernrl suite add kernelbench PATH: builds a problem suite from a KernelBench checkout, with the
// host's python3 and torch (tools/suites/kernelbench_suite.py) in a private temporary directory
// and a clean environment; and the global --suite option every command reads problems from.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "core/files.h"
#include "core/paths.h"
#include "core/subprocess.h"
#include "core/suite_paths.h"

namespace kernrl {
namespace fs = std::filesystem;

namespace {

// A private directory for the builder's temporary files, removed when done.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "kernrl-suite-XXXXXX").string();
    if (!mkdtemp(t.data())) throw UsageError("cannot make a temporary directory in " + t);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

fs::path python_exe() {
  if (const char* p = std::getenv("KERNRL_PYTHON"); p && *p) return p;
  return "/usr/bin/python3";
}

struct AddOptions {
  std::string kind, source, out, levels = "1,2,3,4", only;
  int jobs = 0;
  double timeout_s = 600;
};

int run_add(const AddOptions& o) {
  if (o.kind != "kernelbench")
    throw UsageError("unknown suite kind '" + o.kind + "' (kernrl suite add knows: kernelbench)");
  fs::path src = fs::absolute(o.source);
  if (!fs::is_directory(src / "KernelBench"))
    throw UsageError(src.string() +
                     " is not a KernelBench checkout (it has no KernelBench/ folder)");
  fs::path out = fs::absolute(o.out.empty() ? suites_dir() / "kernelbench" : fs::path(o.out));
  std::error_code ec;
  if (fs::equivalent(out, src, ec) || out.string().rfind(src.string() + "/", 0) == 0)
    throw UsageError("--out must be outside the KernelBench checkout");
  fs::path builder = data_dir() / "tools" / "suites" / "kernelbench_suite.py";
  if (!fs::exists(builder)) throw UsageError("the suite builder is missing: " + builder.string());
  TempDir tmp;
  std::vector<std::string> argv = {python_exe().string(),
                                   builder.string(),
                                   src.string(),
                                   out.string(),
                                   "--levels",
                                   o.levels,
                                   "--timeout",
                                   std::to_string(o.timeout_s)};
  if (o.jobs > 0) argv.insert(argv.end(), {"--jobs", std::to_string(o.jobs)});
  if (!o.only.empty()) argv.insert(argv.end(), {"--only", o.only});
  SpawnOptions so;
  so.clear_env = true;
  so.cwd = tmp.path.string();
  so.env = {"HOME=" + tmp.path.string(),
            "TMPDIR=" + tmp.path.string(),
            "TORCH_HOME=" + tmp.path.string(),
            "PATH=/usr/bin:/bin",
            "PYTHONNOUSERSITE=1",
            "PYTHONDONTWRITEBYTECODE=1",
            "LANG=C.UTF-8"};
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"))
    so.env.push_back(std::string("CUDA_VISIBLE_DEVICES=") + v);
  std::cerr << "kernrl suite add: building " << out.string() << " from " << src.string()
            << " (one line per problem)\n";
  LineProcess child;
  child.start(argv, so);
  while (auto line = child.read_line(24 * 3600.0)) std::cout << *line << "\n" << std::flush;
  ProcessResult r = child.reap();
  if (r.signal || r.exit_code != 0)
    throw UsageError("the suite builder (" + builder.string() + ") failed" +
                     (r.signal ? " with signal " + std::to_string(r.signal)
                               : " with exit code " + std::to_string(r.exit_code)));
  std::cout << "use it with: kernrl list --suite " << out.string() << "\n";
  return kExitOk;
}

}  // namespace

std::function<void()> add_suite_option(CLI::App& app) {
  auto suite = std::make_shared<std::string>();
  app.add_option("--suite", *suite,
                 "Read problems from a suite (a folder holding problems/, or the name of one "
                 "under the suites folder) instead of kernrl's own problems");
  // `kernrl list --suite X`: each command (and `suite add`) passes the option up to the app.
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->fallthrough();
    for (CLI::App* inner : sub->get_subcommands([](CLI::App*) { return true; }))
      inner->fallthrough();
  }
  return [suite]() {
    if (suite->empty()) return;
    fs::path dir = find_suite(*suite);
    if (dir.empty())
      throw UsageError("no suite '" + *suite + "': neither it nor " +
                       (suites_dir() / *suite).string() +
                       " holds a problems/ folder (kernrl suite add builds one)");
    setenv("KERNRL_SUITE", dir.c_str(), 1);
    setenv("KERNRL_PROBLEMS", (dir / "problems").c_str(), 1);
  };
}

CommandRun add_suite_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("suite", "Problem suites built from other benchmarks.");
  cmd->require_subcommand(1);
  auto* add = cmd->add_subcommand(
      "add",
      "Build a suite: `kernrl suite add kernelbench PATH` turns a KernelBench checkout's "
      "KernelBench/level<N>/*.py into kernrl problems (docs/suites.md).");
  auto o = std::make_shared<AddOptions>();
  add->add_option("kind", o->kind, "The benchmark: kernelbench")->required();
  add->add_option("path", o->source, "The benchmark's checkout")->required();
  add->add_option("--out", o->out, "The suite folder (default: the suites folder's <kind>)");
  add->add_option("--levels", o->levels, "Levels to convert (default 1,2,3,4)");
  add->add_option("--only", o->only, "Only these problems, e.g. L1_23,L2_1");
  add->add_option("--jobs", o->jobs, "Problems converted at once (default: half the cores)");
  add->add_option("--timeout", o->timeout_s, "Seconds allowed per problem (default 600)");
  return [o]() { return run_add(*o); };
}

}  // namespace kernrl
