// expect: correct
// bf16 arithmetic on an fp32 problem: the exponentials and their row sums in bf16, within the scalar's tolerance
/* kernrl
problem: L1_95_CrossEntropyLoss
launches:
  - kernel: ce_partial
    grid: ["min(cdiv(batch_size, 256), 1024)"]
    block: [256]
    args: [predictions, targets, partials, batch_size, num_classes]
  - kernel: ce_final
    grid: [1]
    block: [256]
    args: [partials, out, "min(cdiv(batch_size, 256), 1024)", batch_size]
scratch:
  partials: {dtype: float64, count: "1024"}
*/
// The precision contract is the tolerance (docs/grading.md, "Precision policy"): reduced-precision
// arithmetic is `correct` where the outputs stay within it. Here each row's max and its target's
// logit stay fp32, but x - max is rounded to bf16 and exp and the sum of the exponentials are bf16
// operations (hexp, __hadd): log(sum) is off by a few bf16 units, about 4e-3 absolute and of either
// sign, per row. The output is the mean over the rows, whose tolerance is 1e-5 + 1e-3 * |loss|:
// the errors average out, and an emulation over 300 draws of each size puts the worst error at
// 0.37 of the tolerance (batch 37), 0.02 at the bench size. Rounding the logits themselves to bf16
// would fail: the loss is a difference of logits that reach 1e4.
#include <cuda_bf16.h>

__device__ double block_sum_d(double v) {
  __shared__ double red[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  double r = 0.0;
  if (warp == 0) {
    const int nwarps = blockDim.x / 32;
    r = lane < nwarps ? red[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
  }
  return r;  // valid in thread 0
}

extern "C" __global__ void __launch_bounds__(256)
ce_partial(const float* __restrict__ pred, const long long* __restrict__ tgt,
           double* __restrict__ partials, int n, int k) {
  double s = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float* r = pred + (long long)i * k;
    float m = -INFINITY;
    for (int j = 0; j < k; ++j) m = fmaxf(m, r[j]);
    __nv_bfloat16 se = __float2bfloat16(0.0f);
    for (int j = 0; j < k; ++j) se = __hadd(se, hexp(__float2bfloat16(r[j] - m)));
    const long long t = tgt[i];
    s += (double)((m - r[t]) + logf(__bfloat162float(se)));
  }
  s = block_sum_d(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

extern "C" __global__ void __launch_bounds__(256)
ce_final(const double* __restrict__ partials, float* __restrict__ out, int g, int n) {
  double s = 0.0;
  for (int i = threadIdx.x; i < g; i += blockDim.x) s += partials[i];
  s = block_sum_d(s);
  if (threadIdx.x == 0) out[0] = (float)(s / (double)n);
}
