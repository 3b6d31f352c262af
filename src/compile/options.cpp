#include "compile/options.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/safe_text.h"

namespace kernrl {
namespace fs = std::filesystem;

std::string cuda_include_dir() {
  if (const char* h = std::getenv("CUDA_HOME"); h && *h) return std::string(h) + "/include";
  return KERNRL_CUDA_INCLUDE;
}

std::vector<std::string> nvrtc_options(const std::string& arch) {
  // The resolved path: in the compiler's private root (nvrtc/sandbox.h) only it exists, not the
  // symlinks that lead to it (/usr/local/cuda -> cuda-13.0).
  std::string inc = sandbox_include_dirs().front();
  return {"-arch=" + arch, "-std=c++17",         "-default-device",
          "-I" + inc,      "-I" + inc + "/cccl", "--pre-include=kernrl_prelude.h",
          "-DKERNRL=1"};
}

std::vector<std::string> sandbox_include_dirs() {
  std::error_code ec;
  fs::path real = fs::canonical(cuda_include_dir(), ec);
  return {ec ? cuda_include_dir() : real.string()};
}

std::string line_directive_name(const std::string& filename) {
  std::string name = fs::path(filename).filename().string(), out;
  for (char c : name.substr(0, 200))
    out += (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._-+ ", c)) ? c : '_';
  return out.empty() ? "kernel.cu" : out;
}

CompileRequest compile_request(const ExtractedSource& src, const std::string& filename,
                               const std::string& arch,
                               const std::vector<std::string>& kernel_names, bool sandbox) {
  CompileRequest req;
  req.filename = line_directive_name(filename);
  // NVRTC reads UTF-8: bytes that are not (a Latin-1 comment) go to it as octal escapes, which keep
  // comments inert and literals the same bytes.
  std::string code = is_valid_utf8(src.code) ? src.code : octal_escape_invalid_utf8(src.code);
  req.source = "#line " + std::to_string(src.first_line) + " \"" + req.filename + "\"\n" + code;
  req.options = nvrtc_options(arch);
  req.names = kernel_names;
  req.include_dirs = sandbox_include_dirs();
  req.sandbox = sandbox;
  req.max_log_bytes = kMaxLogBytes;
  req.max_cubin_bytes = kMaxCubinBytes;
  return req;
}

}  // namespace kernrl
