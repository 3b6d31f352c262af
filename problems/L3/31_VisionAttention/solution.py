"""kernrl
problem: L3_31_VisionAttention
launches:
  - kernel: transpose_in
    grid: ["cdiv(image_height * image_width, 64)", "cdiv(embed_dim, 64)", batch_size]
    args: [x, t, embed_dim, "image_height * image_width"]
    constexprs: {BLOCK_S: 64, BLOCK_C: 64}
    num_warps: 4
  - kernel: linear_kernel
    grid: ["cdiv(3 * embed_dim, 128)", "cdiv(batch_size * image_height * image_width, 128)"]
    args: [t, in_proj_weight, in_proj_bias, in_proj_bias, qkv, "batch_size * image_height * image_width", "3 * embed_dim", embed_dim]
    constexprs: {HAS_BIAS: true, ACT: 0, HAS_RES: false, BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
  - kernel: attention_kernel
    grid: ["cdiv(image_height * image_width, 128)", "batch_size * num_heads"]
    args: [qkv, y, "image_height * image_width", num_heads, embed_dim]
    constexprs: {HEAD_DIM: "embed_dim / num_heads", BLOCK_D: "embed_dim / num_heads", CAUSAL: false, BLOCK_M: 128, BLOCK_N: 64}
    num_warps: 8
    num_stages: 2
  - kernel: out_proj_residual_layernorm
    grid: ["cdiv(batch_size * image_height * image_width, 64)"]
    args: [y, out_proj_weight, out_proj_bias, t, norm_weight, norm_bias, out, "batch_size * image_height * image_width", embed_dim, "image_height * image_width", eps]
    constexprs: {BLOCK_M: 64, BLOCK_C: 128, BLOCK_K: 32}
    num_warps: 8
scratch:
  t: {dtype: float32, count: "batch_size * image_height * image_width * embed_dim"}
  qkv: {dtype: float32, count: "3 * batch_size * image_height * image_width * embed_dim"}
  y: {dtype: float32, count: "batch_size * image_height * image_width * embed_dim"}
"""
# Multi-head self-attention over the pixels of NCHW images, residual and LayerNorm, in four
# launches: a tiled transpose to tokens [B * S, C], the q|k|v projection (tf32x3 GEMM), flash
# attention (non-causal, online softmax), and the output projection whose tile spans all C
# features, so the bias, the residual, the LayerNorm and the transposed store back to NCHW are
# fused into its epilogue. Requires embed_dim <= 128 (BLOCK_C) and a power-of-two head size.
import triton
import triton.language as tl


@triton.jit
def transpose_in(x_ptr, t_ptr, C, S, BLOCK_S: tl.constexpr, BLOCK_C: tl.constexpr):
    s = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(2).to(tl.int64)
    m = (c[:, None] < C) & (s[None, :] < S)
    v = tl.load(x_ptr + b * C * S + c[:, None] * S + s[None, :], mask=m, other=0.0)
    tl.store(t_ptr + b * S * C + s[None, :] * C + c[:, None], v, mask=m)


@triton.jit
def linear_kernel(a_ptr, w_ptr, bias_ptr, res_ptr, out_ptr, M, N, K,
                  HAS_BIAS: tl.constexpr, ACT: tl.constexpr, HAS_RES: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[M, N] = act(a[M, K] @ w[N, K]^T + bias) (+ res); ACT 0: none, 1: tanh-GELU (NewGELU).
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mm = rm < M
    nm = rn < N
    a_rows = a_ptr + rm[:, None].to(tl.int64) * K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_rows + kk[None, :], mask=mm[:, None] & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(kk[:, None] < K) & nm[None, :], other=0.0)
        acc = tl.dot(a, w, acc, input_precision="tf32x3")
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=nm, other=0.0)[None, :]
    if ACT == 1:
        inner = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + tl.extra.cuda.libdevice.tanh(inner))
    offs = rm[:, None].to(tl.int64) * N + rn[None, :]
    msk = mm[:, None] & nm[None, :]
    if HAS_RES:
        acc += tl.load(res_ptr + offs, mask=msk, other=0.0)
    tl.store(out_ptr + offs, acc, mask=msk)


@triton.jit
def attention_kernel(qkv_ptr, y_ptr, T, H, C,
                     HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Flash attention over a packed [B * T, 3C] q|k|v buffer (head h = columns h * HEAD_DIM ...):
    # online softmax in fp32, tf32x3 products; y is [B * T, C] with the heads concatenated.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    d = tl.arange(0, BLOCK_D)
    dm = d < HEAD_DIM
    base = qkv_ptr + b.to(tl.int64) * T * 3 * C + h * HEAD_DIM
    q = tl.load(base + rows[:, None] * (3 * C) + d[None, :], mask=(rows[:, None] < T) & dm[None, :], other=0.0)
    # softmax scale 1 / sqrt(HEAD_DIM), folded into q
    q = q / tl.sqrt_rn(tl.full([BLOCK_M], HEAD_DIM, tl.float32))[:, None]
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    if CAUSAL:
        hi = tl.minimum((pid_m + 1) * BLOCK_M, T)
    else:
        hi = T
    for n0 in range(0, hi, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        kvm = (cols[:, None] < T) & dm[None, :]
        k = tl.load(base + C + cols[:, None] * (3 * C) + d[None, :], mask=kvm, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="tf32x3")
        valid = cols[None, :] < T
        if CAUSAL:
            valid = valid & (cols[None, :] <= rows[:, None])
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(base + 2 * C + cols[:, None] * (3 * C) + d[None, :], mask=kvm, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="tf32x3")
        m_i = m_new
    out = acc / l_i[:, None]
    yb = y_ptr + b.to(tl.int64) * T * C + h * HEAD_DIM
    tl.store(yb + rows[:, None] * C + d[None, :], out, mask=(rows[:, None] < T) & dm[None, :])


@triton.jit
def out_proj_residual_layernorm(y_ptr, w_ptr, b_ptr, t_ptr, nw_ptr, nb_ptr, out_ptr, M, C, S, eps,
                                BLOCK_M: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_C)
    rk = tl.arange(0, BLOCK_K)
    mm = rm < M
    nm = rn < C
    acc = tl.zeros((BLOCK_M, BLOCK_C), dtype=tl.float32)
    for k0 in range(0, C, BLOCK_K):
        kk = k0 + rk
        a = tl.load(y_ptr + rm[:, None] * C + kk[None, :], mask=mm[:, None] & (kk[None, :] < C), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * C + kk[:, None], mask=(kk[:, None] < C) & nm[None, :], other=0.0)
        acc = tl.dot(a, w, acc, input_precision="tf32x3")
    m2 = mm[:, None] & nm[None, :]
    u = acc + tl.load(b_ptr + rn, mask=nm, other=0.0)[None, :]
    u += tl.load(t_ptr + rm[:, None] * C + rn[None, :], mask=m2, other=0.0)
    u = tl.where(m2, u, 0.0)
    mean = tl.sum(u, axis=1) / C
    du = tl.where(m2, u - mean[:, None], 0.0)
    var = tl.sum(du * du, axis=1) / C
    rstd = 1.0 / tl.sqrt_rn(var + eps)
    z = du * rstd[:, None] * tl.load(nw_ptr + rn, mask=nm, other=0.0)[None, :]
    z += tl.load(nb_ptr + rn, mask=nm, other=0.0)[None, :]
    b = rm // S
    s = rm % S
    optr = out_ptr + (b.to(tl.int64) * C * S + s)[:, None] + (rn * S)[None, :]
    tl.store(optr, z, mask=m2)
