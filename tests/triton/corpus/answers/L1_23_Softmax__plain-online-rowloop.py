"""kernrl
problem: L1_23_Softmax
launches:
  - kernel: softmax_row_kernel
    grid: [batch_size]
    args: [x, out, batch_size, dim]
    constexprs: {BLOCK: 4096}
    num_warps: 8
"""
# One program per row. Pass 1 computes the running (online) max and sum of exp over the row in
# BLOCK-sized chunks; pass 2 re-reads the row (mostly from L2) and writes exp(x - max) / sum.
# Everything is fp32.
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, out_ptr, batch_size, dim, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    row_start = row.to(tl.int64) * dim
    x_row = x_ptr + row_start
    o_row = out_ptr + row_start
    cols = tl.arange(0, BLOCK)

    # pass 1: online max / sum. Each chunk starts below `dim`, so it holds at least one valid
    # element and its max is finite; m starts at -inf and exp(-inf - finite) = 0.
    m = float("-inf")
    s = 0.0
    for start in range(0, dim, BLOCK):
        offs = start + cols
        mask = offs < dim
        xv = tl.load(x_row + offs, mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(xv, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(xv - m_new), axis=0)
        m = m_new

    inv_s = 1.0 / s
    # pass 2: normalise
    for start in range(0, dim, BLOCK):
        offs = start + cols
        mask = offs < dim
        xv = tl.load(x_row + offs, mask=mask, other=float("-inf"))
        y = tl.exp(xv - m) * inv_s
        tl.store(o_row + offs, y, mask=mask)
