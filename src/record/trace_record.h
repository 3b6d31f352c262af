// The trace record (schema kernrl.trace.v1, docs/trace-format.md) as a type: the one shape the
// pipeline fills (grading/prepare.cpp, record/record.cpp, grading/session.cpp), one serializer
// (to_json: exactly the JSON kernrl has always written) and one tolerant reader (from_json) that
// `report`, the KernelBench writer, `export`, `grade-dir --resume` and `serve` share.
//
// The reader never throws: a missing field is absent, a field of an unexpected type is kept as
// read and reads as no value (protocol/field.h), and keys it does not know (fields of a later
// kernrl, or added by hand) are kept in `extra`; to_json writes all of it back, so reading and
// writing a record gives its text back byte for byte (tests/unit/test_trace_record.cpp). Keys are
// written in nlohmann::json's order (sorted), numbers as nlohmann::json writes them.
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

#include "core/safe_text.h"
#include "protocol/field.h"
#include "protocol/parts.h"
#include "protocol/status.h"

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
