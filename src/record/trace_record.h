// The trace record (schema kernrl.trace.v1, docs/trace-format.md) as a type: the one shape the
// pipeline fills (grading/prepare.cpp, record/record.cpp, grading/session.cpp), one serializer
// (to_json: exactly the JSON kernrl has always written) and one tolerant reader (from_json) that
// `report`, the KernelBench writer, `export`, `grade-dir --resume` and `serve` share.
//
// The reader never throws: a missing field is absent, a field of an unexpected type is kept as
// read and reads as no value (record/field.h), and keys it does not know (fields of a later kernrl,
// or added by hand) are kept in `extra`; to_json writes all of it back, so reading and writing a
// record gives its text back byte for byte (tests/unit/test_trace_record.cpp). Keys are written in
// nlohmann::json's order (sorted), numbers as nlohmann::json writes them.
//
// Adding a field: a member here, a line in visit() (its key), a row in docs/trace-format.md
// (the unit test checks the two agree).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "record/field.h"
#include "record/safe_text.h"

namespace kernrl {

constexpr const char* kTraceSchema = "kernrl.trace.v1";
constexpr int kKernelFormatVersion = 1;

// The record's objects. Each keeps the keys it does not know in `extra` (RecordObject).
namespace trace {

// `converted`: a KernelBench module (.py) converted before grading.
struct Converted : RecordObject {
  Field<std::string> from;  // "kernelbench"
  Field<std::vector<std::string>> notes;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("from", s.from);
    v("notes", s.notes);
  }
};

// `wrapper_plan`: a Triton answer's launch plan derived from its host wrapper (no launch block).
struct WrapperPlan : RecordObject {
  Field<std::string> cls;           // "class": ModelNew or Model
  Field<std::string> launch_block;  // the derived launch block (YAML)
  Field<std::vector<std::string>> notes;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("class", s.cls);
    v("launch_block", s.launch_block);
    v("notes", s.notes);
  }
};

// `problem_unknown`: why `problem` is null.
struct ProblemUnknown : RecordObject {
  Field<std::string> reason;  // unknown_problem | not_named | unreadable
  Field<std::string> named;   // the name given, or null
  Field<std::string> from;    // option | path | launch_block, or null
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("reason", s.reason);
    v("named", s.named);
    v("from", s.from);
  }
};

// `error`: what went wrong (category = the status).
struct Error : RecordObject {
  Field<Status> category;
  Field<std::string> message;
  Field<int> line;         // in the submitted file; absent when none
  Field<std::string> log;  // the compiler's log, or the GPU worker's output
  Field<uint64_t> message_cut_bytes, log_cut_bytes;  // bytes cut by the caps (bound_record)
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("category", s.category);
    v("message", s.message);
    v("line", s.line);
    v("log", s.log);
    v("message_cut_bytes", s.message_cut_bytes);
    v("log_cut_bytes", s.log_cut_bytes);
  }
};

// `compile`: NVRTC's part.
struct Compile : RecordObject {
  Field<double> ms;
  Field<std::string> arch;
  Field<bool> cached;
  Field<std::string> nvrtc;
  // A compile that ran in a child of the kernrl-nvrtc fork server: its precompiled header
  // ("used", "seen", "building", "none", "failed", "full"; protocol/compiler.h, ServerReply::pch).
  Field<std::string> pch;
  Field<std::string> log;  // warnings of a file that compiled
  Field<uint64_t> log_cut_bytes;
  Field<std::string> triton;  // Triton's version (Triton files)
  // Triton files: each compiled kernel {key, kernel, num_warps, num_stages, num_ctas, shared,
  // constexprs, autotune?}; JSON passed through for the reader. `autotune` is completed from the
  // worker's answer (apply_autotune, grading/prepare.h).
  Field<nlohmann::json> kernels;
  // Triton files compiled afresh: where the compile's time went {wait_ms, import_ms, load_ms,
  // compile_ms, compiles}.
  Field<nlohmann::json> triton_timing;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("ms", s.ms);
    v("arch", s.arch);
    v("cached", s.cached);
    v("nvrtc", s.nvrtc);
    v("pch", s.pch);
    v("triton", s.triton);
    v("kernels", s.kernels);
    v("triton_timing", s.triton_timing);
    v("log", s.log);
    v("log_cut_bytes", s.log_cut_bytes);
  }
};

// The statistics of timed runs (the worker's, or a baseline file's).
struct Stats : RecordObject {
  Field<double> median_ms, mean_ms, std_ms, min_ms, max_ms, mad_ms;
  Field<int> n;
  Field<double> rel_stderr;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("median_ms", s.median_ms);
    v("mean_ms", s.mean_ms);
    v("std_ms", s.std_ms);
    v("min_ms", s.min_ms);
    v("max_ms", s.max_ms);
    v("mad_ms", s.mad_ms);
    v("n", s.n);
    v("rel_stderr", s.rel_stderr);
  }
};

// `timing`: typed, although the worker writes it, because kernrl itself reads it in many places
// (speedup, speed of light, the suspicious flag, the summary, feedback, KernelBench's runtime):
// typed, a hand-edited `"median_ms": "fast"` reads as no time instead of throwing.
struct Timing : RecordObject {
  Field<std::map<std::string, int64_t>> sizes;
  Field<Stats> kernel, baseline;       // baseline: the PyTorch reference's
  Field<std::string> baseline_source;  // measured | reused | file:<path>
  // The problem's reference kernel as a second baseline (docs/grading.md, section 7).
  Field<Stats> kernel_baseline;
  Field<std::string> kernel_baseline_source;
  Field<std::string> speedup_baseline;       // "kernel": the problem's speedups are over it
  Field<std::string> kernel_baseline_error;  // why it was not timed, when wanted
  // The problem's PyTorch module under torch.compile, timed by a suite's baseline tool
  // (tools/suites/kb_baselines.py) into the baseline file: a third baseline, never the one
  // `speedup` is over (docs/grading.md, section 7).
  Field<Stats> compile_baseline;
  Field<std::string> compile_baseline_source;  // file:<path>
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("sizes", s.sizes);
    v("kernel", s.kernel);
    v("baseline", s.baseline);
    v("baseline_source", s.baseline_source);
    v("kernel_baseline", s.kernel_baseline);
    v("kernel_baseline_source", s.kernel_baseline_source);
    v("speedup_baseline", s.speedup_baseline);
    v("kernel_baseline_error", s.kernel_baseline_error);
    v("compile_baseline", s.compile_baseline);
    v("compile_baseline_source", s.compile_baseline_source);
  }
};

// `baseline`: which baseline `speedup` is against, and the speedup over each baseline timed.
struct Baseline : RecordObject {
  Field<std::string> kind;  // torch | kernel
  // torch, and kernel and compile (torch.compile) where they were timed
  Field<std::map<std::string, double>> speedups;
  Field<std::string> kernel_missing;  // wanted over the kernel, but it was not timed
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("kind", s.kind);
    v("speedups", s.speedups);
    v("kernel_missing", s.kernel_missing);
  }
};

// `throughput`: achieved rates at the kernel's median time.
struct Throughput : RecordObject {
  Field<double> gb_s, tflop_s;
  Field<std::string> unit;  // the problem's own unit of work (work.units)
  Field<double> units_per_s;
  Field<std::string> natural;  // the key of the problem's natural measure
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("gb_s", s.gb_s);
    v("tflop_s", s.tflop_s);
    v("unit", s.unit);
    v("units_per_s", s.units_per_s);
    v("natural", s.natural);
  }
};

// A launch's theoretical occupancy of one SM (`launches[].occupancy`).
struct Occupancy : RecordObject {
  Field<int> active_blocks_per_sm, active_warps_per_sm, max_warps_per_sm;
  Field<double> fraction;                      // active / max warps
  Field<std::vector<std::string>> limited_by;  // registers | shared_memory | warps | blocks | other
  Field<std::map<std::string, int>> block_limits;  // blocks per SM each resource allows
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("active_blocks_per_sm", s.active_blocks_per_sm);
    v("active_warps_per_sm", s.active_warps_per_sm);
    v("max_warps_per_sm", s.max_warps_per_sm);
    v("fraction", s.fraction);
    v("limited_by", s.limited_by);
    v("block_limits", s.block_limits);
  }
};

// One entry of `launches`: what one launch of the launch block is and costs at the timed size.
// Typed (the worker writes it, as protocol/worker.h's LaunchFacts) because the feedback reads it.
struct Launch : RecordObject {
  Field<int> index;  // 1-based position in the launch block
  Field<std::string> kernel;
  Field<int> line;
  Field<int64_t> repeats;                                    // 0: none ran, nothing below
  Field<std::vector<int64_t>> grid, block, cluster;          // [x, y, z]
  Field<int64_t> dynamic_shared_bytes, static_shared_bytes;  // per block
  Field<int64_t> registers, local_bytes;                     // per thread
  Field<int64_t> max_threads_per_block;
  Field<Occupancy> occupancy;
  Field<double> ms, share;  // one untimed run with events between the launches
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("index", s.index);
    v("kernel", s.kernel);
    v("line", s.line);
    v("repeats", s.repeats);
    v("grid", s.grid);
    v("block", s.block);
    v("cluster", s.cluster);
    v("dynamic_shared_bytes", s.dynamic_shared_bytes);
    v("static_shared_bytes", s.static_shared_bytes);
    v("registers", s.registers);
    v("local_bytes", s.local_bytes);
    v("max_threads_per_block", s.max_threads_per_block);
    v("occupancy", s.occupancy);
    v("ms", s.ms);
    v("share", s.share);
  }
};

// `work`: the problem's work at the timed size.
struct WorkUnits : RecordObject {
  Field<std::string> unit;  // problem.yaml `throughput`
  Field<int64_t> count;     // units of work at the timed size
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("unit", s.unit);
    v("count", s.count);
  }
};
struct Work : RecordObject {
  Field<int64_t> flops, bytes;
  Field<std::string> dtype_class;  // fp32 | fp16 | bf16 | int
  Field<WorkUnits> units;          // where the problem has a unit of its own
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("flops", s.flops);
    v("bytes", s.bytes);
    v("dtype_class", s.dtype_class);
    v("units", s.units);
  }
};

// `watchdog`: the deadline of one run of the launch plan (core/run_bound.h): the largest armed
// while grading, or the one that cut the run of a `timeout`.
struct Watchdog : RecordObject {
  Field<double> bound_s;
  Field<std::string> basis;  // reference | baseline | ceiling
  Field<double> reference_ms;
  Field<nlohmann::json> sizes;
  Field<double> grace_s;  // timeouts.fault_grace_s: how long past bound_s a fault was waited for
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("bound_s", s.bound_s);
    v("basis", s.basis);
    v("reference_ms", s.reference_ms);
    v("sizes", s.sizes);
    v("grace_s", s.grace_s);
  }
};

// `grader`: where the grader's time went, in ms.
struct Grader : RecordObject {
  Field<double> prepare_ms, queue_ms, worker_ms, total_ms;
  Field<std::map<std::string, double>> phases;        // the worker's phases that ran
  Field<double> profile_ms;                           // --profile: Nsight Compute's run
  Field<double> kernel_baseline_ms;                   // timing the problem's reference kernel
  Field<double> worker_start_ms;                      // waiting for a freshly started worker
  Field<std::map<std::string, double>> worker_start;  // that worker's start-up breakdown
  Field<bool> worker_spare;  // that worker was a started spare that took over after a restart
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("prepare_ms", s.prepare_ms);
    v("queue_ms", s.queue_ms);
    v("worker_start_ms", s.worker_start_ms);
    v("worker_start", s.worker_start);
    v("worker_spare", s.worker_spare);
    v("worker_ms", s.worker_ms);
    v("total_ms", s.total_ms);
    v("phases", s.phases);
    v("profile_ms", s.profile_ms);
    v("kernel_baseline_ms", s.kernel_baseline_ms);
  }
};

// `training`: the trainer's step and run an answer was graded for (docs/training.md).
struct Training : RecordObject {
  Field<int64_t> step;
  Field<std::string> run;
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("step", s.step);
    v("run", s.run);
  }
};

}  // namespace trace

struct TraceRecord : RecordObject {
  Field<std::string> schema;
  Field<int> kernel_format;
  Field<std::string> run;
  Field<int> sample;
  Field<std::string> file;
  Field<trace::Converted> converted;
  Field<trace::WrapperPlan> wrapper_plan;
  Field<std::string> problem;
  Field<trace::ProblemUnknown> problem_unknown;
  Field<int> level;
  Field<std::string> source_sha256;
  Field<std::string> language;  // "cuda" or "triton": the kernel file's language
  Field<Status> status;
  Field<bool> ran;
  Field<std::string> not_run_reason;
  Field<trace::Error> error;
  Field<trace::Compile> compile;
  // `correctness` stays JSON: the worker's per-trial report (trials, outputs, mismatches, first
  // mismatch with non-finite numbers as strings) is passed through whole, and kernrl reads only two
  // counts and the first failing output from it (correctness_counts(), record/feedback.cpp); a
  // typed copy would mirror src/worker's shape for no reader.
  Field<nlohmann::json> correctness;
  Field<trace::Timing> timing;
  Field<std::vector<trace::Launch>> launches;
  Field<trace::Watchdog> watchdog;
  Field<double> speedup;
  Field<trace::Baseline> baseline;
  Field<trace::Throughput> throughput;
  Field<trace::Work> work;
  Field<double> sol_ms, sol_fraction, baseline_sol_fraction;
  Field<bool> suspicious;
  Field<double> reward;
  Field<std::string> reward_preset;
  Field<int> reward_preset_version;
  Field<std::string> feedback;
  // `device` and `versions` stay JSON: the worker's hello (its DeviceInfo and version strings)
  // plus the GPU index and kernrl's own versions, passed through for the reader; kernrl reads only
  // the device's name, GPU index (KernelBench's metadata) and SM count (the launch advice).
  Field<nlohmann::json> device;
  Field<nlohmann::json> versions;
  Field<uint64_t> seed;
  Field<uint64_t> run_seed;
  Field<std::string> timestamp;
  Field<double> wall_ms;
  Field<trace::Grader> grader;
  // `profile` stays JSON: Nsight Compute's metrics as grading/profiler.cpp reads them from ncu's
  // output ({tool, launches: [...]} or {tool, error}), passed through for the reader; nothing in
  // kernrl reads them back.
  Field<nlohmann::json> profile;
  // Training (docs/training.md): the trajectory (an episode of several turns) and the turn
  // (1-based) an answer was, the trainer's step and run, and the retrieved examples its prompt
  // carried.
  Field<std::string> trajectory;
  Field<int> turn;
  Field<trace::Training> training;
  Field<std::vector<std::string>> prompt_examples;

  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("schema", s.schema);
    v("kernel_format", s.kernel_format);
    v("run", s.run);
    v("sample", s.sample);
    v("file", s.file);
    v("converted", s.converted);
    v("wrapper_plan", s.wrapper_plan);
    v("problem", s.problem);
    v("problem_unknown", s.problem_unknown);
    v("level", s.level);
    v("source_sha256", s.source_sha256);
    v("language", s.language);
    v("status", s.status);
    v("ran", s.ran);
    v("not_run_reason", s.not_run_reason);
    v("error", s.error);
    v("compile", s.compile);
    v("correctness", s.correctness);
    v("timing", s.timing);
    v("launches", s.launches);
    v("watchdog", s.watchdog);
    v("speedup", s.speedup);
    v("baseline", s.baseline);
    v("throughput", s.throughput);
    v("work", s.work);
    v("sol_ms", s.sol_ms);
    v("sol_fraction", s.sol_fraction);
    v("baseline_sol_fraction", s.baseline_sol_fraction);
    v("suspicious", s.suspicious);
    v("reward", s.reward);
    v("reward_preset", s.reward_preset);
    v("reward_preset_version", s.reward_preset_version);
    v("feedback", s.feedback);
    v("device", s.device);
    v("versions", s.versions);
    v("seed", s.seed);
    v("run_seed", s.run_seed);
    v("timestamp", s.timestamp);
    v("wall_ms", s.wall_ms);
    v("grader", s.grader);
    v("profile", s.profile);
    v("trajectory", s.trajectory);
    v("turn", s.turn);
    v("training", s.training);
    v("prompt_examples", s.prompt_examples);
  }

  // A record as every file's starts: schema, kernel format, run (null when empty), sample, file,
  // seed and timestamp; problem, level, source_sha256, error, compile, correctness and timing null;
  // status format_error and ran false until the pipeline knows better.
  static TraceRecord begin(const std::string& file, const std::string& run,
                           std::optional<int> sample, uint64_t seed);

  // The one serializer: the record as kernrl.trace.v1 JSON (the keys it does not know included).
  nlohmann::json to_json() const;
  // to_json() as one line of valid UTF-8 (record/trace_file.h's json_line).
  std::string to_line() const;
  // The one reader. Never throws; a `j` that is no object gives an empty record.
  static TraceRecord from_json(const nlohmann::json& j);

  // The status as written: a known status's name, else the record's own string ("" when none).
  std::string status_text() const;
  bool status_is(Status s) const { return status && *status == s; }
  // The run's name, or `none` when it has none.
  std::string run_or(const std::string& none) const;
  // correctness.n_passed and n_trials, when the record has them as whole numbers.
  std::optional<std::pair<int, int>> correctness_counts() const;
};

// Every record of a vector of JSON objects, read with TraceRecord::from_json.
std::vector<TraceRecord> records_from_json(const std::vector<nlohmann::json>& records);

// Makes a record safe to write: every string valid UTF-8 (bytes of invalid UTF-8 as `\xNN`), and
// the logs and the error message cut to `lim`, each cut noted beside it as `<field>_cut_bytes`
// (error.log_cut_bytes...). Idempotent. (docs/trace-format.md, "Text in records" and "Bounded
// outputs".)
void bound_record(TraceRecord& rec, const RecordLimits& lim);
// The same for a record as JSON (read, bounded and written back).
void bound_record(nlohmann::json& rec, const RecordLimits& lim);

}  // namespace kernrl
