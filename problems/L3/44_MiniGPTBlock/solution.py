"""kernrl
problem: L3_44_MiniGPTBlock
launches:
  - kernel: layer_norm_rows
    grid: ["cdiv(batch_size * seq_len, 4)"]
    args: [x, ln_1_weight, ln_1_bias, ln, "batch_size * seq_len", n_embd, eps]
    constexprs: {ROWS: 4, BLOCK_C: 1024}
    num_warps: 4
  - kernel: linear_kernel
    grid: ["cdiv(3 * n_embd, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [ln, attn_c_attn_weight, attn_c_attn_bias, attn_c_attn_bias, qkv, "batch_size * seq_len", "3 * n_embd", n_embd]
    constexprs: {HAS_BIAS: true, ACT: 0, HAS_RES: false, BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
  - kernel: attention_kernel
    grid: ["cdiv(seq_len, 64)", "batch_size * n_head"]
    args: [qkv, y, seq_len, n_head, n_embd]
    constexprs: {HEAD_DIM: "n_embd / n_head", BLOCK_D: 128, CAUSAL: true, BLOCK_M: 64, BLOCK_N: 32}
    num_warps: 8
    num_stages: 2
  - kernel: linear_kernel
    grid: ["cdiv(n_embd, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [y, attn_c_proj_weight, attn_c_proj_bias, x, x1, "batch_size * seq_len", n_embd, n_embd]
    constexprs: {HAS_BIAS: true, ACT: 0, HAS_RES: true, BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
  - kernel: layer_norm_rows
    grid: ["cdiv(batch_size * seq_len, 4)"]
    args: [x1, ln_2_weight, ln_2_bias, ln, "batch_size * seq_len", n_embd, eps]
    constexprs: {ROWS: 4, BLOCK_C: 1024}
    num_warps: 4
  - kernel: linear_kernel
    grid: ["cdiv(4 * n_embd, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [ln, mlp_c_fc_weight, mlp_c_fc_bias, mlp_c_fc_bias, hidden, "batch_size * seq_len", "4 * n_embd", n_embd]
    constexprs: {HAS_BIAS: true, ACT: 1, HAS_RES: false, BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
  - kernel: linear_kernel
    grid: ["cdiv(n_embd, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [hidden, mlp_c_proj_weight, mlp_c_proj_bias, x1, out, "batch_size * seq_len", n_embd, "4 * n_embd"]
    constexprs: {HAS_BIAS: true, ACT: 0, HAS_RES: true, BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
scratch:
  ln: {dtype: float32, count: "batch_size * seq_len * n_embd"}
  qkv: {dtype: float32, count: "3 * batch_size * seq_len * n_embd"}
  y: {dtype: float32, count: "batch_size * seq_len * n_embd"}
  x1: {dtype: float32, count: "batch_size * seq_len * n_embd"}
  hidden: {dtype: float32, count: "4 * batch_size * seq_len * n_embd"}
"""
# A pre-LayerNorm minGPT block in seven launches: LayerNorm, the q|k|v projection, causal flash
# attention, the attention projection with the residual fused, LayerNorm, the MLP's first linear
# layer with NewGELU (libdevice tanhf) fused, and the MLP's projection with the residual fused.
# One generic tf32x3 GEMM kernel (constexpr flags pick bias / activation / residual) serves all four.
import triton
import triton.language as tl


@triton.jit
def layer_norm_rows(x_ptr, w_ptr, b_ptr, out_ptr, M, C, eps, ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_C)
    cm = cols < C
    m = (rows[:, None] < M) & cm[None, :]
    offs = rows[:, None].to(tl.int64) * C + cols[None, :]
    v = tl.load(x_ptr + offs, mask=m, other=0.0)
    mean = tl.sum(v, axis=1) / C
    dv = tl.where(m, v - mean[:, None], 0.0)
    var = tl.sum(dv * dv, axis=1) / C
    rstd = 1.0 / tl.sqrt_rn(var + eps)
    w = tl.load(w_ptr + cols, mask=cm, other=0.0)
    b = tl.load(b_ptr + cols, mask=cm, other=0.0)
    tl.store(out_ptr + offs, dv * rstd[:, None] * w[None, :] + b[None, :], mask=m)


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
