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


# Attack: the module allocates without bound
@triton.heuristics({"BLOCK": lambda a: len(bytearray(1 << 44))})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
