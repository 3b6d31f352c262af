import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# The convolution itself stays on cuDNN (without its bias); a single custom kernel applies
# the conv bias, ReLU and the extra per-channel bias in one pass over the output.
conv_epilogue_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void conv_bias_relu_bias_kernel(const float* __restrict__ x,
                                           const float* __restrict__ conv_bias,
                                           const float* __restrict__ extra_bias,
                                           float* __restrict__ y,
                                           long long total, int C, long long HW) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
        int c = (int)((i / HW) % C);
        float v = x[i] + conv_bias[c];
        v = fmaxf(v, 0.0f);
        y[i] = v + extra_bias[c];
    }
}

torch::Tensor conv_bias_relu_bias(torch::Tensor x, torch::Tensor conv_bias, torch::Tensor extra_bias) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    x = x.contiguous();
    conv_bias = conv_bias.contiguous();
    extra_bias = extra_bias.contiguous();
    const int C = x.size(1);
    const long long HW = (long long)x.size(2) * x.size(3);
    const long long total = x.numel();
    TORCH_CHECK(conv_bias.numel() == C && extra_bias.numel() == C, "bias size mismatch");
    auto y = torch::empty_like(x);
    if (total == 0) return y;
    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 1048576) blocks = 1048576;
    conv_bias_relu_bias_kernel<<<(int)blocks, threads>>>(x.data_ptr<float>(), conv_bias.data_ptr<float>(),
                                                         extra_bias.data_ptr<float>(), y.data_ptr<float>(),
                                                         total, C, HW);
    return y;
}
"""

conv_epilogue_cpp = "torch::Tensor conv_bias_relu_bias(torch::Tensor x, torch::Tensor conv_bias, torch::Tensor extra_bias);"

conv_epilogue_ext = load_inline(
    name="conv2d_relu_biasadd_epilogue",
    cpp_sources=conv_epilogue_cpp,
    cuda_sources=conv_epilogue_source,
    functions=["conv_bias_relu_bias"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Conv2d (cuDNN, bias deferred) + fused conv-bias/ReLU/bias-add CUDA epilogue.
    """
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = F.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding,
                     self.conv.dilation, self.conv.groups)
        return conv_epilogue_ext.conv_bias_relu_bias(x, self.conv.bias, self.bias)
