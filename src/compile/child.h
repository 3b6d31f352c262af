// The child call: a compile in a sandboxed child of the kernrl-nvrtc fork server (server.h), or,
// with `compile.server` off or the server unusable, kernrl-nvrtc run once per compile; either way
// with an empty environment, in an empty directory, under the config's time, memory and output
// limits, spoken to in the messages of protocol/compiler.h. Also the checks that its sandbox holds
// on this machine.
#pragma once

#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "protocol/compiler.h"

namespace kernrl {

// The compiler's OS sandbox cannot be set up (a property of the grading machine, not of a kernel).
struct SandboxError : UsageError {
  using UsageError::UsageError;
};

// What one run of kernrl-nvrtc gave.
struct ChildCompile {
  enum Outcome {
    Answered,  // it answered: `answer` (and `cubin` when the answer is ok)
    Timeout,   // it did not finish within cfg.compile_timeout_s and was killed
    Crashed,   // it died, or wrote no answer (out of memory, too much output, a bad answer)
  } outcome = Crashed;
  CompileAnswer answer;
  std::string cubin;
  std::string error;  // Timeout and Crashed: the reason, one line
  // The precompiled header (protocol/compiler.h, ServerReply::pch): "used", "seen", "building",
  // "none", "failed", "full"; "off" when the compile ran in a process of its own.
  std::string pch = "off";
};

// Compiles `request` in a kernrl-nvrtc child; `pch` names the headers a precompiled header may
// cover (include_gate.h, pch_headers). Throws SandboxError when the child could not enter its
// sandbox.
ChildCompile run_compiler(const CompileRequest& request, const std::vector<std::string>& pch,
                          const Config& cfg);

// Why kernrl-nvrtc's sandbox does not hold on this machine (empty when it does, or when
// cfg.compile_sandbox is off). Checked once per process by entering it and trying to escape.
std::string sandbox_check(const Config& cfg);

// Throws SandboxError unless the sandbox holds (or is switched off in the config).
void require_sandbox(const Config& cfg);

// NVRTC's version as "13.0" (asked of kernrl-nvrtc once per process); "unknown" if it fails.
std::string nvrtc_version();

}  // namespace kernrl
