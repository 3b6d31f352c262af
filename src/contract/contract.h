// The kernel-file contract as users and models are told it: `kernrl show --prompt`,
// `kernrl show --contract` and docs/kernel-format.md all take it from here, and here it is made
// from the lists the compiler itself uses (src/headers/headers.txt, the prelude), so they cannot
// drift.
#pragma once

#include <string>

namespace kernrl {

// Contract version (docs/kernel-format.md); records carry it as `kernel_format`.
inline constexpr int kContractVersion = 1;

// The summary a model gets in its prompt.
std::string contract_summary();

// The Triton kernel-file contract as a model's prompt states it (docs/kernel-format.md,
// "Triton kernels"); its launch keys are the parser's (triton_launch_keys()).
std::string triton_contract_summary();

// The limits the grader applies to every launch (both languages): grid, block, clusters, shared
// memory (dynamic shared memory may exceed 48 KiB), scalars in expressions, sizes.
std::string limits_paragraph();

// The most autotune configs one Triton kernel may have (more is a format_error).
inline constexpr int kMaxTritonAutotuneConfigs = 16;

// The paragraph on headers and predefined names (part of the summary).
std::string headers_paragraph();

// A Markdown table of every supported header: name, where it comes from (docs/kernel-format.md).
std::string headers_table_markdown();

}  // namespace kernrl
