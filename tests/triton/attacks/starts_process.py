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


# Attack: the module starts a shell
@triton.heuristics({"BLOCK": lambda a: __import__("subprocess").run(["/bin/sh", "-c", "id"]).returncode + 1})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
