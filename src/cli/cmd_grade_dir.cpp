// kernrl grade-dir: grade a directory of generations. Compiles run on a CPU thread pool while one
// worker per GPU grades; every record is appended and flushed as soon as it is known.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/grade.h"
#include "core/hash.h"
#include "core/paths.h"
#include "extract/extract.h"
#include "record/record.h"
#include "record/trace_file.h"
#include "report/kernelbench.h"
#include "report/report.h"
#include "run/worker_client.h"
#include "time/baselines.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

uint64_t fresh_seed();

namespace {

struct Sample {
  std::string file;
  std::string problem;  // known from the path, or empty (then from the launch block)
  int sample = 0;
};

// The files of DIR in a fixed order, with problems and sample numbers from the layout.
std::vector<Sample> discover(const fs::path& dir, const std::string& out_file) {
  static const std::regex kb(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.(cu|md|txt)$)");
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it) {
    std::string name = it->path().filename().string();
    if (name.size() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    auto ext = it->path().extension().string();
    if (ext != ".cu" && ext != ".md" && ext != ".txt") continue;
    if (fs::absolute(it->path()) == fs::absolute(out_file)) continue;
    files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Sample> out;
  std::map<std::string, int> per_folder;
  for (const auto& f : files) {
    Sample s{f, "", 0};
    std::smatch m;
    std::string name = fs::path(f).filename().string();
    if (std::regex_search(name, m, kb)) {
      s.problem = "L" + m[1].str() + "_" + m[2].str();
      s.sample = std::stoi(m[3].str());
    } else {
      std::string folder = fs::path(f).parent_path().filename().string();
      try {
        s.problem = problem_id_of_dir(find_problem_dir(problems_dir(), folder));
        s.sample = per_folder[fs::path(f).parent_path().string()]++;
      } catch (const SpecError&) {
        s.sample = per_folder[fs::path(f).parent_path().string()]++;
      }
    }
    if (!s.problem.empty()) {
      try {
        s.problem = problem_id_of_dir(find_problem_dir(problems_dir(), s.problem));
      } catch (const SpecError&) {
        // Left for the record: the file says it is for a problem kernrl does not have.
      }
    }
    out.push_back(s);
  }
  return out;
}

// A queue between the compile pool and the GPU threads.
template <typename T>
class Queue {
 public:
  void push(T v) {
    {
      std::lock_guard<std::mutex> l(mu_);
      q_.push_back(std::move(v));
    }
    cv_.notify_one();
  }
  void close() {
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  bool pop(T* out) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return closed_ || !q_.empty(); });
    if (q_.empty()) return false;
    *out = std::move(q_.front());
    q_.pop_front();
    return true;
  }
  size_t size() {
    std::lock_guard<std::mutex> l(mu_);
    return q_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> q_;
  bool closed_ = false;
};

class Progress {
 public:
  Progress(size_t total, bool tty, bool quiet, bool color) : total_(total), tty_(tty), quiet_(quiet), color_(color) {
    t0_ = std::chrono::steady_clock::now();
  }
  void done(const json& rec) {
    std::lock_guard<std::mutex> l(mu_);
    ++n_;
    ++counts_[rec.value("status", "?")];
    if (quiet_) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    double rate = n_ / std::max(s, 1e-3);
    if (tty_) {
      std::string c;
      for (const auto& [k, v] : counts_) c += " " + k + ":" + std::to_string(v);
      std::fprintf(stderr, "\r\033[K[%zu/%zu] %.1f/min ETA %.0fs%s", n_, total_, rate * 60, (total_ - n_) / std::max(rate, 1e-9), c.c_str());
      if (n_ == total_) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "[%zu/%zu] %s %s %s\n", n_, total_, rec.value("status", "?").c_str(),
                   rec["problem"].is_string() ? rec["problem"].get<std::string>().c_str() : "-", rec.value("file", "").c_str());
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

std::vector<int> parse_gpus(const std::string& s) {
  std::vector<int> g;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t c = s.find(',', pos);
    std::string part = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    try {
      g.push_back(std::stoi(part));
    } catch (...) {
      throw UsageError("--gpus expects a list like 0,1,2; got '" + s + "'");
    }
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return g;
}

// GPUs visible to this process, without touching CUDA: /dev/nvidiaN, narrowed by CUDA_VISIBLE_DEVICES.
std::vector<int> visible_gpus() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v) {
    std::vector<int> g;
    std::string s = v;
    int i = 0;
    for (size_t pos = 0; pos <= s.size() && !s.empty();) {
      size_t c = s.find(',', pos);
      if (s.substr(pos, c - pos).size()) g.push_back(i++);
      if (c == std::string::npos) break;
      pos = c + 1;
    }
    return g;
  }
  std::vector<int> g;
  for (int i = 0; i < 64; ++i)
    if (fs::exists("/dev/nvidia" + std::to_string(i))) g.push_back(i);
  return g;
}

}  // namespace

CommandRun add_grade_dir_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("grade-dir", "Grade every kernel file in a directory (KernelBench layout, folder per problem, or files naming their problem).");
  cmd->footer(
      "Layouts (docs/grade-dir.md): level_{L}_problem_{P}_sample_{S}_kernel.{cu,md,txt} -> problem L{L}_{P}_*;\n"
      "DIR/<problem id>/<anything>.{cu,md,txt} (samples numbered in name order); any file whose launch block\n"
      "names its problem. Records are appended to --out as they finish; with --resume (default) a rerun skips\n"
      "samples already graded (same path and source hash). Exit 0 when the run completed, whatever the kernels did.");
  struct Opts {
    std::string dir, out, run, gpus, shard, config, level_problem, kernelbench_json, baselines, reward;
    int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    int level = 0;
    bool resume = true, compile_only = false, quiet = false;
    std::optional<uint64_t> seed;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("DIR", o->dir, "Directory of generations")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--out", o->out, "Trace file (JSONL) to append to (default DIR/kernrl-traces.jsonl)");
  cmd->add_option("--run", o->run, "Run name written into every record (default: the folder name)");
  cmd->add_option("--gpus", o->gpus, "GPU indices to use, e.g. 0,1 (default: all visible)");
  cmd->add_option("--jobs,-j", o->jobs, "Parallel compiles (default: number of cores)")->check(CLI::PositiveNumber);
  cmd->add_option("--level", o->level, "Only problems of this level")->check(CLI::Range(1, 10));
  cmd->add_option("--problem", o->level_problem, "Only this problem (id or unique prefix)");
  cmd->add_option("--shard", o->shard, "I/N: grade only the I-th (0-based) of N deterministic slices");
  cmd->add_flag("--resume,!--no-resume", o->resume, "Skip samples already in --out with the same source hash (default on)");
  cmd->add_flag("--compile-only", o->compile_only, "Extract, parse and compile only");
  cmd->add_flag("--quiet,-q", o->quiet, "No progress output");
  cmd->add_option("--seed", o->seed, "Run seed (default: fresh, recorded in every record)");
  cmd->add_option("--config", o->config, "Config file over configs/default.yaml");
  cmd->add_option("--baselines", o->baselines, "Baseline file (default: baselines/<gpu>.json if present)");
  cmd->add_option("--reward", o->reward, "Reward preset (default from the config)");
  cmd->add_option("--kernelbench-json", o->kernelbench_json, "Also write KernelBench's eval_results.json shape here");
  return [o]() {
    try {
      Config cfg = load_config(o->config);
      if (!o->reward.empty()) cfg.reward_preset = o->reward;
      require_sandbox(cfg);  // fail closed, before anything is graded
      RewardPreset preset = load_reward_preset(cfg.reward_preset);
      fs::path dir = o->dir;
      std::string out = o->out.empty() ? (dir / "kernrl-traces.jsonl").string() : o->out;
      std::string run = o->run.empty() ? fs::absolute(dir).lexically_normal().filename().string() : o->run;
      if (run.empty()) run = fs::absolute(dir).parent_path().filename().string();
      int shard_i = 0, shard_n = 1;
      if (!o->shard.empty()) {
        if (std::sscanf(o->shard.c_str(), "%d/%d", &shard_i, &shard_n) != 2 || shard_n < 1 || shard_i < 0 || shard_i >= shard_n)
          throw UsageError("--shard expects I/N with 0 <= I < N, got '" + o->shard + "'");
      }
      std::string only_problem;
      if (!o->level_problem.empty()) only_problem = problem_id_of_dir(find_problem_dir(problems_dir(), o->level_problem));

      // What to grade: discovered files, this shard, minus what --resume finds already graded.
      std::vector<Sample> all = discover(dir, out), todo;
      std::set<std::pair<std::string, std::string>> graded;
      std::optional<uint64_t> resumed_seed;  // a resumed run keeps its seed, so its records match an uninterrupted run
      if (o->resume && fs::exists(out))
        for (const auto& r : read_trace(out, nullptr)) {
          graded.insert({r.value("file", ""), r.value("source_sha256", "")});
          if (r.value("run", json(nullptr)) == json(run) && r.contains("run_seed")) resumed_seed = r["run_seed"].get<uint64_t>();
        }
      size_t skipped = 0;
      for (const auto& s : all) {
        // The same slices on every machine and build: a fixed hash of the path relative to DIR.
        if (shard_n > 1 && derive_seed(0, fs::relative(s.file, dir).string()) % shard_n != static_cast<uint64_t>(shard_i)) continue;
        if (!s.problem.empty()) {
          if (!only_problem.empty() && s.problem != only_problem) continue;
          if (o->level && s.problem.rfind("L" + std::to_string(o->level) + "_", 0) != 0) continue;
        }
        if (!graded.empty()) {
          std::string sha;
          try {
            sha = sha256_hex(read_file(s.file));
          } catch (...) {
          }
          if (graded.count({s.file, sha})) {
            ++skipped;
            continue;
          }
        }
        todo.push_back(s);
      }
      uint64_t seed = o->seed ? *o->seed : resumed_seed ? *resumed_seed : fresh_seed();
      bool tty = isatty(2);
      if (!o->quiet)
        std::fprintf(stderr, "kernrl grade-dir: %zu files found, %zu to grade (%zu already graded), run '%s', out %s\n",
                     all.size(), todo.size(), skipped, run.c_str(), out.c_str());

      // GPU workers: started first, so libtorch loads while the first files compile.
      std::vector<int> gpus = o->compile_only ? std::vector<int>{} : (o->gpus.empty() ? visible_gpus() : parse_gpus(o->gpus));
      std::vector<std::unique_ptr<WorkerClient>> workers;
      for (int g : gpus) {
        workers.push_back(std::make_unique<WorkerClient>(g));
        workers.back()->spawn();
      }
      std::vector<WorkerClient*> ready;
      std::string no_gpu = o->compile_only ? "--compile-only" : "no GPU visible";
      for (auto& w : workers) {
        std::string err;
        if (w->wait_ready(&err)) ready.push_back(w.get());
        else no_gpu = "no GPU: " + err;
      }
      if (!o->compile_only && !ready.empty() && !o->quiet)
        std::fprintf(stderr, "kernrl grade-dir: %zu GPU worker(s): %s\n", ready.size(), ready[0]->device().value("name", "?").c_str());
      std::string arch = cfg.arch != "auto" ? cfg.arch : ready.empty() ? cfg.fallback_arch : ready[0]->device().value("arch", cfg.fallback_arch);
      int64_t sms = ready.empty() ? 132 : ready[0]->device().value("sms", 132);
      BaselineStore baselines;
      baselines.configure(o->baselines);
      if (!ready.empty()) baselines.load_for(ready[0]->device(), ready[0]->versions());

      TraceWriter writer(out);
      Progress progress(todo.size(), tty, o->quiet, use_color());
      auto emit = [&](json& rec, std::chrono::steady_clock::time_point t0) {
        rec["run_seed"] = seed;
        rec["wall_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        writer.append(rec);
        progress.done(rec);
      };

      // Compile pool -> queue -> GPU threads.
      struct Item {
        Prepared prep;
        GradeOptions opt;
        std::chrono::steady_clock::time_point t0;
      };
      Queue<Item> ready_q;
      std::atomic<size_t> next{0};
      std::mutex baseline_mu;
      std::map<std::pair<int, std::string>, json> baseline_cache;  // (gpu, problem) -> timing, once per GPU per run
      auto compile_worker = [&]() {
        for (size_t i; (i = next++) < todo.size();) {
          auto t0 = std::chrono::steady_clock::now();
          GradeOptions opt;
          opt.problem = todo[i].problem;
          opt.seed = derive_seed(seed, fs::relative(todo[i].file, dir).string()) >> 1;
          opt.compile_only = ready.empty();
          opt.run = run;
          opt.sample = todo[i].sample;
          Prepared p;
          try {
            p = prepare_file(todo[i].file, opt, cfg, arch, sms);
          } catch (const std::exception& e) {
            p.record = {{"schema", kTraceSchema}, {"run", run}, {"sample", todo[i].sample}, {"file", todo[i].file},
                        {"problem", nullptr}, {"level", nullptr}, {"status", "format_error"}, {"ran", false},
                        {"error", {{"category", "format_error"}, {"message", e.what()}}}, {"seed", opt.seed},
                        {"timestamp", now_iso8601()}};
            p.done = true;
          }
          bool filtered = (!only_problem.empty() && p.problem.id != only_problem) ||
                          (o->level && p.problem.level != o->level);
          if (filtered && todo[i].problem.empty() && !p.problem.id.empty()) {
            progress.done(json{{"status", "skipped"}, {"problem", p.problem.id}, {"file", todo[i].file}});
            continue;  // its launch block names a problem outside the selection
          }
          if (p.done || ready.empty()) {
            complete_record(p, nullptr, nullptr, json::object(), preset, baselines.ceilings(), no_gpu);
            emit(p.record, t0);
          } else {
            ready_q.push(Item{std::move(p), opt, t0});
          }
        }
      };
      auto gpu_thread = [&](WorkerClient* w) {
        Item it;
        while (ready_q.pop(&it)) {
          json bench = json::object();
          for (const auto& n : it.prep.problem.size_names) bench[n] = it.prep.problem.bench.at(n);
          std::optional<json> base = baselines.baseline(it.prep.problem.id, bench);
          std::string base_source = base ? baselines.source() : "reused";
          if (!base) {
            std::lock_guard<std::mutex> l(baseline_mu);
            auto f = baseline_cache.find({w->gpu(), it.prep.problem.id});
            if (f != baseline_cache.end()) base = f->second;
          }
          json answer = w->request(eval_request(it.prep, it.opt, cfg, base), cfg.run_timeout_s);
          if (answer.contains("timing") && answer["timing"].contains("baseline")) {
            if (base) answer["timing"]["baseline_source"] = base_source;
            std::lock_guard<std::mutex> l(baseline_mu);
            baseline_cache.emplace(std::make_pair(w->gpu(), it.prep.problem.id), answer["timing"]["baseline"]);
          }
          json device = w->device();
          device["gpu_index"] = w->gpu();
          complete_record(it.prep, &answer, device, w->versions(), preset, baselines.ceilings(), "");
          emit(it.prep.record, it.t0);
        }
      };
      std::vector<std::thread> compilers, gpu_threads;
      for (auto* w : ready) gpu_threads.emplace_back(gpu_thread, w);
      for (int j = 0; j < std::max(1, o->jobs); ++j) compilers.emplace_back(compile_worker);
      for (auto& t : compilers) t.join();
      ready_q.close();
      for (auto& t : gpu_threads) t.join();

      // The run's summary, as `kernrl report` prints it.
      std::vector<TraceProblem> bad;
      auto records = read_trace(out, &bad);
      std::vector<json> mine;
      for (auto& r : records)
        if (r.value("run", json(nullptr)) == json(run)) mine.push_back(r);
      if (!o->kernelbench_json.empty()) {
        std::ofstream kb(o->kernelbench_json);
        kb << kernelbench_results(mine).dump(2) << "\n";
      }
      if (!o->quiet) {
        ReportOptions ro;
        ro.run = run;
        std::cout << render(aggregate(mine, ro), ro);
      }
      return kExitOk;
    } catch (const UsageError& e) {
      std::cerr << "kernrl grade-dir: " << e.what() << "\n";
      return kExitUsage;
    }
  };
}

}  // namespace kernrl
