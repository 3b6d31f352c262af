"""kernrl
problem: L2_66_Matmul_Dropout_Mean_Softmax
launches:
  - kernel: column_means
    grid: ["cdiv(in_features + 1, 128)"]
    args: [weight, bias, wbar, in_features, out_features]
    constexprs: {BLOCK: 128, BLOCK_N: 64}
  - kernel: row_means
    grid: ["cdiv(batch_size, 256)"]
    args: [x, wbar, out, pmax, psum, batch_size, in_features]
    constexprs: {ROWS: 256, BLOCK_K: 32}
    num_warps: 8
  - kernel: softmax_normalize
    grid: ["cdiv(batch_size, 4096)"]
    args: [out, pmax, psum, batch_size, "cdiv(batch_size, 256)"]
    constexprs: {BLOCK: 4096, BLOCK_P: 1024}
    num_warps: 8
scratch:
  wbar: {dtype: float32, count: "in_features + 1"}
  pmax: {dtype: float32, count: "cdiv(batch_size, 256)"}
  psum: {dtype: float32, count: "cdiv(batch_size, 256)"}
"""
# Dropout is the identity in eval mode and the mean over the linear layer's outputs is linear, so
# mean_j(x . w_j + b_j) = x . mean_j(w_j) + mean_j(b_j). 1) column means of W and b; 2) r = x . wbar
# + bbar per row, with each program's max and rescaled sum of exp(r); 3) softmax over the batch:
# every program combines the partials and normalises its slice of out in place.
import triton
import triton.language as tl


@triton.jit
def column_means(w_ptr, b_ptr, wbar_ptr, K, N, BLOCK: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rows = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N, BLOCK), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        nn = n0 + rows
        nm = nn < N
        w = tl.load(w_ptr + nn[:, None] * K + cols[None, :], mask=nm[:, None] & (cols[None, :] < K), other=0.0)
        b = tl.load(b_ptr + nn, mask=nm, other=0.0)
        acc += tl.where(cols[None, :] == K, b[:, None], w)
    tl.store(wbar_ptr + cols, tl.sum(acc, axis=0) / N, mask=cols <= K)


@triton.jit
def row_means(x_ptr, wbar_ptr, out_ptr, pmax_ptr, psum_ptr, B, K, ROWS: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    rm = rows < B
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((ROWS, BLOCK_K), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + ks
        km = kk < K
        xv = tl.load(x_ptr + rows[:, None].to(tl.int64) * K + kk[None, :], mask=rm[:, None] & km[None, :], other=0.0)
        wv = tl.load(wbar_ptr + kk, mask=km, other=0.0)
        acc += xv * wv[None, :]
    r = tl.sum(acc, axis=1) + tl.load(wbar_ptr + K)
    tl.store(out_ptr + rows, r, mask=rm)
    rv = tl.where(rm, r, float("-inf"))
    mx = tl.max(rv, axis=0)
    tl.store(pmax_ptr + pid, mx)
    tl.store(psum_ptr + pid, tl.sum(tl.exp(rv - mx), axis=0))


@triton.jit
def softmax_normalize(out_ptr, pmax_ptr, psum_ptr, B, P, BLOCK: tl.constexpr, BLOCK_P: tl.constexpr):
    ps = tl.arange(0, BLOCK_P)
    m_run = tl.full([BLOCK_P], float("-inf"), tl.float32)
    for p0 in range(0, P, BLOCK_P):
        m_run = tl.maximum(m_run, tl.load(pmax_ptr + p0 + ps, mask=p0 + ps < P, other=float("-inf")))
    gmax = tl.max(m_run, axis=0)
    s_run = tl.zeros([BLOCK_P], dtype=tl.float32)
    for p0 in range(0, P, BLOCK_P):
        pm = p0 + ps < P
        mx = tl.load(pmax_ptr + p0 + ps, mask=pm, other=float("-inf"))
        sm = tl.load(psum_ptr + p0 + ps, mask=pm, other=0.0)
        s_run += sm * tl.exp(mx - gmax)
    inv = 1.0 / tl.sum(s_run, axis=0)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < B
    r = tl.load(out_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, tl.exp(r - gmax) * inv, mask=m)
