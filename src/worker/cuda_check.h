// Checked CUDA driver calls. Every driver call in src/worker goes through one of three macros, so
// none can fail unseen (the only exceptions: cuGetErrorName and cuGetErrorString inside
// cu_error_text, which describe errors themselves):
//
//   CU_CHECK(call)    throws CudaError (the result, the call's text, file and line) when it fails;
//                     evaluate() turns it into the answer's status (see below).
//   CU_RESULT(call)   a CuResult value, for callers that must continue or that map the failure
//                     themselves (a launch that fails is the kernel's launch_error, a loop that
//                     ends on an error); .check() throws it as CudaError.
//   CU_CLEANUP(call)  for releases in destructors and on error paths, which must not throw: a
//                     failure is written to the worker's log (stderr) unless the context is already
//                     broken, where every release fails.
//
// What a CudaError becomes in an EvalAnswer: a sticky error (the context is unusable) makes the
// answer fatal, so the worker exits and kernrl starts a fresh one; its status is runtime_error once
// the kernel has run (the kernel broke the context), internal_error before. Any other failure is
// internal_error, with the call, file and line in the message: kernrl's failure, not the kernel's.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace kernrl {

// A CUDA error in words: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
std::string cu_error_text(CUresult r);
// Errors after which the context is unusable: the worker reports and exits.
bool cu_error_is_sticky(CUresult r);

// Where a driver call was made: the call as written, and its source file (from src/) and line.
struct CuCallSite {
  const char* call = "";
  const char* file = "";
  int line = 0;
  // "cuMemAlloc(&buf_, bytes_) at worker/timer.cpp:63"
  std::string where() const;
};

// A failed driver call, thrown by CU_CHECK and CuResult::check.
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, const CuCallSite& site);
  CUresult code() const { return code_; }
  const CuCallSite& site() const { return site_; }
  bool sticky() const { return cu_error_is_sticky(code_); }
  // The error alone, without the call: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access..."
  std::string error_text() const { return cu_error_text(code_); }

 private:
  CUresult code_;
  CuCallSite site_;
};

// The result of a driver call with where it was made; true when it succeeded.
struct CuResult {
  CUresult code = CUDA_SUCCESS;
  CuCallSite site;
  explicit operator bool() const { return code == CUDA_SUCCESS; }
  bool sticky() const { return cu_error_is_sticky(code); }
  std::string text() const { return cu_error_text(code); }
  // Throws CudaError when the call failed.
  void check() const {
    if (code != CUDA_SUCCESS) throw CudaError(code, site);
  }
};

// Writes a failed release to stderr (the worker's log); silent when the context is already broken.
void log_cleanup_failure(const CuResult& r);

// The path of a source file from src/ ("worker/timer.cpp"), for messages.
const char* source_path(const char* file);

}  // namespace kernrl

#define KERNRL_CU_SITE(call_text)                        \
  ::kernrl::CuCallSite {                                 \
    call_text, ::kernrl::source_path(__FILE__), __LINE__ \
  }

#define CU_RESULT(call)           \
  ::kernrl::CuResult {            \
    (call), KERNRL_CU_SITE(#call) \
  }

// CU_CHECK and CU_CLEANUP spell the site out rather than going through CU_RESULT, so the call's
// text is as written (a driver macro such as cuDeviceTotalMem is not expanded to
// cuDeviceTotalMem_v2).
#define CU_CHECK(call) ::kernrl::CuResult{(call), KERNRL_CU_SITE(#call)}.check()

#define CU_CLEANUP(call)                                                                \
  do {                                                                                  \
    ::kernrl::CuResult kernrl_cleanup_result_{(call), KERNRL_CU_SITE(#call)};           \
    if (!kernrl_cleanup_result_) ::kernrl::log_cleanup_failure(kernrl_cleanup_result_); \
  } while (0)
