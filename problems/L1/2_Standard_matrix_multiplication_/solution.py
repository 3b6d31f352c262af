"""kernrl
problem: L1_2_Standard_matrix_multiplication_
launches:
  - kernel: matmul_nn
    grid: ["cdiv(N, 128)", "cdiv(M, 128)"]
    args: [A, B, out, M, N, K]
    constexprs: {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
    num_stages: 3
"""
# fp32 GEMM, out = A @ B, on tensor cores with three TF32 passes (tf32x3), about fp32 accuracy.
import triton
import triton.language as tl


@triton.jit
def matmul_nn(a_ptr, b_ptr, c_ptr, M, N, K,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))
