// kernrl grade-dir: grade a directory of generations. Compiles run on a CPU thread pool while one
// worker per GPU grades; every record is appended and flushed as soon as it is known.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/paths.h"
#include "extract/extract.h"
#include "grading/discover.h"
#include "grading/session.h"
#include "record/record.h"
#include "record/safe_text.h"
#include "record/trace_file.h"
#include "record/training.h"
#include "report/kernelbench.h"
#include "report/report.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class Progress {
 public:
  Progress(size_t total, bool tty, bool quiet, bool color)
      : total_(total), tty_(tty), quiet_(quiet), color_(color) {
    t0_ = std::chrono::steady_clock::now();
  }
  // A record written, or (status "skipped") a file left out.
  void done(const std::string& status, const TraceRecord& rec) {
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
      std::fprintf(stderr, "[%zu/%zu] %s %s %s\n", n_, total_,
                   status.empty() ? "?" : status.c_str(), rec.problem.value_or("-").c_str(),
                   rec.file.value_or("").c_str());
    }
    std::fflush(stderr);
  }
  size_t count() const { return n_; }

 private:
  size_t total_, n_ = 0;
  bool tty_, quiet_, color_;
  std::map<std::string, size_t> counts_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

namespace {

// What --resume matches on: the run, the file (absolute and normalised, so DIR may be spelled
// differently; escaped as a record writes it), the hash of its bytes ("" when it could not be
// read).
std::string resume_key(const std::string& run, const std::string& file, const std::string& sha) {
  std::error_code ec;
  fs::path abs = fs::absolute(file, ec);
  std::string path = ec ? file : abs.lexically_normal().string();
  return run + '\x1f' + escape_invalid_utf8(path) + '\x1f' + sha;
}

// The run's pace: kernels/min and each GPU's busy time (where the time went per phase is in the
// report printed after it: "Grader time").
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
                 "  GPU %d: %llu evaluations, %d worker restarts, worker busy %.0f%% of the run, "
                 "GPU utilisation (NVML) %s\n",
                 g.value("gpu_index", -1),
                 static_cast<unsigned long long>(g.value("evaluations", uint64_t{0})),
                 g.value("worker_restarts", 0),
                 100.0 * g.value("busy_ms", 0.0) / std::max(run_s * 1000, 1e-9), nvml.c_str());
  }
}

// The parent folder of an output file, created if missing. Throws UsageError naming the option.
void make_parent(const std::string& option, const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    throw UsageError(option + " " + path + ": cannot create the folder " + parent.string() + ": " +
                     ec.message());
}

// Writes --kernelbench-json FILE (one level's eval_results.json; pass_at_k_results.json and
// unattributed.json beside it when there is something to put in them) and --kernelbench-dir DIR
// (a folder per run and level). False, with the reason on stderr, when something could not be
// written.
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
  struct Opts {
    std::string dir, out, run, gpus, shard, config, level_problem, kernelbench_json,
        kernelbench_dir, baselines, reward, seed;
    int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    int level = 0;
    bool resume = true, compile_only = false, quiet = false, profile = false;
  };
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
  return [o]() {
    {
      Config cfg = load_config(o->config);
      if (!o->reward.empty()) cfg.reward_preset = o->reward;
      require_sandbox(cfg);  // fail closed, before anything is graded
      RewardPreset preset = load_reward_preset(cfg.reward_preset);
      fs::path dir = o->dir;
      std::string out = o->out.empty() ? (dir / "kernrl-traces.jsonl").string() : o->out;
      std::string run =
          o->run.empty() ? fs::absolute(dir).lexically_normal().filename().string() : o->run;
      if (run.empty()) run = fs::absolute(dir).parent_path().filename().string();
      run = escape_invalid_utf8(run);  // as every record writes it
      int shard_i = 0, shard_n = 1;
      if (!o->shard.empty()) {
        char tail = 0;
        if (std::sscanf(o->shard.c_str(), "%d/%d%c", &shard_i, &shard_n, &tail) != 2 ||
            shard_n < 1 || shard_i < 0 || shard_i >= shard_n)
          throw UsageError("--shard expects I/N with 0 <= I < N, got '" + o->shard + "'");
      }
      std::optional<uint64_t> seed_option;
      if (!o->seed.empty()) seed_option = parse_seed(o->seed);
      std::string only_problem;
      if (!o->level_problem.empty())
        only_problem = problem_id_of_dir(find_problem_dir(problems_dir(), o->level_problem));

      // The outputs first: an unwritable one stops the run before anything is graded.
      make_parent("--out", out);
      std::unique_ptr<TraceWriter> writer;
      try {
        writer = std::make_unique<TraceWriter>(out);
      } catch (const std::runtime_error& e) {
        throw UsageError(std::string("--out: ") + e.what());
      }
      if (!o->kernelbench_json.empty()) {
        make_parent("--kernelbench-json", o->kernelbench_json);
        struct stat st {};
        fs::path kb_dir = fs::path(o->kernelbench_json).parent_path();
        if (kb_dir.empty()) kb_dir = ".";
        bool exists = ::stat(o->kernelbench_json.c_str(), &st) == 0;
        if (exists && S_ISDIR(st.st_mode))
          throw UsageError("--kernelbench-json " + o->kernelbench_json + ": is a folder");
        if (exists ? ::access(o->kernelbench_json.c_str(), W_OK) != 0
                   : ::access(kb_dir.c_str(), W_OK) != 0)
          throw UsageError("--kernelbench-json " + o->kernelbench_json +
                           ": cannot write there: " + std::strerror(errno));
      }

      if (!o->kernelbench_dir.empty()) {
        std::error_code ec;
        fs::create_directories(o->kernelbench_dir, ec);
        if (ec || ::access(o->kernelbench_dir.c_str(), W_OK) != 0)
          throw UsageError("--kernelbench-dir " + o->kernelbench_dir + ": cannot write there: " +
                           (ec ? ec.message() : std::string(std::strerror(errno))));
      }

      // What to grade: discovered files (never kernrl's own outputs), this shard, minus what
      // --resume finds already graded.
      Discovery found;
      try {
        found = discover_files(dir, {out, o->kernelbench_json});
      } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
      }
      for (const auto& w : found.warnings)
        std::fprintf(stderr, "kernrl grade-dir: %s\n", w.c_str());
      const std::vector<DiscoveredFile>& all = found.files;
      std::vector<DiscoveredFile> todo;
      std::set<std::string> graded;
      std::optional<uint64_t>
          resumed_seed;  // a resumed run keeps its seed, so its records match an uninterrupted run
      if (o->resume)
        for (const auto& r : read_trace(out, nullptr)) {
          if (!r.run || *r.run != run) continue;
          graded.insert(resume_key(run, r.file.value_or(""), r.source_sha256.value_or("")));
          if (r.run_seed) resumed_seed = *r.run_seed;
        }
      size_t skipped = 0;
      for (const auto& s : all) {
        // The same slices on every machine and build: a fixed hash of the path relative to DIR.
        if (shard_n > 1 && derive_seed(0, s.rel) % shard_n != static_cast<uint64_t>(shard_i))
          continue;
        if (!s.problem.empty()) {
          if (!only_problem.empty() && s.problem != only_problem) continue;
          if (o->level && s.problem.rfind("L" + std::to_string(o->level) + "_", 0) != 0) continue;
        }
        if (!graded.empty()) {
          std::string sha;
          struct stat st {};
          if (::stat(s.file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
            try {
              sha = sha256_hex(read_file(s.file));
            } catch (const std::exception&) {
              // Unreadable: matches the record of an unreadable file (no hash).
            }
          }
          if (graded.count(resume_key(run, s.file, sha))) {
            ++skipped;
            continue;
          }
        }
        todo.push_back(s);
      }
      uint64_t seed = seed_option ? *seed_option : resumed_seed ? *resumed_seed : fresh_seed();
      bool tty = isatty(2);
      if (!o->quiet)
        std::fprintf(stderr,
                     "kernrl grade-dir: %zu files found, %zu to grade (%zu already graded), run "
                     "'%s', out %s\n",
                     all.size(), todo.size(), skipped, run.c_str(),
                     escape_invalid_utf8(out).c_str());

      SessionOptions so;
      so.cfg = cfg;
      so.gpus = o->gpus.empty() ? std::vector<int>{} : parse_gpu_list(o->gpus);
      so.compile_only = o->compile_only;
      so.profile = o->profile;
      so.baselines_path = o->baselines;
      so.compile_jobs = o->jobs;
      so.seed = seed;
      GradingSession session(so);
      Progress progress(todo.size(), tty, o->quiet, use_color());
      std::atomic<size_t> internal_errors{0};
      std::mutex mu;
      // Every record is appended (and flushed) as soon as it is known. A write that fails (disk
      // full) stops the run: later records would be lost too.
      std::atomic<bool> write_failed{false};
      std::string write_error;
      auto t_run = std::chrono::steady_clock::now();
      for (const DiscoveredFile& f : todo) {
        Submission sub;
        sub.file = f.file;
        sub.opt.problem = f.problem;
        sub.opt.problem_from_path = true;
        sub.opt.regular_files_only = true;
        sub.opt.seed = derive_seed(seed, f.rel) >> 1;
        sub.opt.run = run;
        sub.opt.sample = f.sample;
        sub.only_problem = only_problem;
        sub.only_level = o->level;
        TrainingTags tags;
        tags.trajectory = f.trajectory;
        tags.turn = f.turn;
        session.submit(std::move(sub), [&, file = f.file, tags](Outcome r) {
          std::lock_guard<std::mutex> l(mu);
          if (!r.internal_error.empty()) {
            // The grader failed on this file, not the kernel: said on stderr, no record, so a
            // --resume run retries it.
            ++internal_errors;
            std::fprintf(stderr,
                         "kernrl grade-dir: %s: internal error, no record written (a --resume run "
                         "retries it): %s\n",
                         escape_invalid_utf8(file).c_str(),
                         escape_invalid_utf8(r.internal_error).c_str());
            return;
          }
          if (!r.record) return;  // not graded (a session never says so without a deadline)
          if (r.skipped) {        // its launch block names a problem outside the selection
            progress.done("skipped", *r.record);
            return;
          }
          if (write_failed) return;
          r.record->run_seed = seed;
          tags.apply(*r.record);
          try {
            writer->append(*r.record);
          } catch (const std::runtime_error& e) {
            write_failed = true;
            write_error = e.what();
            return;
          }
          progress.done(r.record->status_text(), *r.record);
        });
      }
      session.drain();
      double run_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count();
      if (write_failed) {
        std::fprintf(stderr,
                     "kernrl grade-dir: %s; the run stopped (a --resume run goes on from the "
                     "records written)\n",
                     escape_invalid_utf8(write_error).c_str());
        return kExitUsage;
      }
      if (!o->quiet && progress.count())
        print_grader_summary(progress.count(), run_s, session.gpu_stats());

      // The run's summary, as `kernrl report` prints it.
      std::vector<TraceProblem> bad;
      std::vector<TraceRecord> mine;
      for (auto& r : read_trace(out, &bad))
        if (r.run && *r.run == run) mine.push_back(std::move(r));
      int rc = kExitOk;
      if (!o->kernelbench_json.empty() || !o->kernelbench_dir.empty()) {
        // KernelBench's files, from this run's records of the selected level and problem.
        std::vector<TraceRecord> selected;
        for (const auto& r : mine)
          if (only_problem.empty() || !r.problem || *r.problem == only_problem)
            selected.push_back(r);
        KernelBenchOptions ko;
        ko.run = run;
        if (o->level) ko.level = o->level;
        if (!kernelbench_outputs(ko, selected, o->kernelbench_json, o->kernelbench_dir, out))
          rc = kExitUsage;
      }
      if (!o->quiet) {
        ReportOptions ro;
        ro.run = run;
        std::cout << render(aggregate(mine, ro), ro);
      }
      if (rc == kExitOk && (found.unreadable_folders || internal_errors)) {
        std::fprintf(stderr,
                     "kernrl grade-dir: the run completed, but %zu folder(s) could not be read and "
                     "%zu file(s) hit an internal error (named above)\n",
                     found.unreadable_folders, internal_errors.load());
        rc = kExitFail;
      }
      return rc;
    }
  };
}

}  // namespace kernrl
