import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# y = x @ W^T + b ; out = y * scaling_factor + y
# 32x32 output tile per block, 32x8 threads, each thread accumulates 4 rows.

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void linear_scale_residual_kernel(const float* __restrict__ x,
                                             const float* __restrict__ w,
                                             const float* __restrict__ b,
                                             float* __restrict__ out,
                                             int M, int N, int K, float s) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int m0 = blockIdx.y * TILE;
    int n0 = blockIdx.x * TILE;

    float acc[TILE / ROWS];
    #pragma unroll
    for (int i = 0; i < TILE / ROWS; ++i) acc[i] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE) {
        int gk = k0 + tx;
        #pragma unroll
        for (int i = 0; i < TILE / ROWS; ++i) {
            int r = ty + i * ROWS;
            int gm = m0 + r;
            int gn = n0 + r;
            As[r][tx] = (gm < M && gk < K) ? x[(size_t)gm * K + gk] : 0.0f;
            Bs[r][tx] = (gn < N && gk < K) ? w[(size_t)gn * K + gk] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < TILE; ++kk) {
            float bv = Bs[tx][kk];
            #pragma unroll
            for (int i = 0; i < TILE / ROWS; ++i)
                acc[i] += As[ty + i * ROWS][kk] * bv;
        }
        __syncthreads();
    }

    int gn = n0 + tx;
    if (gn < N) {
        float bb = b[gn];
        #pragma unroll
        for (int i = 0; i < TILE / ROWS; ++i) {
            int gm = m0 + ty + i * ROWS;
            if (gm < M) {
                float v = acc[i] + bb;
                out[(size_t)gm * N + gn] = v * s + v;
            }
        }
    }
}

torch::Tensor linear_scale_residual(torch::Tensor x, torch::Tensor w, torch::Tensor b, double s) {
    int M = x.size(0);
    int K = x.size(1);
    int N = w.size(0);
    auto out = torch::empty({M, N}, x.options());
    dim3 block(TILE, ROWS);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    linear_scale_residual_kernel<<<grid, block>>>(x.data_ptr<float>(), w.data_ptr<float>(),
                                                  b.data_ptr<float>(), out.data_ptr<float>(),
                                                  M, N, K, (float)s);
    return out;
}
"""

cpp_source = "torch::Tensor linear_scale_residual(torch::Tensor x, torch::Tensor w, torch::Tensor b, double s);"

ext = load_inline(
    name="l2_40_linear_scale_residual",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_scale_residual"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return ext.linear_scale_residual(x, self.weight, self.bias, float(self.scaling_factor))
