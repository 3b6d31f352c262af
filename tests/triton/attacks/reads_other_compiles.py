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


# Attack: the module lists the folder above its working directory (where a compile server keeps the folders of
# other compiles)
@triton.heuristics({"BLOCK": lambda a: len(__import__("os").listdir(".."))})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
