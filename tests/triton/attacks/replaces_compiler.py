# expect: compiled|incorrect
"""kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [batch_size]
    args: [x, out, dim]
"""
import triton
import triton.language as tl


# Attack: the module replaces triton.compile to hand back another cubin
@triton.heuristics({"BLOCK": lambda a: setattr(__import__("triton"), "compile", lambda *x, **y: None) or 1024})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
