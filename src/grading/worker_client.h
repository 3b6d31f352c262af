// The CLI's side of a GPU worker: starts it, sends requests, and turns a worker that crashed or
// hung into a record for that one kernel (runtime_error / timeout) before starting a fresh one.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "protocol/worker.h"

namespace kernrl {

// The non-empty entries of this process's CUDA_VISIBLE_DEVICES ("2,3", GPU UUIDs...), or nullopt
// when it is unset. GPU index i of kernrl is entry i.
std::optional<std::vector<std::string>> cuda_visible_devices();

class WorkerClient {
 public:
  // `exe`: the worker program; empty for kernrl-worker beside kernrl (tests give a stand-in).
  explicit WorkerClient(int gpu, std::string exe = "");
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Starts the process without waiting for it (its libtorch load overlaps with compiling).
  void spawn();
  // Waits for the worker's hello. False (with *error) when there is no usable GPU, or the worker
  // speaks another protocol version.
  bool wait_ready(std::string* error, double timeout_s = 180);
  const DeviceInfo& device() const { return hello_.device; }
  // The record's `device` object: the hello's device and the GPU index.
  nlohmann::json device_json() const;
  // The record's `versions` (torch, cuda, driver).
  nlohmann::json versions_json() const { return hello_.versions; }
  const std::string& uuid() const { return hello_.uuid; }
  // The CUDA_VISIBLE_DEVICES entry this worker runs with (its GPU, as the system names it).
  std::string device_entry() const;
  int gpu() const { return gpu_; }

  // Grades one kernel. A hang past `timeout_s` or a dead worker yields a timeout /
  // runtime_error answer, and a fresh worker is started at once for the next request.
  EvalAnswer eval(const EvalRequest& req, double timeout_s);
  // A bench request (BenchDeviceRequest / BenchReferenceRequest, serialised).
  BenchAnswer bench(const nlohmann::json& req, double timeout_s);
  int restarts() const { return restarts_; }
  // The last request's round trip in ms, not counting a wait for the worker to start.
  double last_request_ms() const { return last_request_ms_; }

  // The start of the worker that answered the last request, when that request was the first it
  // answered: the ms the grader waited for its hello (its start overlaps other work: 0 when it
  // was ready before it was needed), and the worker's own breakdown (Hello::startup_ms).
  // Reported once per worker start.
  struct Start {
    double ms = 0;
    std::map<std::string, double> phases;
  };
  std::optional<Start> take_start();

 private:
  // Sends one request line and reads the answer line; nullopt with *failure filled when the
  // worker hung or died (it is then killed, and restarted by the next request).
  std::optional<nlohmann::json> exchange(const nlohmann::json& req, double timeout_s,
                                         EvalAnswer* failure);
  // Kills the worker (if still running) and starts a fresh one without waiting for it.
  void restart();
  // The last kLogTailBytes of the worker's output (stderr, where device printf output lands too)
  // while grading the current request; the record caps it further (records.worker_log_bytes).
  std::string log_tail() const;
  static constexpr long kLogTailBytes = 64 * 1024;
  int gpu_;
  std::string exe_;
  LineProcess proc_;
  bool ready_ = false;
  Hello hello_;
  std::optional<Start> unsent_start_;  // the running worker's start, before its first request
  std::optional<Start> last_start_;    // the start of the worker the last request went to
  double last_request_ms_ = 0;
  std::string log_file_;
  int restarts_ = 0;
};

}  // namespace kernrl
