// The float pass rule of worker/compare.h as one fused pass over both tensors (compiled by nvcc
// into a fatbin that the worker embeds; compare_gpu.cpp launches it). Every element is read once;
// the decisions are made in float64, exactly as float_stats_torch() makes them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

struct Stats {                      // zeroed by the host, first_bad set to ~0
  unsigned long long mismatches;    // elements that fail
  unsigned long long first_bad;     // smallest failing flat index
  double err2, ref2;                // sums of squares over elements whose reference is finite
  unsigned long long max_abs_bits;  // largest |got - ref| (finite ref), as the bits of a
  unsigned long long max_rel_bits;  // non-negative double (NaN, 0x7ff8..., is the largest)
};

__device__ double to_double(float v) {
  return v;
}
__device__ double to_double(double v) {
  return v;
}
__device__ double to_double(__half v) {
  return __half2float(v);
}
__device__ double to_double(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

__device__ unsigned long long bits(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v));
}

template <typename T>
__device__ void compare(const T* got, const T* want, long long n, double atol, double rtol,
                        int full, Stats* out) {
  unsigned long long bad = 0, first = ~0ull, max_abs = 0, max_rel = 0;
  double err2 = 0, ref2 = 0;
  long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    double g = to_double(got[i]), w = to_double(want[i]);
    // Rounded operations, never contracted into FMAs: the bound must be the one torch computes.
    double diff = fabs(__dsub_rn(g, w));
    bool finite_w = isfinite(w);
    bool fails = (isnan(w) != isnan(g)) || (isinf(w) && g != w) ||
                 (finite_w && !(diff <= __dadd_rn(atol, __dmul_rn(rtol, fabs(w)))));
    if (fails) {
      ++bad;
      if (static_cast<unsigned long long>(i) < first) first = static_cast<unsigned long long>(i);
    }
    if (finite_w) {
      double d = g - w;
      err2 += d * d;
      ref2 += w * w;
      if (full) {
        max_abs = max(max_abs, bits(diff));
        if (w != 0) max_rel = max(max_rel, bits(__ddiv_rn(diff, fabs(w))));
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    bad += __shfl_down_sync(0xffffffffu, bad, o);
    first = min(first, __shfl_down_sync(0xffffffffu, first, o));
    max_abs = max(max_abs, __shfl_down_sync(0xffffffffu, max_abs, o));
    max_rel = max(max_rel, __shfl_down_sync(0xffffffffu, max_rel, o));
    err2 += __shfl_down_sync(0xffffffffu, err2, o);
    ref2 += __shfl_down_sync(0xffffffffu, ref2, o);
  }
  if ((threadIdx.x & 31) == 0) {
    if (bad) {
      atomicAdd(&out->mismatches, bad);
      atomicMin(&out->first_bad, first);
    }
    atomicAdd(&out->err2, err2);
    atomicAdd(&out->ref2, ref2);
    if (full) {
      atomicMax(&out->max_abs_bits, max_abs);
      atomicMax(&out->max_rel_bits, max_rel);
    }
  }
}

}  // namespace

#define KERNRL_COMPARE(NAME, T)                                                          \
  extern "C" __global__ void NAME(const T* got, const T* want, long long n, double atol, \
                                  double rtol, int full, Stats* out) {                   \
    compare(got, want, n, atol, rtol, full, out);                                        \
  }
KERNRL_COMPARE(kernrl_compare_f32, float)
KERNRL_COMPARE(kernrl_compare_f64, double)
KERNRL_COMPARE(kernrl_compare_f16, __half)
KERNRL_COMPARE(kernrl_compare_bf16, __nv_bfloat16)
