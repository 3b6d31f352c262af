import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# ConvTranspose3d runs on cuDNN.  LeakyReLU -> *multiplier -> LeakyReLU ->
# MaxPool3d(2) is fused into a single pass over the conv output.
#
# f(v) = leaky(m_c * leaky(v)) is monotone in v for each channel:
#   non-decreasing if m_c >= 0, non-increasing if m_c < 0.
# Since float rounding is monotone too, max_window f(v) == f(max v) when m_c >= 0
# and f(min v) when m_c < 0, so each output needs one max/min reduction of the
# raw 2x2x2 window followed by a single evaluation of f.
# ---------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float leaky(float v, float s) { return v > 0.f ? v : v * s; }

template <bool VEC2>
__global__ void leaky_mul_leaky_maxpool2_kernel(
    const float* __restrict__ x, const float* __restrict__ mult, float* __restrict__ out,
    int C, int D, int H, int W, int OD, int OH, int OW, long long total, float slope)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int ow = (int)(idx % OW);
        long long t = idx / OW;
        const int oh = (int)(t % OH); t /= OH;
        const int od = (int)(t % OD); t /= OD;
        const int c = (int)(t % C);
        const long long nc = t;   // n * C + c

        const float* base = x + ((nc * D + 2 * od) * H + 2 * oh) * (long long)W + 2 * ow;
        const long long plane = (long long)H * W;

        float mx = -INFINITY, mn = INFINITY;
#pragma unroll
        for (int kd = 0; kd < 2; ++kd) {
#pragma unroll
            for (int kh = 0; kh < 2; ++kh) {
                const float* p = base + kd * plane + kh * W;
                float a, b;
                if (VEC2) {
                    const float2 v = __ldg(reinterpret_cast<const float2*>(p));
                    a = v.x; b = v.y;
                } else {
                    a = __ldg(p); b = __ldg(p + 1);
                }
                mx = fmaxf(mx, fmaxf(a, b));
                mn = fminf(mn, fminf(a, b));
            }
        }
        const float m = __ldg(mult + c);
        const float v = (m >= 0.f) ? mx : mn;
        out[idx] = leaky(leaky(v, slope) * m, slope);
    }
}

torch::Tensor leaky_mul_leaky_maxpool_cuda(torch::Tensor x, torch::Tensor multiplier, double slope) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() == 5, "x must be 5D");
    x = x.contiguous();
    auto m = multiplier.contiguous().view({-1});
    const int N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
    TORCH_CHECK(m.numel() == C, "multiplier must have one value per channel");
    const int OD = D / 2, OH = H / 2, OW = W / 2;
    auto out = torch::empty({N, C, OD, OH, OW}, x.options());
    const long long total = (long long)N * C * OD * OH * OW;
    if (total == 0) return out;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int blocks = (int)std::min<long long>((total + threads - 1) / threads, (long long)sms * 32);

    if (W % 2 == 0) {
        leaky_mul_leaky_maxpool2_kernel<true><<<blocks, threads, 0, stream>>>(
            x.data_ptr<float>(), m.data_ptr<float>(), out.data_ptr<float>(),
            C, D, H, W, OD, OH, OW, total, (float)slope);
    } else {
        leaky_mul_leaky_maxpool2_kernel<false><<<blocks, threads, 0, stream>>>(
            x.data_ptr<float>(), m.data_ptr<float>(), out.data_ptr<float>(),
            C, D, H, W, OD, OH, OW, total, (float)slope);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor leaky_mul_leaky_maxpool_cuda(torch::Tensor x, torch::Tensor multiplier, double slope);"

fused = load_inline(
    name="leaky_mul_leaky_maxpool",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["leaky_mul_leaky_maxpool_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    ConvTranspose3d (cuDNN) + one fused kernel for LeakyReLU, channel multiplier,
    LeakyReLU and 2x2x2 max pooling.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier_shape):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU(negative_slope=0.2)
        self.max_pool = nn.MaxPool3d(kernel_size=2)
        self.fused = fused

    def forward(self, x):
        x = self.conv_transpose(x)
        return self.fused.leaky_mul_leaky_maxpool_cuda(x, self.multiplier, self.leaky_relu.negative_slope)
