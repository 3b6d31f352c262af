"""kernrl
problem: L1_3_Batched_matrix_multiplication
launches:
  - kernel: bmm_kernel
    grid: [cdiv(m, 64) * cdiv(n, 64), batch_size]
    args: [A, B, out, batch_size, m, k, n]
    constexprs: {BLOCK_M: 64, BLOCK_N: 64, BLOCK_K: 32}
    num_warps: 4
    num_stages: 3
"""
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(A_ptr, B_ptr, out_ptr, batch_size, m, k, n,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # axis 0: output tile inside one matrix, axis 1: batch index
    pid = tl.program_id(0)
    bid = tl.program_id(1).to(tl.int64)

    num_pid_n = tl.cdiv(n, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m < m
    n_mask = offs_n < n

    a_base = A_ptr + bid * m * k
    b_base = B_ptr + bid * k * n
    c_base = out_ptr + bid * m * n

    a_ptrs = a_base + offs_m[:, None] * k + offs_k[None, :]
    b_ptrs = b_base + offs_k[:, None] * n + offs_n[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, k, BLOCK_K):
        k_mask = (k0 + offs_k) < k
        a = tl.load(a_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")  # true fp32, no TF32
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * n

    c_ptrs = c_base + offs_m[:, None] * n + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=m_mask[:, None] & n_mask[None, :])
