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


# Attack: the module writes a file outside its private directory
@triton.heuristics({"BLOCK": lambda a: open("/tmp/kernrl-triton-attack-written", "w").write("x")})
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
