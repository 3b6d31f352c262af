import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// 1) linear_nt_kernel      : Y[M,N] = X[M,K] * W[N,K]^T + b          (SIMT SGEMM, 128x128x8 tiles)
// 2) groupnorm_rowmin_kernel: per row, GroupNorm (per-channel affine) then min over channels
// 3) min_bias_bcast_kernel : out[0, f, m, 0] = rowmin[m] + bias[f]     ([M,1] + [1,F,1,1] broadcast)

template <int BM, int BN, int BK>
__global__ void __launch_bounds__(256)
linear_nt_kernel(const float* __restrict__ X, const float* __restrict__ Wt,
                 const float* __restrict__ bias, float* __restrict__ Y,
                 int M, int N, int K)
{
    static_assert(BM == 128 && BN == 128 && BK == 8, "thread mapping assumes 128x128x8");
    __shared__ __align__(16) float As[2][BK][BM + 4];
    __shared__ __align__(16) float Bs[2][BK][BN + 4];

    const int tid = threadIdx.x;
    const int tx = tid & 15;
    const int ty = tid >> 4;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // loader mapping: k = tid & 7, row = (tid >> 3) + 32*i  (i = 0..3)
    const int lk = tid & 7;
    const int lr = tid >> 3;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    float ra[4], rb[4];
    const int nT = (K + BK - 1) / BK;

    auto gload = [&](int k0) {
        const int k = k0 + lk;
        const bool kok = k < K;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int m = m0 + lr + 32 * i;
            const int n = n0 + lr + 32 * i;
            ra[i] = (kok && m < M) ? __ldg(&X[(size_t)m * K + k]) : 0.0f;
            rb[i] = (kok && n < N) ? __ldg(&Wt[(size_t)n * K + k]) : 0.0f;
        }
    };
    auto sstore = [&](int s) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            As[s][lk][lr + 32 * i] = ra[i];
            Bs[s][lk][lr + 32 * i] = rb[i];
        }
    };

    gload(0);
    sstore(0);
    __syncthreads();

    for (int t = 0; t < nT; ++t) {
        const int cur = t & 1;
        const bool has_next = (t + 1) < nT;
        if (has_next) gload((t + 1) * BK);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[cur][kk][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[cur][kk][64 + ty * 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][kk][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][kk][64 + tx * 4]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (has_next) sstore(cur ^ 1);
        __syncthreads();
    }

    float bv[8];
    int cols[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        cols[j] = n0 + ((j < 4) ? (tx * 4 + j) : (64 + tx * 4 + j - 4));
        bv[j] = (cols[j] < N) ? __ldg(&bias[cols[j]]) : 0.0f;
    }
    const bool vecN = (N & 3) == 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = m0 + ((i < 4) ? (ty * 4 + i) : (64 + ty * 4 + i - 4));
        if (m >= M) continue;
        float* yrow = Y + (size_t)m * N;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = cols[h * 4];
            if (vecN && n + 3 < N) {
                *reinterpret_cast<float4*>(yrow + n) =
                    make_float4(acc[i][h * 4 + 0] + bv[h * 4 + 0], acc[i][h * 4 + 1] + bv[h * 4 + 1],
                                acc[i][h * 4 + 2] + bv[h * 4 + 2], acc[i][h * 4 + 3] + bv[h * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (n + j < N) yrow[n + j] = acc[i][h * 4 + j] + bv[h * 4 + j];
            }
        }
    }
}

#define GN_THREADS 256

// one block per row; each thread normalises whole groups (group size = C / G)
__global__ void __launch_bounds__(GN_THREADS)
groupnorm_rowmin_kernel(const float* __restrict__ Y, const float* __restrict__ gamma,
                        const float* __restrict__ beta, float* __restrict__ rowmin,
                        int C, int G, float eps)
{
    const int row = blockIdx.x;
    const int gs = C / G;
    const float* yr = Y + (size_t)row * C;
    const float inv_gs = 1.0f / (float)gs;
    float mn = __int_as_float(0x7f800000);

    for (int g = threadIdx.x; g < G; g += GN_THREADS) {
        const float* p = yr + (size_t)g * gs;
        float s = 0.0f;
        for (int i = 0; i < gs; ++i) s += p[i];
        const float mean = s * inv_gs;
        float v = 0.0f;
        for (int i = 0; i < gs; ++i) {
            const float d = p[i] - mean;
            v = fmaf(d, d, v);
        }
        const float rstd = rsqrtf(v * inv_gs + eps);
        const int cb = g * gs;
        for (int i = 0; i < gs; ++i) {
            const float z = (p[i] - mean) * rstd * __ldg(&gamma[cb + i]) + __ldg(&beta[cb + i]);
            mn = fminf(mn, z);
        }
    }

    __shared__ float sh[GN_THREADS / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mn = fminf(mn, __shfl_xor_sync(0xffffffffu, mn, o));
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = mn;
    __syncthreads();
    if (wid == 0) {
        mn = (lane < GN_THREADS / 32) ? sh[lane] : __int_as_float(0x7f800000);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) mn = fminf(mn, __shfl_xor_sync(0xffffffffu, mn, o));
        if (lane == 0) rowmin[row] = mn;
    }
}

__global__ void min_bias_bcast_kernel(const float* __restrict__ rowmin, const float* __restrict__ bias,
                                      float* __restrict__ out, int M, int F)
{
    const long long total = (long long)M * F;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int f = (int)(idx / M);
        const int m = (int)(idx - (long long)f * M);
        out[idx] = __ldg(&rowmin[m]) + __ldg(&bias[f]);
    }
}

torch::Tensor gemm_gn_min_bias(torch::Tensor x, torch::Tensor w, torch::Tensor b,
                               torch::Tensor gn_w, torch::Tensor gn_b, torch::Tensor bias,
                               int64_t num_groups, double eps)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && w.is_contiguous(), "contiguous CUDA tensors expected");
    const int M = (int)x.size(0);
    const int K = (int)x.size(1);
    const int N = (int)w.size(0);
    const int G = (int)num_groups;
    TORCH_CHECK(N % G == 0, "channels must be divisible by groups");

    auto y = torch::empty({M, N}, x.options());
    auto rowmin = torch::empty({M}, x.options());
    auto out = torch::empty({1, N, M, 1}, x.options());

    dim3 grid((N + 127) / 128, (M + 127) / 128);
    linear_nt_kernel<128, 128, 8><<<grid, 256>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                                                 y.data_ptr<float>(), M, N, K);
    groupnorm_rowmin_kernel<<<M, GN_THREADS>>>(y.data_ptr<float>(), gn_w.data_ptr<float>(),
                                               gn_b.data_ptr<float>(), rowmin.data_ptr<float>(),
                                               N, G, (float)eps);
    const long long total = (long long)M * N;
    const int blocks = (int)((total + 255) / 256);
    min_bias_bcast_kernel<<<blocks, 256>>>(rowmin.data_ptr<float>(), bias.data_ptr<float>(),
                                           out.data_ptr<float>(), M, N);
    return out;
}
"""

cpp_source = ("torch::Tensor gemm_gn_min_bias(torch::Tensor x, torch::Tensor w, torch::Tensor b, "
              "torch::Tensor gn_w, torch::Tensor gn_b, torch::Tensor bias, int64_t num_groups, double eps);")

ext = load_inline(
    name="gemm_groupnorm_min_bias_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["gemm_gn_min_bias"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.num_groups = num_groups
        self.eps = 1e-5

    def forward(self, x):
        return ext.gemm_gn_min_bias(x, self.gemm.weight, self.gemm.bias,
                                    self.group_norm.weight, self.group_norm.bias,
                                    self.bias, self.num_groups, self.eps)
