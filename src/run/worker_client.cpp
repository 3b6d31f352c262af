#include "run/worker_client.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/paths.h"

namespace kernrl {
using nlohmann::json;

WorkerClient::~WorkerClient() {
  if (proc_.running()) {
    proc_.send_line(R"({"cmd":"quit"})");
    proc_.kill_and_reap();
  }
  if (!log_file_.empty()) std::filesystem::remove(log_file_);
}

void WorkerClient::spawn() {
  if (!std::filesystem::exists(helper_exe("kernrl-worker"))) return;  // wait_ready() says why
  if (log_file_.empty())
    log_file_ =
        (std::filesystem::temp_directory_path() /
         ("kernrl-worker-" + std::to_string(getpid()) + "-gpu" + std::to_string(gpu_) + ".log"))
            .string();
  SpawnOptions opt;
  opt.stderr_file = log_file_;
  opt.env = {"CUDA_VISIBLE_DEVICES=" + std::to_string(gpu_), "CUDA_MODULE_LOADING=LAZY"};
  proc_.start({helper_exe("kernrl-worker").string()}, opt);
  ready_ = false;
}

bool WorkerClient::wait_ready(std::string* error, double timeout_s) {
  if (ready_) return true;
  if (!std::filesystem::exists(helper_exe("kernrl-worker"))) {
    *error =
        "this kernrl was built without libtorch for CUDA, so it has no GPU worker (kernrl-worker)";
    return false;
  }
  if (!proc_.running()) spawn();
  auto line = proc_.read_line(timeout_s);
  if (!line) {
    auto r = proc_.kill_and_reap();
    *error = r.timed_out
                 ? "the GPU worker did not start within " +
                       std::to_string(static_cast<int>(timeout_s)) + " s"
                 : "the GPU worker could not start" + (log_tail().empty() ? "" : ": " + log_tail());
    return false;
  }
  try {
    json hello = json::parse(*line);
    if (!hello.value("hello", false)) {
      *error = hello.value("error", "no GPU");
      proc_.kill_and_reap();
      return false;
    }
    device_ = hello.at("device");
    versions_ = hello.at("versions");
  } catch (const std::exception& e) {
    *error = std::string("the GPU worker sent a bad greeting: ") + e.what();
    proc_.kill_and_reap();
    return false;
  }
  ready_ = true;
  return true;
}

std::string WorkerClient::log_tail() const {
  // Only the end is read: a kernel that printf's in a loop may have written megabytes.
  std::ifstream in(log_file_, std::ios::binary | std::ios::ate);
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

json WorkerClient::request(const json& req, double timeout_s) {
  std::string err;
  if (!ready_ && !wait_ready(&err))
    return {{"status", "runtime_error"},
            {"error", {{"category", "runtime_error"}, {"message", err}}}};
  // The log holds this request's output only (the worker appends to it: O_APPEND), so it stays
  // small and a crash report shows what this kernel printed.
  if (!log_file_.empty() && ::truncate(log_file_.c_str(), 0) != 0) {
    // Not fatal: the tail is still read from the end of the file.
  }
  if (!proc_.send_line(req.dump(-1, ' ', false, json::error_handler_t::replace))) {
    ready_ = false;
    ++restarts_;
    proc_.kill_and_reap();
    return {{"status", "runtime_error"},
            {"error",
             {{"category", "runtime_error"},
              {"message", "the GPU worker is gone"},
              {"log", log_tail()}}}};
  }
  auto line = proc_.read_line(timeout_s);
  if (line) {
    try {
      json res = json::parse(*line);
      if (res.value("fatal", false)) {
        proc_.reap();  // it exits by itself after a sticky CUDA error
        ready_ = false;
        ++restarts_;
      }
      return res;
    } catch (const std::exception&) {
    }
  }
  bool hung = proc_.timed_out();
  ProcessResult pr = proc_.kill_and_reap();
  ready_ = false;
  ++restarts_;
  if (hung)
    return {{"status", "timeout"},
            {"error",
             {{"category", "timeout"},
              {"message", "the evaluation did not finish within " +
                              std::to_string(static_cast<int>(timeout_s)) +
                              " s (a kernel that never ends?); the worker was killed"}}}};
  std::string how = pr.signal ? "was killed by signal " + std::to_string(pr.signal)
                              : "exited with code " + std::to_string(pr.exit_code);
  return {{"status", "runtime_error"},
          {"error",
           {{"category", "runtime_error"},
            {"message", "the GPU worker " + how + " while grading this kernel"},
            {"log", log_tail()}}}};
}

}  // namespace kernrl
