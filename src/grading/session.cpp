#include "grading/session.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <random>

#include "core/draws.h"
#include "core/hash.h"
#include "core/paths.h"
#include "core/run_bound.h"
#include "extract/extract.h"
#include "grading/profiler.h"
#include "record/record.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32 | rd()) & 0x7fffffffffffffffULL;
}

std::vector<int> parse_gpu_list(const std::string& s) {
  std::vector<int> g;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    std::string part = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || v < 0)
      throw UsageError("--gpus expects a list like 0,1,2; got '" + s + "'");
    g.push_back(v);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return g;
}

std::vector<int> visible_gpus() {
  std::vector<int> g;
  if (auto entries = cuda_visible_devices()) {
    for (size_t i = 0; i < entries->size(); ++i) g.push_back(static_cast<int>(i));
    return g;
  }
  for (int i = 0; i < 64; ++i)
    if (fs::exists("/dev/nvidia" + std::to_string(i))) g.push_back(i);
  return g;
}

GradingSession::GradingSession(SessionOptions options) : opt_(std::move(options)) {
  preset_ = load_reward_preset(opt_.cfg.reward_preset);
  baselines_.configure(opt_.baselines_path);
  if (opt_.baselines_doc) baselines_.configure_doc(*opt_.baselines_doc, opt_.baselines_label);
  arch_ = opt_.cfg.arch == "auto" ? opt_.cfg.fallback_arch : opt_.cfg.arch;
  if (opt_.compile_only) {
    no_gpu_ = "--compile-only";
  } else {
    std::vector<int> ids = opt_.gpus.empty() ? visible_gpus() : opt_.gpus;
    if (ids.empty()) no_gpu_ = "no GPU is visible";
    // Started first: libtorch loads in the workers while the first files compile.
    for (int id : ids) {
      auto g = std::make_unique<Gpu>();
      g->worker = std::make_unique<WorkerClient>(id, opt_.worker_exe);
      g->worker->set_spares(opt_.cfg.spares());
      g->worker->spawn();
      gpus_.push_back(std::move(g));
    }
  }
  int jobs = opt_.compile_jobs > 0
                 ? opt_.compile_jobs
                 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int j = 0; j < jobs; ++j) threads_.emplace_back([this] { compile_loop(); });
}

GradingSession::~GradingSession() {
  drain();
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

size_t GradingSession::wait_ready() {
  std::call_once(ready_once_, [this] {
    for (auto& g : gpus_) {
      std::string err;
      if (g->worker->wait_ready(&err))
        ready_.push_back(g.get());
      else
        no_gpu_ = err;
    }
    if (ready_.empty()) return;
    no_gpu_.clear();
    device_json_ = ready_[0]->worker->device_json();
    versions_json_ = ready_[0]->worker->versions_json();
    baselines_.load_for(device_json_, versions_json_);
    const DeviceInfo& d = ready_[0]->worker->device();
    std::lock_guard<std::mutex> l(mu_);
    if (opt_.cfg.arch == "auto") arch_ = d.arch();
    sms_ = d.sms;
    std::vector<std::string> uuids;
    for (Gpu* g : ready_) uuids.push_back(g->worker->uuid());
    monitor_.start(uuids);
    for (Gpu* g : ready_) threads_.emplace_back([this, g] { gpu_loop(g); });
  });
  return ready_.size();
}

std::string GradingSession::no_gpu_cause() {
  wait_ready();
  return no_gpu_;
}

std::string GradingSession::no_gpu_reason() {
  wait_ready();
  return no_gpu_.empty() || opt_.compile_only ? no_gpu_ : "no GPU: " + no_gpu_;
}

json GradingSession::device() {
  wait_ready();
  return ready_.empty() ? json(nullptr) : ready_[0]->worker->device_json();
}

void GradingSession::submit(Submission s, std::function<void(Outcome)> done) {
  {
    std::lock_guard<std::mutex> l(mu_);
    Job j;
    j.sub = std::move(s);
    j.done = std::move(done);
    j.t0 = Clock::now();
    compile_q_.push_back(std::move(j));
    ++in_flight_;
  }
  cv_.notify_all();
}

Outcome GradingSession::grade(Submission s) {
  std::promise<Outcome> p;
  auto f = p.get_future();
  submit(std::move(s), [&p](Outcome o) { p.set_value(std::move(o)); });
  return f.get();
}

void GradingSession::drain() {
  std::unique_lock<std::mutex> l(mu_);
  idle_cv_.wait(l, [&] { return in_flight_ == 0; });
}

void GradingSession::cancel_queued() {
  std::deque<Job> dropped;
  {
    std::lock_guard<std::mutex> l(mu_);
    cancelled_ = true;
    dropped.swap(compile_q_);
    for (auto& j : gpu_q_) dropped.push_back(std::move(j));
    gpu_q_.clear();
  }
  for (auto& j : dropped) {
    Outcome out;
    out.kind = Outcome::Cancelled;
    finish(j, std::move(out));
  }
}

size_t GradingSession::queued() {
  std::lock_guard<std::mutex> l(mu_);
  return compile_q_.size() + gpu_q_.size();
}

json GradingSession::gpu_stats() {
  std::lock_guard<std::mutex> l(mu_);
  json out = json::array();
  for (Gpu* g : ready_) {
    json s = {{"gpu_index", g->worker->gpu()},
              {"evaluations", g->evaluations},
              {"busy_ms", g->busy_ms},
              {"worker_restarts", g->worker->restarts()},
              {"spare_takeovers", g->worker->spare_takeovers()},
              {"restart_wait_ms", g->worker->restart_wait_ms()}};
    auto u = monitor_.mean_utilization(g->worker->uuid());
    s["nvml_utilization_pct"] = u ? json(*u) : json(nullptr);
    if (!u) s["nvml"] = monitor_.why().empty() ? "no samples yet" : monitor_.why();
    out.push_back(s);
  }
  return out;
}

Prepared GradingSession::prepare(const Submission& s, const std::string& arch, int64_t sms) {
  GradeOptions o = s.opt;
  o.compile_only = opt_.compile_only;
  o.converters = opt_.converters;
  if (s.source) return prepare_source(*s.source, s.file, o, opt_.cfg, arch, sms);
  return prepare_file(s.file, o, opt_.cfg, arch, sms);
}

void GradingSession::finish(Job& job, Outcome out) {
  if (out.kind == Outcome::Graded) {
    double wall = ms_between(job.t0, Clock::now());
    out.record.wall_ms = wall;
    if (out.record.grader) out.record.grader->total_ms = wall;
  }
  try {
    job.done(std::move(out));
  } catch (const std::exception& e) {
    // The caller's failure, not the kernel's: said, and the session goes on.
    std::fprintf(stderr, "kernrl: while handling the record of %s: %s\n", job.sub.file.c_str(),
                 e.what());
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    --in_flight_;
  }
  idle_cv_.notify_all();
}

void GradingSession::compile_loop() {
  for (;;) {
    Job job;
    std::optional<Outcome::Kind> out_of_time;  // not graded: cancelled, or past its deadline
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stopping_ || !compile_q_.empty(); });
      if (compile_q_.empty()) return;
      job = std::move(compile_q_.front());
      compile_q_.pop_front();
      if (cancelled_) out_of_time = Outcome::Cancelled;
    }
    Outcome out;
    if (!out_of_time && Clock::now() >= job.sub.deadline) out_of_time = Outcome::Expired;
    if (out_of_time) {
      out.kind = *out_of_time;
      finish(job, std::move(out));
      continue;
    }
    try {
      const Submission& s = job.sub;
      // Compiled for the likely GPU while the workers start; again if the GPU turns out different.
      std::string arch;
      int64_t sms;
      {
        std::lock_guard<std::mutex> l(mu_);
        arch = arch_;
        sms = sms_;
      }
      Prepared p = prepare(s, arch, sms);
      wait_ready();
      if (arch != arch_ || sms != sms_) p = prepare(s, arch_, sms_);
      bool outside = (!s.only_problem.empty() && p.problem.id != s.only_problem) ||
                     (s.only_level && p.problem.level != s.only_level);
      if (outside && s.opt.problem.empty() && !p.problem.id.empty()) {
        out.kind = Outcome::Skipped;
        out.record.problem = p.problem.id;
        out.record.file = s.file;
        finish(job, std::move(out));
        continue;
      }
      p.record.grader.emplace().prepare_ms = p.cpu_ms;
      if (p.done || ready_.empty()) {
        complete_record(p, nullptr, nullptr, json::object(), preset_, baselines_.ceilings(),
                        no_gpu_reason());
        out.kind = Outcome::Graded;
        out.usage_error = p.usage_error;
        out.record = std::move(p.record);
        finish(job, std::move(out));
        continue;
      }
      job.prep = std::move(p);
      job.queued_at = Clock::now();
      {
        std::unique_lock<std::mutex> l(mu_);
        if (cancelled_) {
          l.unlock();
          out.kind = Outcome::Cancelled;
          finish(job, std::move(out));
          continue;
        }
        gpu_q_.push_back(std::move(job));
      }
      cv_.notify_all();
    } catch (const std::exception& e) {
      out.kind = Outcome::Failed;
      out.error = e.what();
      finish(job, std::move(out));
    }
  }
}

const BaselineStore& GradingSession::store_for(const ProblemSpec& p) {
  const fs::path root = p.dir.parent_path().parent_path();  // problems/L1/23_Softmax -> problems
  std::error_code ec;
  if (opt_.baselines_doc || !opt_.baselines_path.empty() ||
      fs::equivalent(root, problems_dir(), ec) || root.empty())
    return baselines_;
  std::lock_guard<std::mutex> l(mu_);
  auto& store = suite_baselines_[root.string()];
  if (!store) {
    store = std::make_unique<BaselineStore>();
    const fs::path file =
        root.parent_path() / "baselines" / (gpu_slug(device_json_.value("name", "")) + ".json");
    try {
      if (device_json_.is_object() && fs::exists(file)) {
        store->configure(file.string());
        store->load_for(device_json_, versions_json_);
      }
    } catch (const std::exception&) {
      store = std::make_unique<BaselineStore>();  // an unreadable file: baselines measured
    }
  }
  return *store;
}

std::optional<trace::Stats> GradingSession::baseline_for(int gpu, const ProblemSpec& p,
                                                         std::string* source) {
  json bench = json::object();
  for (const auto& n : p.size_names) bench[n] = p.bench.at(n);
  std::string ref_sha;
  try {
    ref_sha = sha256_hex(read_file((p.dir / "reference.cpp").string()));
  } catch (const std::exception&) {
    // No reference source at hand (an unusual install): entries are not checked against it.
  }
  const BaselineStore& store = store_for(p);
  if (auto b = store.baseline(p.id, bench, ref_sha)) {
    // Only an entry that reads as timing statistics with a median (a hand-edited file may hold
    // anything); otherwise the baseline is measured.
    try {
      trace::Stats stats = read_message<trace::Stats>(*b, "baseline file entry");
      if (stats.median_ms) {
        *source = store.source();
        return stats;
      }
    } catch (const ProtocolError&) {
    }
  }
  // Measured once per GPU per session, then reused.
  std::lock_guard<std::mutex> l(mu_);
  auto f = measured_baselines_.find({gpu, p.dir.string()});
  if (f == measured_baselines_.end()) return std::nullopt;
  *source = "reused";
  return f->second;
}

GradingSession::KernelBaseline GradingSession::kernel_baseline_for(Gpu* g, const ProblemSpec& p,
                                                                   uint64_t seed, EvalRequest* req,
                                                                   std::string* torch_source) {
  KernelBaseline kb;
  const std::string& mode = opt_.cfg.kernel_baseline;
  if (mode == "never") return kb;
  kb.wanted = p.score.baseline == "kernel";
  if (req->sizes) {
    if (kb.wanted)
      kb.error = "the reference kernel is timed at the bench sizes only (--size given)";
    return kb;
  }
  const fs::path solution = p.dir / "solution.cu";
  std::string sha;
  try {
    sha = sha256_hex(read_file(solution.string()));
  } catch (const std::exception&) {
    kb.error = "the problem has no readable solution.cu";
    return kb;
  }
  json bench = json::object();
  for (const auto& n : p.size_names) bench[n] = p.bench.at(n);
  const BaselineStore& store = store_for(p);
  if (auto t = store.kernel_baseline(p.id, bench, sha)) {
    kb.timing = read_object<trace::Stats>(*t);
    kb.source = store.source();
    return kb;
  }
  const auto key = std::make_pair(g->worker->gpu(), p.dir.string());
  auto known = [&](const KernelBaseline& entry) {
    kb.timing = entry.timing;
    kb.source = entry.timing ? "reused" : "";
    kb.error = entry.error;
  };
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto f = measured_kernel_baselines_.find(key); f != measured_kernel_baselines_.end()) {
      known(f->second);
      return kb;
    }
  }
  if (!kb.wanted && mode != "always") return kb;

  // Graded like any submission: the same preparation, request and checks; its kernel timing is
  // the baseline.
  auto start = Clock::now();
  GradeOptions o;
  o.problem = p.id;
  o.problems_root = p.dir.parent_path().parent_path().string();
  o.seed = seed;
  std::string arch;
  int64_t sms;
  {
    std::lock_guard<std::mutex> l(mu_);
    arch = arch_;
    sms = sms_;
  }
  KernelBaseline entry;
  try {
    Prepared kp = prepare_file(solution.string(), o, opt_.cfg, arch, sms);
    entry = grade_reference_kernel(g, p, kp, seed, req, torch_source, key);
  } catch (const std::exception& e) {
    // The grader's own failure on the reference kernel: the submission is graded all the same.
    entry.error = std::string("the reference kernel could not be graded: ") + e.what();
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    measured_kernel_baselines_.emplace(key, entry);
  }
  known(entry);
  if (kb.timing) kb.source = "measured";
  kb.measured_ms = ms_between(start, Clock::now());
  return kb;
}

GradingSession::KernelBaseline GradingSession::grade_reference_kernel(
    Gpu* g, const ProblemSpec& p, const Prepared& kp, uint64_t seed, EvalRequest* req,
    std::string* torch_source, const std::pair<int, std::string>& key) {
  KernelBaseline entry;
  if (kp.done) {
    entry.error = "the reference kernel did not compile (" +
                  (kp.record.status_text().empty() ? "?" : kp.record.status_text()) + ")";
  } else {
    EvalRequest kreq;
    kreq.problem_dir = p.dir.string();
    kreq.cubin = kp.compiled.cubin_path;
    kreq.lowered = kp.compiled.lowered;
    if (!kp.compiled.modules.empty()) kreq.modules = kp.compiled.modules;
    kreq.plan = kp.plan;
    kreq.seed = seed;
    kreq.cfg = opt_.cfg;
    kreq.baseline = req->baseline;
    EvalAnswer a = g->worker->eval(kreq, evaluation_timeout_s(p, opt_.cfg));
    const trace::Timing* t = a.timing.get();
    if (!req->baseline && t && t->baseline) {
      // The PyTorch baseline was measured on the way: the submission reuses it.
      req->baseline = *t->baseline;
      *torch_source = "reused";
      std::lock_guard<std::mutex> l(mu_);
      measured_baselines_.emplace(key, *t->baseline);
    }
    if (a.status.value_or(Status::InternalError) == Status::Correct && t && t->kernel)
      entry.timing = *t->kernel;
    else
      entry.error = std::string("the reference kernel graded ") + to_string(*a.status) +
                    (a.error ? ": " + a.error->message.value_or("") : std::string());
  }
  return entry;
}

void GradingSession::KernelBaseline::complete(trace::Timing& t) const {
  if (timing) {
    t.kernel_baseline = *timing;
    t.kernel_baseline_source = source;
  }
  if (wanted) {
    t.speedup_baseline = "kernel";
    if (!timing)
      t.kernel_baseline_error = error.empty() ? "the reference kernel was not timed" : error;
  }
}

void GradingSession::gpu_loop(Gpu* g) {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stopping_ || !gpu_q_.empty(); });
      if (gpu_q_.empty()) return;
      job = std::move(gpu_q_.front());
      gpu_q_.pop_front();
    }
    Outcome out;
    // A run that could not finish before the deadline is not started: a kernel is stopped only by
    // its own run timeout, never because it waited.
    if (job.sub.deadline != Clock::time_point::max() &&
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                           evaluation_timeout_s(job.prep.problem, opt_.cfg))) >
            job.sub.deadline) {
      out.kind = Outcome::Expired;
      finish(job, std::move(out));
      continue;
    }
    try {
      Prepared& p = job.prep;
      auto start = Clock::now();
      EvalRequest req;
      req.problem_dir = p.problem.dir.string();
      req.cubin = p.compiled.cubin_path;
      req.lowered = p.compiled.lowered;
      if (!p.compiled.modules.empty()) req.modules = p.compiled.modules;
      req.plan = p.plan;
      req.seed = job.sub.opt.seed;
      req.cfg = opt_.cfg;
      if (job.sub.opt.sizes) {
        Vars v = p.problem.bench;
        for (const auto& [k, val] : *job.sub.opt.sizes) v[k] = val;
        req.sizes = v;
      }
      std::string base_source;
      if (!req.sizes)
        if (std::optional<trace::Stats> b = baseline_for(g->worker->gpu(), p.problem, &base_source))
          req.baseline = std::move(*b);
      // The reference kernel draws its own inputs (a seed derived from the submission's), so no
      // answer to the submission's inputs is computed, and left in memory, before it runs.
      KernelBaseline kb =
          kernel_baseline_for(g, p.problem, draws::reference_kernel(*req.seed), &req, &base_source);
      EvalAnswer answer = g->worker->eval(req, evaluation_timeout_s(p.problem, opt_.cfg));
      auto end = Clock::now();
      if (trace::Timing* t = answer.timing.get(); t && t->kernel) {
        kb.complete(*t);
        if (!req.sizes) {
          // torch.compile's timing from the baseline file (a suite's baseline tool measured it).
          json bench = json::object();
          for (const auto& n : p.problem.size_names) bench[n] = p.problem.bench.at(n);
          const BaselineStore& store = store_for(p.problem);
          if (auto c = store.compile_baseline(p.problem.id, bench)) {
            t->compile_baseline = read_object<trace::Stats>(*c);
            t->compile_baseline_source = store.source();
          }
        }
      }
      if (trace::Timing* t = answer.timing.get(); t && t->baseline) {
        if (req.baseline) t->baseline_source = base_source;
        std::lock_guard<std::mutex> l(mu_);
        measured_baselines_.emplace(std::make_pair(g->worker->gpu(), p.problem.dir.string()),
                                    *t->baseline);
      }
      {
        std::lock_guard<std::mutex> l(mu_);
        ++g->evaluations;
        g->busy_ms += ms_between(start, end);
      }
      trace::Grader& grader = p.record.grader.emplace();
      grader.queue_ms = ms_between(job.queued_at, start);
      grader.worker_ms = g->worker->last_request_ms();
      if (auto ws = g->worker->take_start()) {
        grader.worker_start_ms = ws->ms;
        if (!ws->phases.empty()) grader.worker_start = ws->phases;
        if (ws->spare) grader.worker_spare = true;
      }
      if (kb.measured_ms > 0) grader.kernel_baseline_ms = kb.measured_ms;
      grader.phases = answer.phases_ms.value_or(std::map<std::string, double>{});
      if (opt_.profile &&
          (answer.status_is(Status::Correct) || answer.status_is(Status::Incorrect))) {
        ProfileRequest pr;
        pr.eval = req;
        if (!pr.eval.sizes) pr.eval.sizes = p.problem.bench;  // the size the timings are for
        pr.gpu = g->worker->device_entry();
        pr.ncu = opt_.ncu;
        auto t = Clock::now();
        p.record.profile = profile_kernel(pr);
        grader.profile_ms = ms_between(t, Clock::now());
      }
      complete_record(p, &answer, g->worker->device_json(), g->worker->versions_json(), preset_,
                      baselines_.ceilings(), "");
      out.kind = Outcome::Graded;
      out.record = std::move(p.record);
    } catch (const std::exception& e) {
      out.kind = Outcome::Failed;
      out.error = e.what();
    }
    finish(job, std::move(out));
  }
}

}  // namespace kernrl
