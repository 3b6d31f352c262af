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

// Reductions over a block of kThreads threads: each warp reduces with shuffles, warp 0 reduces the
// warps' results, and thread 0 alone then updates the global result (one atomic per block and
// value: many threads updating one address serialise).
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity, T* shared) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kWarps ? shared[threadIdx.x] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  }
  __syncthreads();  // `shared` may be reused by the next reduction
  return v;         // the block's result, in thread 0
}

struct Add {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Min {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return a < b ? a : b;
  }
};
struct Max {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return a > b ? a : b;
  }
};

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
  __shared__ unsigned long long su[kWarps];
  __shared__ double sd[kWarps];
  bad = block_reduce(bad, Add(), 0ull, su);
  first = block_reduce(first, Min(), ~0ull, su);
  err2 = block_reduce(err2, Add(), 0.0, sd);
  ref2 = block_reduce(ref2, Add(), 0.0, sd);
  if (full) {
    max_abs = block_reduce(max_abs, Max(), 0ull, su);
    max_rel = block_reduce(max_rel, Max(), 0ull, su);
  }
  if (threadIdx.x == 0) {
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

// Bit equality: how many 16-byte words (or, where either tensor is not 16-byte aligned, bytes)
// differ between two buffers of n bytes, added to *out. Integer, boolean and `exact` outputs are
// compared this way, and inputs after each correctness run (the kernel must not modify them).
extern "C" __global__ void kernrl_count_differ(const unsigned char* a, const unsigned char* b,
                                               long long n, unsigned long long* out) {
  unsigned long long bad = 0;
  long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  long long words = 0;
  if ((reinterpret_cast<unsigned long long>(a) | reinterpret_cast<unsigned long long>(b)) % 16 ==
      0) {
    words = n / 16;
    const uint4* wa = reinterpret_cast<const uint4*>(a);
    const uint4* wb = reinterpret_cast<const uint4*>(b);
    for (long long i = first; i < words; i += stride) {
      uint4 x = wa[i], y = wb[i];
      bad += (x.x != y.x) | (x.y != y.y) | (x.z != y.z) | (x.w != y.w);
    }
  }
  for (long long i = words * 16 + first; i < n; i += stride) bad += a[i] != b[i];
  __shared__ unsigned long long su[kWarps];
  bad = block_reduce(bad, Add(), 0ull, su);
  if (threadIdx.x == 0 && bad) atomicAdd(out, bad);
}

namespace {

// A 64-bit mixing function (the finaliser of SplitMix64): every input bit affects every output bit.
__device__ unsigned long long mix(unsigned long long x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

// A keyed fingerprint of n bytes, added to *out: the sum over the buffer's 8-byte words (the last
// one padded with zeros) of mix(word ^ mix(key + index)). Inputs are fingerprinted after each fresh
// draw and again after the timed run: a kernel that changed any input changes its fingerprint
// except with a chance of about 2^-64, and it cannot aim for a collision, because the key is drawn
// anew for every run, after the kernel's code was fixed, and passed only to this kernel.
extern "C" __global__ void kernrl_fingerprint(const unsigned char* data, long long n,
                                              unsigned long long key, unsigned long long* out) {
  unsigned long long sum = 0;
  long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long words = (n + 7) / 8;
  bool aligned = reinterpret_cast<unsigned long long>(data) % 8 == 0;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride) {
    unsigned long long w = 0;
    if (aligned && 8 * i + 8 <= n) {
      w = reinterpret_cast<const unsigned long long*>(data)[i];
    } else {
      for (long long b = 8 * i; b < n && b < 8 * i + 8; ++b)
        w |= static_cast<unsigned long long>(data[b]) << (8 * (b - 8 * i));
    }
    sum += mix(w ^ mix(key + static_cast<unsigned long long>(i)));
  }
  __shared__ unsigned long long su[kWarps];
  sum = block_reduce(sum, Add(), 0ull, su);
  if (threadIdx.x == 0) atomicAdd(out, sum);
}
