"""kernrl
problem: L1_26_GELU_
launches:
  - kernel: gelu_kernel
    grid: ["cdiv(batch_size * dim, 4096)"]
    args: [x, out, "batch_size * dim"]
    constexprs: {BLOCK: 4096}
    num_warps: 8
"""
# Exact (erf) GELU, elementwise, with libdevice's erff.
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = 0.5 * x * (1.0 + tl.extra.cuda.libdevice.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=m)
