import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bias_sub_tanh_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/Dispatch.h>

template <typename scalar_t>
__device__ __forceinline__ scalar_t fast_tanh(scalar_t v);

template <>
__device__ __forceinline__ float fast_tanh<float>(float v) { return tanhf(v); }

template <>
__device__ __forceinline__ double fast_tanh<double>(double v) { return tanh(v); }

// out = tanh(y - bias[c]) for an NCHW tensor, written in place.
// grid.y enumerates (n, c) planes (bias is uniform in a block), grid.x splits
// a plane; each thread processes UNROLL strided elements per trip for ILP.
template <typename scalar_t, int UNROLL>
__global__ void bias_sub_tanh_kernel(scalar_t* __restrict__ y,
                                     const scalar_t* __restrict__ bias,
                                     int planes, int hw, int C) {
    const int chunk = blockDim.x * UNROLL;
    const int step = gridDim.x * chunk;
    for (int p = blockIdx.y; p < planes; p += gridDim.y) {
        const scalar_t b = bias[p % C];
        scalar_t* __restrict__ yp = y + (size_t)p * hw;
        for (int base = blockIdx.x * chunk + threadIdx.x; base < hw; base += step) {
            scalar_t v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int i = base + u * blockDim.x;
                v[u] = (i < hw) ? yp[i] : scalar_t(0);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int i = base + u * blockDim.x;
                if (i < hw) yp[i] = fast_tanh<scalar_t>(v[u] - b);
            }
        }
    }
}

torch::Tensor bias_sub_tanh_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && bias.is_cuda(), "tensors must live on the GPU");
    TORCH_CHECK(y.dim() == 4, "expected NCHW input");
    TORCH_CHECK(y.is_contiguous(), "y must be contiguous");
    auto b = bias.contiguous().view({-1}).to(y.scalar_type());
    const int C = (int)y.size(1);
    TORCH_CHECK(b.numel() == C, "bias must have out_channels elements");
    const int hw = (int)(y.size(2) * y.size(3));
    const int planes = (int)(y.size(0) * y.size(1));
    if (y.numel() == 0) return y;

    constexpr int THREADS = 256;
    constexpr int UNROLL = 4;
    int gx = (hw + THREADS * UNROLL * 2 - 1) / (THREADS * UNROLL * 2);  // ~2 trips per thread
    if (gx < 1) gx = 1;
    const int gy = planes < 65535 ? planes : 65535;
    dim3 grid(gx, gy);
    auto stream = at::cuda::getCurrentCUDAStream();

    AT_DISPATCH_FLOATING_TYPES(y.scalar_type(), "bias_sub_tanh_", ([&] {
        bias_sub_tanh_kernel<scalar_t, UNROLL><<<grid, THREADS, 0, stream>>>(
            y.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), planes, hw, C);
    }));
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "bias_sub_tanh kernel launch failed");
    return y;
}
"""

bias_sub_tanh_cpp_source = "torch::Tensor bias_sub_tanh_(torch::Tensor y, torch::Tensor bias);"

bias_sub_tanh = load_inline(
    name="convt_bias_sub_tanh_ext",
    cpp_sources=bias_sub_tanh_cpp_source,
    cuda_sources=bias_sub_tanh_source,
    functions=["bias_sub_tanh_"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    ConvTranspose2d via cuDNN, then one fused in-place CUDA kernel for
    (x - bias) followed by tanh, saving a full read/write of the large
    intermediate activation.
    """
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, stride=2, padding=1, output_padding=1):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.fused = bias_sub_tanh

    def forward(self, x):
        x = self.conv_transpose(x).contiguous()
        return self.fused.bias_sub_tanh_(x, self.bias)
