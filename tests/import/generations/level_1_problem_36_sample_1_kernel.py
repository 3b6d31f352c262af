import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void rmsnorm_fwd(const float* in, float* out, int C, int HW, float eps) {
    // grid: (ceil(HW / blockDim.x), B)
    int b = blockIdx.y;
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= HW) return;
    const float* base = in + (size_t)b * C * HW + p;
    float acc = 0.f;
    for (int c = 0; c < C; c++) { float v = base[(size_t)c * HW]; acc += v * v; }
    float scale = 1.0f / sqrtf(acc / (float)C + eps);
    float* obase = out + (size_t)b * C * HW + p;
    for (int c = 0; c < C; c++) obase[(size_t)c * HW] = base[(size_t)c * HW] * scale;
}

torch::Tensor rmsnorm(torch::Tensor x, double eps) {
    auto out = torch::empty_like(x);
    if (x.numel() == 0) {
        return out;
    }
    int B = x.size(0), C = x.size(1);
    int HW = x.size(2) * x.size(3);
    int threads = std::min(1024, HW);
    dim3 grid((HW + threads - 1) / threads, B);
    rmsnorm_fwd<<<grid, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), C, HW, (float)eps);
    return out;
}
"""

rmsnorm_mod = load_inline(
    name="rmsnorm_mod",
    cpp_sources="torch::Tensor rmsnorm(torch::Tensor x, double eps);",
    cuda_sources=cuda_source,
    functions=["rmsnorm"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = float(eps)

    def forward(self, x):
        if not x.is_contiguous():
            x = x.contiguous()
        return rmsnorm_mod.rmsnorm(x, self.eps)
