import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cumprod_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define WARPS_PER_BLOCK 8
#define CHUNKS 8                  // 8 x 32 = 256 elements per warp iteration
#define FULL_MASK 0xffffffffu

// One warp scans one row. Each iteration loads CHUNKS coalesced 32-element
// segments, runs CHUNKS independent warp-shuffle inclusive product scans
// (interleaved for ILP), then chains them with the running carry.
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
cumprod_rows_kernel(const float* __restrict__ x, float* __restrict__ y,
                    int64_t rows, int64_t L) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    if (row >= rows) return;   // uniform per warp

    const float* __restrict__ xr = x + row * L;
    float* __restrict__ yr = y + row * L;

    float carry = 1.0f;
    for (int64_t base = 0; base < L; base += 32 * CHUNKS) {
        float v[CHUNKS];
#pragma unroll
        for (int k = 0; k < CHUNKS; ++k) {
            const int64_t idx = base + k * 32 + lane;
            v[k] = (idx < L) ? __ldg(xr + idx) : 1.0f;
        }
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
#pragma unroll
            for (int k = 0; k < CHUNKS; ++k) {
                const float t = __shfl_up_sync(FULL_MASK, v[k], off);
                if (lane >= off) v[k] *= t;
            }
        }
#pragma unroll
        for (int k = 0; k < CHUNKS; ++k) {
            const float seg_total = __shfl_sync(FULL_MASK, v[k], 31);
            const float r = carry * v[k];
            carry *= seg_total;
            const int64_t idx = base + k * 32 + lane;
            if (idx < L) yr[idx] = r;
        }
    }
}

torch::Tensor cumprod_forward(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    const int64_t nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim == nd - 1, "kernel scans the innermost (contiguous) dimension");

    auto y = torch::empty_like(x);
    const int64_t L = x.size(dim);
    const int64_t rows = (L > 0) ? x.numel() / L : 0;

    const int64_t blocks = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    cumprod_rows_kernel<<<(unsigned)(blocks > 0 ? blocks : 1), WARPS_PER_BLOCK * 32>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, L);
    return y;
}
"""

cumprod_cpp_source = "torch::Tensor cumprod_forward(torch::Tensor x, int64_t dim);"

cumprod_ext = load_inline(
    name="cumprod_warp_scan_ext",
    cpp_sources=cumprod_cpp_source,
    cuda_sources=cumprod_cuda_source,
    functions=["cumprod_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """
    Cumulative product along `dim` computed with a warp-per-row shuffle scan.
    """
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        return cumprod_ext.cumprod_forward(x, self.dim)
