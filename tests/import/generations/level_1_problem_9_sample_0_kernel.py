import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tall_skinny_source = """
#include <torch/extension.h>
#include <algorithm>

// C = A (M x N) @ B (N x M), with N small: each thread computes one output, B row in registers
__global__ void tall_skinny_kernel(const float* A, const float* B, float* C, int M, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < M) {
        float sum = 0.0f;
        for (int k = 0; k < N; ++k) sum += A[row * N + k] * B[k * M + col];
        C[row * M + col] = sum;
    }
}

torch::Tensor tall_skinny_matmul(torch::Tensor A, torch::Tensor B) {
    const int M = A.size(0);
    const int N = A.size(1);
    auto C = torch::empty({M, M}, A.options());
    const int threads = 16;
    const int bx = std::min(threads, M);
    dim3 block(bx, threads);
    dim3 grid((M + bx - 1) / bx, (M + threads - 1) / threads);
    tall_skinny_kernel<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N);
    return C;
}
"""

tall_skinny = load_inline(
    name="tall_skinny",
    cpp_sources="torch::Tensor tall_skinny_matmul(torch::Tensor A, torch::Tensor B);",
    cuda_sources=tall_skinny_source,
    functions=["tall_skinny_matmul"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.tall_skinny = tall_skinny

    def forward(self, A, B):
        return self.tall_skinny.tall_skinny_matmul(A, B)
