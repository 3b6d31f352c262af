// The messages between kernrl (the grading library) and kernrl-worker, one JSON object per line
// in each direction (docs/protocol.md). Torch- and CUDA-free, so both sides include it; each
// message has exactly one serializer (to_json) and one parser (from_json), and a round-trip test.
//
//   worker -> kernrl   Hello (once, at start-up)
//   kernrl -> worker   EvalRequest | BenchDeviceRequest | BenchReferenceRequest | Quit
//   worker -> kernrl   EvalAnswer (for eval) | BenchAnswer (for both bench requests)
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/expr.h"
#include "protocol/launch_plan.h"
#include "protocol/status.h"

namespace kernrl {

// Bumped whenever a message changes shape; kernrl refuses a worker of another version.
constexpr int kWorkerProtocol = 5;

// The GPU a worker drives, as its hello reports it (and records carry it as `device`).
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  uint64_t l2_bytes = 0;
  uint64_t memory_bytes = 0;
  int driver = 0;            // cuDriverGetVersion
  std::string arch() const;  // sm_90a, sm_89, ... ("a": arch-specific features on sm_90+)
  nlohmann::json to_json() const;
  static DeviceInfo from_json(const nlohmann::json& j);
};

struct Hello {
  bool ok = false;
  std::string error;  // when !ok: why this worker has no usable GPU
  int protocol = kWorkerProtocol;
  std::string build_id;  // the kernrl version the worker was built as
  DeviceInfo device;
  std::string uuid;  // the GPU's UUID ("GPU-8c9f..."), for NVML; empty when unknown
  std::map<std::string, std::string> versions;  // torch, cuda, driver
  // Where the worker's start went, in ms: `exec` (process start to main: loading libtorch),
  // `cuda_init`, `context` (the GPU's primary context), `torch` (torch's CUDA state). Optional.
  std::map<std::string, double> startup_ms;
  nlohmann::json to_json() const;
  static Hello from_json(const nlohmann::json& j);
};

struct EvalRequest {
  std::string problem_dir;
  std::string cubin;                           // path of the compiled kernel (the compile cache)
  std::map<std::string, std::string> lowered;  // kernel name -> mangled name
  // Triton: the kernel names of the plan each in a cubin of its own (kernel name -> cubin path);
  // empty for a CUDA file, whose kernels are all in `cubin`.
  std::map<std::string, std::string> modules;
  LaunchPlan plan;
  std::optional<Vars> sizes;  // --size overrides merged over bench: the only size set
  uint64_t seed = 0;
  Config cfg;
  bool time = true;
  std::optional<nlohmann::json> baseline;  // reuse this baseline timing instead of measuring
  nlohmann::json to_json() const;
  static EvalRequest from_json(const nlohmann::json& j);
};

struct BenchDeviceRequest {
  int repeats = 1;
  nlohmann::json to_json() const;
  static BenchDeviceRequest from_json(const nlohmann::json& j);
};

struct BenchReferenceRequest {
  std::string problem_dir;
  Config cfg;
  uint64_t seed = 1;
  nlohmann::json to_json() const;
  static BenchReferenceRequest from_json(const nlohmann::json& j);
};

// {"cmd":"quit"}: the worker exits.
nlohmann::json quit_request();
// The "cmd" of a request line: "eval", "bench_device", "bench_reference", "quit".
std::string request_command(const nlohmann::json& j);

// A failed step, as records carry it in `error` (category = the status).
struct ErrorInfo {
  Status category = Status::InternalError;
  std::string message;
  int line = 0;     // line in the submitted file, 0 when none
  std::string log;  // compiler log or worker output
  nlohmann::json to_json() const;
  static ErrorInfo from_json(const nlohmann::json& j, Status fallback);
};

// Theoretical occupancy of one launch: how many of its blocks one SM holds at once
// (cuOccupancyMaxActiveBlocksPerMultiprocessor) and which resource stops it holding more.
struct LaunchOccupancy {
  int active_blocks_per_sm = 0;
  int active_warps_per_sm = 0;
  int max_warps_per_sm = 0;
  double fraction = 0;  // active_warps_per_sm / max_warps_per_sm
  // The resources whose limit equals active_blocks_per_sm: "registers", "shared_memory", "warps"
  // (the block's size against the SM's warp slots), "blocks" (the SM's block slots); "other" when
  // none does (a limit kernrl does not compute, such as barriers).
  std::vector<std::string> limited_by;
  std::map<std::string, int> block_limits;  // blocks per SM each resource allows (the four above)
  nlohmann::json to_json() const;
  static LaunchOccupancy from_json(const nlohmann::json& j);
};

// What the worker found about one launch of the plan at the timed size: the record's `launches`.
struct LaunchFacts {
  int index = 0;  // 1-based position in the launch block
  std::string kernel;
  int line = 0;         // the launch's line in the submitted file
  int64_t repeats = 1;  // kernel launches of this entry at these sizes (`repeat`); 0: none
  // The first repetition's configuration (every field below is absent when repeats is 0).
  std::array<unsigned, 3> grid{{1, 1, 1}}, block{{1, 1, 1}};
  std::array<unsigned, 3> cluster{{0, 0, 0}};  // {0,0,0}: no cluster
  int64_t dynamic_shared_bytes = 0;
  // cuFuncGetAttribute of the kernel.
  int registers = 0;            // per thread
  int local_bytes = 0;          // local memory per thread: register spills and local arrays
  int static_shared_bytes = 0;  // per block
  int max_threads_per_block = 0;
  std::optional<LaunchOccupancy> occupancy;
  // From one untimed run of the plan with events between its launches: this entry's time (all its
  // repetitions) and its share of the plan's time. Absent when that run was not made.
  std::optional<double> ms, share;
  nlohmann::json to_json() const;
  static LaunchFacts from_json(const nlohmann::json& j);
};

// The record's `launches` array.
nlohmann::json launches_to_json(const std::vector<LaunchFacts>& launches);

struct EvalAnswer {
  Status status = Status::InternalError;
  std::optional<ErrorInfo> error;
  nlohmann::json correctness;  // the record's `correctness` object (docs/trace-format.md) or null
  nlohmann::json timing;       // the record's `timing` object or null
  std::map<std::string, double> phases_ms;  // the worker's share of the record's `grader` object
  std::vector<LaunchFacts> launches;        // the record's `launches`; empty when not gathered
  nlohmann::json
      watchdog;        // the record's `watchdog` (core/run_bound.h); null when no run was armed
  bool fatal = false;  // the CUDA context is unusable: the worker exits after this answer
  nlohmann::json to_json() const;
  static EvalAnswer from_json(const nlohmann::json& j);
};

struct BenchAnswer {
  bool ok = false;
  std::string error;
  nlohmann::json result;  // bench_device: {"ceilings"}; bench_reference: {"problem","baseline"}
  bool fatal = false;
  nlohmann::json to_json() const;
  static BenchAnswer from_json(const nlohmann::json& j);
};

}  // namespace kernrl
