import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Tiled GEMM (32x32 tiles, 32x32 threads) with fused epilogue:
#   v = (x @ W^T + b) / divisor ; out = gelu(v)   (exact erf form, as F.gelu)

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE 32

__global__ void linear_div_gelu_kernel(const float* __restrict__ x,
                                       const float* __restrict__ w,
                                       const float* __restrict__ b,
                                       float* __restrict__ out,
                                       int M, int N, int K, float divisor) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    int wrow = blockIdx.x * TILE + ty;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int gk = k0 + tx;
        As[ty][tx] = (row < M && gk < K) ? x[(size_t)row * K + gk] : 0.0f;
        Bs[ty][tx] = (wrow < N && gk < K) ? w[(size_t)wrow * K + gk] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < TILE; ++kk)
            acc += As[ty][kk] * Bs[tx][kk];
        __syncthreads();
    }

    if (row < M && col < N) {
        float v = (acc + b[col]) / divisor;
        out[(size_t)row * N + col] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    }
}

torch::Tensor linear_div_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double divisor) {
    int M = x.size(0);
    int K = x.size(1);
    int N = w.size(0);
    auto out = torch::empty({M, N}, x.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    linear_div_gelu_kernel<<<grid, block>>>(x.data_ptr<float>(), w.data_ptr<float>(),
                                            b.data_ptr<float>(), out.data_ptr<float>(),
                                            M, N, K, (float)divisor);
    return out;
}
"""

cpp_source = "torch::Tensor linear_div_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double divisor);"

ext = load_inline(
    name="l2_86_linear_div_gelu",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_div_gelu"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(output_size, input_size))
        self.bias = nn.Parameter(torch.empty(output_size))
        self.divisor = divisor

    def forward(self, x):
        return ext.linear_div_gelu(x, self.weight, self.bias, float(self.divisor))
