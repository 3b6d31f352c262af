// The task prompt in KernelBench's style (`kernrl show --prompt --style kernelbench`): the
// problem's PyTorch module, to be rewritten as a `ModelNew` with custom CUDA kernels compiled by
// load_inline, which kernrl converts and grades (docs/import-kernelbench.md).
#pragma once

#include <string>

#include "core/problem.h"

namespace kernrl {

std::string kernelbench_prompt(const ProblemSpec& p);

}  // namespace kernrl
