#include "cli/grade_dir_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/errors.h"
#include "core/files.h"
#include "core/safe_text.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

void Progress::done(const std::string& status, const TraceRecord& rec) {
  std::lock_guard<std::mutex> l(mu_);
  ++n_;
  ++counts_[status.empty() ? "?" : status];
  if (quiet_) return;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  double rate = n_ / std::max(s, 1e-3);
  if (tty_) {
    std::string c;
    for (const auto& [k, v] : counts_) c += " " + k + ":" + std::to_string(v);
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %.1f/min ETA %.0fs%s", n_, total_, rate * 60,
                 (total_ - n_) / std::max(rate, 1e-9), c.c_str());
    if (n_ == total_) std::fprintf(stderr, "\n");
  } else {
    std::fprintf(stderr, "[%zu/%zu] %s %s %s\n", n_, total_, status.empty() ? "?" : status.c_str(),
                 rec.problem.value_or("-").c_str(), rec.file.value_or("").c_str());
  }
  std::fflush(stderr);
}

// Where the time went per phase is in the report printed after it ("Grader time").
void print_grader_summary(size_t n, double run_s, const json& gpus) {
  std::fprintf(stderr, "kernrl grade-dir: %zu records in %.1f s = %.1f kernels/min\n", n, run_s,
               static_cast<double>(n) / std::max(run_s, 1e-9) * 60);
  for (const auto& g : gpus) {
    std::string nvml = g.contains("nvml_utilization_pct") && g["nvml_utilization_pct"].is_number()
                           ? std::to_string(static_cast<int>(
                                 std::lround(g["nvml_utilization_pct"].get<double>()))) +
                                 "%"
                           : "unknown (" + g.value("nvml", std::string("no NVML")) + ")";
    std::fprintf(stderr,
                 "  GPU %d: %llu evaluations, %d worker restarts (%d to a started spare, %.0f ms "
                 "waited for workers to start), worker busy %.0f%% of the run, GPU utilisation "
                 "(NVML) %s\n",
                 g.value("gpu_index", -1),
                 static_cast<unsigned long long>(g.value("evaluations", uint64_t{0})),
                 g.value("worker_restarts", 0), g.value("spare_takeovers", 0),
                 g.value("restart_wait_ms", 0.0),
                 100.0 * g.value("busy_ms", 0.0) / std::max(run_s * 1000, 1e-9), nvml.c_str());
  }
}

void check_kernelbench_outputs(const std::string& json_file, const std::string& dir) {
  if (!json_file.empty()) {
    fs::path kb_dir = fs::path(json_file).parent_path();
    if (!kb_dir.empty()) {
      std::error_code ec;
      fs::create_directories(kb_dir, ec);
      if (ec)
        throw UsageError("--kernelbench-json " + json_file + ": cannot create the folder " +
                         kb_dir.string() + ": " + ec.message());
    } else {
      kb_dir = ".";
    }
    struct stat st {};
    bool exists = ::stat(json_file.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
      throw UsageError("--kernelbench-json " + json_file + ": is a folder");
    if (exists ? ::access(json_file.c_str(), W_OK) != 0 : ::access(kb_dir.c_str(), W_OK) != 0)
      throw UsageError("--kernelbench-json " + json_file +
                       ": cannot write there: " + std::strerror(errno));
  }
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || ::access(dir.c_str(), W_OK) != 0)
      throw UsageError("--kernelbench-dir " + dir + ": cannot write there: " +
                       (ec ? ec.message() : std::string(std::strerror(errno))));
  }
}

bool kernelbench_outputs(const KernelBenchOptions& ko, const std::vector<TraceRecord>& records,
                         const std::string& file, const std::string& dir, const std::string& out) {
  KernelBenchOutput kb = kernelbench_output(records, ko);
  auto fail = [&](const std::string& option, const std::string& what) {
    std::fprintf(stderr, "kernrl grade-dir: %s %s (the records are in %s)\n", option.c_str(),
                 escape_invalid_utf8(what).c_str(), escape_invalid_utf8(out).c_str());
    return false;
  };
  bool ok = true;
  std::string where;
  if (!file.empty()) {
    if (kb.runs.size() > 1) {
      std::string levels;
      for (const auto& r : kb.runs)
        levels += (levels.empty() ? "" : ", ") + std::to_string(r.level);
      ok = fail("--kernelbench-json",
                file + ": the records span levels " + levels +
                    " and an eval_results.json holds one level: give --level, or "
                    "--kernelbench-dir DIR for one folder per level");
    } else {
      std::vector<std::pair<std::string, std::string>> files = {
          {file, kb.runs.empty() ? "{}" : kernelbench_text(kb.runs[0].eval_results, 4)}};
      struct stat st {};
      bool regular = ::stat(file.c_str(), &st) != 0 || S_ISREG(st.st_mode);
      fs::path folder = fs::path(file).parent_path();
      if (regular && !kb.runs.empty() && kb.runs[0].pass_at_k)
        files.push_back({(folder / "pass_at_k_results.json").string(),
                         kernelbench_text(*kb.runs[0].pass_at_k, 2)});
      if (regular && kb.unattributed_count) {
        files.push_back(
            {(folder / "unattributed.json").string(), kernelbench_text(kb.unattributed, 2) + "\n"});
        where = (folder / "unattributed.json").string();
      }
      for (const auto& [path, text] : files)
        if (std::string err = write_whole_file(path, text); !err.empty() && ok)
          ok = fail("--kernelbench-json", path + ": cannot write: " + err);
    }
  }
  if (!dir.empty()) {
    if (std::string err = write_kernelbench(kb, dir); !err.empty())
      ok = fail("--kernelbench-dir", err + ": cannot write");
    else if (kb.unattributed_count)
      where = (fs::path(dir) / "unattributed.json").string();
  }
  if (kb.unattributed_count)
    std::fprintf(
        stderr,
        "kernrl grade-dir: %zu record(s) name no problem and are in no eval_results.json%s\n",
        kb.unattributed_count,
        where.empty() ? "" : (": listed in " + escape_invalid_utf8(where)).c_str());
  return ok;
}

}  // namespace kernrl
