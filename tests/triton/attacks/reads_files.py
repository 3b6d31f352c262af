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


# Attack: the module reads /etc/passwd while it is compiled
@triton.heuristics({"BLOCK": lambda a: len(open("/etc/passwd").read())})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
