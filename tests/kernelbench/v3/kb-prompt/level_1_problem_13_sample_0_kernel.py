import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# C = A @ B where A and B are symmetric.
# Because A == A^T, the element A[m][k] can be read as A[k][m]; this lets the
# A-tile be loaded "k-major" with fully coalesced float4 loads, exactly like the
# B-tile, and stored in shared memory without any transposition.
sym_matmul_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <c10/cuda/CUDAException.h>

#define BM 128
#define BN 128
#define BK 8

// 256 threads, each computes an 8x8 micro-tile (split as 2x2 blocks of 4x4
// located at +0 / +64 offsets for conflict-free float4 shared-memory reads).
__global__ void __launch_bounds__(256)
sym_sgemm_128x128_kernel(const float* __restrict__ A,
                         const float* __restrict__ B,
                         float* __restrict__ C,
                         int N) {
    __shared__ __align__(16) float As[2][BK][BM];
    __shared__ __align__(16) float Bs[2][BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid & 15;        // column group
    const int ty = tid >> 4;        // row group
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // loader mapping: 8 rows (k) x 32 float4 (m / n)
    const int lrow = tid >> 5;          // 0..7
    const int lcol = (tid & 31) << 2;   // 0..124

    // A^T tile: As[k][m] = A[m][k] = A[k][m]  (symmetry)
    const float* Aptr = A + (size_t)lrow * N + m0 + lcol;
    const float* Bptr = B + (size_t)lrow * N + n0 + lcol;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    float4 ra = __ldg(reinterpret_cast<const float4*>(Aptr));
    float4 rb = __ldg(reinterpret_cast<const float4*>(Bptr));
    *reinterpret_cast<float4*>(&As[0][lrow][lcol]) = ra;
    *reinterpret_cast<float4*>(&Bs[0][lrow][lcol]) = rb;
    __syncthreads();

    int buf = 0;
    for (int k0 = 0; k0 < N; k0 += BK) {
        const bool has_next = (k0 + BK) < N;
        if (has_next) {
            const size_t off = (size_t)(k0 + BK) * N;
            ra = __ldg(reinterpret_cast<const float4*>(Aptr + off));
            rb = __ldg(reinterpret_cast<const float4*>(Bptr + off));
        }

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4 + 64]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4 + 64]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }

        if (has_next) {
            *reinterpret_cast<float4*>(&As[buf ^ 1][lrow][lcol]) = ra;
            *reinterpret_cast<float4*>(&Bs[buf ^ 1][lrow][lcol]) = rb;
        }
        __syncthreads();
        buf ^= 1;
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + ((i < 4) ? (ty * 4 + i) : (64 + ty * 4 + (i - 4)));
        float* crow = C + (size_t)row * N + n0;
        *reinterpret_cast<float4*>(crow + tx * 4) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4*>(crow + 64 + tx * 4) =
            make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}

// Generic bounds-checked fallback (any N, no symmetry assumption).
#define TS 32
__global__ void sgemm_tiled_generic_kernel(const float* __restrict__ A,
                                           const float* __restrict__ B,
                                           float* __restrict__ C, int N) {
    __shared__ float sA[TS][TS + 1];
    __shared__ float sB[TS][TS + 1];
    const int row = blockIdx.y * TS + threadIdx.y;
    const int col = blockIdx.x * TS + threadIdx.x;
    float sum = 0.0f;
    for (int k0 = 0; k0 < N; k0 += TS) {
        const int ka = k0 + threadIdx.x;
        const int kb = k0 + threadIdx.y;
        sA[threadIdx.y][threadIdx.x] = (row < N && ka < N) ? A[(size_t)row * N + ka] : 0.0f;
        sB[threadIdx.y][threadIdx.x] = (kb < N && col < N) ? B[(size_t)kb * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TS; ++k) sum = fmaf(sA[threadIdx.y][k], sB[k][threadIdx.x], sum);
        __syncthreads();
    }
    if (row < N && col < N) C[(size_t)row * N + col] = sum;
}

torch::Tensor sym_matmul_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
                "inputs must be float32");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "inputs must be 2D");
    TORCH_CHECK(A.size(0) == A.size(1) && B.size(0) == B.size(1) && A.size(0) == B.size(0),
                "inputs must be square matrices of equal size");
    A = A.contiguous();
    B = B.contiguous();
    const int N = (int)A.size(0);
    auto C = torch::empty({N, N}, A.options());

    if (N % BM == 0) {
        dim3 grid(N / BN, N / BM);
        sym_sgemm_128x128_kernel<<<grid, 256>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                C.data_ptr<float>(), N);
    } else {
        dim3 block(TS, TS);
        dim3 grid((N + TS - 1) / TS, (N + TS - 1) / TS);
        sgemm_tiled_generic_kernel<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(),
                                                   C.data_ptr<float>(), N);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

sym_matmul_cpp_source = "torch::Tensor sym_matmul_cuda(torch::Tensor A, torch::Tensor B);"

sym_matmul = load_inline(
    name="sym_matmul_ext",
    cpp_sources=sym_matmul_cpp_source,
    cuda_sources=sym_matmul_source,
    functions=["sym_matmul_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    """
    Matrix multiplication of two symmetric matrices with a custom
    register-blocked (128x128x8, 8x8 per thread, double-buffered) SGEMM that
    exploits the symmetry of A for coalesced, transpose-free tile loads.
    """
    def __init__(self):
        super(ModelNew, self).__init__()
        self.sym_matmul = sym_matmul

    def forward(self, A, B):
        return self.sym_matmul.sym_matmul_cuda(A, B)
