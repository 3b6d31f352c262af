"""kernrl
problem: L1_3_Batched_matrix_multiplication
launches:
  - kernel: bmm_kernel
    grid: ["cdiv(n, 64)", "cdiv(m, 128)", batch_size]
    args: [A, B, out, m, n, k]
    constexprs: {BLOCK_M: 128, BLOCK_N: 64, BLOCK_K: 32}
    num_warps: 4
    num_stages: 3
"""
# Batched fp32 GEMM: the third program id is the batch; tf32x3 tensor-core products.
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    bid = tl.program_id(2).to(tl.int64)
    a_ptr += bid * M * K
    b_ptr += bid * K * N
    c_ptr += bid * M * N
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
