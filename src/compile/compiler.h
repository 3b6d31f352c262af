// Step 3: compile a kernel file to a cubin with NVRTC, in a child process (timeout, memory limit,
// sandbox), with an on-disk cache keyed by source, options, NVRTC version and arch. The pieces:
//   options.h       what every compile sends NVRTC (options, #line, limits)
//   include_gate.h  the early, friendly refusal of #include directives the sandbox would stop
//   cache.h         the cubin cache on disk
//   child.h         the kernrl-nvrtc child call and the sandbox checks
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compile/child.h"
#include "core/config.h"
#include "extract/extract.h"

namespace kernrl {

struct CompileResult {
  enum Status { Ok, Error, Timeout, Crashed } status = Error;
  std::string log;       // NVRTC's log (errors and warnings), at most 1 MiB
  size_t log_bytes = 0;  // the log's full size before any cut
  std::string error;     // one-line reason when not Ok
  std::string cubin_path;
  std::map<std::string, std::string> lowered;  // launch-block kernel name -> symbol
  // Triton files: each kernel key's own cubin (cubin_path is then empty), Triton's version.
  std::map<std::string, std::string> modules;
  std::string triton_version;
  std::string arch;
  std::string nvrtc_version;
  double ms = 0;  // wall time of this call
  bool cached = false;
  std::string pch;  // the precompiled header of a compile that ran (ChildCompile::pch)
  bool ok() const { return status == Ok; }
};

// Compiles `src` (from file `filename`) for `arch` (e.g. "sm_90a"), resolving `kernel_names`:
// the include gate, the sandbox check, the cache, then kernrl-nvrtc on a miss (the cubin is
// stored, and the cache trimmed to compile.cache_max_mb). Throws SandboxError when the sandbox
// cannot be set up; every problem of the kernel is a CompileResult.
CompileResult compile_kernel(const ExtractedSource& src, const std::string& filename,
                             const std::string& arch, const std::vector<std::string>& kernel_names,
                             const Config& cfg);

}  // namespace kernrl
