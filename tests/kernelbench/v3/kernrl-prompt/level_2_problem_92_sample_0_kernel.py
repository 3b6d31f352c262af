import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d -> GroupNorm -> Tanh -> HardSwish -> (+ conv) -> LogSumExp over channels
#
# kernel 1: direct 3x3 conv, one output pixel per thread, the 8x3x3 input patch kept
#           in registers and reused for all output channels (weights broadcast from
#           shared memory as float4). Writes x_conv and per-(n, group, tile) partial
#           sum / sum-of-squares for GroupNorm (deterministic, no atomics).
# kernel 2: per sample, reduce the partials (double) into per-channel scale/shift,
#           then per pixel: normalise -> tanh -> hardswish -> residual -> online
#           logsumexp over all channels; writes the [N,1,OH,OW] result.

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define THREADS 256
#define NWARPS (THREADS / 32)

template <int CIN, int KS>
__global__ void __launch_bounds__(THREADS)
conv_gn_stats_kernel(const float* __restrict__ x, const float* __restrict__ w,
                     const float* __restrict__ bias, float* __restrict__ y,
                     float* __restrict__ partial,
                     int Cout, int H, int W, int OH, int OW, int G, int ntiles) {
    constexpr int KK = CIN * KS * KS;
    extern __shared__ __align__(16) float smem_conv[];
    float* s_w = smem_conv;                  // [Cout][KK]
    float* s_red = smem_conv + Cout * KK;    // [NWARPS][G][2]

    const int tid = threadIdx.x;
    for (int i = tid; i < Cout * KK; i += THREADS) s_w[i] = __ldg(w + i);
    __syncthreads();

    const int n = blockIdx.y;
    const int tile = blockIdx.x;
    const int P = OH * OW;
    const int p = tile * THREADS + tid;
    const bool valid = p < P;
    const int pc = valid ? p : (P - 1);
    const int oh = pc / OW;
    const int ow = pc - oh * OW;

    float patch[KK];
    const float* xb = x + (size_t)n * CIN * H * W + (size_t)oh * W + ow;
#pragma unroll
    for (int ci = 0; ci < CIN; ++ci)
#pragma unroll
        for (int kh = 0; kh < KS; ++kh)
#pragma unroll
            for (int kw = 0; kw < KS; ++kw)
                patch[(ci * KS + kh) * KS + kw] = __ldg(xb + ((size_t)ci * H + kh) * W + kw);

    const int cpg = Cout / G;
    const int lane = tid & 31, warp = tid >> 5;
    float* yb = y + (size_t)n * Cout * P + pc;

    for (int g = 0; g < G; ++g) {
        float s = 0.f, q = 0.f;
        for (int c = 0; c < cpg; ++c) {
            const int co = g * cpg + c;
            const float4* wr = reinterpret_cast<const float4*>(s_w + co * KK);
            float a0 = __ldg(bias + co), a1 = 0.f, a2 = 0.f, a3 = 0.f;
#pragma unroll
            for (int i4 = 0; i4 < KK / 4; ++i4) {
                const float4 wv = wr[i4];
                a0 = fmaf(patch[4 * i4 + 0], wv.x, a0);
                a1 = fmaf(patch[4 * i4 + 1], wv.y, a1);
                a2 = fmaf(patch[4 * i4 + 2], wv.z, a2);
                a3 = fmaf(patch[4 * i4 + 3], wv.w, a3);
            }
            const float v = (a0 + a1) + (a2 + a3);
            if (valid) {
                yb[(size_t)co * P] = v;
                s += v;
                q = fmaf(v, v, q);
            }
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            s += __shfl_xor_sync(0xffffffffu, s, off);
            q += __shfl_xor_sync(0xffffffffu, q, off);
        }
        if (lane == 0) {
            s_red[(warp * G + g) * 2 + 0] = s;
            s_red[(warp * G + g) * 2 + 1] = q;
        }
    }
    __syncthreads();
    for (int g = tid; g < G; g += THREADS) {
        float s = 0.f, q = 0.f;
#pragma unroll
        for (int wi = 0; wi < NWARPS; ++wi) {
            s += s_red[(wi * G + g) * 2 + 0];
            q += s_red[(wi * G + g) * 2 + 1];
        }
        const size_t o = (((size_t)n * G + g) * ntiles + tile) * 2;
        partial[o + 0] = s;
        partial[o + 1] = q;
    }
}

__global__ void __launch_bounds__(THREADS)
gn_tanh_hswish_res_lse_kernel(const float* __restrict__ y, const float* __restrict__ partial,
                              const float* __restrict__ gamma, const float* __restrict__ beta,
                              float* __restrict__ out,
                              int Cout, int P, int G, int ntiles, float eps) {
    extern __shared__ __align__(16) float smem_gn[];
    float* s_mean = smem_gn;              // [G]
    float* s_rstd = smem_gn + G;          // [G]
    float* s_a = smem_gn + 2 * G;         // [Cout]
    float* s_b = smem_gn + 2 * G + Cout;  // [Cout]

    const int tid = threadIdx.x;
    const int n = blockIdx.y;
    const int cpg = Cout / G;

    for (int g = tid; g < G; g += THREADS) {
        double s = 0.0, q = 0.0;
        const float* pp = partial + ((size_t)n * G + g) * ntiles * 2;
        for (int t = 0; t < ntiles; ++t) {
            s += (double)pp[2 * t + 0];
            q += (double)pp[2 * t + 1];
        }
        const double cnt = (double)cpg * (double)P;
        const double mean = s / cnt;
        double var = q / cnt - mean * mean;
        if (var < 0.0) var = 0.0;
        s_mean[g] = (float)mean;
        s_rstd[g] = (float)(1.0 / sqrt(var + (double)eps));
    }
    __syncthreads();
    for (int co = tid; co < Cout; co += THREADS) {
        const int g = co / cpg;
        const float a = __ldg(gamma + co) * s_rstd[g];
        s_a[co] = a;
        s_b[co] = __ldg(beta + co) - s_mean[g] * a;
    }
    __syncthreads();

    const int p = blockIdx.x * THREADS + tid;
    if (p >= P) return;

    const float* yb = y + (size_t)n * Cout * P + p;
    float m = -INFINITY, sum = 0.f;
#pragma unroll 4
    for (int co = 0; co < Cout; ++co) {
        const float v = __ldg(yb + (size_t)co * P);
        const float t = tanhf(fmaf(v, s_a[co], s_b[co]));
        const float hs = t * fminf(fmaxf(t + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
        const float r = v + hs;
        if (r > m) {
            sum = sum * __expf(m - r) + 1.0f;
            m = r;
        } else {
            sum += __expf(r - m);
        }
    }
    out[(size_t)n * P + p] = m + logf(sum);
}

torch::Tensor conv_gn_act_lse(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                              torch::Tensor gamma, torch::Tensor beta, int64_t groups, double eps) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous() &&
                gamma.is_contiguous() && beta.is_contiguous(), "contiguous tensors expected");
    TORCH_CHECK(x.size(1) == 8 && weight.size(1) == 8 && weight.size(2) == 3 && weight.size(3) == 3,
                "kernel specialised for in_channels=8, kernel_size=3");

    const int N = (int)x.size(0);
    const int H = (int)x.size(2);
    const int W = (int)x.size(3);
    const int Cout = (int)weight.size(0);
    const int G = (int)groups;
    const int OH = H - 3 + 1;
    const int OW = W - 3 + 1;
    const int P = OH * OW;
    const int ntiles = (P + THREADS - 1) / THREADS;

    auto y = torch::empty({N, Cout, OH, OW}, x.options());
    auto partial = torch::empty({N, G, ntiles, 2}, x.options());
    auto out = torch::empty({N, 1, OH, OW}, x.options());

    dim3 grid(ntiles, N);
    const size_t smem1 = ((size_t)Cout * 8 * 9 + (size_t)NWARPS * G * 2) * sizeof(float);
    conv_gn_stats_kernel<8, 3><<<grid, THREADS, smem1>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
        y.data_ptr<float>(), partial.data_ptr<float>(), Cout, H, W, OH, OW, G, ntiles);

    const size_t smem2 = ((size_t)2 * G + 2 * (size_t)Cout) * sizeof(float);
    gn_tanh_hswish_res_lse_kernel<<<grid, THREADS, smem2>>>(
        y.data_ptr<float>(), partial.data_ptr<float>(), gamma.data_ptr<float>(),
        beta.data_ptr<float>(), out.data_ptr<float>(), Cout, P, G, ntiles, (float)eps);
    return out;
}
"""

cpp_source = ("torch::Tensor conv_gn_act_lse(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
              "torch::Tensor gamma, torch::Tensor beta, int64_t groups, double eps);")

ext = load_inline(
    name="conv_gn_tanh_hswish_lse_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["conv_gn_act_lse"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """
    Conv2d + GroupNorm + Tanh + HardSwish + residual + LogSumExp with custom CUDA kernels.
    """
    def __init__(self, in_channels, out_channels, kernel_size, groups, eps=1e-5):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(groups, out_channels, eps=eps)
        self.tanh = nn.Tanh()
        self.hard_swish = nn.Hardswish()
        self.groups = groups
        self.eps = eps

    def forward(self, x):
        return ext.conv_gn_act_lse(x, self.conv.weight, self.conv.bias,
                                   self.group_norm.weight, self.group_norm.bias,
                                   self.groups, self.eps)
