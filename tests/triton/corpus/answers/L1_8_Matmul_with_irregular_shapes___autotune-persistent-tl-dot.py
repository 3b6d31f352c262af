"""kernrl
problem: L1_8_Matmul_with_irregular_shapes_
launches:
  - kernel: matmul_fp32_persistent
    grid: [num_sms]
    args: [A, B, out, M, K, N]
"""
# Persistent fp32 GEMM: one program per SM walks over output tiles (grouped ordering
# for L2 reuse).  tl.dot runs with input_precision="ieee" so the products are true fp32
# (no TF32 rounding, which would fail the 1.5e-3 tolerance at K = 2949).
# Block sizes / warps / stages come from @triton.autotune; the grid does not depend on
# them because the kernel loops over tiles with a stride of tl.num_programs(0).
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 32, 'GROUP_M': 8}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 16, 'GROUP_M': 8}, num_warps=8, num_stages=4),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 64, 'BLOCK_K': 32, 'GROUP_M': 8}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 128, 'BLOCK_K': 32, 'GROUP_M': 8}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 32, 'GROUP_M': 8}, num_warps=4, num_stages=3),
        triton.Config({'BLOCK_M': 32, 'BLOCK_N': 64, 'BLOCK_K': 32, 'GROUP_M': 4}, num_warps=4, num_stages=3),
    ],
    key=['M', 'K', 'N'],
)
@triton.jit
def matmul_fp32_persistent(A_ptr, B_ptr, out_ptr, M, K, N,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)

    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n

    offs_k = tl.arange(0, BLOCK_K)

    for tile in range(pid, num_tiles, nprog):
        # grouped (swizzled) tile order for better L2 hit rate
        group_id = tile // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((tile % num_pid_in_group) % group_size_m)
        pid_n = (tile % num_pid_in_group) // group_size_m

        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        m_mask = offs_m < M
        n_mask = offs_n < N

        a_ptrs = A_ptr + offs_m[:, None] * K + offs_k[None, :]
        b_ptrs = B_ptr + offs_k[:, None] * N + offs_n[None, :]

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            k_mask = (k0 + offs_k) < K
            a = tl.load(a_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee")
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K * N

        c_ptrs = out_ptr + offs_m[:, None] * N + offs_n[None, :]
        tl.store(c_ptrs, acc, mask=m_mask[:, None] & n_mask[None, :])
