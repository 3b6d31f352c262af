// Step 3 for Triton kernel files: compile every launched kernel in the kernrl-triton child
// (child.h), through the on-disk cache (the cubins in the compile cache, keyed by the request,
// Triton's version and the architecture), and turn the compiled kernels' metadata into the plan
// the worker runs (request.h).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "core/config.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "parse/launch_block.h"
#include "triton_compile/request.h"

namespace kernrl {

struct TritonCompileResult {
  CompileResult compile;    // status, error, log, ms, cached, arch (cubin_path unused)
  TritonLaunchable launch;  // when ok: the plan, kernel symbols and cubins
  std::string triton_version;
  nlohmann::json kernels = nlohmann::json::array();  // the record's compile.kernels
  // Autotuned launches: each tuning group (LaunchSpec::tune_group) and the keys of its kernels in
  // `kernels`, whose `autotune` the worker's choice completes.
  std::map<std::string, std::vector<std::string>> tune_groups;
  // Where a fresh compile's time went: {wait_ms, import_ms, load_ms, compile_ms, compiles};
  // empty when the compile came from the cache.
  nlohmann::json timing = nlohmann::json::object();
  int error_line = 0;         // the kernel file's line of a compile error, when known
  bool format_error = false;  // the file cannot be compiled as written (a format_error)
};

// `arch` as "sm_90a"; `size_sets` every size set the worker will run. Throws TritonUnavailable or
// SandboxError for problems of the grading machine; every problem of the kernel is a result.
TritonCompileResult compile_triton(const ExtractedSource& src, const std::string& filename,
                                   const LaunchPlan& plan, const ProblemSpec& problem,
                                   const std::vector<Vars>& size_sets, int64_t num_sms,
                                   const std::string& arch, const Config& cfg);

// "sm_90a" -> 90.
int triton_arch_number(const std::string& arch);

}  // namespace kernrl
