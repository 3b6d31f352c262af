import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# In-place GELU saves an allocation.
gelu_inplace_source = """
#include <torch/extension.h>

__global__ void gelu_inplace_kernel(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        x[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
    }
}

torch::Tensor gelu_inplace(torch::Tensor x) {
    int n = x.numel();
    gelu_inplace_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
    return x;
}
"""

gelu_inplace = load_inline(
    name="gelu_inplace",
    cpp_sources="torch::Tensor gelu_inplace(torch::Tensor x);",
    cuda_sources=gelu_inplace_source,
    functions=["gelu_inplace"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_inplace.gelu_inplace(x)
