// The launch block of a Triton kernel file (Python): a module docstring whose text starts with
// `kernrl`, or a `# kernrl` line followed by consecutive `#` comment lines (docs/kernel-format.md).
#pragma once

#include <string>

namespace kernrl {

struct PythonBlock {
  std::string yaml;  // the block's YAML; its first line is the line of the `kernrl` marker
  int line = 0;      // 0-based line of the marker within the code
};

// Finds the one launch block of `code`. Throws FormatError (no block, two blocks, a docstring
// that is never closed).
PythonBlock python_launch_block(const std::string& code);

// Whether `code` has a launch block (or the start of one that is never closed).
bool has_python_launch_block(const std::string& code);

}  // namespace kernrl
