import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

div_gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <stdint.h>

__device__ __forceinline__ float gelu_exact(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

// y = gelu((x + bias[col]) / divisor), processed 4 columns at a time (N % 4 == 0 path)
__global__ void bias_div_gelu_vec4_kernel(const float4* __restrict__ x, const float4* __restrict__ bias,
                                          float4* __restrict__ y, float divisor, long long total4, int N4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total4; i += stride) {
        float4 v = x[i];
        float4 b = bias[i % N4];
        float4 r;
        r.x = gelu_exact((v.x + b.x) / divisor);
        r.y = gelu_exact((v.y + b.y) / divisor);
        r.z = gelu_exact((v.z + b.z) / divisor);
        r.w = gelu_exact((v.w + b.w) / divisor);
        y[i] = r;
    }
}

__global__ void bias_div_gelu_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                     float* __restrict__ y, float divisor, long long total, int N) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride)
        y[i] = gelu_exact((x[i] + bias[i % N]) / divisor);
}

torch::Tensor bias_div_gelu(torch::Tensor x, torch::Tensor bias, double divisor) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    bias = bias.contiguous();
    auto y = torch::empty_like(x);
    const long long total = x.numel();
    const int N = x.size(-1);
    if (total == 0) return y;
    const int threads = 256;
    bool vec = (N % 4 == 0) && ((uintptr_t)x.data_ptr<float>() % 16 == 0) &&
               ((uintptr_t)bias.data_ptr<float>() % 16 == 0) && ((uintptr_t)y.data_ptr<float>() % 16 == 0);
    if (vec) {
        long long total4 = total / 4;
        long long blocks = (total4 + threads - 1) / threads;
        if (blocks > 1048576) blocks = 1048576;
        bias_div_gelu_vec4_kernel<<<(int)blocks, threads>>>(
            reinterpret_cast<const float4*>(x.data_ptr<float>()),
            reinterpret_cast<const float4*>(bias.data_ptr<float>()),
            reinterpret_cast<float4*>(y.data_ptr<float>()), (float)divisor, total4, N / 4);
    } else {
        long long blocks = (total + threads - 1) / threads;
        if (blocks > 1048576) blocks = 1048576;
        bias_div_gelu_kernel<<<(int)blocks, threads>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                                       y.data_ptr<float>(), (float)divisor, total, N);
    }
    return y;
}
"""

div_gelu_cpp = "torch::Tensor bias_div_gelu(torch::Tensor x, torch::Tensor bias, double divisor);"

div_gelu_ext = load_inline(
    name="matmul_divide_gelu_epilogue",
    cpp_sources=div_gelu_cpp,
    cuda_sources=div_gelu_source,
    functions=["bias_div_gelu"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Linear (cuBLAS) + fused bias / divide / GELU CUDA kernel.
    """
    def __init__(self, input_size, output_size, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        return div_gelu_ext.bias_div_gelu(y, self.linear.bias, float(self.divisor))
