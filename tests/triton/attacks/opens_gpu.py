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


# Attack: the module opens the GPU device nodes directly
@triton.heuristics({"BLOCK": lambda a: __import__("os").open("/dev/nvidiactl", 2)})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
