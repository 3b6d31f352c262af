import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// C[r, c] = A[r] * B[r, c]   (B, C row-major, N rows of M columns)
// The flat array is processed as float4 chunks; a chunk may straddle a row
// boundary (M need not be a multiple of 4), so the row of every lane is resolved
// with a single division per chunk plus a cheap boundary test.
__global__ void diag_matmul_kernel(const float* __restrict__ A,
                                   const float* __restrict__ B,
                                   float* __restrict__ C,
                                   int64_t M,
                                   int64_t total) {
    const int64_t n4 = total >> 2;
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;

    const float4* __restrict__ B4 = reinterpret_cast<const float4*>(B);
    float4* __restrict__ C4 = reinterpret_cast<float4*>(C);

    for (int64_t i = gid; i < n4; i += stride) {
        const int64_t e = i << 2;
        const int64_t r = e / M;
        const int64_t next_row_start = (r + 1) * M;
        const float ar = __ldg(A + r);

        float a1 = ar, a2 = ar, a3 = ar;
        if (e + 3 >= next_row_start) {
            // chunk crosses (at least) one row boundary: resolve each lane
            a1 = (e + 1 < next_row_start) ? ar : __ldg(A + (e + 1) / M);
            a2 = (e + 2 < next_row_start) ? ar : __ldg(A + (e + 2) / M);
            a3 = __ldg(A + (e + 3) / M);
        }
        float4 b = B4[i];
        float4 c;
        c.x = ar * b.x;
        c.y = a1 * b.y;
        c.z = a2 * b.z;
        c.w = a3 * b.w;
        C4[i] = c;
    }

    // scalar tail (at most 3 elements)
    const int64_t tail_start = n4 << 2;
    const int64_t t = tail_start + gid;
    if (t < total) {
        C[t] = __ldg(A + t / M) * B[t];
    }
}

torch::Tensor diag_matmul(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(A.is_contiguous() && B.is_contiguous(), "inputs must be contiguous");
    TORCH_CHECK(B.dim() == 2 && A.dim() == 1 && A.size(0) == B.size(0), "shape mismatch");

    const int64_t N = B.size(0);
    const int64_t M = B.size(1);
    auto C = torch::empty_like(B);
    const int64_t total = N * M;

    const int threads = 256;
    int64_t n4 = total >> 2;
    int64_t blocks = (n4 + threads - 1) / threads;
    if (blocks < 1) blocks = 1;
    if (blocks > 65535) blocks = 65535;

    diag_matmul_kernel<<<(unsigned)blocks, threads>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                       C.data_ptr<float>(), M, total);
    return C;
}
"""

cpp_source = "torch::Tensor diag_matmul(torch::Tensor A, torch::Tensor B);"

ext = load_inline(
    name="diag_matmul_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["diag_matmul"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A, B):
        return ext.diag_matmul(A, B)
