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

// The paragraph on headers and predefined names (part of the summary).
std::string headers_paragraph();

// A Markdown table of every supported header: name, where it comes from (docs/kernel-format.md).
std::string headers_table_markdown();

}  // namespace kernrl
