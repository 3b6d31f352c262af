"""kernrl
problem: L9_3_Reduction_Max
launches:
  - kernel: partial_max
    grid: ["cdiv(n, 16384)"]
    args: [x, partials, n]
    constexprs: {BLOCK: 4096, ITERS: 4}
    num_warps: 8
  - kernel: final_max
    grid: [1]
    args: [partials, out, "cdiv(n, 16384)"]
    constexprs: {BLOCK: 1024}
    num_warps: 4
scratch:
  partials: {dtype: float32, count: "cdiv(n, 16384)"}
"""
# Two-level max: each program reduces 16384 elements to a partial max; one program takes the max
# of the partials. Masked lanes read -inf.
import triton
import triton.language as tl


@triton.jit
def partial_max(x_ptr, part_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.full([BLOCK], float("-inf"), tl.float32)
    for it in tl.static_range(ITERS):
        idx = pid.to(tl.int64) * (BLOCK * ITERS) + it * BLOCK + offs
        acc = tl.maximum(acc, tl.load(x_ptr + idx, mask=idx < n, other=float("-inf")))
    tl.store(part_ptr + pid, tl.max(acc, axis=0))


@triton.jit
def final_max(part_ptr, out_ptr, P, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.full([BLOCK], float("-inf"), tl.float32)
    for i in range(0, P, BLOCK):
        acc = tl.maximum(acc, tl.load(part_ptr + i + offs, mask=i + offs < P, other=float("-inf")))
    tl.store(out_ptr, tl.max(acc, axis=0))
