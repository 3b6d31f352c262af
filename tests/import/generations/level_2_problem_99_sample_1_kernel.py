import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gelu_softmax_source = """
#include <torch/extension.h>

__global__ void gelu_softmax_kernel(const float* x, float* y, int cols) {
    extern __shared__ float row[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        float v = xr[i];
        row[i] = 0.5f * v * (1.f + erff(v * 0.70710678f));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float m = row[0];
        for (int i = 1; i < cols; ++i) m = fmaxf(m, row[i]);
        float s = 0.f;
        for (int i = 0; i < cols; ++i) { row[i] = expf(row[i] - m); s += row[i]; }
        for (int i = 0; i < cols; ++i) row[i] /= s;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < cols; i += blockDim.x) y[(size_t)blockIdx.x * cols + i] = row[i];
}

torch::Tensor gelu_softmax(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int cols = x.size(1);
    gelu_softmax_kernel<<<x.size(0), 32, cols * sizeof(float)>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols);
    return y;
}
"""

gelu_softmax = load_inline(
    name="gelu_softmax",
    cpp_sources="torch::Tensor gelu_softmax(torch::Tensor x);",
    cuda_sources=gelu_softmax_source,
    functions=["gelu_softmax"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        x = x @ self.weight.T + self.bias
        return gelu_softmax.gelu_softmax(x)
