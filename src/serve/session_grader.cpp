// The service's grader is the grading library's session (src/grading/session.h), the one `eval`
// and `grade-dir` use: this adapter only translates jobs and outcomes.
#include <atomic>
#include <cstdio>
#include <cstring>

#include "grading/session.h"
#include "serve/grader.h"

namespace kernrl::serve {
using nlohmann::json;

namespace {

bool starts_with(const std::string& s, size_t at, const char* prefix) {
  return s.compare(at, std::strlen(prefix), prefix) == 0;
}

SessionOptions session_options(const Config& cfg, const GraderOptions& opt) {
  SessionOptions so;
  so.cfg = cfg;
  so.gpus = opt.gpus;
  so.compile_only = opt.compile_only;
  so.baselines_path = opt.baselines;
  so.compile_jobs = opt.compile_jobs;
  so.converters = opt.converters;
  return so;
}

class SessionGrader final : public Grader {
 public:
  SessionGrader(const Config& cfg, const GraderOptions& opt)
      : session_(session_options(cfg, opt)), run_timeout_(cfg.run_timeout_s) {
    session_.wait_ready();
    device_ = session_.device();
    no_gpu_ = session_.no_gpu_cause();
  }

  ~SessionGrader() override { stop(); }

  void submit(Job job, Done done) override {
    Submission s;
    // The name the session reads the answer under decides its format (answer_file_name); the
    // service gives each record its own label.
    s.file = answer_file_name(job.source);
    s.source = std::move(job.source);
    s.opt.problem = job.problem;
    s.opt.problems_root = job.problems_root;
    s.opt.seed = job.seed;
    s.opt.run = job.run;
    s.opt.sample = job.sample;
    s.deadline = job.deadline;
    ++outstanding_;
    session_.submit(std::move(s), [this, done = std::move(done)](Outcome o) {
      --outstanding_;
      done(std::move(o));
    });
  }

  size_t queued() const override { return session_.queued(); }
  size_t running() const override {
    size_t q = session_.queued(), n = outstanding_.load();
    return n > q ? n - q : 0;
  }

  json gpus() const override {
    json out = json::array();
    std::string name = device_.is_object() ? device_.value("name", "") : "";
    for (const auto& g : session_.gpu_stats())
      out.push_back({{"index", g.value("gpu_index", 0)},
                     {"name", name},
                     {"busy_seconds", g.value("busy_ms", 0.0) / 1000},
                     {"evaluations", g.value("evaluations", uint64_t{0})},
                     {"restarts", g.value("worker_restarts", 0)}});
    return out;
  }

  std::string gpu_info() const override {
    if (!no_gpu_.empty())
      return "no GPU: nothing runs, kernels are only compiled (" + no_gpu_ + ")";
    std::string s = device_.value("name", "GPU");
    if (device_.contains("memory_bytes") && device_["memory_bytes"].is_number()) {
      char mem[64];
      std::snprintf(mem, sizeof mem, " (%.1f GB)", device_["memory_bytes"].get<double>() / 1e9);
      s += mem;
    }
    size_t n = session_.gpu_stats().size();
    if (n > 1) s += " x" + std::to_string(n);
    return s;
  }

  bool compile_only() const override { return !no_gpu_.empty(); }
  double run_timeout_s() const override { return run_timeout_; }

  void stop() override {
    session_.cancel_queued();
    session_.drain();
  }

 private:
  mutable GradingSession session_;
  double run_timeout_;
  json device_;
  std::string no_gpu_;  // why nothing runs on a GPU (GradingSession::no_gpu_cause())
  std::atomic<size_t> outstanding_{0};
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

std::unique_ptr<Grader> make_grader(const Config& cfg, const GraderOptions& opt) {
  return std::make_unique<SessionGrader>(cfg, opt);
}

}  // namespace kernrl::serve
