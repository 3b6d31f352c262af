// The parts of a grading result every process shares: the worker fills them (its answer,
// protocol/worker.h), the grader completes them (grading/), and the trace record
// (record/trace_record.h, schema kernrl.trace.v1) carries them as they are: `error`, `compile`,
// `timing` with its statistics, `launches` with their occupancy, `work`, `watchdog` and `grader`.
// One type each, read and written through its visit() (protocol/field.h): tolerantly by the
// record's reader, strictly by the worker protocol's (the keys marked `required`).
//
// Adding a field to one of them: a member and a line in its visit() here, and its row in the
// document of its object (docs/trace-format.md; tests/unit/test_trace_schema.cpp checks they
// agree). The worker and the record then carry it, the protocol's reader checks its type.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/run_bound.h"
#include "protocol/field.h"
#include "protocol/status.h"

namespace kernrl {
namespace trace {

// `error`: what went wrong (category = the status).
struct Error : RecordObject {
  Field<Status> category;
  Field<std::string> message;
  Field<int> line;         // in the submitted file; absent when none
  Field<std::string> log;  // the compiler's log, or the GPU worker's output
  Field<uint64_t> message_cut_bytes, log_cut_bytes;  // bytes cut by the caps (bound_record)
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("category", s.category, required);
    v("message", s.message, required);
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

// `timing`: the worker's times, completed by the grader (the sources of the baselines, the
// reference kernel's); read in many places (speedup, speed of light, the suspicious flag, the
// summary, feedback, KernelBench's runtime): a hand-edited `"median_ms": "fast"` reads as no time.
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

// A launch's theoretical occupancy of one SM (`launches[].occupancy`).
struct Occupancy : RecordObject {
  Field<int> active_blocks_per_sm, active_warps_per_sm, max_warps_per_sm;
  Field<double> fraction;                      // active / max warps
  Field<std::vector<std::string>> limited_by;  // registers | shared_memory | warps | blocks | other
  Field<std::map<std::string, int>> block_limits;  // blocks per SM each resource allows
  template <class Self, class V>
  static void visit(Self& s, V&& v) {
    v("active_blocks_per_sm", s.active_blocks_per_sm, required);
    v("active_warps_per_sm", s.active_warps_per_sm, required);
    v("max_warps_per_sm", s.max_warps_per_sm, required);
    v("fraction", s.fraction, required);
    v("limited_by", s.limited_by);
    v("block_limits", s.block_limits);
  }
};

// One entry of `launches`: what one launch of the launch block is and costs at the timed size.
// The worker fills it; the feedback reads it.
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
    v("index", s.index, required);
    v("kernel", s.kernel, required);
    v("line", s.line);
    v("repeats", s.repeats, required);
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
    v("bound_s", s.bound_s, required);
    v("basis", s.basis, required);
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

// An `error` as kernrl makes one: `line` and `log` only when there are any.
Error make_error(Status category, const std::string& message, int line = 0,
                 const std::string& log = "");

// The statistics of timed runs: median, mean, sample standard deviation, extremes, the median
// absolute deviation and the relative standard error of the mean. No samples: n 0, every time 0.
Stats stats_of(std::vector<double> ms);

// The `watchdog` of a run bound: its deadline, basis, reference time and size set.
Watchdog watchdog_of(const RunBound& bound);

}  // namespace trace
}  // namespace kernrl
