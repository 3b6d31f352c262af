import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scale_residual_source = """
#include <torch/extension.h>

__global__ void scale_residual_kernel(const float* x, float* out, float scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * (1.0f + scale);
}

torch::Tensor scale_residual_cuda(torch::Tensor x, float scale) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    scale_residual_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), scale, n);
    return out;
}
"""

scale_residual = load_inline(
    name="scale_residual",
    cpp_sources="torch::Tensor scale_residual_cuda(torch::Tensor x, float scale);",
    cuda_sources=scale_residual_source,
    functions=["scale_residual_cuda"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.randn(out_features))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = torch.matmul(x, self.weight.t()) + self.bias
        return scale_residual.scale_residual_cuda(x, self.scaling_factor)
