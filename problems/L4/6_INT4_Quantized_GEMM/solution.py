"""kernrl
problem: L4_6_INT4_Quantized_GEMM
launches:
  - kernel: int4_gemm
    grid: ["cdiv(out_features, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [x, qweight, scales, out, "batch_size * seq_len", out_features, in_features, group_size]
    constexprs: {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 64}
    num_warps: 8
    num_stages: 3
"""
# GPTQ-style INT4 weight-only GEMM: each K-tile of the packed weight is unpacked in registers
# (low nibble = even column, high nibble = odd column), dequantised to float16 exactly as the
# reference rounds it (scale * (q - 8), one rounding to fp16), and fed with the fp16 activations
# to a tensor-core tl.dot with fp32 accumulation; the result is stored as float16.
import triton
import triton.language as tl


@triton.jit
def int4_gemm(x_ptr, qw_ptr, sc_ptr, out_ptr, M, N, K, GS,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mm = rm < M
    nm = rn < N
    half_k = K // 2
    n_groups = K // GS
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        km = kk < K
        a = tl.load(x_ptr + rm[:, None].to(tl.int64) * K + kk[None, :], mask=mm[:, None] & km[None, :], other=0.0)
        wm = km[:, None] & nm[None, :]
        byte = tl.load(qw_ptr + rn[None, :].to(tl.int64) * half_k + (kk // 2)[:, None], mask=wm, other=0)
        q = (byte.to(tl.int32) >> ((kk % 2) * 4)[:, None]) & 15
        sc = tl.load(sc_ptr + rn[None, :] * n_groups + (kk // GS)[:, None], mask=wm, other=0.0)
        w = (sc.to(tl.float32) * (q - 8).to(tl.float32)).to(tl.float16)
        acc = tl.dot(a, w, acc)
    tl.store(out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc.to(tl.float16), mask=mm[:, None] & nm[None, :])
