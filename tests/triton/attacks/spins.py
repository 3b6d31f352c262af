# expect: compile_error
"""kernrl
problem: L1_23_Softmax
launches:
  - kernel: k
    grid: [batch_size]
    args: [x, out, dim]
"""
import triton
import triton.language as tl


# Attack: the module never finishes (an endless loop while compiled)
@triton.heuristics({"BLOCK": lambda a: [0 for _ in iter(int, 1)]})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
