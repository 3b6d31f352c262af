// Markdown answers and kernel files: extract_kernel, then the launch block of what it found.
// The first byte picks the file name (.md, .cu, .py, .txt) so every path is reached.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "extract/extract.h"
#include "parse/launch_block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* names[] = {"answer.md", "kernel.cu", "answer.py", "answer.txt"};
  std::string name = names[data[0] % 4];
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  kernrl::ExtractedSource src;
  try {
    src = kernrl::extract_kernel(text, name);
  } catch (const kernrl::FormatError&) {
    return 0;
  }
  // What later steps rely on: no carriage return, a line in the file.
  if (src.code.find('\r') != std::string::npos || src.first_line < 1) std::abort();
  try {
    kernrl::parse_launch_block(src);
  } catch (const kernrl::FormatError&) {
  }
  return 0;
}
