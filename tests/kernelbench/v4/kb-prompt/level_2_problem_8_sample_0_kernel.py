import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# Conv3d runs on cuDNN.  Everything else, i.e.
#     /divisor -> MaxPool3d -> global average pool -> +bias -> sum over channels,
# is collapsed into a single reduction kernel:
#   grid = (C, N); each block walks the pooled grid of one (n, c) slice,
#   computes the window max of x/divisor on the fly, block-reduces the sum
#   (warp shuffles), and either atomically accumulates mean + bias[c] into
#   out[n] (sum over dim=1, fully fused) or stores it per channel.
# ---------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

template <int KD, int KH, int KW>
__device__ __forceinline__ float window_max_fixed(const float* __restrict__ p, int H, int W, float divisor) {
    float m = -INFINITY;
    const long long plane = (long long)H * W;
#pragma unroll
    for (int a = 0; a < KD; ++a)
#pragma unroll
        for (int b = 0; b < KH; ++b)
#pragma unroll
            for (int c = 0; c < KW; ++c)
                m = fmaxf(m, __ldg(p + a * plane + b * W + c) / divisor);
    return m;
}

template <bool FIXED222>
__global__ void div_maxpool_avg_bias_kernel(
    const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ out,
    int C, int D, int H, int W, int KD, int KH, int KW, int PD, int PH, int PW,
    float divisor, bool accumulate)
{
    const int c = blockIdx.x;
    const int n = blockIdx.y;
    const float* xs = x + ((long long)n * C + c) * (long long)D * H * W;
    const int P = PD * PH * PW;

    float s = 0.f;
    for (int p = threadIdx.x; p < P; p += blockDim.x) {
        const int pw = p % PW;
        const int t = p / PW;
        const int ph = t % PH;
        const int pd = t / PH;
        const float* base = xs + ((long long)(pd * KD) * H + ph * KH) * W + pw * KW;
        float m;
        if (FIXED222) {
            m = window_max_fixed<2, 2, 2>(base, H, W, divisor);
        } else {
            m = -INFINITY;
            for (int a = 0; a < KD; ++a)
                for (int b = 0; b < KH; ++b)
                    for (int cc = 0; cc < KW; ++cc)
                        m = fmaxf(m, __ldg(base + ((long long)a * H + b) * W + cc) / divisor);
        }
        s += m;
    }

    __shared__ float sh[32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    s = warp_sum(s);
    if (lane == 0) sh[wid] = s;
    __syncthreads();
    if (wid == 0) {
        const int nw = blockDim.x >> 5;
        s = lane < nw ? sh[lane] : 0.f;
        s = warp_sum(s);
        if (lane == 0) {
            const float val = s / (float)P + bias[c];
            if (accumulate) atomicAdd(out + n, val);
            else out[(long long)n * C + c] = val;
        }
    }
}

torch::Tensor fused_post_conv_cuda(torch::Tensor x, torch::Tensor bias, double divisor,
                                   int64_t kd, int64_t kh, int64_t kw, bool sum_channels) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() == 5, "x must be 5D");
    x = x.contiguous();
    auto b = bias.contiguous().view({-1});
    const int N = x.size(0), C = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
    TORCH_CHECK(b.numel() == C, "bias must have one value per channel");
    const int PD = D / kd, PH = H / kh, PW = W / kw;

    torch::Tensor out = sum_channels ? torch::zeros({N}, x.options()) : torch::empty({N, C}, x.options());
    if (N == 0 || C == 0) return out;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    dim3 grid(C, N);
    const int threads = 256;
    const bool fixed = (kd == 2 && kh == 2 && kw == 2);
    if (fixed) {
        div_maxpool_avg_bias_kernel<true><<<grid, threads, 0, stream>>>(
            x.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(),
            C, D, H, W, 2, 2, 2, PD, PH, PW, (float)divisor, sum_channels);
    } else {
        div_maxpool_avg_bias_kernel<false><<<grid, threads, 0, stream>>>(
            x.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(),
            C, D, H, W, (int)kd, (int)kh, (int)kw, PD, PH, PW, (float)divisor, sum_channels);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = ("torch::Tensor fused_post_conv_cuda(torch::Tensor x, torch::Tensor bias, double divisor, "
              "int64_t kd, int64_t kh, int64_t kw, bool sum_channels);")

fused = load_inline(
    name="conv3d_div_maxpool_gap_bias_sum",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["fused_post_conv_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


def _triple(v):
    if isinstance(v, (tuple, list)):
        return tuple(int(i) for i in v)
    return (int(v),) * 3


class ModelNew(nn.Module):
    """
    Conv3d (cuDNN) + a single fused kernel for divide, max-pool, global average pool,
    bias add and channel sum.
    """
    def __init__(self, in_channels, out_channels, kernel_size, divisor, pool_size, bias_shape, sum_dim):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.divisor = divisor
        self.max_pool = nn.MaxPool3d(pool_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.sum_dim = sum_dim
        self.pool = _triple(pool_size)
        self.fused = fused

    def forward(self, x):
        x = self.conv(x)
        N, C = x.shape[0], x.shape[1]
        kd, kh, kw = self.pool
        if self.sum_dim == 1 and self.bias.numel() == C:
            out = self.fused.fused_post_conv_cuda(x, self.bias, float(self.divisor), kd, kh, kw, True)
            return out.view(N, 1, 1, 1)
        if self.bias.numel() == C:
            y = self.fused.fused_post_conv_cuda(x, self.bias, float(self.divisor), kd, kh, kw, False)
            return torch.sum(y.view(N, C, 1, 1, 1), dim=self.sum_dim)
        # generic fallback for unusual bias shapes
        x = x / self.divisor
        x = self.max_pool(x)
        x = self.global_avg_pool(x)
        x = x + self.bias
        return torch.sum(x, dim=self.sum_dim)
