/* kernrl
problem: L5_3_SpMV_CSR
launches:
  - kernel: spmv_csr_warp
    grid: [cdiv(num_rows, 8)]
    block: [256]
    args: [values, col_indices, row_ptrs, x, out, num_rows, num_cols]
*/

// CSR SpMV, one warp per row (rows have 1..99 nonzeros, 50 on average).
// Each lane strides over the row's nonzeros, so the values/col_indices loads
// of a warp are contiguous; the x gathers go through the read-only cache.
// Partial sums are combined with a shuffle reduction.

#include <cstdint>

#define WARPS_PER_BLOCK 8

extern "C" __global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
spmv_csr_warp(const float* __restrict__ values,
              const long long* __restrict__ col_indices,
              const long long* __restrict__ row_ptrs,
              const float* __restrict__ x,
              float* __restrict__ out,
              int num_rows,
              int num_cols)
{
    const int lane = threadIdx.x & 31;
    const long long row = (long long)blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= num_rows) return;            // uniform for the whole warp

    const long long start = __ldg(row_ptrs + row);
    const long long end   = __ldg(row_ptrs + row + 1);

    float sum = 0.0f;
    for (long long k = start + lane; k < end; k += 32) {
        const long long c = __ldg(col_indices + k);
        sum = fmaf(__ldg(values + k), __ldg(x + c), sum);
    }

#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, off);

    if (lane == 0) out[row] = sum;
    (void)num_cols;
}
