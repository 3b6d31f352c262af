"""kernrl
problem: L4_3_GroupedQueryAttention
launches:
  - kernel: linear_nobias
    grid: ["cdiv(num_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [x, q_proj_weight, q, "batch_size * seq_len", "num_heads * head_dim", hidden_size]
    constexprs: {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
  - kernel: linear_nobias
    grid: ["cdiv(num_kv_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [x, k_proj_weight, k, "batch_size * seq_len", "num_kv_heads * head_dim", hidden_size]
    constexprs: {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
  - kernel: linear_nobias
    grid: ["cdiv(num_kv_heads * head_dim, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [x, v_proj_weight, v, "batch_size * seq_len", "num_kv_heads * head_dim", hidden_size]
    constexprs: {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
  - kernel: rope_inplace
    grid: ["batch_size * seq_len", num_heads]
    args: [q, seq_len, num_heads, rope_theta]
    constexprs: {HALF: "head_dim / 2"}
    num_warps: 1
  - kernel: rope_inplace
    grid: ["batch_size * seq_len", num_kv_heads]
    args: [k, seq_len, num_kv_heads, rope_theta]
    constexprs: {HALF: "head_dim / 2"}
    num_warps: 1
  - kernel: gqa_attention
    grid: ["cdiv(seq_len, 64)", "batch_size * num_heads"]
    args: [q, k, v, attn, seq_len, num_heads, num_kv_heads]
    constexprs: {HEAD_DIM: head_dim, BLOCK_M: 64, BLOCK_N: 64}
    num_warps: 8
    num_stages: 2
  - kernel: linear_nobias
    grid: ["cdiv(hidden_size, 128)", "cdiv(batch_size * seq_len, 128)"]
    args: [attn, o_proj_weight, out, "batch_size * seq_len", hidden_size, "num_heads * head_dim"]
    constexprs: {BLOCK_M: 128, BLOCK_N: 128, BLOCK_K: 32}
    num_warps: 8
scratch:
  q: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
  k: {dtype: float32, count: "batch_size * seq_len * num_kv_heads * head_dim"}
  v: {dtype: float32, count: "batch_size * seq_len * num_kv_heads * head_dim"}
  attn: {dtype: float32, count: "batch_size * seq_len * num_heads * head_dim"}
"""
# Llama-style grouped-query attention: q/k/v projections (tf32x3 GEMMs, about fp32 accuracy),
# RoPE in place with PyTorch's float32 roundings (libdevice powf, IEEE division, precise cosf /
# sinf), causal flash attention where query head h reads kv head h / (num_heads / num_kv_heads),
# and the output projection.
import triton
import triton.language as tl


@triton.jit
def linear_nobias(a_ptr, w_ptr, out_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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
        w = tl.load(w_ptr + rn[None, :].to(tl.int64) * K + kk[:, None], mask=(kk[:, None] < K) & nm[None, :], other=0.0)
        acc = tl.dot(a, w, acc, input_precision="tf32x3")
    tl.store(out_ptr + rm[:, None].to(tl.int64) * N + rn[None, :], acc, mask=mm[:, None] & nm[None, :])


@triton.jit
def rope_inplace(t_ptr, S, NH, theta, HALF: tl.constexpr):
    row = tl.program_id(0)
    h = tl.program_id(1)
    pos = (row % S).to(tl.float32)
    i = tl.arange(0, HALF)
    base = t_ptr + row.to(tl.int64) * NH * (2 * HALF) + h * (2 * HALF)
    x1 = tl.load(base + i)
    x2 = tl.load(base + HALF + i)
    expo = (2 * i).to(tl.float32) / (2 * HALF)
    inv_freq = tl.extra.cuda.libdevice.div_rn(tl.full([HALF], 1.0, tl.float32), tl.extra.cuda.libdevice.pow(theta + tl.zeros([HALF], tl.float32), expo))
    ang = pos * inv_freq
    c = tl.extra.cuda.libdevice.cos(ang)
    s = tl.extra.cuda.libdevice.sin(ang)
    tl.store(base + i, x1 * c - x2 * s)
    tl.store(base + HALF + i, x2 * c + x1 * s)


@triton.jit
def gqa_attention(q_ptr, k_ptr, v_ptr, o_ptr, S, H, KVH,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    kvh = h // (H // KVH)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    d = tl.arange(0, HEAD_DIM)
    qb = q_ptr + b.to(tl.int64) * S * H * HEAD_DIM + h * HEAD_DIM
    kb = k_ptr + b.to(tl.int64) * S * KVH * HEAD_DIM + kvh * HEAD_DIM
    vb = v_ptr + b.to(tl.int64) * S * KVH * HEAD_DIM + kvh * HEAD_DIM
    rmask = rows[:, None] < S
    q = tl.load(qb + rows[:, None] * (H * HEAD_DIM) + d[None, :], mask=rmask, other=0.0)
    q = q / tl.sqrt_rn(tl.full([BLOCK_M], HEAD_DIM, tl.float32))[:, None]
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for n0 in range(0, hi, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        cm = cols[:, None] < S
        k = tl.load(kb + cols[:, None] * (KVH * HEAD_DIM) + d[None, :], mask=cm, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="tf32x3")
        s = tl.where((cols[None, :] <= rows[:, None]) & (cols[None, :] < S), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(vb + cols[:, None] * (KVH * HEAD_DIM) + d[None, :], mask=cm, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="tf32x3")
        m_i = m_new
    ob = o_ptr + b.to(tl.int64) * S * H * HEAD_DIM + h * HEAD_DIM
    tl.store(ob + rows[:, None] * (H * HEAD_DIM) + d[None, :], acc / l_i[:, None], mask=rmask)
