import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layer_norm_source = """
#include <torch/extension.h>

__global__ void layer_norm_kernel(const float* x, const float* g, const float* b, float* y, int N, float eps) {
    // naive: thread 0 of each block does the statistics
    __shared__ float mean, rstd;
    const float* xr = x + (size_t)blockIdx.x * N;
    if (threadIdx.x == 0) {
        float s = 0.f, ss = 0.f;
        for (int i = 0; i < N; ++i) { s += xr[i]; ss += xr[i] * xr[i]; }
        mean = s / N;
        rstd = rsqrtf(ss / N - mean * mean + eps);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        y[(size_t)blockIdx.x * N + i] = (xr[i] - mean) * rstd * g[i] + b[i];
}

torch::Tensor layer_norm(torch::Tensor x, torch::Tensor g, torch::Tensor b, float eps) {
    int B = x.size(0);
    int N = g.numel();
    auto y = torch::empty_like(x);
    layer_norm_kernel<<<B, 256>>>(x.data_ptr<float>(), g.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), N, eps);
    return y;
}
""

layer_norm = load_inline(
    name="layer_norm",
    cpp_sources="torch::Tensor layer_norm(torch::Tensor x, torch::Tensor g, torch::Tensor b, float eps);",
    cuda_sources=layer_norm_source,
    functions=["layer_norm"],
)


class ModelNew(nn.Module):
    def __init__(self, features, dim1, dim2, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(features, dim1, dim2))
        self.bias = nn.Parameter(torch.zeros(features, dim1, dim2))
        self.eps = eps

    def forward(self, x):
        return layer_norm.layer_norm(x, self.weight, self.bias, self.eps)
