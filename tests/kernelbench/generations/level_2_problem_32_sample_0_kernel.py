import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# cuDNN convolution without bias, then one kernel that adds the bias, scales and takes the
# minimum over channels (one thread per output pixel; channel loop is coalesced across pixels).
scale_min_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math_constants.h>

__global__ void bias_scale_channel_min_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                              float* __restrict__ out, int N, int C, long long HW,
                                              float scale) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)N * HW;
    if (idx >= total) return;
    long long n = idx / HW;
    long long p = idx - n * HW;
    const float* xp = x + n * (long long)C * HW + p;
    float m = CUDART_INF_F;
    for (int c = 0; c < C; ++c) {
        float v = (xp[(long long)c * HW] + bias[c]) * scale;
        m = fminf(m, v);
    }
    out[idx] = m;
}

torch::Tensor bias_scale_channel_min(torch::Tensor x, torch::Tensor bias, double scale) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    x = x.contiguous();
    bias = bias.contiguous();
    const int N = x.size(0);
    const int C = x.size(1);
    const int H = x.size(2);
    const int W = x.size(3);
    const long long HW = (long long)H * W;
    auto out = torch::empty({N, 1, H, W}, x.options());
    long long total = (long long)N * HW;
    if (total == 0) return out;
    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    bias_scale_channel_min_kernel<<<(unsigned int)blocks, threads>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                                                     out.data_ptr<float>(), N, C, HW, (float)scale);
    return out;
}
"""

scale_min_cpp = "torch::Tensor bias_scale_channel_min(torch::Tensor x, torch::Tensor bias, double scale);"

scale_min_ext = load_inline(
    name="conv2d_scale_channel_min",
    cpp_sources=scale_min_cpp,
    cuda_sources=scale_min_source,
    functions=["bias_scale_channel_min"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Conv2d (cuDNN) followed by a fused bias + scaling + channel-min CUDA kernel.
    """
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding,
                     self.conv.dilation, self.conv.groups)
        bias = self.conv.bias if self.conv.bias is not None else torch.zeros(
            y.size(1), device=y.device, dtype=y.dtype)
        return scale_min_ext.bias_scale_channel_min(y, bias, float(self.scale_factor))
