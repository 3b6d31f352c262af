import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Custom tiled GEMM y = x W^T with the bias add and ReLU fused into the store.
# 64x64 output tile per 256-thread block, each thread a 4x4 register tile, BK = 16.
gemm_bias_relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4
#define NT 256

// A: (M, K) row-major, W: (N, K) row-major, C = relu(A W^T + bias)
__global__ void gemm_nt_bias_relu_kernel(const float* __restrict__ A, const float* __restrict__ W,
                                         const float* __restrict__ bias, float* __restrict__ C,
                                         int M, int N, int K) {
    __shared__ float As[BK][BM + 1];
    __shared__ float Ws[BK][BN + 1];

    const int tid = threadIdx.x;
    const int tx = tid & 15;
    const int ty = tid >> 4;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        #pragma unroll
        for (int l = 0; l < (BM * BK) / NT; ++l) {
            int i = tid + l * NT;
            int r = i / BK;     // tile row (m or n)
            int c = i % BK;     // k within tile
            int gk = k0 + c;
            int gm = row0 + r;
            int gn = col0 + r;
            As[c][r] = (gm < M && gk < K) ? A[(size_t)gm * K + gk] : 0.0f;
            Ws[c][r] = (gn < N && gk < K) ? W[(size_t)gn * K + gk] : 0.0f;
        }
        __syncthreads();

        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
            #pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[k][ty + i * 16];
            #pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Ws[k][tx + j * 16];
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    #pragma unroll
    for (int i = 0; i < TM; ++i) {
        int r = row0 + ty + i * 16;
        if (r >= M) continue;
        #pragma unroll
        for (int j = 0; j < TN; ++j) {
            int c = col0 + tx + j * 16;
            if (c < N) C[(size_t)r * N + c] = fmaxf(acc[i][j] + bias[c], 0.0f);
        }
    }
}

torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "inputs must be CUDA tensors");
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int M = x.size(0);
    const int K = x.size(1);
    const int N = weight.size(0);
    TORCH_CHECK(weight.size(1) == K, "weight shape mismatch");
    TORCH_CHECK(bias.numel() == N, "bias shape mismatch");
    auto out = torch::empty({M, N}, x.options());
    if (M == 0 || N == 0) return out;
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    gemm_nt_bias_relu_kernel<<<grid, NT>>>(x.data_ptr<float>(), weight.data_ptr<float>(),
                                           bias.data_ptr<float>(), out.data_ptr<float>(), M, N, K);
    return out;
}
"""

gemm_bias_relu_cpp = "torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

gemm_bias_relu_ext = load_inline(
    name="gemm_add_relu_tiled",
    cpp_sources=gemm_bias_relu_cpp,
    cuda_sources=gemm_bias_relu_source,
    functions=["gemm_bias_relu"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Gemm + bias add + ReLU in a single custom tiled CUDA GEMM kernel.
    """
    def __init__(self, in_features, out_features, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return gemm_bias_relu_ext.gemm_bias_relu(x, self.gemm.weight, self.bias)
