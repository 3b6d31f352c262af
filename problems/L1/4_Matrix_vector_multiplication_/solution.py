"""kernrl
problem: L1_4_Matrix_vector_multiplication_
launches:
  - kernel: matvec_partial
    grid: [M, 32]
    args: [A, B, partials, K]
    constexprs: {SPLIT: 32, BLOCK: 1024}
    num_warps: 4
  - kernel: matvec_final
    grid: ["cdiv(M, 64)"]
    args: [partials, out, M]
    constexprs: {SPLIT: 32, ROWS: 64}
scratch:
  partials: {dtype: float32, count: "M * 32"}
"""
# Split-K matrix-vector product: program (row, s) sums its 1/32 of the row; a second launch adds
# the 32 partials of each row. 32 x M programs keep every SM streaming A.
import triton
import triton.language as tl


@triton.jit
def matvec_partial(a_ptr, x_ptr, part_ptr, K, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = tl.program_id(1)
    chunk = tl.cdiv(tl.cdiv(K, SPLIT), BLOCK) * BLOCK
    start = s * chunk
    end = tl.minimum(start + chunk, K)
    offs = tl.arange(0, BLOCK)
    base = a_ptr + row.to(tl.int64) * K
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k0 in range(start, end, BLOCK):
        kk = k0 + offs
        m = kk < end
        a = tl.load(base + kk, mask=m, other=0.0)
        x = tl.load(x_ptr + kk, mask=m, other=0.0)
        acc += a * x
    tl.store(part_ptr + row * SPLIT + s, tl.sum(acc, axis=0))


@triton.jit
def matvec_final(part_ptr, out_ptr, M, SPLIT: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, SPLIT)
    p = tl.load(part_ptr + rows[:, None] * SPLIT + cols[None, :], mask=rows[:, None] < M, other=0.0)
    tl.store(out_ptr + rows, tl.sum(p, axis=1), mask=rows < M)
