// The task prompt in KernelBench's style (`kernrl show --prompt --style kernelbench`): the
// problem's PyTorch module, to be rewritten as a `ModelNew` with custom CUDA kernels compiled by
// load_inline, which kernrl converts and grades (docs/import-kernelbench.md); or, for Triton, with
// @triton.jit kernels launched from forward.
#pragma once

#include <string>

#include "core/problem.h"

namespace kernrl {

// Named and versioned on its own (docs/prompts.md); version 1 was reported as kernrl.task.v1.
constexpr const char* kKernelBenchPromptName = "kernrl.kernelbench.v3";
constexpr int kKernelBenchPromptVersion = 3;
std::string kernelbench_prompt(const ProblemSpec& p);

// The same style for Triton (`--style kernelbench --language triton`): a `ModelNew` whose forward
// launches @triton.jit kernels, with no launch block, as KernelBench's Triton backend and
// OpenEnv-style environments ask; kernrl derives the launch plan from the wrapper
// (docs/kernel-format.md, "Host wrappers"). Named and versioned on its own (docs/prompts.md).
constexpr const char* kKernelBenchTritonPromptName = "kernrl.kernelbench_triton.v1";
constexpr int kKernelBenchTritonPromptVersion = 1;
std::string kernelbench_triton_prompt(const ProblemSpec& p);

}  // namespace kernrl
