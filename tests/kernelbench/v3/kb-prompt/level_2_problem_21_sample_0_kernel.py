import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

fused_gn_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define GN_THREADS 256

__device__ __forceinline__ float act_fn(float v, float b, float s) {
    // sigmoid((v + bias) * scale)
    const float z = (v + b) * s;
    return 1.f / (1.f + __expf(-z));
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// Pass 1: grid (P, N*G).  Each block accumulates sum / sum of squares of the
// activated values over a strided slice of one (sample, group).
__global__ void __launch_bounds__(GN_THREADS)
act_group_stats_kernel(const float* __restrict__ x,
                       const float* __restrict__ bias,
                       const float* __restrict__ scale,
                       float* __restrict__ psum,
                       float* __restrict__ psq,
                       int C, int G, int64_t HW, int P, int vec) {
    const int ng = blockIdx.y;
    const int n = ng / G;
    const int g = ng - n * G;
    const int cpg = C / G;
    const int64_t start = (int64_t)blockIdx.x * GN_THREADS + threadIdx.x;
    const int64_t step = (int64_t)P * GN_THREADS;

    float s = 0.f, q = 0.f;
    for (int cl = 0; cl < cpg; ++cl) {
        const int c = g * cpg + cl;
        const float b = __ldg(bias + c);
        const float sc = __ldg(scale + c);
        const float* plane = x + ((int64_t)n * C + c) * HW;
        if (vec) {
            const float4* p4 = reinterpret_cast<const float4*>(plane);
            const int64_t HW4 = HW >> 2;
            for (int64_t i = start; i < HW4; i += step) {
                const float4 v = __ldg(p4 + i);
                const float a0 = act_fn(v.x, b, sc), a1 = act_fn(v.y, b, sc);
                const float a2 = act_fn(v.z, b, sc), a3 = act_fn(v.w, b, sc);
                s += (a0 + a1) + (a2 + a3);
                q += (a0 * a0 + a1 * a1) + (a2 * a2 + a3 * a3);
            }
        } else {
            for (int64_t i = start; i < HW; i += step) {
                const float a = act_fn(__ldg(plane + i), b, sc);
                s += a;
                q += a * a;
            }
        }
    }

    __shared__ float sh_s[GN_THREADS / 32], sh_q[GN_THREADS / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    s = warp_sum(s);
    q = warp_sum(q);
    if (lane == 0) { sh_s[wid] = s; sh_q[wid] = q; }
    __syncthreads();
    if (wid == 0) {
        s = lane < GN_THREADS / 32 ? sh_s[lane] : 0.f;
        q = lane < GN_THREADS / 32 ? sh_q[lane] : 0.f;
        s = warp_sum(s);
        q = warp_sum(q);
        if (lane == 0) {
            psum[(int64_t)ng * P + blockIdx.x] = s;
            psq[(int64_t)ng * P + blockIdx.x] = q;
        }
    }
}

// Pass 2: grid (P, N*G).  Every block first folds the P partials of its group
// (double precision, one warp), then recomputes the activation and writes the
// normalised + affine output.
__global__ void __launch_bounds__(GN_THREADS)
act_group_norm_apply_kernel(const float* __restrict__ x,
                            float* __restrict__ out,
                            const float* __restrict__ bias,
                            const float* __restrict__ scale,
                            const float* __restrict__ gamma,
                            const float* __restrict__ beta,
                            const float* __restrict__ psum,
                            const float* __restrict__ psq,
                            int C, int G, int64_t HW, int P, float eps, int vec) {
    const int ng = blockIdx.y;
    const int n = ng / G;
    const int g = ng - n * G;
    const int cpg = C / G;

    __shared__ float s_mean, s_rstd;
    if (threadIdx.x < 32) {
        double s = 0.0, q = 0.0;
        for (int i = threadIdx.x; i < P; i += 32) {
            s += (double)psum[(int64_t)ng * P + i];
            q += (double)psq[(int64_t)ng * P + i];
        }
        s = warp_sum(s);
        q = warp_sum(q);
        if (threadIdx.x == 0) {
            const double cnt = (double)cpg * (double)HW;
            const double mean = s / cnt;
            double var = q / cnt - mean * mean;
            if (var < 0.0) var = 0.0;
            s_mean = (float)mean;
            s_rstd = (float)(1.0 / sqrt(var + (double)eps));
        }
    }
    __syncthreads();
    const float mean = s_mean, rstd = s_rstd;

    const int64_t start = (int64_t)blockIdx.x * GN_THREADS + threadIdx.x;
    const int64_t step = (int64_t)P * GN_THREADS;
    for (int cl = 0; cl < cpg; ++cl) {
        const int c = g * cpg + cl;
        const float b = __ldg(bias + c);
        const float sc = __ldg(scale + c);
        const float A = __ldg(gamma + c) * rstd;
        const float B = __ldg(beta + c) - mean * A;
        const int64_t off = ((int64_t)n * C + c) * HW;
        if (vec) {
            const float4* p4 = reinterpret_cast<const float4*>(x + off);
            float4* o4 = reinterpret_cast<float4*>(out + off);
            const int64_t HW4 = HW >> 2;
            for (int64_t i = start; i < HW4; i += step) {
                const float4 v = __ldg(p4 + i);
                float4 r;
                r.x = fmaf(act_fn(v.x, b, sc), A, B);
                r.y = fmaf(act_fn(v.y, b, sc), A, B);
                r.z = fmaf(act_fn(v.z, b, sc), A, B);
                r.w = fmaf(act_fn(v.w, b, sc), A, B);
                o4[i] = r;
            }
        } else {
            for (int64_t i = start; i < HW; i += step) {
                out[off + i] = fmaf(act_fn(__ldg(x + off + i), b, sc), A, B);
            }
        }
    }
}

torch::Tensor fused_bias_scale_sigmoid_groupnorm(torch::Tensor x,
                                                 torch::Tensor bias,
                                                 torch::Tensor scale,
                                                 torch::Tensor gamma,
                                                 torch::Tensor beta,
                                                 int64_t num_groups,
                                                 double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 2, "x must be at least 2D");
    auto xc = x.contiguous();
    const int N = (int)xc.size(0);
    const int C = (int)xc.size(1);
    const int G = (int)num_groups;
    TORCH_CHECK(C % G == 0, "channels must be divisible by groups");
    const int64_t HW = xc.numel() / ((int64_t)N * C);
    TORCH_CHECK(bias.numel() == C && scale.numel() == C, "bias/scale must have C elements");
    TORCH_CHECK(gamma.numel() == C && beta.numel() == C, "gamma/beta must have C elements");
    TORCH_CHECK((int64_t)N * G <= 65535, "N * G too large for grid.y");

    auto b = bias.contiguous(), s = scale.contiguous();
    auto gm = gamma.contiguous(), bt = beta.contiguous();
    auto out = torch::empty_like(xc);
    if (xc.numel() == 0) return out;

    const int vec = (HW % 4 == 0) &&
                    ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) & 15) == 0) &&
                    ((reinterpret_cast<uintptr_t>(out.data_ptr<float>()) & 15) == 0);
    const int64_t work = vec ? HW / 4 : HW;
    int64_t P64 = (work + GN_THREADS * 4 - 1) / (GN_THREADS * 4);
    if (P64 < 1) P64 = 1;
    if (P64 > 64) P64 = 64;
    const int P = (int)P64;

    auto psum = torch::empty({(int64_t)N * G * P}, xc.options());
    auto psq = torch::empty({(int64_t)N * G * P}, xc.options());

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    dim3 grid(P, N * G);
    act_group_stats_kernel<<<grid, GN_THREADS, 0, stream>>>(
        xc.data_ptr<float>(), b.data_ptr<float>(), s.data_ptr<float>(),
        psum.data_ptr<float>(), psq.data_ptr<float>(), C, G, HW, P, vec);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    act_group_norm_apply_kernel<<<grid, GN_THREADS, 0, stream>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), b.data_ptr<float>(), s.data_ptr<float>(),
        gm.data_ptr<float>(), bt.data_ptr<float>(), psum.data_ptr<float>(), psq.data_ptr<float>(),
        C, G, HW, P, (float)eps, vec);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

fused_gn_cpp_source = (
    "torch::Tensor fused_bias_scale_sigmoid_groupnorm(torch::Tensor x, torch::Tensor bias, "
    "torch::Tensor scale, torch::Tensor gamma, torch::Tensor beta, int64_t num_groups, double eps);"
)

fused_gn_ext = load_inline(
    name="fused_bias_scale_sigmoid_groupnorm",
    cpp_sources=fused_gn_cpp_source,
    cuda_sources=fused_gn_source,
    functions=["fused_bias_scale_sigmoid_groupnorm"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Conv2d (cuDNN) followed by one fused CUDA pipeline for
    (+bias) -> (*scale) -> sigmoid -> GroupNorm: a statistics pass and a
    normalisation pass that recomputes the cheap activation on the fly,
    so the intermediate tensors are never materialised.
    """
    def __init__(self, in_channels, out_channels, kernel_size, num_groups, bias_shape, scale_shape):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        gn = self.group_norm
        C = x.shape[1]
        bias = self.bias.reshape(-1)
        scale = self.scale.reshape(-1)
        if bias.numel() != C or scale.numel() != C or gn.weight is None:
            x = torch.sigmoid((x + self.bias) * self.scale)
            return gn(x)
        return fused_gn_ext.fused_bias_scale_sigmoid_groupnorm(
            x, bias, scale, gn.weight, gn.bias, gn.num_groups, gn.eps
        )
