import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cublas_source = """
#include <torch/extension.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

torch::Tensor matmul_cublas(torch::Tensor A, torch::Tensor B) {
    int N = A.size(0);
    auto C = torch::empty({N, N}, A.options());
    cublasHandle_t handle;
    cublasCreate(&handle);
    const float alpha = 1.0f, beta = 0.0f;
    // row-major C = A @ B  <=>  column-major C^T = B^T @ A^T
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha,
                B.data_ptr<float>(), N, A.data_ptr<float>(), N, &beta, C.data_ptr<float>(), N);
    cublasDestroy(handle);
    return C;
}
"""

matmul_cublas = load_inline(
    name="matmul_cublas",
    cpp_sources="torch::Tensor matmul_cublas(torch::Tensor A, torch::Tensor B);",
    cuda_sources=cublas_source,
    functions=["matmul_cublas"],
    extra_ldflags=["-lcublas"],
    verbose=True,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.matmul_cublas = matmul_cublas

    def forward(self, A, B):
        return self.matmul_cublas.matmul_cublas(A, B)
