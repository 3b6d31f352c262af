import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <stdint.h>

// Exact (erf-based) GELU, matching torch.nn.functional.gelu default.
__device__ __forceinline__ float gelu_erf(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
}

__global__ void gelu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = gelu_erf(v.x);
        v.y = gelu_erf(v.y);
        v.z = gelu_erf(v.z);
        v.w = gelu_erf(v.w);
        y[i] = v;
    }
}

__global__ void gelu_scalar_kernel(const float* __restrict__ x, float* __restrict__ y,
                                   long long start, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = gelu_erf(x[i]);
}

torch::Tensor gelu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    long long n = x.numel();
    if (n == 0) return y;
    const int threads = 256;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    long long start = 0;
    if (((uintptr_t)xp % 16 == 0) && ((uintptr_t)yp % 16 == 0)) {
        long long n4 = n / 4;
        if (n4 > 0) {
            long long blocks = (n4 + threads - 1) / threads;
            if (blocks > 524288) blocks = 524288;
            gelu_vec4_kernel<<<(int)blocks, threads>>>((const float4*)xp, (float4*)yp, n4);
        }
        start = n4 * 4;
    }
    if (n - start > 0) {
        long long blocks = (n - start + threads - 1) / threads;
        if (blocks > 524288) blocks = 524288;
        gelu_scalar_kernel<<<(int)blocks, threads>>>(xp, yp, start, n);
    }
    return y;
}
"""

gelu_cpp = "torch::Tensor gelu_cuda(torch::Tensor x);"

gelu_ext = load_inline(
    name="gelu_erf_vec4",
    cpp_sources=gelu_cpp,
    cuda_sources=gelu_source,
    functions=["gelu_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Simple model that performs a GELU activation with a custom CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return gelu_ext.gelu_cuda(x)
