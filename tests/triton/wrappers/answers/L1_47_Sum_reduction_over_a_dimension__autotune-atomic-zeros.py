import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_R": 128, "BLOCK_C": 64}, num_warps=4),
        triton.Config({"BLOCK_R": 256, "BLOCK_C": 32}, num_warps=4),
    ],
    key=["R", "C"],
)
@triton.jit
def sum_partial(x_ptr, out_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # Each program sums a BLOCK_R x BLOCK_C tile over its rows and adds it into the output.
    b = tl.program_id(0)
    pr = tl.program_id(1)
    pc = tl.program_id(2)
    rows = pr * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = pc * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < R) & (cols[None, :] < C)
    base = x_ptr + b.to(tl.int64) * R * C
    v = tl.load(base + rows[:, None] * C + cols[None, :], mask=mask, other=0.0)
    tl.atomic_add(out_ptr + b.to(tl.int64) * C + cols, tl.sum(v, axis=0), mask=cols < C)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = int(dim)

    def forward(self, x):
        assert self.dim == 1 and x.is_contiguous()
        B, R, C = x.shape
        out = torch.zeros((B, 1, C), device=x.device, dtype=x.dtype)
        grid = lambda META: (B, triton.cdiv(R, META["BLOCK_R"]), triton.cdiv(C, META["BLOCK_C"]))
        sum_partial[grid](x, out, R, C)
        return out
