// One file's CPU steps (extract -> parse -> compile), and its record completed with the GPU
// worker's answer. The session (session.h) schedules these; they run in the kernrl process.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "compile/compiler.h"
#include "core/config.h"
#include "core/errors.h"
#include "core/problem.h"
#include "core/safe_text.h"
#include "grading/convert.h"
#include "parse/launch_block.h"
#include "protocol/worker.h"
#include "record/reward.h"
#include "record/trace_record.h"

namespace kernrl {

struct GradeOptions {
  std::string problem;              // --problem (or grade-dir: the problem the file's path names);
                                    // empty: from the launch block or the file's path
  bool problem_from_path = false;   // `problem` came from grade-dir's layout, not from the user
  bool regular_files_only = false;  // grade-dir: never open a FIFO or device found in DIR
  std::optional<Vars> sizes;        // --size overrides (merged over the bench sizes)
  // The problems folder `problem` is looked up in (a suite's, for a service that offers suites
  // beside the default problems); empty: the process's (problems_dir()).
  std::string problems_root;
  uint64_t seed = 0;
  bool compile_only = false;
  std::string run;            // grade-dir run name
  std::optional<int> sample;  // grade-dir sample number
  // The conversion stage (convert.h): a file one of these reads is converted into a kernel file
  // first. None: every file is read as a kernel file or a model's answer.
  Converters converters;
};

// A file after the CPU steps. `done` records are final (format/compile errors, compile-only).
struct Prepared {
  TraceRecord record;
  bool done = false;
  ProblemSpec problem;
  LaunchPlan plan;
  CompileResult compiled;
  double cpu_ms = 0;
  // Non-empty when the file could not be graded because of kernrl's own inputs (an unreadable
  // file, an unknown --problem): the record says why, and `eval` exits 2.
  std::string usage_error;
  RecordLimits limits;  // from the config: caps on the record's logs and messages
  // Triton: each autotuning group and the keys of its kernels in the record's compile.kernels.
  std::map<std::string, std::vector<std::string>> tune_groups;
};

// Which problem a file is for: the option, the launch block, then its path
// (.../<problem id>/file, problems/L1/23_Softmax/file, L1_23_Softmax.cu, level_1_problem_23_...).
std::string resolve_problem_id(const std::string& file, const std::string& option,
                               const std::string& from_block);

// Extract, parse and compile (thread-safe). `arch` is the target, `num_sms` for checking
// expressions. Never throws for anything about the file: an unreadable file, an unknown problem or
// bytes that are not UTF-8 give a complete record (problem or `problem_unknown`, source_sha256,
// status, error).
Prepared prepare_file(const std::string& file, const GradeOptions& opt, const Config& cfg,
                      const std::string& arch, int64_t num_sms);
// The same for an answer's text; `label` is the record's `file` (never opened).
Prepared prepare_source(const std::string& text, const std::string& label, const GradeOptions& opt,
                        const Config& cfg, const std::string& arch, int64_t num_sms);

// The caps of the config's `records:` section.
RecordLimits record_limits(const Config& cfg);

// A run seed from the command line: a decimal integer from 0 to 2^64-1. Throws UsageError naming
// the option otherwise (no silent saturation, no sign wrap-around).
uint64_t parse_seed(const std::string& text, const std::string& option = "--seed");

// Completes compile.kernels[].autotune of `r` with the worker's choices: the config kept, `timed`
// true and each config's time; the kernel's num_warps, num_stages, num_ctas, shared and constexprs
// become the kept config's.
void apply_autotune(TraceRecord& r, const std::map<std::string, std::vector<std::string>>& groups,
                    const std::vector<AutotuneChoice>& choices);

// Completes a record with the worker's answer (or marks it not run) and adds the derived fields;
// the record's text is made valid UTF-8 and its logs and messages capped (bound_record).
void complete_record(Prepared& p, const EvalAnswer* worker_answer, const nlohmann::json& device,
                     const nlohmann::json& versions, const RewardPreset& preset,
                     const nlohmann::json& ceilings, const std::string& not_run_reason);

}  // namespace kernrl
