import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void stencil(const float* u, float* v, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    int i = y * W + x;
    if (x == 0 || y == 0 || x == W - 1 || y == H - 1) { v[i] = u[i]; return; }
    v[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - W] + u[i + W]);
}

torch::Tensor heat(torch::Tensor u) {
    int H = u.size(0), W = u.size(1);
    float* tmp;
    cudaMalloc(&tmp, sizeof(float) * H * W);
    dim3 b(16, 16), g((W + 15) / 16, (H + 15) / 16);
    stencil<<<g, b>>>(u.data_ptr<float>(), tmp, H, W);
    auto out = torch::empty_like(u);
    cudaMemcpy(out.data_ptr<float>(), tmp, sizeof(float) * H * W, cudaMemcpyDeviceToDevice);
    cudaFree(tmp);
    return out;
}
"""

heat_mod = load_inline(name="heat_malloc", cpp_sources="torch::Tensor heat(torch::Tensor u);",
                       cuda_sources=source, functions=["heat"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, u):
        return heat_mod.heat(u)
