// The CLI's side of a GPU worker: starts it, sends requests, and turns a worker that crashed or
// hung into a record for that one kernel (runtime_error / timeout) before starting a fresh one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/subprocess.h"

namespace kernrl {

class WorkerClient {
 public:
  explicit WorkerClient(int gpu) : gpu_(gpu) {}
  ~WorkerClient();

  // Starts the process without waiting for it (its libtorch load overlaps with compiling).
  void spawn();
  // Waits for the worker's hello. False (with *error) when there is no usable GPU.
  bool wait_ready(std::string* error, double timeout_s = 180);
  const nlohmann::json& device() const { return device_; }
  const nlohmann::json& versions() const { return versions_; }
  int gpu() const { return gpu_; }

  // Sends one request and returns the answer. A hang past `timeout_s` or a dead worker yields a
  // timeout / runtime_error answer; the next request starts a fresh worker.
  nlohmann::json request(const nlohmann::json& req, double timeout_s);
  int restarts() const { return restarts_; }

 private:
  // The last kLogTailBytes of the worker's output (stderr, where device printf output lands too)
  // while grading the current request; the record caps it further (records.worker_log_bytes).
  std::string log_tail() const;
  static constexpr long kLogTailBytes = 64 * 1024;
  int gpu_;
  LineProcess proc_;
  bool ready_ = false;
  nlohmann::json device_, versions_;
  std::string log_file_;
  int restarts_ = 0;
};

}  // namespace kernrl
