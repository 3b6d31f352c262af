import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d runs on cuDNN; min(x, c) + bias[c] then * scale is fused into one
# vectorized (float4) in-place elementwise kernel with a grid-stride loop.
# The epilogue is rewritten as  fmaf(min(x, c), s, bias[c]*s)  with bias*s
# precomputed per channel in shared memory.

fused_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void min_bias_scale_vec4_kernel(float* __restrict__ x,
                                           const float* __restrict__ bias,
                                           long long n4, int C, int HW4,
                                           float cval, float scale) {
    extern __shared__ float sbias[];  // bias * scale
    for (int c = threadIdx.x; c < C; c += blockDim.x) sbias[c] = bias[c] * scale;
    __syncthreads();

    float4* x4 = reinterpret_cast<float4*>(x);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (long long)blockDim.x * gridDim.x) {
        const int c = (int)((i / HW4) % C);
        const float bs = sbias[c];
        float4 v = x4[i];
        v.x = fmaf(fminf(v.x, cval), scale, bs);
        v.y = fmaf(fminf(v.y, cval), scale, bs);
        v.z = fmaf(fminf(v.z, cval), scale, bs);
        v.w = fmaf(fminf(v.w, cval), scale, bs);
        x4[i] = v;
    }
}

__global__ void min_bias_scale_kernel(float* __restrict__ x,
                                      const float* __restrict__ bias,
                                      long long n, int C, int HW,
                                      float cval, float scale) {
    extern __shared__ float sbias[];
    for (int c = threadIdx.x; c < C; c += blockDim.x) sbias[c] = bias[c] * scale;
    __syncthreads();

    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        const int c = (int)((i / HW) % C);
        x[i] = fmaf(fminf(x[i], cval), scale, sbias[c]);
    }
}

torch::Tensor min_bias_scale_cuda(torch::Tensor x, torch::Tensor bias, double cval, double scale) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be float32 CUDA");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    auto y = x.contiguous();
    auto b = bias.contiguous().view({-1});
    const int C = y.size(1);
    const int HW = y.size(2) * y.size(3);
    TORCH_CHECK(b.numel() == C, "bias must have C elements");
    const long long n = y.numel();
    if (n == 0) return y;

    const int threads = 256;
    int dev;
    cudaGetDevice(&dev);
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const long long max_blocks = (long long)sms * 32;
    const size_t smem = C * sizeof(float);

    const bool aligned = (reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16) == 0;
    if (aligned && (HW % 4 == 0)) {
        const long long n4 = n / 4;
        long long blocks = (n4 + threads - 1) / threads;
        if (blocks > max_blocks) blocks = max_blocks;
        min_bias_scale_vec4_kernel<<<(unsigned)blocks, threads, smem>>>(
            y.data_ptr<float>(), b.data_ptr<float>(), n4, C, HW / 4, (float)cval, (float)scale);
    } else {
        long long blocks = (n + threads - 1) / threads;
        if (blocks > max_blocks) blocks = max_blocks;
        min_bias_scale_kernel<<<(unsigned)blocks, threads, smem>>>(
            y.data_ptr<float>(), b.data_ptr<float>(), n, C, HW, (float)cval, (float)scale);
    }
    return y;
}
"""

fused_cpp_source = (
    "torch::Tensor min_bias_scale_cuda(torch::Tensor x, torch::Tensor bias, double cval, double scale);"
)

fused_ext = load_inline(
    name="conv_min_bias_scale",
    cpp_sources=fused_cpp_source,
    cuda_sources=fused_source,
    functions=["min_bias_scale_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Conv2d (cuDNN) + fused min/bias/scale CUDA epilogue (in-place on the conv output).
    """
    def __init__(self, in_channels, out_channels, kernel_size, constant_value, bias_shape, scaling_factor):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.constant_value = constant_value
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv(x)
        return fused_ext.min_bias_scale_cuda(x, self.bias, float(self.constant_value), float(self.scaling_factor))
