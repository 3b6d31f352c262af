// The status of a graded kernel: the one list every process, record, report and document uses.
// Stable: a status is only ever added (the trace schema's minor change), never renamed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernrl {

enum class Status {
  Correct,        // compiled, ran, matched the reference on every trial
  Incorrect,      // ran, but an output differed (or an input was written, or a rerun differed)
  Compiled,       // compiled; nothing ran (--compile-only, no GPU)
  FormatError,    // no kernel file could be read out of the answer, or its launch block is wrong
  CompileError,   // NVRTC rejected the source (or the compile hit its timeout or memory limit)
  LaunchError,    // a launch configuration cannot run (before or at launch)
  RuntimeError,   // the kernel faulted (illegal address, trap...) or the worker died running it
  Timeout,        // a run did not finish within the deadline
  InternalError,  // the grader itself failed on this kernel (not the kernel's fault; no reward)
};

inline constexpr Status kAllStatuses[] = {
    Status::Correct,      Status::Incorrect,    Status::Compiled,
    Status::FormatError,  Status::CompileError, Status::LaunchError,
    Status::RuntimeError, Status::Timeout,      Status::InternalError};

// "correct", "incorrect", "compiled", "format_error", "compile_error", "launch_error",
// "runtime_error", "timeout", "internal_error".
const char* to_string(Status s);
std::optional<Status> status_from_string(std::string_view name);

}  // namespace kernrl
