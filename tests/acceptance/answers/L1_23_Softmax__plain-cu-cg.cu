/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: softmax_cg_kernel
    grid: [batch_size]
    block: [256]
    args: [x, out, batch_size, dim]
*/

// Row-wise numerically stable softmax: one 256-thread block per row.
// Warp-level reductions use cooperative groups (tiled_partition<32> + cg::reduce),
// then the 8 warp results are combined through shared memory.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <math.h>

namespace cg = cooperative_groups;

#define SM_THREADS 256
#define SM_WARPS (SM_THREADS / 32)

__device__ __forceinline__ float block_max(float v, float* sbuf) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  v = cg::reduce(warp, v, cg::greater<float>());
  if (warp.thread_rank() == 0) sbuf[warp.meta_group_rank()] = v;
  block.sync();
  float r = (warp.thread_rank() < SM_WARPS) ? sbuf[warp.thread_rank()] : -INFINITY;
  r = cg::reduce(warp, r, cg::greater<float>());
  block.sync();   // sbuf may be reused by the caller
  return r;
}

__device__ __forceinline__ float block_sum(float v, float* sbuf) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) sbuf[warp.meta_group_rank()] = v;
  block.sync();
  float r = (warp.thread_rank() < SM_WARPS) ? sbuf[warp.thread_rank()] : 0.0f;
  r = cg::reduce(warp, r, cg::plus<float>());
  block.sync();
  return r;
}

extern "C" __global__ void __launch_bounds__(SM_THREADS)
softmax_cg_kernel(const float* __restrict__ x, float* __restrict__ out, int batch_size, int dim) {
  __shared__ float sbuf[SM_WARPS];
  const int row = blockIdx.x;
  if (row >= batch_size) return;

  const float* xr = x + (size_t)row * dim;
  float* yr = out + (size_t)row * dim;
  const int tid = threadIdx.x;

  // Rows are 16-byte aligned when dim % 4 == 0 (allocation is aligned): use float4.
  const bool vec = (dim & 3) == 0;
  const int nvec = vec ? (dim >> 2) : 0;
  const float4* xr4 = reinterpret_cast<const float4*>(xr);
  float4* yr4 = reinterpret_cast<float4*>(yr);

  // pass 1: max
  float m = -INFINITY;
  if (vec) {
    for (int i = tid; i < nvec; i += SM_THREADS) {
      float4 v = xr4[i];
      m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    }
  } else {
    for (int i = tid; i < dim; i += SM_THREADS) m = fmaxf(m, xr[i]);
  }
  m = block_max(m, sbuf);

  // pass 2: sum of exp
  float s = 0.0f;
  if (vec) {
    for (int i = tid; i < nvec; i += SM_THREADS) {
      float4 v = xr4[i];
      s += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
    }
  } else {
    for (int i = tid; i < dim; i += SM_THREADS) s += expf(xr[i] - m);
  }
  s = block_sum(s, sbuf);
  const float inv = 1.0f / s;

  // pass 3: normalise and write
  if (vec) {
    for (int i = tid; i < nvec; i += SM_THREADS) {
      float4 v = xr4[i];
      v.x = expf(v.x - m) * inv;
      v.y = expf(v.y - m) * inv;
      v.z = expf(v.z - m) * inv;
      v.w = expf(v.w - m) * inv;
      yr4[i] = v;
    }
  } else {
    for (int i = tid; i < dim; i += SM_THREADS) yr[i] = expf(xr[i] - m) * inv;
  }
}
