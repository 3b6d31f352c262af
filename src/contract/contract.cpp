#include "contract/contract.h"

#include <set>
#include <sstream>
#include <vector>

#include "headers/builtin_headers.h"

namespace kernrl {
namespace {

// Wraps words to `width` columns, each line after the first indented by `indent`.
std::string wrap(const std::string& text, size_t width, const std::string& indent) {
  std::istringstream in(text);
  std::string word, out, line;
  while (in >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    } else if (!line.empty() && line != indent) {
      line += " ";
    }
    line += word;
  }
  return out + line;
}

}  // namespace

std::string headers_paragraph() {
  std::vector<std::string> cuda_names, std_names;
  std::set<std::string> prefixes;
  for (const auto& h : supported_headers()) {
    if (h.builtin && h.name.rfind("kernrl/", 0) == 0) {
      continue;  // kernrl's own (PyTorch's tensor accessors): docs/kernel-format.md
    } else if (h.builtin) {
      std_names.push_back(h.name);
    } else if (auto slash = h.name.find('/'); slash != std::string::npos) {
      std::string family = h.name.substr(0, h.name.rfind('/')) + "/...";
      if (prefixes.insert(family).second) cuda_names.push_back(family);
    } else {
      cuda_names.push_back(h.name);
    }
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  std::string text = "- Includes: CUDA's device headers (" + join(cuda_names) +
                     ") and these standard headers, which kernrl provides for device code (std:: "
                     "names are libcu++'s "
                     "cuda::std): " +
                     join(std_names) +
                     ". Other headers of CUDA's include tree may work but are not promised; the "
                     "machine's own headers "
                     "(/usr/include) cannot be opened. No host code runs; no main(). Predefined "
                     "without any include: "
                     "int8_t..uint64_t, intptr_t, uintptr_t, size_t, ptrdiff_t, INFINITY, NAN, "
                     "FLT_MAX, FLT_MIN, DBL_MAX, M_PI, M_E.";
  return wrap(text, 100, "  ");
}

std::string contract_summary() {
  return "The kernel-file contract (kernrl v" + std::to_string(kContractVersion) + R"():
- Device code only: __global__ kernels and __device__ helpers, compiled by NVRTC for the grading GPU
  (sm_90a on H100/H200) with -std=c++17.
)" + headers_paragraph() +
         R"(
- One block comment starting with `/* kernrl` holds YAML saying how to launch your kernels:
    problem: ID                     # optional: the problem this file is for
    launches:                       # run in order on one stream
      - kernel: name                # a __global__ function (or "name<T, 4>" for a template)
        grid: [expr, ...]           # 1-3 integer expressions over the problem's sizes and num_sms
        block: [expr, ...]
        shared_bytes: expr          # optional dynamic shared memory
        args: [tensor, size, ...]   # tensor names -> device pointers; sizes/expressions -> int;
                                    # scalars and literals like 0.5 -> float (by the parameter's width)
        repeat: {count: expr, var: i}   # optional, repeats the launch with i = 0..count-1
        cluster: [expr, ...]        # optional thread-block cluster dims (sm_90)
        cooperative: true           # optional cooperative launch (grid-wide sync)
    scratch:                        # optional zeroed device buffers usable as args
      buf: {dtype: float32, count: cdiv(n, 256)}
  Expressions (written as they are, no quotes needed): + - * / % ( ), cdiv(a, b), min(a, b), max(a, b).
)" + limits_paragraph() +
         R"(
- Tensors are contiguous and row-major. Every output element must be written on every call; inputs
  must not be modified. Correctness is checked on fresh random inputs at several sizes (including odd
  ones), so handle any size; then the kernel is timed against PyTorch at the bench size.
)";
}

std::string limits_paragraph() {
  return wrap(
      "- Limits the grader applies: grid.x up to 2^31-1 and grid.y, grid.z up to 65535; at most "
      "1024 threads a block (block.z at most 64); clusters of at most 8 blocks, and the grid a "
      "multiple of the cluster; dynamic shared memory up to 227 KiB a block (232448 bytes): above "
      "48 KiB kernrl sets the kernel's attribute for you. Names usable in expressions: the "
      "problem's sizes, num_sms (the GPU's SM count) and integer scalars with a fixed value "
      "(listed as `int32 scalar = 9`).",
      100, "  ");
}

std::string headers_table_markdown() {
  std::string t = "| header | from |\n| --- | --- |\n";
  for (const auto& h : supported_headers())
    t += "| `" + h.name + "` | " +
         (h.name.rfind("kernrl/", 0) == 0 ? "kernrl (from memory, its own)"
          : h.builtin                     ? "kernrl (from memory, on libcu++)"
                                          : "CUDA Toolkit") +
         " |\n";
  return t;
}

}  // namespace kernrl
