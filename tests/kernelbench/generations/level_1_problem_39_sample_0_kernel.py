import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l2norm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define THREADS 256

__device__ __forceinline__ float warp_reduce(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

// One block per row: sum of squares -> 1/sqrt -> scale.
__global__ void l2_normalize_kernel(const float* __restrict__ x, float* __restrict__ y, int D) {
    const long long row = blockIdx.x;
    const float* xr = x + row * D;
    float* yr = y + row * D;

    float s = 0.0f;
    for (int i = threadIdx.x; i < D; i += THREADS) {
        float v = xr[i];
        s += v * v;
    }
    __shared__ float warp_sums[THREADS / 32];
    __shared__ float inv_norm;
    s = warp_reduce(s);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        float t = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f;
        t = warp_reduce(t);
        if (threadIdx.x == 0) inv_norm = 1.0f / sqrtf(t);
    }
    __syncthreads();
    const float inv = inv_norm;
    for (int i = threadIdx.x; i < D; i += THREADS) yr[i] = xr[i] * inv;
}

torch::Tensor l2_normalize_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "expected (batch, dim)");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int B = x.size(0);
    const int D = x.size(1);
    if (B == 0 || D == 0) return y;
    l2_normalize_kernel<<<B, THREADS>>>(x.data_ptr<float>(), y.data_ptr<float>(), D);
    return y;
}
"""

l2norm_cpp = "torch::Tensor l2_normalize_cuda(torch::Tensor x);"

l2norm_ext = load_inline(
    name="l2_row_normalize",
    cpp_sources=l2norm_cpp,
    cuda_sources=l2norm_source,
    functions=["l2_normalize_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    L2 normalization along dim=1 with a custom CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l2norm_ext.l2_normalize_cuda(x)
