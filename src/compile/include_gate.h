// The include gate: a friendly early error for #include directives that cannot work in the
// compiler's sandbox (absolute paths, "..", #include_next, macro-named headers). The boundary
// itself is the sandbox (sandbox/sandbox.h); this scan only gives the kernel's author a clear
// message before the compiler runs.
#pragma once

#include <string>
#include <vector>

namespace kernrl {

// Why the source's #include directives cannot work (empty when they can), naming the line;
// `first_line` is the file's line number of the code's first line.
std::string disallowed_include(const std::string& code, int first_line);

// The headers a precompiled header may cover for this source (the fork server's, docs/security.md):
// its leading `#include <name>` lines, with only blank lines and comments before and between them,
// up to the last one that is heavy enough to be worth a PCH (CCCL: `cub/`, `thrust/`, `cuda/`, and
// cooperative groups); empty when there is none. Pre-including them changes nothing: they are the
// source's own first lines, in its order.
std::vector<std::string> pch_headers(const std::string& code);

}  // namespace kernrl
