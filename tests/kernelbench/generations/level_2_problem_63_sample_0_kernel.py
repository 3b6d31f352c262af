import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_div_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void bias_relu_div_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                     float* __restrict__ y, float divisor, long long total, int N) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)blockDim.x * gridDim.x;
    for (; idx < total; idx += stride) {
        float v = x[idx] + bias[idx % N];
        y[idx] = fmaxf(v, 0.0f) / divisor;
    }
}

torch::Tensor bias_relu_div(torch::Tensor x, torch::Tensor bias, double divisor) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    bias = bias.contiguous();
    auto y = torch::empty_like(x);
    const long long total = x.numel();
    const int N = x.size(-1);
    if (total == 0) return y;
    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 65535) blocks = 65535;
    bias_relu_div_kernel<<<(int)blocks, threads>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                                   y.data_ptr<float>(), (float)divisor, total, N);
    return y;
}
"""

relu_div_cpp = "torch::Tensor bias_relu_div(torch::Tensor x, torch::Tensor bias, double divisor);"

relu_div_ext = load_inline(
    name="gemm_relu_divide_epilogue",
    cpp_sources=relu_div_cpp,
    cuda_sources=relu_div_source,
    functions=["bias_relu_div"],
    verbose=False,
)


class ModelNew(nn.Module):
    """
    Linear (cuBLAS) + fused bias / ReLU / divide CUDA kernel.
    """
    def __init__(self, in_features, out_features, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        return relu_div_ext.bias_relu_div(y, self.linear.bias, float(self.divisor))
