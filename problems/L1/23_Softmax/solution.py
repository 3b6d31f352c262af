"""kernrl
problem: L1_23_Softmax
launches:
  - kernel: softmax_kernel
    grid: [batch_size]
    args: [x, out, dim]
    constexprs: {BLOCK: 2048}
    num_warps: 8
"""
# Row softmax, one program per row: an online pass keeps a running max and a rescaled sum of
# exponentials per lane, then a second pass writes exp(x - max) / sum.
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    o_row = out_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        x = tl.load(x_row + off + cols, mask=off + cols < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    inv = 1.0 / total
    for off in range(0, n_cols, BLOCK):
        msk = off + cols < n_cols
        x = tl.load(x_row + off + cols, mask=msk, other=0.0)
        tl.store(o_row + off + cols, tl.exp(x - row_max) * inv, mask=msk)
