"""kernrl
problem: L9_3_Reduction_Max
scratch:
  partial: {dtype: float32, count: 1024}
launches:
  - kernel: max_partial_kernel
    grid: [1024]
    args: [x, partial, n]
    constexprs: {BLOCK: 4096, NPROG: 1024}
    num_warps: 8
  - kernel: max_final_kernel
    grid: [1]
    args: [partial, out]
    constexprs: {NPART: 1024}
    num_warps: 4
"""
# Two-pass max reduction.  Pass 1: 1024 programs grid-stride over x (16 KB per step,
# vectorised loads) keeping an elementwise running max, then reduce to one value each.
# Pass 2: one program reduces the 1024 partials into the 0-dim output.  max is exact
# and order-independent, so the result equals torch.max bit for bit.
import triton
import triton.language as tl


@triton.jit
def max_partial_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr, NPROG: tl.constexpr):
    pid = tl.program_id(0)
    offs0 = tl.arange(0, BLOCK)
    acc = tl.full((BLOCK,), float('-inf'), tl.float32)
    for start in range(pid * BLOCK, n, NPROG * BLOCK):
        offs = start + offs0
        v = tl.load(x_ptr + offs, mask=offs < n, other=float('-inf'))
        acc = tl.maximum(acc, v)
    tl.store(partial_ptr + pid, tl.max(acc, axis=0))


@triton.jit
def max_final_kernel(partial_ptr, out_ptr, NPART: tl.constexpr):
    v = tl.load(partial_ptr + tl.arange(0, NPART))
    tl.store(out_ptr, tl.max(v, axis=0))
