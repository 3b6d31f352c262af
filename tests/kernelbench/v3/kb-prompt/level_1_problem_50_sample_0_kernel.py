import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

conv_igemm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

// Implicit-GEMM direct convolution (NCHW, FP32).
//   GEMM view:  Y[m, oc] = sum_k  im2col(X)[m, k] * W[oc, k]
//   m  = (n, oh, ow)           (BM = 128 per block, 8 per thread)
//   oc = output channel        (BN = 96  per block, 6 per thread)
//   k  = (ci, kh, kw)          (BK = 16 per shared-memory stage)
// A small per-block lookup table (dynamic shared memory) maps k -> input
// offset and (kh, kw), so the on-the-fly im2col gather needs no divisions.
#define BM 128
#define BN 96
#define BK 16
#define TM 8
#define TN 6
#define NTHREADS 256

__global__ void __launch_bounds__(NTHREADS)
conv2d_igemm_kernel(const float* __restrict__ x,
                    const float* __restrict__ w,
                    const float* __restrict__ bias,
                    float* __restrict__ y,
                    int N, int C, int H, int W,
                    int K, int R, int S,
                    int stride, int pad, int OH, int OW,
                    int has_bias) {
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN + 1];
    extern __shared__ int ktab[];   // [0, KK): input offset; [KK, 2KK): (kh << 16) | kw

    const int tid = threadIdx.x;
    const int tx = tid & 15;   // pixel direction
    const int ty = tid >> 4;   // channel direction

    const int OHW = OH * OW;
    const long long M = (long long)N * OHW;
    const int RS = R * S;
    const int KK = C * RS;
    const long long m0 = (long long)blockIdx.x * BM;
    const int oc0 = blockIdx.y * BN;

    for (int k = tid; k < KK; k += NTHREADS) {
        const int ci = k / RS;
        const int rs = k - ci * RS;
        const int kh = rs / S;
        const int kw = rs - kh * S;
        ktab[k] = (ci * H + kh) * W + kw;
        ktab[KK + k] = (kh << 16) | kw;
    }

    // per-thread gather pixel (fixed for the whole K loop)
    const int a_m = tid & (BM - 1);
    const int a_k = tid >> 7;   // 0 or 1
    const long long gm = m0 + a_m;
    const bool m_valid = gm < M;
    int n_img = 0, oh = 0, ow = 0;
    if (m_valid) {
        n_img = (int)(gm / OHW);
        const int rem = (int)(gm - (long long)n_img * OHW);
        oh = rem / OW;
        ow = rem - oh * OW;
    }
    const int ih0 = oh * stride - pad;
    const int iw0 = ow * stride - pad;
    const float* __restrict__ xin = x + (size_t)n_img * C * H * W;
    const long long base = (long long)ih0 * W + iw0;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    __syncthreads();   // ktab ready

    for (int k0 = 0; k0 < KK; k0 += BK) {
        // ---- A tile (im2col gather) ----
#pragma unroll
        for (int r = 0; r < BK / 2; ++r) {
            const int kk = a_k + 2 * r;
            const int k = k0 + kk;
            float v = 0.0f;
            if (m_valid && k < KK) {
                const int p = ktab[KK + k];
                const int ih = ih0 + (p >> 16);
                const int iw = iw0 + (p & 0xffff);
                if ((unsigned)ih < (unsigned)H && (unsigned)iw < (unsigned)W)
                    v = __ldg(xin + (base + ktab[k]));
            }
            As[kk][a_m] = v;
        }
        // ---- B tile (weights, [K][KK] row-major) ----
#pragma unroll
        for (int r = 0; r < (BK * BN) / NTHREADS; ++r) {
            const int e = tid + r * NTHREADS;
            const int kk = e % BK;
            const int oc = e / BK;
            const int k = k0 + kk;
            const int goc = oc0 + oc;
            Bs[kk][oc] = (k < KK && goc < K) ? __ldg(w + (size_t)goc * KK + k) : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[kk][tx + 16 * i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[kk][ty + 16 * j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    // ---- epilogue: bias + store (coalesced along pixels) ----
    float bv[TN];
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int oc = oc0 + ty + 16 * j;
        bv[j] = (has_bias && oc < K) ? __ldg(bias + oc) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long m = m0 + tx + 16 * i;
        if (m >= M) continue;
        const int n = (int)(m / OHW);
        const int rem = (int)(m - (long long)n * OHW);
        float* __restrict__ yp = y + (size_t)n * K * OHW + rem;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int oc = oc0 + ty + 16 * j;
            if (oc < K) yp[(size_t)oc * OHW] = acc[i][j] + bv[j];
        }
    }
}

torch::Tensor conv2d_igemm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                int64_t stride, int64_t pad) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "float32 expected");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4, "4D tensors expected");
    TORCH_CHECK(x.size(1) == weight.size(1), "channel mismatch (groups not supported)");
    x = x.contiguous();
    weight = weight.contiguous();
    const bool has_bias = bias.defined() && bias.numel() > 0;
    if (has_bias) bias = bias.contiguous();

    const int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int K = weight.size(0), R = weight.size(2), S = weight.size(3);
    const int OH = (H + 2 * (int)pad - R) / (int)stride + 1;
    const int OW = (W + 2 * (int)pad - S) / (int)stride + 1;
    TORCH_CHECK(OH > 0 && OW > 0, "invalid output size");
    TORCH_CHECK(S < 65536, "kernel width too large");

    auto y = torch::empty({N, K, OH, OW}, x.options());
    const long long M = (long long)N * OH * OW;
    const int KK = C * R * S;
    dim3 grid((unsigned int)((M + BM - 1) / BM), (unsigned int)((K + BN - 1) / BN));
    const size_t smem = (size_t)2 * KK * sizeof(int);
    TORCH_CHECK(smem <= 32 * 1024, "reduction dimension too large for lookup table");

    auto stream = at::cuda::getCurrentCUDAStream();
    conv2d_igemm_kernel<<<grid, NTHREADS, smem, stream>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(),
        has_bias ? bias.data_ptr<float>() : nullptr,
        y.data_ptr<float>(),
        N, C, H, W, K, R, S, (int)stride, (int)pad, OH, OW, has_bias ? 1 : 0);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "conv2d_igemm kernel launch failed");
    return y;
}
"""

conv_igemm_cpp_source = (
    "torch::Tensor conv2d_igemm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
    "int64_t stride, int64_t pad);"
)

conv_igemm = load_inline(
    name="conv2d_igemm_ext",
    cpp_sources=conv_igemm_cpp_source,
    cuda_sources=conv_igemm_source,
    functions=["conv2d_igemm_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, num_classes=1000):
        super(ModelNew, self).__init__()
        # keep the same parameter layout / initialisation as the reference
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)
        self.conv_ext = conv_igemm

    def forward(self, x):
        bias = self.conv1.bias if self.conv1.bias is not None else x.new_empty(0)
        return self.conv_ext.conv2d_igemm_cuda(
            x, self.conv1.weight, bias, self.conv1.stride[0], self.conv1.padding[0]
        )
