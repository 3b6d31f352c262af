import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

hardtanh_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void hardtanh_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y,
                                     float lo, float hi, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = fminf(fmaxf(v.x, lo), hi);
        v.y = fminf(fmaxf(v.y, lo), hi);
        v.z = fminf(fmaxf(v.z, lo), hi);
        v.w = fminf(fmaxf(v.w, lo), hi);
        y[i] = v;
    }
}

__global__ void hardtanh_scalar_kernel(const float* __restrict__ x, float* __restrict__ y,
                                       float lo, float hi, long long start, long long n) {
    long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}

torch::Tensor hardtanh_cuda(torch::Tensor x, double min_val, double max_val) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    long long n = x.numel();
    if (n == 0) return y;
    const int threads = 256;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    float lo = (float)min_val, hi = (float)max_val;
    long long start = 0;
    if (((uintptr_t)xp % 16 == 0) && ((uintptr_t)yp % 16 == 0)) {
        long long n4 = n / 4;
        if (n4 > 0) {
            long long blocks = (n4 + threads - 1) / threads;
            if (blocks > 1048576) blocks = 1048576;
            hardtanh_vec4_kernel<<<(int)blocks, threads>>>((const float4*)xp, (float4*)yp, lo, hi, n4);
        }
        start = n4 * 4;
    }
    if (n - start > 0) {
        long long blocks = (n - start + threads - 1) / threads;
        hardtanh_scalar_kernel<<<(unsigned int)blocks, threads>>>(xp, yp, lo, hi, start, n);
    }
    return y;
}
"""

hardtanh_cpp = "torch::Tensor hardtanh_cuda(torch::Tensor x, double min_val, double max_val);"

hardtanh_ext = load_inline(
    name="hardtanh_vec4_custom",
    cpp_sources=hardtanh_cpp,
    cuda_sources=hardtanh_source,
    functions=["hardtanh_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Simple model that performs a HardTanh activation with a custom CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return hardtanh_ext.hardtanh_cuda(x, -1.0, 1.0)
