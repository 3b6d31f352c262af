#include "grading/worker_client.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/paths.h"

namespace kernrl {
using nlohmann::json;

std::optional<std::vector<std::string>> cuda_visible_devices() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v) return std::nullopt;
  std::vector<std::string> entries;
  std::string s = v;
  for (size_t pos = 0; pos < s.size();) {
    size_t c = s.find(',', pos);
    std::string item = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (!item.empty()) entries.push_back(item);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return entries;
}

namespace {

// The device the worker for GPU index `gpu` must see: that entry of CUDA_VISIBLE_DEVICES when it
// is set (a scheduler such as Slurm may hand out "2,3" or GPU UUIDs), else the index itself.
std::string physical_gpu(int gpu) {
  auto entries = cuda_visible_devices();
  if (entries && gpu >= 0 && static_cast<size_t>(gpu) < entries->size()) return (*entries)[gpu];
  return std::to_string(gpu);
}

}  // namespace

std::string WorkerClient::device_entry() const {
  return physical_gpu(gpu_);
}

WorkerClient::WorkerClient(int gpu, std::string exe)
    : gpu_(gpu), exe_(exe.empty() ? helper_exe("kernrl-worker").string() : std::move(exe)) {}

WorkerClient::~WorkerClient() {
  spares_.push_back(std::move(active_));
  for (auto& p : spares_) {
    p->io.kill_and_release();
    if (!p->log_file.empty()) std::filesystem::remove(p->log_file);
  }
}

void WorkerClient::set_spares(int n) {
  n = std::max(0, n);
  while (static_cast<int>(spares_.size()) > n) {
    spares_.back()->io.kill_and_release();
    if (!spares_.back()->log_file.empty()) std::filesystem::remove(spares_.back()->log_file);
    spares_.pop_back();
  }
  while (static_cast<int>(spares_.size()) < n) spares_.push_back(std::make_unique<Proc>());
  if (ready_) start_spares();
}

int WorkerClient::spares_running() const {
  int n = 0;
  for (const auto& p : spares_) n += p->io.running();
  return n;
}

void WorkerClient::start(Proc& p, const char* slot, bool spare) {
  if (p.log_file.empty())
    p.log_file = (std::filesystem::temp_directory_path() /
                  ("kernrl-worker-" + std::to_string(getpid()) + "-gpu" + std::to_string(gpu_) +
                   "-" + slot + ".log"))
                     .string();
  SpawnOptions opt;
  opt.stderr_file = p.log_file;
  opt.env = {"CUDA_VISIBLE_DEVICES=" + physical_gpu(gpu_), "CUDA_MODULE_LOADING=LAZY"};
  std::vector<std::string> argv = {exe_};
  if (spare) argv.push_back("--warm-up");
  p.io.start(argv, opt);
  p.serial = ++starts_;
  p.hello.reset();
  p.hello_wait_ms = 0;
}

void WorkerClient::spawn() {
  if (!std::filesystem::exists(exe_)) return;  // wait_ready() says why
  start(*active_, "a");
  promoted_ = false;
  ready_ = false;
  unsent_start_.reset();
}

void WorkerClient::start_spares() {
  // One spare until a kernel has crashed or hung a worker, then all of them: a run without faults
  // keeps one more process per GPU, a run with them as many as workers.spares.
  size_t n = restarts_ > 0 ? spares_.size() : std::min<size_t>(1, spares_.size());
  for (size_t i = 0; i < n; ++i)
    if (!spares_[i]->io.running()) start(*spares_[i], ("s" + std::to_string(i)).c_str(), true);
}

std::unique_ptr<WorkerClient::Proc>* WorkerClient::next_spare() {
  std::unique_ptr<Proc>* ready = nullptr;
  std::unique_ptr<Proc>* first = nullptr;
  for (auto& p : spares_) {
    if (!p->io.running()) continue;
    if (!p->hello) {
      // A look for its hello, without waiting: usually long since written.
      std::string error;
      if (read_hello(*p, 0.0005, &error, true)) p->hello_wait_ms = 0;
      if (!p->io.running()) continue;  // it failed to start
    }
    if (p->hello && (!ready || p->serial < (*ready)->serial)) ready = &p;
    if (!first || p->serial < (*first)->serial) first = &p;
  }
  return ready ? ready : first;
}

std::optional<WorkerClient::Start> WorkerClient::take_start() {
  std::optional<Start> s;
  s.swap(last_start_);
  return s;
}

bool WorkerClient::read_hello(Proc& p, double timeout_s, std::string* error, bool glance) {
  auto wait_from = std::chrono::steady_clock::now();
  auto line = p.io.read_line(timeout_s);
  if (!line) {
    if (p.io.timed_out() && glance) return false;  // not there yet
    auto r = p.io.kill_and_reap();
    *error = r.timed_out ? "the GPU worker did not start within " +
                               std::to_string(static_cast<int>(timeout_s)) + " s"
                         : "the GPU worker could not start";
    return false;
  }
  try {
    Hello hello = Hello::from_json(json::parse(*line));
    if (hello.protocol_version() != kWorkerProtocol) {
      *error = "the GPU worker speaks protocol " + std::to_string(hello.protocol_version()) +
               " and kernrl protocol " + std::to_string(kWorkerProtocol) + " (worker built as " +
               hello.build_id.value_or("?") +
               ", kernrl " KERNRL_VERSION "): install kernrl and kernrl-worker together";
      p.io.kill_and_reap();
      return false;
    }
    if (!hello.ok()) {
      *error = hello.error.value_or("no usable GPU");
      p.io.kill_and_reap();
      return false;
    }
    p.hello = hello;
    p.hello_wait_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wait_from)
            .count();
  } catch (const std::exception& e) {
    *error = std::string("the GPU worker sent a bad greeting: ") + e.what();
    p.io.kill_and_reap();
    return false;
  }
  return true;
}

bool WorkerClient::wait_ready(std::string* error, double timeout_s) {
  if (ready_) return true;
  if (!std::filesystem::exists(exe_)) {
    *error =
        "this kernrl was built without libtorch for CUDA, so it has no GPU worker (kernrl-worker)";
    return false;
  }
  if (!active_->io.running()) spawn();
  if (!active_->hello && !read_hello(*active_, timeout_s, error)) {
    if (!active_->io.running() && error->find("could not start") != std::string::npos &&
        !log_tail().empty())
      *error += ": " + log_tail();
    return false;
  }
  hello_ = *active_->hello;
  unsent_start_ = Start{active_->hello_wait_ms,
                        hello_.startup_ms.value_or(std::map<std::string, double>{}), promoted_};
  if (restarts_ > 0) restart_wait_ms_ += active_->hello_wait_ms;
  ready_ = true;
  // The spares start once the active worker is up, so that the first start is not slowed.
  start_spares();
  return true;
}

bool WorkerClient::spare_ready(double timeout_s, bool glance) {
  if (spares_running() == 0) return false;
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (auto& p : spares_) {
    if (!p->io.running() || p->hello) continue;  // an empty slot (before the first fault), or ready
    double left = std::chrono::duration<double>(until - std::chrono::steady_clock::now()).count();
    std::string error;
    if (!read_hello(*p, std::max(left, 0.0), &error, glance)) return false;
    p->hello_wait_ms = 0;  // read before it was needed: no kernel waited for it
  }
  return true;
}

std::string WorkerClient::log_tail() const {
  // Only the end is read: a kernel that printf's in a loop may have written megabytes.
  std::ifstream in(active_->log_file, std::ios::binary | std::ios::ate);
  if (!in) return "";
  std::streamoff size = in.tellg();
  std::streamoff from = size > kLogTailBytes ? size - kLogTailBytes : 0;
  in.seekg(from);
  std::string all(static_cast<size_t>(size - from), '\0');
  in.read(all.data(), static_cast<std::streamsize>(all.size()));
  all.resize(static_cast<size_t>(in.gcount()));
  if (from > 0)
    all = "[... " + std::to_string(from) +
          " earlier bytes of the worker's output not shown ...]\n" + all;
  while (!all.empty() && (all.back() == '\n' || all.back() == ' ')) all.pop_back();
  return all;
}

json WorkerClient::device_json() const {
  json d = device().to_json();
  d["gpu_index"] = gpu_;
  return d;
}

namespace {

EvalAnswer failed(Status status, const std::string& message, const std::string& log = "") {
  EvalAnswer a;
  a.status = status;
  a.error = trace::make_error(status, message, 0, log);
  return a;
}

}  // namespace

std::optional<json> WorkerClient::exchange(const json& req, double timeout_s, EvalAnswer* failure) {
  std::string err;
  if (!ready_ && !wait_ready(&err)) {
    *failure = failed(Status::RuntimeError, err);
    return std::nullopt;
  }
  // The log holds this request's output only (the worker appends to it: O_APPEND), so it stays
  // small and a crash report shows what this kernel printed.
  const std::string& log_file = active_->log_file;
  if (!log_file.empty() && ::truncate(log_file.c_str(), 0) != 0) {
    // Not fatal: the tail is still read from the end of the file.
  }
  auto sent_at = std::chrono::steady_clock::now();
  struct Done {  // the round trip, however the exchange ends
    std::chrono::steady_clock::time_point t;
    double* out;
    ~Done() {
      *out =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    }
  } done{sent_at, &last_request_ms_};
  // Kept apart from the worker: a crash restarts it before take_start() is called.
  last_start_.swap(unsent_start_);
  unsent_start_.reset();
  last_worker_ = active_->serial;
  LineProcess& io = active_->io;
  if (!io.send_line(req.dump(-1, ' ', false, json::error_handler_t::replace))) {
    std::string tail = log_tail();
    restart();
    *failure = failed(Status::RuntimeError, "the GPU worker is gone", tail);
    return std::nullopt;
  }
  auto line = io.read_line(timeout_s);
  if (line) {
    try {
      json res = json::parse(*line);
      // It exits by itself after a sticky CUDA error; killed all the same, so that a worker that
      // fails to exit can never hold the grader.
      if (res.value("fatal", false)) restart();
      return res;
    } catch (const std::exception&) {
    }
  }
  bool hung = io.timed_out();
  std::string tail = log_tail();
  // A hung worker is killed and reaped in the background (its CUDA context's teardown waits for
  // the GPU); one that crashed has closed its output and is reaped here for its exit status.
  ProcessResult pr = hung ? ProcessResult{} : io.kill_and_reap();
  restart();
  if (hung) {
    *failure = failed(Status::Timeout, "the evaluation did not finish within " +
                                           std::to_string(static_cast<int>(timeout_s)) +
                                           " s (a kernel that never ends?); the worker was killed");
    return std::nullopt;
  }
  std::string how = pr.signal ? "was killed by signal " + std::to_string(pr.signal)
                              : "exited with code " + std::to_string(pr.exit_code);
  *failure =
      failed(Status::RuntimeError, "the GPU worker " + how + " while grading this kernel", tail);
  return std::nullopt;
}

void WorkerClient::restart() {
  active_->io.kill_and_release();
  ready_ = false;
  ++restarts_;
  if (auto* spare = next_spare()) {
    std::swap(active_, *spare);
    ++spare_takeovers_;
    promoted_ = true;
    unsent_start_.reset();
    start_spares();  // in the slot of the worker just killed
    return;
  }
  // Started now, so that its libtorch load overlaps what the grader does before the next request.
  spawn();
}

EvalAnswer WorkerClient::eval(const EvalRequest& req, double timeout_s) {
  EvalAnswer failure;
  auto res = exchange(req.to_json(), timeout_s, &failure);
  if (!res) return failure;
  try {
    return EvalAnswer::from_json(*res);
  } catch (const std::exception& e) {
    return failed(Status::InternalError,
                  std::string("the GPU worker's answer is malformed: ") + e.what());
  }
}

BenchAnswer WorkerClient::bench(const json& req, double timeout_s) {
  EvalAnswer failure;
  auto res = exchange(req, timeout_s, &failure);
  BenchAnswer b;
  if (!res) {
    b.error = failure.error ? failure.error->message.value_or("") : "the GPU worker failed";
    return b;
  }
  try {
    return BenchAnswer::from_json(*res);
  } catch (const std::exception& e) {
    b.error = std::string("the GPU worker's answer is malformed: ") + e.what();
    return b;
  }
}

}  // namespace kernrl
