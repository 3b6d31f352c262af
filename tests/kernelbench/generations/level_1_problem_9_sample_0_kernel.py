import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Tall-skinny GEMM (small K, huge output): each 32x8 thread block computes a 32x32 output
# tile, each thread 4 rows of one column. The whole (small) K panel is staged in shared
# memory in chunks of 32; the kernel is bound by the coalesced output writes.
tsmm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define TILE 32
#define ROWS_PER_THREAD 4
#define BLOCK_Y (TILE / ROWS_PER_THREAD)

__global__ void tall_skinny_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x;        // 0..31
    const int ty = threadIdx.y;        // 0..7
    const int row0 = blockIdx.y * TILE;
    const int col0 = blockIdx.x * TILE;
    const int col = col0 + tx;

    float acc[ROWS_PER_THREAD];
    #pragma unroll
    for (int i = 0; i < ROWS_PER_THREAD; ++i) acc[i] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE) {
        #pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            int r = ty + i * BLOCK_Y;
            int gr = row0 + r;
            int gk = k0 + tx;
            As[r][tx] = (gr < M && gk < K) ? A[(size_t)gr * K + gk] : 0.0f;
            int kr = k0 + r;
            Bs[r][tx] = (kr < K && col < N) ? B[(size_t)kr * N + col] : 0.0f;
        }
        __syncthreads();

        #pragma unroll
        for (int k = 0; k < TILE; ++k) {
            float b = Bs[k][tx];
            #pragma unroll
            for (int i = 0; i < ROWS_PER_THREAD; ++i)
                acc[i] += As[ty + i * BLOCK_Y][k] * b;
        }
        __syncthreads();
    }

    if (col < N) {
        #pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            int r = row0 + ty + i * BLOCK_Y;
            if (r < M) C[(size_t)r * N + col] = acc[i];
        }
    }
}

torch::Tensor tall_skinny_matmul_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "inputs must be 2D");
    TORCH_CHECK(A.size(1) == B.size(0), "inner dimensions must match");
    A = A.contiguous();
    B = B.contiguous();
    const int M = A.size(0);
    const int K = A.size(1);
    const int N = B.size(1);
    auto C = torch::empty({M, N}, A.options());
    if (M == 0 || N == 0) return C;
    dim3 block(TILE, BLOCK_Y);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    tall_skinny_matmul_kernel<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                               C.data_ptr<float>(), M, N, K);
    return C;
}
"""

tsmm_cpp = "torch::Tensor tall_skinny_matmul_cuda(torch::Tensor A, torch::Tensor B);"

tsmm_ext = load_inline(
    name="tall_skinny_matmul",
    cpp_sources=tsmm_cpp,
    cuda_sources=tsmm_source,
    functions=["tall_skinny_matmul_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Tall-skinny matrix multiplication with a custom tiled CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A, B):
        return tsmm_ext.tall_skinny_matmul_cuda(A, B)
