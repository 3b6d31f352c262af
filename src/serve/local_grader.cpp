// The grader on kernrl's pipeline as `eval` and `grade-dir` run it: prepare_file (extract, parse,
// compile) on a pool of CPU threads, then one thread per GPU worker taking prepared kernels from a
// queue shared by every GPU, then complete_record.
//
// prepare_file reads a file, so each answer is written to a file of kernrl's own making inside a
// private folder (mode 0700, created with mkdtemp) and removed once compiled. Its name is fixed by
// the answer's format (answer_file_name), so no text a client sends becomes part of a path.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/grade.h"
#include "core/config.h"
#include "record/reward.h"
#include "run/worker_client.h"
#include "serve/grader.h"
#include "time/baselines.h"

namespace kernrl::serve {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool starts_with(const std::string& s, size_t at, const char* prefix) {
  return s.compare(at, std::strlen(prefix), prefix) == 0;
}

// GPUs visible to this process without touching CUDA: /dev/nvidiaN, narrowed by
// CUDA_VISIBLE_DEVICES.
std::vector<int> visible_gpus() {
  std::vector<int> g;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v) {
    std::string s = v;
    int i = 0;
    for (size_t pos = 0; pos <= s.size() && !s.empty();) {
      size_t c = s.find(',', pos);
      if (!s.substr(pos, c - pos).empty()) g.push_back(i++);
      if (c == std::string::npos) break;
      pos = c + 1;
    }
    return g;
  }
  for (int i = 0; i < 64; ++i)
    if (fs::exists("/dev/nvidia" + std::to_string(i))) g.push_back(i);
  return g;
}

// A folder only this process uses, removed with everything in it on destruction.
class PrivateDir {
 public:
  PrivateDir() {
    fs::path base;
    try {
      base = fs::temp_directory_path();
    } catch (const fs::filesystem_error&) {
      base = "/tmp";
    }
    std::string tmpl = (base / "kernrl-serve.XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw std::runtime_error("cannot create a private folder in " + base.string() + ": " +
                               std::strerror(errno));
    path_ = tmpl;
  }
  ~PrivateDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Writes `text` to a new file `name` in a new folder of its own under `dir`; returns its path.
std::string write_answer(const fs::path& dir, const std::string& name, const std::string& text) {
  std::string sub = (dir / "jXXXXXX").string();
  if (!::mkdtemp(sub.data()))
    throw std::runtime_error(std::string("cannot create a folder for the answer: ") +
                             std::strerror(errno));
  std::string file = (fs::path(sub) / name).string();
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error(std::string("cannot write the answer: ") + std::strerror(errno));
  const char* p = text.data();
  size_t n = text.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      int e = errno;
      ::close(fd);
      throw std::runtime_error(std::string("cannot write the answer: ") + std::strerror(e));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  ::close(fd);
  return file;
}

void remove_answer(const std::string& file) {
  std::error_code ec;
  fs::remove_all(fs::path(file).parent_path(), ec);
}

class LocalGrader final : public Grader {
 public:
  LocalGrader(const Config& cfg, const RewardPreset& preset, const GraderOptions& opt)
      : cfg_(cfg), preset_(preset), opt_(opt) {
    std::vector<int> gpus =
        opt.compile_only ? std::vector<int>{} : (opt.gpus.empty() ? visible_gpus() : opt.gpus);
    not_run_ = opt.compile_only ? "--compile-only" : "no GPU visible";
    std::vector<std::unique_ptr<WorkerClient>> started;
    for (int g : gpus) {
      started.push_back(std::make_unique<WorkerClient>(g));
      started.back()->spawn();  // libtorch loads in every worker at once
    }
    for (auto& w : started) {
      std::string err;
      if (w->wait_ready(&err)) {
        auto gs = std::make_unique<GpuSlot>();
        gs->worker = std::move(w);
        gpus_.push_back(std::move(gs));
      } else {
        not_run_ = "no GPU: " + err;
      }
    }
    if (!gpus_.empty()) {
      const json& dev = gpus_[0]->worker->device();
      arch_ = cfg_.arch != "auto" ? cfg_.arch : dev.value("arch", cfg_.fallback_arch);
      sms_ = dev.value("sms", int64_t{132});
      baselines_.configure(opt.baselines);
      baselines_.load_for(dev, gpus_[0]->worker->versions());
    } else {
      arch_ = cfg_.arch == "auto" ? cfg_.fallback_arch : cfg_.arch;
      baselines_.configure(opt.baselines);
    }
    int jobs = opt.compile_jobs > 0
                   ? opt.compile_jobs
                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 0; i < jobs; ++i) compilers_.emplace_back([this] { compile_loop(); });
    for (auto& g : gpus_) gpu_threads_.emplace_back([this, s = g.get()] { gpu_loop(s); });
  }

  ~LocalGrader() override { stop(); }

  void submit(Job job, Done done) override {
    auto it = std::make_shared<Item>();
    it->job = std::move(job);
    it->done = std::move(done);
    it->t0 = Clock::now();
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!stopping_) {
        compile_q_.push_back(std::move(it));
        compile_cv_.notify_one();
        return;
      }
    }
    finish(*it, Outcome{Outcome::Stopped, nullptr, "the grader is shutting down"});
  }

  size_t queued() const override {
    std::lock_guard<std::mutex> l(mu_);
    return compile_q_.size() + gpu_q_.size();
  }
  size_t running() const override { return running_.load(); }

  json gpus() const override {
    json out = json::array();
    for (const auto& g : gpus_) {
      std::lock_guard<std::mutex> l(g->mu);
      double busy = g->busy_s;
      if (g->busy_since)
        busy += std::chrono::duration<double>(Clock::now() - *g->busy_since).count();
      out.push_back({{"index", g->worker->gpu()},
                     {"name", g->worker->device().value("name", "?")},
                     {"busy_seconds", busy},
                     {"evaluations", g->evaluations},
                     {"restarts", g->restarts}});
    }
    return out;
  }

  std::string gpu_info() const override {
    if (gpus_.empty()) return "no GPU: nothing runs, kernels are only compiled (" + not_run_ + ")";
    const json& d = gpus_[0]->worker->device();
    char mem[64] = "";
    if (d.contains("memory_bytes") && d["memory_bytes"].is_number())
      std::snprintf(mem, sizeof mem, " (%.1f GB)", d["memory_bytes"].get<double>() / 1e9);
    std::string s = d.value("name", "GPU") + mem;
    if (gpus_.size() > 1) s += " x" + std::to_string(gpus_.size());
    return s;
  }

  bool compile_only() const override { return gpus_.empty(); }
  double run_timeout_s() const override { return cfg_.run_timeout_s; }

  void stop() override {
    std::deque<std::shared_ptr<Item>> dropped;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopped_) return;
      stopping_ = stopped_ = true;
      dropped.swap(compile_q_);
      for (auto& i : gpu_q_) dropped.push_back(std::move(i));
      gpu_q_.clear();
    }
    compile_cv_.notify_all();
    gpu_cv_.notify_all();
    for (auto& it : dropped)
      finish(*it, Outcome{Outcome::Stopped, nullptr,
                          "the server is shutting down; this answer was not graded"});
    for (auto& t : compilers_) t.join();
    for (auto& t : gpu_threads_) t.join();
  }

 private:
  struct Item {
    Job job;
    Done done;
    Clock::time_point t0;
    Prepared prep;
    GradeOptions gopt;
    bool finished = false;
  };
  struct GpuSlot {
    std::unique_ptr<WorkerClient> worker;
    mutable std::mutex mu;
    double busy_s = 0;
    std::optional<Clock::time_point> busy_since;
    uint64_t evaluations = 0;
    int restarts = 0;
  };

  void finish(Item& it, Outcome o) {
    if (it.finished) return;
    it.finished = true;
    try {
      it.done(std::move(o));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kernrl serve: a grading callback failed: %s\n", e.what());
    }
  }

  void emit(Item& it) {
    json& rec = it.prep.record;
    rec["file"] = it.job.label;
    rec["run_seed"] = opt_.run_seed;
    rec["wall_ms"] = std::chrono::duration<double, std::milli>(Clock::now() - it.t0).count();
    finish(it, Outcome{Outcome::Graded, std::move(rec), ""});
  }

  // Takes the next item of `q`, or null when stopping.
  std::shared_ptr<Item> pop(std::deque<std::shared_ptr<Item>>& q, std::condition_variable& cv) {
    std::unique_lock<std::mutex> l(mu_);
    cv.wait(l, [&] { return stopping_ || !q.empty(); });
    if (stopping_) return nullptr;
    auto it = std::move(q.front());
    q.pop_front();
    ++running_;
    return it;
  }

  void compile_loop() {
    while (auto it = pop(compile_q_, compile_cv_)) {
      step_compile(it);
      --running_;
    }
  }

  void step_compile(const std::shared_ptr<Item>& item) {
    Item& it = *item;
    if (Clock::now() >= it.job.deadline) {
      finish(it, Outcome{Outcome::Expired, nullptr, "the step deadline passed before it compiled"});
      return;
    }
    std::string file;
    try {
      file = write_answer(tmp_.path(), answer_file_name(it.job.source), it.job.source);
      it.gopt.problem = it.job.problem;
      it.gopt.seed = it.job.seed;
      it.gopt.compile_only = gpus_.empty();
      it.gopt.run = it.job.run;
      it.gopt.sample = it.job.sample;
      it.prep = prepare_file(file, it.gopt, cfg_, arch_, sms_);
      remove_answer(file);
      file.clear();
      if (it.prep.done || gpus_.empty()) {
        complete_record(it.prep, nullptr, nullptr, json::object(), preset_, baselines_.ceilings(),
                        not_run_);
        emit(it);
        return;
      }
    } catch (const std::exception& e) {
      if (!file.empty()) remove_answer(file);
      finish(it, Outcome{Outcome::Failed, nullptr, std::string("internal error: ") + e.what()});
      return;
    }
    bool queued = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!stopping_) {
        gpu_q_.push_back(item);
        queued = true;
      }
    }
    if (queued) {
      gpu_cv_.notify_one();
      return;
    }
    finish(it, Outcome{Outcome::Stopped, nullptr,
                       "the server is shutting down; this answer was compiled but not run"});
  }

  void gpu_loop(GpuSlot* g) {
    while (auto it = pop(gpu_q_, gpu_cv_)) {
      step_run(*it, g);
      --running_;
    }
  }

  void step_run(Item& it, GpuSlot* g) {
    // A run that could not finish before the deadline is not started: a kernel is stopped only
    // by its own run timeout, never by how long it waited.
    auto left = std::chrono::duration<double>(it.job.deadline - Clock::now()).count();
    if (it.job.deadline != Clock::time_point::max() && left < cfg_.run_timeout_s) {
      finish(it, Outcome{Outcome::Expired, nullptr,
                         "the step deadline would pass before a run could finish"});
      return;
    }
    WorkerClient* w = g->worker.get();
    try {
      json bench = json::object();
      for (const auto& n : it.prep.problem.size_names) bench[n] = it.prep.problem.bench.at(n);
      std::optional<json> base = baselines_.baseline(it.prep.problem.id, bench);
      std::string base_source = base ? baselines_.source() : "reused";
      if (!base) {
        std::lock_guard<std::mutex> l(baseline_mu_);
        auto f = baseline_cache_.find({w->gpu(), it.prep.problem.id});
        if (f != baseline_cache_.end()) base = f->second;
      }
      {
        std::lock_guard<std::mutex> l(g->mu);
        g->busy_since = Clock::now();
      }
      int restarts = w->restarts();
      json answer = w->request(eval_request(it.prep, it.gopt, cfg_, base), cfg_.run_timeout_s);
      // A kernel that crashed or hung the worker: its replacement starts loading now, while this
      // record is completed, rather than when the next kernel arrives.
      if (w->restarts() != restarts) w->spawn();
      {
        std::lock_guard<std::mutex> l(g->mu);
        g->busy_s += std::chrono::duration<double>(Clock::now() - *g->busy_since).count();
        g->busy_since.reset();
        ++g->evaluations;
        g->restarts = w->restarts();
      }
      if (answer.contains("timing") && answer["timing"].contains("baseline")) {
        if (base) answer["timing"]["baseline_source"] = base_source;
        std::lock_guard<std::mutex> l(baseline_mu_);
        baseline_cache_.emplace(std::make_pair(w->gpu(), it.prep.problem.id),
                                answer["timing"]["baseline"]);
      }
      json device = w->device();
      device["gpu_index"] = w->gpu();
      complete_record(it.prep, &answer, device, w->versions(), preset_, baselines_.ceilings(), "");
      emit(it);
    } catch (const std::exception& e) {
      {
        std::lock_guard<std::mutex> l(g->mu);
        if (g->busy_since) {
          g->busy_s += std::chrono::duration<double>(Clock::now() - *g->busy_since).count();
          g->busy_since.reset();
        }
      }
      finish(it, Outcome{Outcome::Failed, nullptr, std::string("internal error: ") + e.what()});
    }
  }

  Config cfg_;
  RewardPreset preset_;
  GraderOptions opt_;
  PrivateDir tmp_;
  std::string arch_, not_run_;
  int64_t sms_ = 132;
  BaselineStore baselines_;
  std::vector<std::unique_ptr<GpuSlot>> gpus_;
  std::mutex baseline_mu_;
  std::map<std::pair<int, std::string>, json> baseline_cache_;  // (gpu, problem) -> timing

  mutable std::mutex mu_;
  std::condition_variable compile_cv_, gpu_cv_;
  std::deque<std::shared_ptr<Item>> compile_q_, gpu_q_;
  bool stopping_ = false, stopped_ = false;
  std::atomic<size_t> running_{0};
  std::vector<std::thread> compilers_, gpu_threads_;
};

}  // namespace

std::string answer_file_name(const std::string& source) {
  bool fence = false, python = false;
  for (size_t pos = 0; pos < source.size();) {
    size_t nl = source.find('\n', pos);
    size_t end = nl == std::string::npos ? source.size() : nl;
    size_t at = source.find_first_not_of(" \t", pos);
    if (at != std::string::npos && at < end) {
      if (starts_with(source, at, "```") || starts_with(source, at, "~~~")) fence = true;
      if (at == pos && (starts_with(source, at, "import ") || starts_with(source, at, "from ") ||
                        starts_with(source, at, "def ") || starts_with(source, at, "class ") ||
                        starts_with(source, at, "@triton")))
        python = true;
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  if (fence) return "answer.md";
  if (source.find("/* kernrl") != std::string::npos) return "answer.cu";
  if (python) return "answer.py";
  return "answer.md";
}

std::unique_ptr<Grader> make_grader(const Config& cfg, const RewardPreset& preset,
                                    const GraderOptions& opt) {
  return std::make_unique<LocalGrader>(cfg, preset, opt);
}

}  // namespace kernrl::serve
