#include "compile/builtin_headers.h"

#include <sstream>

#include "compile/headers_list.h"  // generated from src/compile/headers.txt: kHeadersList
#include "compile/prelude.h"

namespace kernrl {
namespace {

// std:: names resolve to cuda::std: under NVRTC namespace std holds nothing else.
const char* kStdAlias = R"(#pragma once
namespace cuda { namespace std {} }
namespace std { using namespace ::cuda::std; }
)";

std::string wrap(const std::vector<std::string>& includes, const std::string& extra = "", bool alias = true) {
  std::string s = "#pragma once\n";
  for (const auto& i : includes) s += "#include <" + i + ">\n";
  if (alias) s += "#include <kernrl/std_alias.h>\n";
  return s + extra;
}

const char* kFloatMacros = R"(#ifndef FLT_RADIX
#define FLT_RADIX 2
#endif
#ifndef FLT_MANT_DIG
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define FLT_DIG 6
#define DBL_DIG 15
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#define FLT_DECIMAL_DIG 9
#define DBL_DECIMAL_DIG 17
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.175494351e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.192092896e-07F
#endif
#ifndef FLT_TRUE_MIN
#define FLT_TRUE_MIN 1.401298464e-45F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623158e+308
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.2250738585072014e-308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.2204460492503131e-16
#endif
#ifndef DBL_TRUE_MIN
#define DBL_TRUE_MIN 4.9406564584124654e-324
#endif
)";

const char* kMathMacros = R"(#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef M_LOG2E
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
)";

const char* kAssert = R"(#pragma once
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
)";

const char* kCudaH = R"(#pragma once
// The driver API's types and version for device code; its host functions do not exist here.
#ifndef CUDA_VERSION
#define CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#endif
typedef unsigned long long CUdeviceptr;
)";

// CUB's umbrella header pulls in its device-wide (host) algorithms, which NVRTC cannot compile; this
// one includes every block, warp, thread and iterator header of the CUB at hand.
std::string cub_umbrella() {
  static const char* const kParts[] = {
      "block/block_adjacent_difference", "block/block_discontinuity", "block/block_exchange",
      "block/block_histogram", "block/block_load", "block/block_merge_sort", "block/block_radix_rank",
      "block/block_radix_sort", "block/block_raking_layout", "block/block_reduce", "block/block_run_length_decode",
      "block/block_scan", "block/block_shuffle", "block/block_store", "block/radix_rank_sort_operations",
      "warp/warp_exchange", "warp/warp_load", "warp/warp_merge_sort", "warp/warp_reduce", "warp/warp_scan",
      "warp/warp_store", "thread/thread_load", "thread/thread_operators", "thread/thread_reduce",
      "thread/thread_scan", "thread/thread_search", "thread/thread_sort", "thread/thread_store",
      "iterator/arg_index_input_iterator", "iterator/cache_modified_input_iterator",
      "iterator/cache_modified_output_iterator", "iterator/tex_obj_input_iterator", "util_ptx", "util_type",
      "util_macro", "util_math", "util_arch", "util_debug", "util_device", "util_namespace", "util_temporary_storage"};
  std::string s = "#pragma once\n";
  for (const char* p : kParts)
    s += std::string("#if __has_include(<cub/") + p + ".cuh>)\n#include <cub/" + p + ".cuh>\n#endif\n";
  return s;
}

std::vector<BuiltinHeader> make_builtins() {
  // <cmath> takes libcu++'s definitions of INFINITY and NAN in place of the prelude's.
  std::string cmath = "#pragma once\n#undef INFINITY\n#undef NAN\n#include <cuda/std/cmath>\n"
                      "#include <kernrl/std_alias.h>\n" + std::string(kMathMacros);
  std::vector<BuiltinHeader> h = {
      {kPreludeName, kPrelude},
      {"kernrl/std_alias.h", kStdAlias},
      {"cstdint", wrap({"cuda/std/cstdint"})},
      {"stdint.h", wrap({"cuda/std/cstdint"})},
      {"cstddef", wrap({"cuda/std/cstddef"})},
      {"stddef.h", wrap({"cuda/std/cstddef"})},
      {"climits", wrap({"cuda/std/climits"}, "", false)},
      {"limits.h", wrap({"cuda/std/climits"}, "", false)},
      {"cfloat", wrap({}, kFloatMacros, false)},
      {"float.h", wrap({}, kFloatMacros, false)},
      {"limits", wrap({"cuda/std/limits"})},
      {"cmath", cmath},
      {"math.h", cmath},
      {"cstdlib", wrap({"cuda/std/cstdlib"})},
      {"stdlib.h", wrap({"cuda/std/cstdlib"})},
      {"cassert", kAssert},
      {"assert.h", kAssert},
      // printf, memcpy and memset are built into NVRTC's device code.
      {"cstdio", wrap({}, "namespace std { using ::printf; }\n", false)},
      {"stdio.h", "#pragma once\n"},
      {"cstring", wrap({}, "namespace std { using ::memcpy; using ::memset; }\n", false)},
      {"string.h", "#pragma once\n"},
      {"type_traits", wrap({"cuda/std/type_traits"})},
      {"utility", wrap({"cuda/std/utility"})},
      {"algorithm", wrap({"cuda/std/utility", "cuda/std/__algorithm/min.h", "cuda/std/__algorithm/max.h",
                          "cuda/std/__algorithm/clamp.h", "cuda/std/__algorithm/minmax.h",
                          "cuda/std/__algorithm/fill.h", "cuda/std/__algorithm/fill_n.h",
                          "cuda/std/__algorithm/copy.h", "cuda/std/__algorithm/copy_n.h"})},
      {"array", wrap({"cuda/std/array"})},
      {"tuple", wrap({"cuda/std/tuple"})},
      {"functional", wrap({"cuda/std/functional"})},
      {"bit", wrap({"cuda/std/bit"})},
      {"numeric", wrap({"cuda/std/numeric"})},
      {"complex", wrap({"cuda/std/complex"})},
      {"cuda.h", kCudaH},
      {"cub/cub.cuh", cub_umbrella()},
  };
  return h;
}

}  // namespace

const std::vector<BuiltinHeader>& builtin_headers() {
  static const std::vector<BuiltinHeader> headers = make_builtins();
  return headers;
}

const std::vector<SupportedHeader>& supported_headers() {
  static const std::vector<SupportedHeader> list = [] {
    std::vector<SupportedHeader> out;
    std::istringstream in(kHeadersList);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      size_t a = line.find('\t'), b = line.find('\t', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1) == "kernrl", line.substr(b + 1)});
    }
    return out;
  }();
  return list;
}

}  // namespace kernrl
