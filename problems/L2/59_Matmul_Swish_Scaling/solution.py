"""kernrl
problem: L2_59_Matmul_Swish_Scaling
launches:
  - kernel: linear_swish_scale
    grid: ["cdiv(out_features, 128)", "cdiv(batch_size, 128)"]
    args: [x, weight, bias, out, batch_size, out_features, in_features, scaling_factor]
    constexprs: {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
    num_stages: 3
"""
# Linear layer (x @ W^T + b) with the Swish and scaling fused into the GEMM's epilogue;
# tf32x3 tensor-core products (about fp32 accuracy).
import triton
import triton.language as tl


@triton.jit
def linear_swish_scale(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, scale,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + kk[:, None],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc, input_precision="tf32x3")
    y = acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    y = y * tl.sigmoid(y) * scale
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], y, mask=(rm[:, None] < M) & (rn[None, :] < N))
