import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

heat_source = """
#include <torch/extension.h>

#define BX 32
#define BY 8

// One Jacobi step of the 2D heat equation; boundary cells are copied unchanged.
__global__ void heat_step_kernel(const float* __restrict__ u, float* __restrict__ u_new, int H, int W) {
    int x = blockIdx.x * BX + threadIdx.x;
    int y = blockIdx.y * BY + threadIdx.y;
    if (x >= W || y >= H) return;
    int i = y * W + x;
    if (x == 0 || y == 0 || x == W - 1 || y == H - 1) {
        u_new[i] = u[i];
        return;
    }
    u_new[i] = 0.25f * (u[i - W] + u[i + W] + u[i - 1] + u[i + 1]);
}

torch::Tensor heat_step(torch::Tensor u) {
    TORCH_CHECK(u.dim() == 2, "expected a 2D grid");
    const int H = u.size(0);
    const int W = u.size(1);
    auto u_new = torch::empty_like(u);
    const dim3 block(BX, BY);
    const dim3 grid((W + BX - 1) / BX, (H + BY - 1) / BY);
    // a single time step (loop kept general)
    const int steps = 1;
    const float* src = u.data_ptr<float>();
    float* dst = u_new.data_ptr<float>();
    for (int s = 0; s < steps; ++s) {
        heat_step_kernel<<<grid, block>>>(src, dst, H, W);
    }
    return u_new;
}
"""

heat = load_inline(
    name="heat2d",
    cpp_sources="torch::Tensor heat_step(torch::Tensor u);",
    cuda_sources=heat_source,
    functions=["heat_step"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, u):
        return heat.heat_step(u)
