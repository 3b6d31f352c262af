// The include gate: a friendly early error for #include directives that cannot work in the
// compiler's sandbox (absolute paths, "..", #include_next, macro-named headers). The boundary
// itself is the sandbox (sandbox/sandbox.h); this scan only gives the kernel's author a clear
// message before the compiler runs.
#pragma once

#include <string>

namespace kernrl {

// Why the source's #include directives cannot work (empty when they can), naming the line;
// `first_line` is the file's line number of the code's first line.
std::string disallowed_include(const std::string& code, int first_line);

}  // namespace kernrl
