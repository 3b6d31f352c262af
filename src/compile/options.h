// What every compile asks of kernrl-nvrtc: the NVRTC options for an arch, the source as NVRTC
// sees it (its #line and file name), the sandbox's readable directories and the output limits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "extract/extract.h"
#include "protocol/compiler.h"

namespace kernrl {

// NVRTC's log beyond this is cut by the compiler process (the record says how long it was).
constexpr size_t kMaxLogBytes = size_t{1} << 20;
// A larger cubin is a compile error, never cached.
constexpr size_t kMaxCubinBytes = size_t{64} << 20;

// CUDA's include tree: $CUDA_HOME/include, else the one kernrl was built against.
std::string cuda_include_dir();

// The NVRTC options of every compile for `arch` (e.g. "sm_90a").
std::vector<std::string> nvrtc_options(const std::string& arch);

// The readable directories of the sandbox: CUDA's include tree, resolved (it is often a symlink).
std::vector<std::string> sandbox_include_dirs();

// The name diagnostics show in `#line`: the file's own name, reduced to characters that cannot end
// the directive's string or start a new line ("kernel.cu" when nothing is left).
std::string line_directive_name(const std::string& filename);

// The request for compiling `src` (from file `filename`) for `arch`, lowering `kernel_names`:
// diagnostics name the submitted file and its own line numbers (markdown answers included), and
// bytes that are not UTF-8 reach NVRTC as octal escapes.
CompileRequest compile_request(const ExtractedSource& src, const std::string& filename,
                               const std::string& arch,
                               const std::vector<std::string>& kernel_names, bool sandbox);

}  // namespace kernrl
