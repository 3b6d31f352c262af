// The header kernrl pre-includes in every kernel file (documented in docs/kernel-format.md), so
// code written for nvcc compiles under NVRTC without host headers. Its types are declared exactly
// as CCCL's <cuda/std/cstdint> declares them under NVRTC, so that every CUDA and CCCL header can be
// included after it without a clash. INFINITY and NAN are constants rather than macros so that
// libcu++'s <cuda/std/cmath>, which defines them as macros, takes over without a redefinition.
#pragma once

namespace kernrl {

inline const char* kPreludeName = "kernrl_prelude.h";
inline const char* kPrelude = R"(#pragma once
using int8_t = signed char;
using int16_t = signed short;
using int32_t = signed int;
using int64_t = signed long long;
using uint8_t = unsigned char;
using uint16_t = unsigned short;
using uint32_t = unsigned int;
using uint64_t = unsigned long long;
using intptr_t = int64_t;
using uintptr_t = uint64_t;
using size_t = decltype(sizeof(0));
using ptrdiff_t = decltype((int*)0 - (int*)0);
constexpr float INFINITY = __builtin_bit_cast(float, 0x7f800000u);
constexpr float NAN = __builtin_bit_cast(float, 0x7fc00000u);
// std::min and std::max without any include, as nvcc's implicit headers give them; non-template
// overloads of CUDA's ::min/::max stay preferred for unqualified calls.
namespace kernrl_std {
template <class T> constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }
template <class T, class C> constexpr const T& min(const T& a, const T& b, C less) { return less(b, a) ? b : a; }
template <class T> constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }
template <class T, class C> constexpr const T& max(const T& a, const T& b, C less) { return less(a, b) ? b : a; }
}
namespace std { using ::kernrl_std::min; using ::kernrl_std::max; }
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.175494351e-38F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623158e+308
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.71828182845904523536
#endif
)";

}  // namespace kernrl
