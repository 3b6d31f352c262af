import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softsign_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void softsign_kernel(const float* __restrict__ x, float* __restrict__ out, long long n) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)blockDim.x * gridDim.x;
    while (idx < n) {
        float v = x[idx];
        out[idx] = v / (1.0f + fabsf(v));
        idx += stride;
    }
}

torch::Tensor softsign_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    long long n = xc.numel();
    if (n == 0) return out;
    const int threads = 256;
    long long blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 16) blocks = 65535 * 16;
    softsign_kernel<<<(int)blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

softsign_cpp = "torch::Tensor softsign_cuda(torch::Tensor x);"

softsign_ext = load_inline(
    name="softsign_custom",
    cpp_sources=softsign_cpp,
    cuda_sources=softsign_source,
    functions=["softsign_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    """
    Softsign x / (1 + |x|) fused into one CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softsign_ext.softsign_cuda(x)
