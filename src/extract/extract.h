// Step 1 of the pipeline: from a file (a .cu kernel or a model's raw markdown answer) to the
// kernel source that gets parsed and compiled.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace kernrl {

struct FormatError : std::runtime_error {
  FormatError(const std::string& msg, int at_line = 0) : std::runtime_error(msg), line(at_line) {}
  int line;  // 1-based line in the submitted file; 0 when not tied to a line
};

struct ExtractedSource {
  std::string code;    // the kernel source
  int first_line = 1;  // line of the file where `code` starts
  bool from_markdown = false;
  std::string language = "cuda";  // "cuda" (a .cu kernel file) or "triton" (Python, @triton.jit)
};

// A Python text that holds Triton kernels (@triton.jit, `import triton`, triton.language).
bool is_triton_source(const std::string& code);

constexpr size_t kMaxSourceBytes = 1 << 20;  // larger files are format errors, never compiled
constexpr size_t kMaxLineChars = 10000;      // so are files with a longer line

// Text as every later step reads it: a leading UTF-8 byte-order mark dropped, CRLF and lone CR
// turned into LF (line numbers stay those of the file).
std::string normalize_text(const std::string& text);

// .cu/.cuh files are taken whole. .py files holding Triton kernels are taken whole as Triton
// (language "triton"); other .py files are named for what they are (KernelBench module,
// PyTorch-only) in a FormatError. Anything else is a markdown answer (CommonMark, read by
// md4c): the last code block that contains a `/* kernrl` block is taken; a launch block in a code
// block of its own (```yaml, with or without /* kernrl ... */) is joined with the nearest code
// block holding __global__ kernels, the lines between left blank so that line numbers stay those
// of the file. Without a `/* kernrl` block, the last ```python block holding Triton kernels is
// taken as Triton. Text is normalized first (normalize_text). Throws FormatError.
ExtractedSource extract_kernel(const std::string& text, const std::string& filename);

// Reads a file; throws std::runtime_error naming the file when it cannot.
std::string read_file(const std::string& path);

}  // namespace kernrl
