"""kernrl
problem: L9_2_Reduction_Sum
launches:
  - kernel: partial_sums
    grid: ["cdiv(n, 16384)"]
    args: [x, partials, n]
    constexprs: {BLOCK: 4096, ITERS: 4}
    num_warps: 8
  - kernel: final_sum
    grid: [1]
    args: [partials, out, "cdiv(n, 16384)"]
    constexprs: {BLOCK: 1024}
    num_warps: 4
scratch:
  partials: {dtype: float32, count: "cdiv(n, 16384)"}
"""
# Two-level sum: each program reduces 16384 elements (4 vector loads of 4096 per lane group, one
# tree reduction) to a partial; one program adds the partials.
import triton
import triton.language as tl


@triton.jit
def partial_sums(x_ptr, part_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for it in tl.static_range(ITERS):
        idx = pid.to(tl.int64) * (BLOCK * ITERS) + it * BLOCK + offs
        acc += tl.load(x_ptr + idx, mask=idx < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def final_sum(part_ptr, out_ptr, P, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, P, BLOCK):
        acc += tl.load(part_ptr + i + offs, mask=i + offs < P, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))
