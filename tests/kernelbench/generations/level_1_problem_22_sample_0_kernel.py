import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tanh_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void tanh_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        float4 r;
        r.x = tanhf(v.x);
        r.y = tanhf(v.y);
        r.z = tanhf(v.z);
        r.w = tanhf(v.w);
        y[i] = r;
    }
}

__global__ void tanh_tail_kernel(const float* __restrict__ x, float* __restrict__ y,
                                 long long start, long long n) {
    long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = tanhf(x[i]);
}

torch::Tensor tanh_cuda(torch::Tensor x) {
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
            if (blocks > 262144) blocks = 262144;
            tanh_vec4_kernel<<<(int)blocks, threads>>>((const float4*)xp, (float4*)yp, n4);
        }
        start = n4 * 4;
    }
    long long rem = n - start;
    if (rem > 0) {
        long long blocks = (rem + threads - 1) / threads;
        tanh_tail_kernel<<<(unsigned int)blocks, threads>>>(xp, yp, start, n);
    }
    return y;
}
"""

tanh_cpp = "torch::Tensor tanh_cuda(torch::Tensor x);"

tanh_ext = load_inline(
    name="tanh_vec4_custom",
    cpp_sources=tanh_cpp,
    cuda_sources=tanh_source,
    functions=["tanh_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Simple model that performs a Tanh activation with a custom CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return tanh_ext.tanh_cuda(x)
