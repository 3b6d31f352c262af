#include "headers/builtin_headers.h"

#include <sstream>

#include "headers/headers_list.h"  // generated from src/headers/headers.txt: kHeadersList
#include "headers/prelude.h"
#include "headers/tensor_accessor.h"

namespace kernrl {
namespace {

// A header that declares `names` of libcu++ in namespace std, after including `includes`. Names are
// brought in one by one (never with a using-directive), so that std:: holds what a host standard
// library would hold and nothing else: `using namespace std;` then stays unambiguous.
std::string wrap(const std::vector<std::string>& includes,
                 const std::vector<std::string>& names = {}, const std::string& extra = "") {
  std::string s = "#pragma once\n";
  for (const auto& i : includes) s += "#include <" + i + ">\n";
  if (!names.empty()) {
    s += "namespace std {\n";
    for (const auto& n : names) s += "using ::cuda::std::" + n + ";\n";
    s += "}\n";
  }
  return s + extra;
}

// <cmath> and <math.h>: std:: math is the global CUDA math library (as the host library's std::sqrt
// is ::sqrt), so unqualified and std:: calls resolve to the same functions.
std::string math_header() {
  static const char* const kNames[] = {
      "abs",      "fabs",   "fmod",    "remainder", "remquo", "fma",   "fmax",      "fmin",
      "fdim",     "exp",    "exp2",    "expm1",     "log",    "log10", "log2",      "log1p",
      "pow",      "sqrt",   "cbrt",    "hypot",     "sin",    "cos",   "tan",       "asin",
      "acos",     "atan",   "atan2",   "sinh",      "cosh",   "tanh",  "asinh",     "acosh",
      "atanh",    "erf",    "erfc",    "tgamma",    "lgamma", "ceil",  "floor",     "trunc",
      "round",    "lround", "llround", "nearbyint", "rint",   "lrint", "llrint",    "frexp",
      "ldexp",    "modf",   "scalbn",  "scalbln",   "ilogb",  "logb",  "nextafter", "copysign",
      "isfinite", "isinf",  "isnan",   "signbit",   "nan",    "labs",  "llabs"};
  std::string s = "#pragma once\nnamespace std {\n";
  for (const char* n : kNames) s += std::string("using ::") + n + ";\n";
  return s + "}\n";
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

// CUB's umbrella header pulls in its device-wide (host) algorithms, which NVRTC cannot compile;
// this one includes every block, warp, thread and iterator header of the CUB at hand.
std::string cub_umbrella() {
  static const char* const kParts[] = {"block/block_adjacent_difference",
                                       "block/block_discontinuity",
                                       "block/block_exchange",
                                       "block/block_histogram",
                                       "block/block_load",
                                       "block/block_merge_sort",
                                       "block/block_radix_rank",
                                       "block/block_radix_sort",
                                       "block/block_raking_layout",
                                       "block/block_reduce",
                                       "block/block_run_length_decode",
                                       "block/block_scan",
                                       "block/block_shuffle",
                                       "block/block_store",
                                       "block/radix_rank_sort_operations",
                                       "warp/warp_exchange",
                                       "warp/warp_load",
                                       "warp/warp_merge_sort",
                                       "warp/warp_reduce",
                                       "warp/warp_scan",
                                       "warp/warp_store",
                                       "thread/thread_load",
                                       "thread/thread_operators",
                                       "thread/thread_reduce",
                                       "thread/thread_scan",
                                       "thread/thread_search",
                                       "thread/thread_sort",
                                       "thread/thread_store",
                                       "iterator/arg_index_input_iterator",
                                       "iterator/cache_modified_input_iterator",
                                       "iterator/cache_modified_output_iterator",
                                       "iterator/tex_obj_input_iterator",
                                       "util_ptx",
                                       "util_type",
                                       "util_macro",
                                       "util_math",
                                       "util_arch",
                                       "util_debug",
                                       "util_device",
                                       "util_namespace",
                                       "util_temporary_storage"};
  std::string s = "#pragma once\n";
  for (const char* p : kParts)
    s += std::string("#if __has_include(<cub/") + p + ".cuh>)\n#include <cub/" + p +
         ".cuh>\n#endif\n";
  return s;
}

std::vector<BuiltinHeader> make_builtins() {
  const std::vector<std::string> ints = {
      "int8_t",   "int16_t",  "int32_t",   "int64_t",  "uint8_t",   "uint16_t",     "uint32_t",
      "uint64_t", "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", "int_least8_t", "int_fast32_t"};
  const std::vector<std::string> traits = {"integral_constant",
                                           "bool_constant",
                                           "true_type",
                                           "false_type",
                                           "is_same",
                                           "is_same_v",
                                           "enable_if",
                                           "enable_if_t",
                                           "conditional",
                                           "conditional_t",
                                           "is_void",
                                           "is_void_v",
                                           "is_integral",
                                           "is_integral_v",
                                           "is_floating_point",
                                           "is_floating_point_v",
                                           "is_arithmetic",
                                           "is_arithmetic_v",
                                           "is_signed",
                                           "is_signed_v",
                                           "is_unsigned",
                                           "is_unsigned_v",
                                           "is_pointer",
                                           "is_pointer_v",
                                           "is_reference",
                                           "is_const",
                                           "is_const_v",
                                           "is_trivially_copyable",
                                           "is_convertible",
                                           "is_convertible_v",
                                           "is_base_of",
                                           "remove_cv",
                                           "remove_cv_t",
                                           "remove_const",
                                           "remove_const_t",
                                           "remove_reference",
                                           "remove_reference_t",
                                           "remove_pointer",
                                           "remove_pointer_t",
                                           "add_const",
                                           "add_pointer",
                                           "decay",
                                           "decay_t",
                                           "make_signed",
                                           "make_signed_t",
                                           "make_unsigned",
                                           "make_unsigned_t",
                                           "underlying_type",
                                           "underlying_type_t",
                                           "common_type",
                                           "common_type_t",
                                           "is_empty",
                                           "alignment_of",
                                           "aligned_storage",
                                           "void_t",
                                           "remove_cvref",
                                           "remove_cvref_t",
                                           "is_constant_evaluated",
                                           "invoke_result",
                                           "invoke_result_t",
                                           "is_invocable"};
  const std::vector<std::string> utility = {"swap",
                                            "pair",
                                            "make_pair",
                                            "move",
                                            "forward",
                                            "declval",
                                            "exchange",
                                            "integer_sequence",
                                            "index_sequence",
                                            "make_index_sequence",
                                            "make_integer_sequence",
                                            "as_const"};
  std::string math = math_header() + kMathMacros;
  std::vector<BuiltinHeader> h = {
      {kPreludeName, kPrelude},
      {"cstdint", wrap({"cuda/std/cstdint"}, ints)},
      {"stdint.h", wrap({"cuda/std/cstdint"})},
      {"cstddef",
       wrap({"cuda/std/cstddef"}, {"size_t", "ptrdiff_t", "nullptr_t", "max_align_t", "byte"})},
      {"stddef.h", wrap({"cuda/std/cstddef"})},
      {"climits", wrap({"cuda/std/climits"})},
      {"limits.h", wrap({"cuda/std/climits"})},
      {"cfloat", wrap({}, {}, kFloatMacros)},
      {"float.h", wrap({}, {}, kFloatMacros)},
      {"limits", wrap({"cuda/std/limits"}, {"numeric_limits"})},
      {"cmath", math},
      {"math.h", math},
      {"cstdlib", wrap({"cuda/std/cstdlib"}, {"div", "ldiv", "lldiv", "div_t"}, math_header())},
      {"stdlib.h", wrap({}, {}, math_header())},
      {"cassert", kAssert},
      {"assert.h", kAssert},
      // printf, memcpy and memset are built into NVRTC's device code.
      {"cstdio", wrap({}, {}, "namespace std { using ::printf; }\n")},
      {"stdio.h", "#pragma once\n"},
      {"cstring", wrap({}, {}, "namespace std { using ::memcpy; using ::memset; }\n")},
      {"string.h", "#pragma once\n"},
      {"type_traits", wrap({"cuda/std/type_traits"}, traits)},
      {"utility", wrap({"cuda/std/utility"}, utility)},
      // std::min and std::max are the prelude's (they must not be declared twice).
      {"algorithm",
       wrap({"cuda/std/utility", "cuda/std/__algorithm/clamp.h", "cuda/std/__algorithm/minmax.h",
             "cuda/std/__algorithm/fill.h", "cuda/std/__algorithm/fill_n.h",
             "cuda/std/__algorithm/copy.h", "cuda/std/__algorithm/copy_n.h"},
            {"clamp", "minmax", "fill", "fill_n", "copy", "copy_n", "swap"})},
      {"array", wrap({"cuda/std/array"}, {"array"})},
      {"tuple", wrap({"cuda/std/tuple"},
                     {"tuple", "make_tuple", "get", "tie", "forward_as_tuple", "apply"})},
      {"functional", wrap({"cuda/std/functional"},
                          {"plus", "minus", "multiplies", "divides", "modulus", "negate", "less",
                           "greater", "less_equal", "greater_equal", "equal_to", "not_equal_to",
                           "bit_and", "bit_or", "bit_xor", "logical_and", "logical_or", "invoke"})},
      {"bit", wrap({"cuda/std/bit"}, {"bit_cast", "popcount", "countl_zero", "countr_zero",
                                      "countl_one", "countr_one", "has_single_bit", "bit_width",
                                      "bit_ceil", "bit_floor", "rotl", "rotr", "endian"})},
      {"numeric", wrap({"cuda/std/numeric"}, {"gcd", "lcm", "iota", "accumulate", "inner_product",
                                              "partial_sum", "midpoint"})},
      {"complex", wrap({"cuda/std/complex"},
                       {"complex", "real", "imag", "arg", "norm", "conj", "polar", "proj", "abs"})},
      {"cuda.h", kCudaH},
      {"cub/cub.cuh", cub_umbrella()},
      {kTensorAccessorName, kTensorAccessor},
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
      out.push_back(
          {line.substr(0, a), line.substr(a + 1, b - a - 1) == "kernrl", line.substr(b + 1)});
    }
    return out;
  }();
  return list;
}

}  // namespace kernrl
