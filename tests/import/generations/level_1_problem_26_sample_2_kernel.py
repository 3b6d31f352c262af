import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_cuda_src = """
#include <torch/extension.h>

__global__ void gelu_fwd_kernel(const float* __restrict__ in, float* __restrict__ out, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float v = in[i];
        out[i] = v * normcdff(v);
    }
}

void gelu_forward(torch::Tensor input, torch::Tensor output) {
    long n = input.numel();
    int threads = 1024;
    int blocks = (int)std::min<long>((n + threads - 1) / threads, 65535L);
    gelu_fwd_kernel<<<blocks, threads>>>(input.data_ptr<float>(), output.data_ptr<float>(), n);
}
"""

gelu_cpp_src = "void gelu_forward(torch::Tensor input, torch::Tensor output);"

gelu_ext = load_inline(
    name="gelu_out",
    cpp_sources=gelu_cpp_src,
    cuda_sources=gelu_cuda_src,
    functions=["gelu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_contiguous():
            x = x.contiguous()
        out = torch.empty_like(x)
        gelu_ext.gelu_forward(x, out)
        return out
