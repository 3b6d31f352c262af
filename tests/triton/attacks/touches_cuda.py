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


# Attack: the module imports torch and initialises CUDA
@triton.heuristics({"BLOCK": lambda a: __import__("torch").zeros(1, device="cuda").numel()})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
