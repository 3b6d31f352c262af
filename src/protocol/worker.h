// The messages between kernrl (the grading library) and kernrl-worker, one JSON object per line
// in each direction (docs/protocol.md). Torch- and CUDA-free, so both sides include it. Every
// message is a typed object (protocol/field.h): its visit() is its one serializer and its one
// parser, which reads strictly (a missing required key or a value of the wrong type is a
// ProtocolError naming the key); tests/fixtures/protocol/ holds the bytes each must write.
//
//   worker -> kernrl   Hello (once, at start-up)
//   kernrl -> worker   EvalRequest | BenchDeviceRequest | BenchReferenceRequest | Quit
//   worker -> kernrl   EvalAnswer (for eval) | BenchAnswer (for both bench requests)
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/expr.h"
#include "protocol/field.h"
#include "protocol/launch_plan.h"
#include "protocol/parts.h"
#include "protocol/status.h"

namespace kernrl {

// Bumped whenever a message changes shape; kernrl refuses a worker of another version.
constexpr int kWorkerProtocol = 7;

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

// Values with a serializer of their own (the config in core/, the launch plan, the device) inside
// a message: read through their from_json (a value it refuses is of the wrong type), written
// through their to_json.
template <class T>
struct OwnSerializerCodec {
  static Decoded decode(const nlohmann::json& j, T& out) {
    try {
      out = T::from_json(j);
      return Decoded::Exact;
    } catch (const std::exception&) {
      return Decoded::No;
    }
  }
  static nlohmann::json encode(const T& v) { return v.to_json(); }
  static void escape(T&) {}
};
template <>
struct Codec<Config> : OwnSerializerCodec<Config> {};
template <>
struct Codec<LaunchPlan> : OwnSerializerCodec<LaunchPlan> {};
template <>
struct Codec<DeviceInfo> : OwnSerializerCodec<DeviceInfo> {};

// The worker's first line. A worker with a usable GPU sets `device`, `uuid`, `versions` and
// `startup_ms`; one without sets `error`. A hello without `protocol` is an old worker's (0).
struct Hello : RecordObject {
  Field<bool> hello;
  Field<int> protocol;
  Field<std::string> build_id;  // the kernrl version the worker was built as
  Field<std::string> error;     // when not ok: why this worker has no usable GPU
  Field<DeviceInfo> device;
  Field<std::string> uuid;  // the GPU's UUID ("GPU-8c9f..."), for NVML; empty when unknown
  Field<std::map<std::string, std::string>> versions;  // torch, cuda, driver
  // Where the worker's start went, in ms: `exec` (process start to main: loading libtorch),
  // `cuda_init`, `context` (the GPU's primary context), `torch` (torch's CUDA state). Optional.
  Field<std::map<std::string, double>> startup_ms;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("hello", s.hello, required);
    v("protocol", s.protocol);
    v("build_id", s.build_id);
    v("error", s.error);
    v("device", s.device);
    v("uuid", s.uuid);
    v("versions", s.versions);
    v("startup_ms", s.startup_ms);
  }
  bool ok() const { return hello.value_or(false); }
  int protocol_version() const { return protocol.value_or(0); }
  nlohmann::json to_json() const;
  // Strict; a hello that is ok must carry `device` and `versions`.
  static Hello from_json(const nlohmann::json& j);
};

// Evaluate one compiled kernel file. The keys marked required have no default.
struct EvalRequest : RecordObject {
  Field<std::string> cmd = std::string("eval");
  Field<std::string> problem_dir;
  Field<std::string> cubin;                           // the compiled kernel (the compile cache)
  Field<std::map<std::string, std::string>> lowered;  // kernel name -> mangled name
  // Triton: the kernel names of the plan each in a cubin of its own (kernel name -> cubin path);
  // absent for a CUDA file, whose kernels are all in `cubin`.
  Field<std::map<std::string, std::string>> modules;
  Field<LaunchPlan> plan;
  Field<Vars> sizes = nullptr;  // --size overrides merged over bench: the only size set
  Field<uint64_t> seed;
  Field<Config> cfg;
  Field<bool> time = true;
  Field<trace::Stats> baseline = nullptr;  // reuse this baseline timing instead of measuring
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("cmd", s.cmd, required);
    v("problem_dir", s.problem_dir, required);
    v("cubin", s.cubin, required);
    v("lowered", s.lowered, required);
    v("modules", s.modules);
    v("plan", s.plan, required);
    v("sizes", s.sizes);
    v("seed", s.seed, required);
    v("config", s.cfg, required);
    v("time", s.time);
    v("baseline", s.baseline);
  }
  nlohmann::json to_json() const;
  // Strict; throws as well for a request of another command.
  static EvalRequest from_json(const nlohmann::json& j);
};

struct BenchDeviceRequest : RecordObject {
  Field<std::string> cmd = std::string("bench_device");
  Field<int> repeats = 1;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("cmd", s.cmd, required);
    v("repeats", s.repeats);
  }
  nlohmann::json to_json() const;
  static BenchDeviceRequest from_json(const nlohmann::json& j);
};

struct BenchReferenceRequest : RecordObject {
  Field<std::string> cmd = std::string("bench_reference");
  Field<std::string> problem_dir;
  Field<Config> cfg;
  Field<uint64_t> seed = uint64_t{1};
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("cmd", s.cmd, required);
    v("problem_dir", s.problem_dir, required);
    v("config", s.cfg, required);
    v("seed", s.seed);
  }
  nlohmann::json to_json() const;
  static BenchReferenceRequest from_json(const nlohmann::json& j);
};

// {"cmd":"quit"}: the worker exits.
nlohmann::json quit_request();
// The "cmd" of a request line: "eval", "bench_device", "bench_reference", "quit".
std::string request_command(const nlohmann::json& j);

// The worker's choice among the @triton.autotune configs of one tuning group
// (LaunchSpec::tune_group): the config kept and each config's median time at the bench size
// (null: not tried, or it could not be launched).
struct AutotuneChoice : RecordObject {
  Field<std::string> group;
  Field<int> config;
  Field<std::vector<std::optional<double>>> times_ms;  // indexed by config
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("group", s.group, required);
    v("config", s.config, required);
    v("times_ms", s.times_ms, required);
  }
};

// The worker's answer to an eval request. Its parts are the record's (protocol/parts.h): the
// grader completes them and the record carries them as they are. Written and read through visit()
// (read strictly: from_json throws ProtocolError naming a missing or mistyped key). A default
// member initializer is the wire default of a key a worker may leave out; the others are absent
// until set, and written only when set.
struct EvalAnswer : RecordObject {
  Field<Status> status;
  Field<trace::Error> error = nullptr;  // null when nothing went wrong
  // The record's `correctness` (docs/trace-format.md): passed through as JSON.
  Field<nlohmann::json> correctness;
  Field<trace::Timing> timing;
  Field<std::map<std::string, double>> phases_ms = std::map<std::string, double>{};  // the
  // worker's share of the record's `grader` object
  Field<std::vector<trace::Launch>> launches;  // the record's `launches`; absent when not gathered
  Field<trace::Watchdog> watchdog;             // absent when no run was armed
  // Triton: the configs kept; absent when none was tuned
  Field<std::vector<AutotuneChoice>> autotune;
  Field<bool> fatal = false;  // the CUDA context is unusable: the worker exits after this answer
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("status", s.status, required);
    v("error", s.error);
    v("correctness", s.correctness);
    v("timing", s.timing);
    v("phases_ms", s.phases_ms);
    v("launches", s.launches);
    v("watchdog", s.watchdog);
    v("autotune", s.autotune);
    v("fatal", s.fatal);
  }
  bool status_is(Status st) const { return status && *status == st; }
  // (A Field<bool> tests whether it has a value, not the value: this reads the value.)
  bool is_fatal() const { return fatal.value_or(false); }
  nlohmann::json to_json() const;
  static EvalAnswer from_json(const nlohmann::json& j);
};

// The answer to either bench request.
struct BenchAnswer : RecordObject {
  Field<bool> ok = false;
  Field<std::string> error;  // when !ok
  // bench_device: {"device", "ceilings", "repeats"}; bench_reference: {"problem", "baseline"}
  Field<nlohmann::json> result = nullptr;
  Field<bool> fatal = false;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("ok", s.ok, required);
    v("error", s.error);
    v("result", s.result);
    v("fatal", s.fatal);
  }
  // (A Field<bool> tests whether it has a value, not the value: these read the value.)
  bool succeeded() const { return ok.value_or(false); }
  bool is_fatal() const { return fatal.value_or(false); }
  nlohmann::json to_json() const;
  static BenchAnswer from_json(const nlohmann::json& j);
};

}  // namespace kernrl
