// The kernrl-triton child (src/triton): where the Python that has Triton is, what its sandbox
// lets it read and execute, the checks that the sandbox holds, and a pool of compile servers that
// have imported Triton and warmed it up and fork a fresh, further confined process per compile (a
// compile pays neither for the import nor for Triton's first-compile set-up).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compile/child.h"
#include "core/config.h"

namespace kernrl {

// No Python with Triton could be found or started (a property of the grading machine).
struct TritonUnavailable : UsageError {
  using UsageError::UsageError;
};

// What `--discover` found: Triton's version, folder and ptxas.
struct TritonInstall {
  std::string python;  // the interpreter kernrl runs
  std::string version;
  std::string dir;
  std::string ptxas;
  nlohmann::json setup;  // the launcher's --setup (read/exec lists, helper, pythonpath)
};

// The Pythons kernrl tries for Triton, in order: config triton.python, else
// $KERNRL_TRITON_PYTHON (either alone), else those of /usr/bin/python3, /usr/local/bin/python3 and
// python3 in each absolute folder of $PATH that no one else may write into, those that exist (each
// path once; a virtual environment's python3 is its own even where it links to the system's).
// triton_install uses the first that has Triton.
std::vector<std::string> triton_pythons(const Config& cfg);
// The first of them; "" when none exists.
std::string triton_python(const Config& cfg);

// Finds Triton (once per process and configuration). Throws TritonUnavailable saying what is
// missing and how to point kernrl at a Python with Triton.
const TritonInstall& triton_install(const Config& cfg);

// Throws SandboxError unless kernrl-triton's sandbox holds here (checked once per process).
void require_triton_sandbox(const Config& cfg);
// The check's answer: {"ok", "checks", "error"}.
nlohmann::json triton_sandbox_check(const Config& cfg);

// One compile in a process forked by a compile server (from the pool when one is idle).
struct TritonChildResult {
  enum Outcome { Answered, Timeout, Crashed } outcome = Crashed;
  nlohmann::json answer;   // the helper's answer line when Answered
  std::string error;       // Timeout and Crashed: one line
  std::string log;         // the child's stderr (its tail)
  double wait_ms = 0;      // of the compile's time, waiting for Triton's import to finish
  double import_ms = -1;   // the server's own import of Triton, when this compile started it
  double warm_up_ms = -1;  // the server's warm-up compile, when this compile started it
};
TritonChildResult run_triton(const nlohmann::json& request, const Config& cfg);

}  // namespace kernrl
