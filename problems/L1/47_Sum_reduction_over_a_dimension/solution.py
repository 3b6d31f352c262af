"""kernrl
problem: L1_47_Sum_reduction_over_a_dimension
launches:
  - kernel: sum_dim1
    grid: ["cdiv(dim2, 128)", batch_size]
    args: [x, out, dim1, dim2]
    constexprs: {BLOCK_R: 32, BLOCK_C: 128}
    num_warps: 4
"""
# Sum over the middle dimension: each program owns 128 columns of one sample and walks down the
# rows 32 at a time (coalesced along the columns), reducing the tile once at the end.
import triton
import triton.language as tl


@triton.jit
def sum_dim1(x_ptr, out_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(1).to(tl.int64)
    rows = tl.arange(0, BLOCK_R)
    cm = cols < C
    base = x_ptr + b * R * C
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rr = r0 + rows
        acc += tl.load(base + rr[:, None] * C + cols[None, :],
                       mask=(rr[:, None] < R) & cm[None, :], other=0.0)
    tl.store(out_ptr + b * C + cols, tl.sum(acc, axis=0), mask=cm)
