// The headers kernrl serves to NVRTC from memory: the C and C++ standard headers that kernels
// written for nvcc include, mapped onto CCCL's libcu++ (cuda::std) or small definitions of their
// own, so that no header of the grading machine's /usr/include is ever read. The list of every
// header a kernel may include (these and CUDA's own) is src/headers/headers.txt.
#pragma once

#include <string>
#include <vector>

namespace kernrl {

struct BuiltinHeader {
  std::string name;  // as written in #include <...>
  std::string text;
};

// The prelude first (pre-included in every kernel), then the built-in headers.
const std::vector<BuiltinHeader>& builtin_headers();

// One header of the supported list (src/headers/headers.txt).
struct SupportedHeader {
  std::string name;
  bool builtin = false;  // served from memory by kernrl; otherwise from CUDA's include tree
  std::string probe;     // a statement using it, compiled by its test
};

const std::vector<SupportedHeader>& supported_headers();

}  // namespace kernrl
