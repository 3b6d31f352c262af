"""kernrl
problem: L9_2_Reduction_Sum
launches:
  - kernel: partial_sum_kernel
    grid: [cdiv(n, 8192)]
    args: [x, partials, n]
    constexprs: {BLOCK: 8192}
    num_warps: 8
  - kernel: final_sum_kernel
    grid: [1]
    args: [partials, out, cdiv(n, 8192)]
    constexprs: {BLOCK: 1024}
    num_warps: 4
scratch:
  partials: {dtype: float32, count: cdiv(n, 8192)}
"""
# Deterministic two-pass reduction: stage 1 writes one partial sum per 8192-element block into
# a scratch buffer, stage 2 (one program) adds the partials and writes the 0-dim output.
# The inputs are integer-valued, so every fp32 partial is exact and the result matches exactly.
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, partials_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(partials_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def final_sum_kernel(partials_ptr, out_ptr, num_partials, BLOCK: tl.constexpr):
    offs0 = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, num_partials, BLOCK):
        offs = start + offs0
        acc += tl.load(partials_ptr + offs, mask=offs < num_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))
