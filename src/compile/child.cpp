#include "compile/child.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "compile/options.h"
#include "compile/server.h"
#include "core/paths.h"
#include "core/subprocess.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A directory of this process's own, created empty, for the compiler to run in.
std::string empty_directory() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    std::string templ = (fs::temp_directory_path() / "kernrl-nvrtc-XXXXXX").string();
    if (mkdtemp(templ.data())) {
      dir = templ;
      std::atexit([] { rmdir(dir.c_str()); });
    }
  });
  return dir.empty() ? "/nonexistent-kernrl-dir" : dir;
}

SpawnOptions compiler_spawn_options(const Config& cfg) {
  SpawnOptions so;
  so.address_space_limit_mb = cfg.compile_memory_limit_mb;
  so.cwd = empty_directory();
  so.clear_env = true;  // the compiler sees none of kernrl's environment
  so.no_files = true;
  so.max_output_bytes = kMaxCubinBytes + kMaxLogBytes + (1 << 20);
  return so;
}

std::string compiler_exe() {
  return helper_exe("kernrl-nvrtc").string();
}

// The sandbox check, as compiles will run: in a child of the fork server (its PCH folder readable,
// a scratch folder writable), or in a kernrl-nvrtc process of its own.
ProcessResult run_sandbox_check(const Config& cfg) {
  if (cfg.compile_server) {
    ServerJob job;
    job.kind = ServerJob::CheckSandbox;
    job.include_dirs = sandbox_include_dirs();
    job.timeout_s = 30;
    job.memory_limit_mb = cfg.compile_memory_limit_mb;
    job.max_output_bytes = 1 << 20;
    if (auto served = run_on_server(job, "", cfg)) return served->result;
  }
  std::vector<std::string> argv = {compiler_exe(), "--check-sandbox"};
  for (const auto& d : sandbox_include_dirs()) argv.push_back(d);
  return run_process(argv, "", 30, compiler_spawn_options(cfg));
}

}  // namespace

std::string nvrtc_version() {
  static std::once_flag once;
  static std::string version = "unknown";
  std::call_once(once, [] {
    auto r = run_process({compiler_exe(), "--version"}, "", 30);
    try {
      version = VersionAnswer::from_json(json::parse(r.out)).nvrtc;
    } catch (...) {
    }
  });
  return version;
}

std::string sandbox_check(const Config& cfg) {
  if (!cfg.compile_sandbox) return "";
  static std::mutex mu;
  static std::string verdict;
  static bool checked = false;
  std::lock_guard<std::mutex> lock(mu);
  if (checked) return verdict;
  ProcessResult pr = run_sandbox_check(cfg);
  try {
    SandboxCheckAnswer a = SandboxCheckAnswer::from_json(json::parse(pr.out));
    if (!a.ok) verdict = a.error.empty() ? "unknown failure" : a.error;
  } catch (...) {
    verdict = pr.exit_code == 127 && !pr.signal
                  ? "the compiler " + compiler_exe() + " cannot be executed"
                  : "the sandbox check of kernrl-nvrtc failed (exit " +
                        std::to_string(pr.exit_code) + ", signal " + std::to_string(pr.signal) +
                        ")";
  }
  checked = true;
  return verdict;
}

void require_sandbox(const Config& cfg) {
  std::string why = sandbox_check(cfg);
  if (!why.empty())
    throw SandboxError(
        "the compiler's sandbox cannot be set up: " + why +
        ". kernrl compiles submissions only inside it (docs/security.md); on a machine where every "
        "submission is trusted, set `compile: {sandbox: false}` in a --config file to compile "
        "without it");
}

ChildCompile run_compiler(const CompileRequest& request, const std::vector<std::string>& pch,
                          const Config& cfg) {
  ChildCompile out;
  std::string body = write_compile_request(request);
  std::optional<ServedJob> served;
  if (cfg.compile_server) {
    ServerJob job;
    job.include_dirs = request.include_dirs;
    job.sandbox = request.sandbox;
    job.timeout_s = cfg.compile_timeout_s;
    job.memory_limit_mb = cfg.compile_memory_limit_mb;
    job.max_output_bytes = compiler_spawn_options(cfg).max_output_bytes;
    job.options = request.options;
    job.pch_headers = pch;
    served = run_on_server(job, body, cfg);
  }
  ProcessResult pr = served ? served->result
                            : run_process({compiler_exe()}, body, cfg.compile_timeout_s,
                                          compiler_spawn_options(cfg));
  out.pch = served ? served->pch : "off";
  if (pr.timed_out) {
    out.outcome = ChildCompile::Timeout;
    out.error = "compile did not finish within " +
                std::to_string(static_cast<int>(cfg.compile_timeout_s)) + " s and was cancelled";
    return out;
  }
  try {
    out.answer = read_compile_output(pr.out, &out.cubin);
  } catch (...) {
    out.outcome = ChildCompile::Crashed;
    out.error =
        pr.output_overflow ? "the compiler process wrote more than the output limit and was stopped"
        : pr.signal ? "the compiler process was killed by signal " + std::to_string(pr.signal) +
                          " (out of memory under the " +
                          std::to_string(cfg.compile_memory_limit_mb) + " MB limit?)"
                    : "the compiler process failed (exit " + std::to_string(pr.exit_code) + ")";
    return out;
  }
  if (!out.answer.sandbox_error.empty())
    throw SandboxError("the compiler's sandbox cannot be set up: " + out.answer.sandbox_error);
  out.outcome = ChildCompile::Answered;
  return out;
}

}  // namespace kernrl
