import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epilogue_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// v = x + b; v = v * sigmoid(v); v /= 2; clamp(-1, 1); tanh; clamp(-1, 1)
__global__ void swish_div_clamp_tanh_clamp_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                                  float* __restrict__ y, long long total, int N, bool has_bias) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        float v = x[i];
        if (has_bias) v += bias[i % N];
        v = v * (1.0f / (1.0f + expf(-v)));
        v = v / 2.0f;
        v = fminf(fmaxf(v, -1.0f), 1.0f);
        v = tanhf(v);
        v = fminf(fmaxf(v, -1.0f), 1.0f);
        y[i] = v;
    }
}

torch::Tensor swish_div_clamp_tanh_clamp(torch::Tensor x, torch::Tensor bias, bool has_bias) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    bias = bias.contiguous();
    auto y = torch::empty_like(x);
    const long long total = x.numel();
    const int N = x.size(-1);
    if (total == 0) return y;
    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 1048576) blocks = 1048576;
    swish_div_clamp_tanh_clamp_kernel<<<(int)blocks, threads>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                                                y.data_ptr<float>(), total, N, has_bias);
    return y;
}
"""

epilogue_cpp = "torch::Tensor swish_div_clamp_tanh_clamp(torch::Tensor x, torch::Tensor bias, bool has_bias);"

epilogue_ext = load_inline(
    name="gemm_swish_div_clamp_tanh_clamp",
    cpp_sources=epilogue_cpp,
    cuda_sources=epilogue_source,
    functions=["swish_div_clamp_tanh_clamp"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Gemm (cuBLAS) + one fused CUDA kernel for bias / Swish / divide / clamp / tanh / clamp.
    """
    def __init__(self, in_features, out_features, bias=True):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        y = torch.mm(x, self.gemm.weight.t())
        if self.gemm.bias is not None:
            return epilogue_ext.swish_div_clamp_tanh_clamp(y, self.gemm.bias, True)
        return epilogue_ext.swish_div_clamp_tanh_clamp(y, y.new_zeros(1), False)
