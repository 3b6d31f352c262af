// The Triton compile's two pure steps, testable without Triton or a GPU:
//   triton_request  the launch plan and the problem -> the helper's request: one kernel to compile
//                   per distinct specialisation (argument types from the problem's dtypes,
//                   constexprs and options evaluated at each size set, divisibility by 16 as
//                   Triton's JIT specialises it)
//   triton_launch_plan  the helper's answer (metadata of each compiled kernel) -> the plan the
//                   worker runs: block = 32 x num_warps, shared memory, clusters for num_ctas,
//                   cooperative launch, the hidden scratch parameters as scratch buffers
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/problem.h"
#include "extract/extract.h"
#include "parse/launch_block.h"

namespace kernrl {

struct TritonRequest {
  nlohmann::json json;  // {"source", "filename", "arch", "kernels": [...]}
  // For each launch, for each size set (in `size_sets` order): the index of its kernel request.
  std::vector<std::vector<size_t>> launch_kernels;
  std::vector<Vars> size_sets;
};

// The Triton type of a tensor of `dtype` ("fp32", "bf16", "i64", "i1" for bool, ...).
std::string triton_type(const DType& dtype);

// Builds the request. `size_sets` are every size set the worker will run (the tests and the bench,
// or the --size set alone). Throws FormatError.
TritonRequest triton_request(const ExtractedSource& src, const std::string& filename,
                             const LaunchPlan& plan, const ProblemSpec& problem,
                             const std::vector<Vars>& size_sets, int64_t num_sms, int arch);

// One compiled kernel, as the helper described it and the cache stored it.
struct TritonKernel {
  std::string key;     // the launch plan's kernel key
  std::string symbol;  // the kernel's name in the cubin
  std::string cubin_path;
  nlohmann::json metadata;    // Triton's metadata (num_warps, shared, num_ctas, ...)
  size_t ptx_params = 0;      // parameters of the compiled kernel
  size_t runtime_params = 0;  // of them, the launch's arguments (the rest are hidden)
  nlohmann::json config;      // constexprs and options it was compiled with
  int autotune_config = 0;    // its index among the kernel's @triton.autotune configs
  // An @triton.autotune kernel: every config that compiled, in order (this one first; each with
  // `configs` empty). Config N (1-based) other than the first is keyed `key@N`.
  std::vector<TritonKernel> configs;
};

struct TritonLaunchable {
  LaunchPlan plan;
  std::map<std::string, std::string> lowered;  // kernel key -> symbol
  std::map<std::string, std::string> modules;  // kernel key -> cubin path
};

// The plan the worker runs, from the compiled kernels (`kernels[i]` for the request's kernel i;
// requests the helper found to be one kernel have equal keys).
// Throws FormatError when the compiled kernel cannot be launched as asked.
TritonLaunchable triton_launch_plan(const LaunchPlan& plan, const TritonRequest& req,
                                    const std::vector<TritonKernel>& kernels,
                                    const ProblemSpec& problem);

}  // namespace kernrl
