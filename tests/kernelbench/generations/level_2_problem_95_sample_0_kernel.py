import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

act_chain_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// v = x + bias[col] + add_value[col]
// v = sigmoid(v) * v ; v = tanh(v) ; v = gelu(v) (erf) ; v = hardtanh(v, -1, 1)
__global__ void add_swish_tanh_gelu_hardtanh_kernel(const float* __restrict__ x,
                                                    const float* __restrict__ bias,
                                                    const float* __restrict__ add_value,
                                                    float* __restrict__ y, int M, int N) {
    const int row = blockIdx.y;
    const float* xr = x + (long long)row * N;
    float* yr = y + (long long)row * N;
    for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < N; col += gridDim.x * blockDim.x) {
        float v = xr[col] + bias[col];
        v = v + add_value[col];
        v = v / (1.0f + expf(-v));
        v = tanhf(v);
        v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        v = fminf(fmaxf(v, -1.0f), 1.0f);
        yr[col] = v;
    }
}

torch::Tensor add_swish_tanh_gelu_hardtanh(torch::Tensor x, torch::Tensor bias, torch::Tensor add_value) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2D");
    x = x.contiguous();
    bias = bias.contiguous();
    add_value = add_value.contiguous();
    const int M = x.size(0);
    const int N = x.size(1);
    TORCH_CHECK(bias.numel() == N && add_value.numel() == N, "bias / add_value size mismatch");
    auto y = torch::empty_like(x);
    if (M == 0 || N == 0) return y;
    const int threads = 256;
    int bx = (N + threads - 1) / threads;
    if (bx > 64) bx = 64;
    dim3 grid(bx, M);
    add_swish_tanh_gelu_hardtanh_kernel<<<grid, threads>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                                           add_value.data_ptr<float>(), y.data_ptr<float>(),
                                                           M, N);
    return y;
}
"""

act_chain_cpp = "torch::Tensor add_swish_tanh_gelu_hardtanh(torch::Tensor x, torch::Tensor bias, torch::Tensor add_value);"

act_chain_ext = load_inline(
    name="matmul_add_swish_tanh_gelu_hardtanh",
    cpp_sources=act_chain_cpp,
    cuda_sources=act_chain_source,
    functions=["add_swish_tanh_gelu_hardtanh"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Linear (cuBLAS) + one fused CUDA kernel for add / Swish / Tanh / GELU / Hardtanh.
    """
    def __init__(self, in_features, out_features, add_value_shape):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x):
        y = torch.mm(x, self.matmul.weight.t())
        return act_chain_ext.add_swish_tanh_gelu_hardtanh(y, self.matmul.bias, self.add_value)
