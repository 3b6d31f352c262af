import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <stdint.h>

// Vectorised ReLU: float4 loads/stores for the bulk, scalar loop for the tail.
__global__ void relu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.0f);
        v.y = fmaxf(v.y, 0.0f);
        v.z = fmaxf(v.z, 0.0f);
        v.w = fmaxf(v.w, 0.0f);
        y[i] = v;
    }
}

__global__ void relu_scalar_kernel(const float* __restrict__ x, float* __restrict__ y,
                                   long long start, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    long long n = x.numel();
    if (n == 0) return y;
    const int threads = 256;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    bool aligned = (((uintptr_t)xp) % 16 == 0) && (((uintptr_t)yp) % 16 == 0);
    long long done = 0;
    if (aligned) {
        long long n4 = n / 4;
        if (n4 > 0) {
            long long blocks = (n4 + threads - 1) / threads;
            if (blocks > 1048576) blocks = 1048576;
            relu_vec4_kernel<<<(int)blocks, threads>>>((const float4*)xp, (float4*)yp, n4);
        }
        done = n4 * 4;
    }
    long long rem = n - done;
    if (rem > 0) {
        long long blocks = (rem + threads - 1) / threads;
        if (blocks > 1048576) blocks = 1048576;
        relu_scalar_kernel<<<(int)blocks, threads>>>(xp, yp, done, n);
    }
    return y;
}
"""

relu_cpp = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(
    name="relu_vec4",
    cpp_sources=relu_cpp,
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Simple model that performs a ReLU activation with a custom CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_ext.relu_cuda(x)
