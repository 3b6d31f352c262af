import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rms_source = """
#include <torch/extension.h>

__global__ void rms_kernel(const float* x, float* y, int C, int S, float inv_c, float eps) {
    int b = blockIdx.y;
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= S) return;
    const float* xb = x + (size_t)b * C * S + s;
    float acc = 0.f;
    for (int c = 0; c < C; ++c) acc += xb[(size_t)c * S] * xb[(size_t)c * S];
    float r = rsqrtf(acc * inv_c + eps);
    for (int c = 0; c < C; ++c) y[(size_t)b * C * S + (size_t)c * S + s] = xb[(size_t)c * S] * r;
}

torch::Tensor rms_norm(torch::Tensor x, float eps) {
    int B = x.size(0), C = x.size(1);
    int S = x.size(2) * x.size(3);
    float inv_c = 1.0f / (float)C;   // precompute the reciprocal on the host
    auto y = torch::empty_like(x);
    dim3 grid((S + 255) / 256, B);
    rms_kernel<<<grid, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), C, S, inv_c, eps);
    return y;
}
"""

rms = load_inline(name="rms_host_recip", cpp_sources="torch::Tensor rms_norm(torch::Tensor x, float eps);",
                  cuda_sources=rms_source, functions=["rms_norm"])


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return rms.rms_norm(x, self.eps)
