#include "worker/cuda_check.h"

#include <cstdio>
#include <cstring>

namespace kernrl {

std::string cu_error_text(CUresult r) {
  // The two calls that describe errors are the only unchecked ones: a code they do not know leaves
  // the text null, and the fallback words stand in.
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  return std::string(name ? name : "CUDA_ERROR_UNKNOWN") + ": " + (text ? text : "unknown error");
}

bool cu_error_is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

const char* source_path(const char* file) {
  // The last "src/" of the path: build trees and worktrees put the sources anywhere.
  const char* found = nullptr;
  for (const char* p = std::strstr(file, "src/"); p; p = std::strstr(p + 1, "src/")) found = p;
  return found ? found + 4 : file;
}

std::string CuCallSite::where() const {
  return std::string(call) + " at " + file + ":" + std::to_string(line);
}

CudaError::CudaError(CUresult code, const CuCallSite& site)
    : std::runtime_error("CUDA call failed: " + site.where() + ": " + cu_error_text(code)),
      code_(code),
      site_(site) {}

void log_cleanup_failure(const CuResult& r) {
  if (r.sticky() || r.code == CUDA_ERROR_DEINITIALIZED) return;  // every release fails then
  std::fprintf(stderr, "kernrl-worker: releasing failed: %s: %s\n", r.site.where().c_str(),
               r.text().c_str());
}

}  // namespace kernrl
