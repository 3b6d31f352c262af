// kernrl's error model. Inside a process, errors are exceptions of two kinds: UsageError (kernrl's
// own inputs are wrong: options, config, problem specs, files it was told to read, the machine's
// set-up) and everything else (a bug in kernrl: an internal error). Across process boundaries
// errors are values (protocol/worker.h answers, compile results, records). One top-level handler
// (src/cli/main.cpp) turns them into the exit codes below.
#pragma once

#include <stdexcept>

namespace kernrl {

// Exit codes of every command (docs/cli.md).
constexpr int kExitOk = 0;          // success; `eval`: the kernel is correct
constexpr int kExitFail = 1;        // graded and not correct; a failed report gate; a run that
                                    // completed with files it could not read
constexpr int kExitUsage = 2;       // usage, config or set-up error: nothing was graded
constexpr int kExitNothingRan = 3;  // `eval`: compiled, but no GPU ran it (none usable)
constexpr int kExitInternal = 4;    // an internal error in kernrl (a bug: please report it)

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kernrl
