// Step 3: compile a kernel file to a cubin with NVRTC, in a child process (timeout, memory limit),
// with an on-disk cache keyed by source, options, NVRTC version and arch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "extract/extract.h"

namespace kernrl {

struct CompileResult {
  enum Status { Ok, Error, Timeout, Crashed } status = Error;
  std::string log;       // NVRTC's log (errors and warnings), at most 1 MiB
  size_t log_bytes = 0;  // the log's full size before any cut
  std::string error;     // one-line reason when not Ok
  std::string cubin_path;
  std::map<std::string, std::string> lowered;  // launch-block kernel name -> symbol
  std::string arch;
  std::string nvrtc_version;
  double ms = 0;  // wall time of this call
  bool cached = false;
  bool ok() const { return status == Ok; }
};

// The compiler's OS sandbox cannot be set up (a property of the grading machine, not of a kernel).
struct SandboxError : UsageError {
  using UsageError::UsageError;
};

// Why kernrl-nvrtc's sandbox does not hold on this machine (empty when it does, or when
// cfg.compile_sandbox is off). Checked once per process by entering it and trying to escape.
std::string sandbox_check(const Config& cfg);

// Trims a compile cache to `max_bytes` of cubins: least recently used entries (cubin and its .json)
// go first, down to 80% of the bound. Returns the cubin bytes left. Compiles call it every 32
// stores.
uintmax_t trim_compile_cache(const std::filesystem::path& dir, uintmax_t max_bytes);

// Throws SandboxError unless the sandbox holds (or is switched off in the config).
void require_sandbox(const Config& cfg);

// Compiles `src` (from file `filename`) for `arch` (e.g. "sm_90a"), resolving `kernel_names`.
CompileResult compile_kernel(const ExtractedSource& src, const std::string& filename,
                             const std::string& arch, const std::vector<std::string>& kernel_names,
                             const Config& cfg);

// Why the source's #include directives cannot work (empty when they can): a friendly early error
// for absolute paths, "..", #include_next and macro-named headers. The boundary is the sandbox.
std::string disallowed_include(const std::string& code, int first_line);

// NVRTC's version as "13.0" (asked of kernrl-nvrtc once per process); "unknown" if it fails.
std::string nvrtc_version();

}  // namespace kernrl
