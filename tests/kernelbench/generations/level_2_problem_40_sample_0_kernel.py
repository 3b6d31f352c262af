import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# out = y * s + y with y = x W^T + b. The clone is unnecessary: bias add, scaling and the
# residual add are one vectorised elementwise kernel on top of the cuBLAS GEMM.
scale_residual_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void bias_scale_residual_vec4_kernel(const float4* __restrict__ y, const float4* __restrict__ bias4,
                                                float4* __restrict__ out, float s,
                                                long long total4, int N4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total4; i += stride) {
        float4 v = y[i];
        float4 b = bias4[i % N4];
        float4 r;
        float a;
        a = v.x + b.x; r.x = a * s + a;
        a = v.y + b.y; r.y = a * s + a;
        a = v.z + b.z; r.z = a * s + a;
        a = v.w + b.w; r.w = a * s + a;
        out[i] = r;
    }
}

__global__ void bias_scale_residual_kernel(const float* __restrict__ y, const float* __restrict__ bias,
                                           float* __restrict__ out, float s, long long total, int N) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        float a = y[i] + bias[i % N];
        out[i] = a * s + a;
    }
}

torch::Tensor bias_scale_residual(torch::Tensor y, torch::Tensor bias, double s) {
    TORCH_CHECK(y.is_cuda(), "y must be a CUDA tensor");
    y = y.contiguous();
    bias = bias.contiguous();
    auto out = torch::empty_like(y);
    const long long total = y.numel();
    const int N = y.size(-1);
    if (total == 0) return out;
    const int threads = 256;
    if (N % 4 == 0) {
        long long total4 = total / 4;
        long long blocks = (total4 + threads - 1) / threads;
        if (blocks > 1048576) blocks = 1048576;
        bias_scale_residual_vec4_kernel<<<(int)blocks, threads>>>(
            reinterpret_cast<const float4*>(y.data_ptr<float>()),
            reinterpret_cast<const float4*>(bias.data_ptr<float>()),
            reinterpret_cast<float4*>(out.data_ptr<float>()), (float)s, total4, N / 4);
    } else {
        long long blocks = (total + threads - 1) / threads;
        if (blocks > 1048576) blocks = 1048576;
        bias_scale_residual_kernel<<<(int)blocks, threads>>>(y.data_ptr<float>(), bias.data_ptr<float>(),
                                                             out.data_ptr<float>(), (float)s, total, N);
    }
    return out;
}
"""

scale_residual_cpp = "torch::Tensor bias_scale_residual(torch::Tensor y, torch::Tensor bias, double s);"

scale_residual_ext = load_inline(
    name="matmul_scale_residual_epilogue",
    cpp_sources=scale_residual_cpp,
    cuda_sources=scale_residual_source,
    functions=["bias_scale_residual"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Linear (cuBLAS) + fused bias / scaling / residual-add CUDA epilogue.
    """
    def __init__(self, in_features, out_features, scaling_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = torch.mm(x, self.matmul.weight.t())
        return scale_residual_ext.bias_scale_residual(y, self.matmul.bias, float(self.scaling_factor))
