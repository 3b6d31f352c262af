// The CLI's side of a GPU worker: starts it, sends requests, and turns a worker that crashed or
// hung into a record for that one kernel (runtime_error / timeout) before handing the next request
// to a fresh one: a spare, one of the workers kept started beside the active one (set_spares), or
// else one started at once.
#pragma once

#include <map>
#include <memory>
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

  // Keeps up to `n` started spare workers beside the active one (none unless set; the session
  // sets it from `workers.spares`): once the active worker is ready, one spare starts; when a
  // kernel crashes or hangs the active worker, the ready spare started first takes the next
  // request at once while the broken worker is killed and reaped in the background, and spares
  // start in every empty slot, so that from the first fault on `n` are started or starting. Each
  // spare holds one more CUDA context and libtorch's host memory, and allocates nothing else until
  // it takes over.
  void set_spares(int n);
  // Starts the process without waiting for it (its libtorch load overlaps with compiling).
  void spawn();
  // Waits for the worker's hello. False (with *error) when there is no usable GPU, or the worker
  // speaks another protocol version.
  bool wait_ready(std::string* error, double timeout_s = 180);
  // (Before the first hello: a device of no name.)
  const DeviceInfo& device() const { return hello_.device ? *hello_.device : kNoDevice; }
  // The record's `device` object: the hello's device and the GPU index.
  nlohmann::json device_json() const;
  // The record's `versions` (torch, cuda, driver).
  nlohmann::json versions_json() const {
    return hello_.versions.value_or(std::map<std::string, std::string>{});
  }
  std::string uuid() const { return hello_.uuid.value_or(""); }
  // The CUDA_VISIBLE_DEVICES entry this worker runs with (its GPU, as the system names it).
  std::string device_entry() const;
  int gpu() const { return gpu_; }

  // Grades one kernel. A hang past `timeout_s` or a dead worker yields a timeout /
  // runtime_error answer, and a fresh worker is started at once for the next request.
  EvalAnswer eval(const EvalRequest& req, double timeout_s);
  // A bench request (BenchDeviceRequest / BenchReferenceRequest, serialised).
  BenchAnswer bench(const nlohmann::json& req, double timeout_s);
  int restarts() const { return restarts_; }
  // Of the restarts, those where a started spare took over.
  int spare_takeovers() const { return spare_takeovers_; }
  // The ms the grader waited for replacement workers' hellos, all restarts together (the cost of
  // the restarts on the critical path; 0 when every spare was ready before it was needed).
  double restart_wait_ms() const { return restart_wait_ms_; }
  // Worker processes started so far (the active ones and the spares).
  int starts() const { return starts_; }
  // Which worker process answered the last request: 1 for the first started, then in start
  // order (spares included).
  int last_worker() const { return last_worker_; }
  // Waits up to `timeout_s` for the hello of every spare started; true when at least one runs and
  // all that run are ready to take over. A spare that did not say hello in time is killed, unless
  // `glance` (a look that may come early).
  bool spare_ready(double timeout_s, bool glance = false);
  // Spare workers running now (started, ready or not).
  int spares_running() const;
  // The last request's round trip in ms, not counting a wait for the worker to start.
  double last_request_ms() const { return last_request_ms_; }

  // The start of the worker that answered the last request, when that request was the first it
  // answered: the ms the grader waited for its hello (its start overlaps other work: 0 when it
  // was ready before it was needed), and the worker's own breakdown (Hello::startup_ms).
  // Reported once per worker start.
  struct Start {
    double ms = 0;
    std::map<std::string, double> phases;
    bool spare = false;  // the worker was started as a spare and took over after a restart
  };
  std::optional<Start> take_start();

 private:
  // Sends one request line and reads the answer line; nullopt with *failure filled when the
  // worker hung or died (it is then killed, and restarted by the next request).
  std::optional<nlohmann::json> exchange(const nlohmann::json& req, double timeout_s,
                                         EvalAnswer* failure);
  // Kills the worker (if still running) without waiting for its teardown, and hands the next
  // request to the spare (a new spare is started) or to a fresh worker started now.
  void restart();
  // One worker process: its pipes, its log file (stderr) and its place in start order.
  struct Proc {
    LineProcess io;
    std::string log_file;
    int serial = 0;
    std::optional<Hello> hello;  // read, checked (a spare's, before it takes over)
    double hello_wait_ms = 0;
  };
  // Starts a worker process in `p`; a spare (`spare`) warms up before its hello (--warm-up).
  void start(Proc& p, const char* slot, bool spare = false);
  // Reads and checks `p`'s hello within `timeout_s`; false with *error when it did not come or
  // the worker cannot grade (its process is then killed; not for a `glance` that times out).
  bool read_hello(Proc& p, double timeout_s, std::string* error, bool glance = false);
  // Starts a worker in every spare slot that has none (in the first only, before any restart).
  void start_spares();
  // The spare to take over: the first started of those whose hello is read, else the first
  // started; nullptr when none runs.
  std::unique_ptr<Proc>* next_spare();
  // The last kLogTailBytes of the worker's output (stderr, where device printf output lands too)
  // while grading the current request; the record caps it further (records.worker_log_bytes).
  std::string log_tail() const;
  static constexpr long kLogTailBytes = 64 * 1024;
  int gpu_;
  std::string exe_;
  std::unique_ptr<Proc> active_ = std::make_unique<Proc>();
  std::vector<std::unique_ptr<Proc>> spares_;
  bool promoted_ = false;  // the active worker started as a spare
  bool ready_ = false;
  Hello hello_;
  static inline const DeviceInfo kNoDevice{};
  std::optional<Start> unsent_start_;  // the running worker's start, before its first request
  std::optional<Start> last_start_;    // the start of the worker the last request went to
  double last_request_ms_ = 0;
  int restarts_ = 0;
  int spare_takeovers_ = 0;
  double restart_wait_ms_ = 0;
  int starts_ = 0;
  int last_worker_ = 0;
};

}  // namespace kernrl
