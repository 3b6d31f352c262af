import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def jacobi5_kernel(
    u_ptr, out_ptr, H, W, stride_u, stride_o,
    BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr,
):
    pid_h = tl.program_id(0)
    pid_w = tl.program_id(1)
    rows = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    cols = pid_w * BLOCK_W + tl.arange(0, BLOCK_W)
    r = rows[:, None]
    c = cols[None, :]

    inb = (r < H) & (c < W)
    interior = (r >= 1) & (r < H - 1) & (c >= 1) & (c < W - 1)

    p = u_ptr + r.to(tl.int64) * stride_u + c
    center = tl.load(p, mask=inb, other=0.0)
    up = tl.load(p - stride_u, mask=interior, other=0.0)
    down = tl.load(p + stride_u, mask=interior, other=0.0)
    left = tl.load(p - 1, mask=interior, other=0.0)
    right = tl.load(p + 1, mask=interior, other=0.0)

    val = 0.25 * (((up + down) + left) + right)
    res = tl.where(interior, val, center)   # boundary keeps u
    tl.store(out_ptr + r.to(tl.int64) * stride_o + c, res, mask=inb)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, u):
        assert u.is_cuda and u.dim() == 2
        u = u.contiguous()
        H, W = u.shape
        out = torch.empty_like(u)
        BLOCK_H, BLOCK_W = 16, 128
        grid = (triton.cdiv(H, BLOCK_H), triton.cdiv(W, BLOCK_W))
        jacobi5_kernel[grid](
            u, out, H, W, u.stride(0), out.stride(0),
            BLOCK_H=BLOCK_H, BLOCK_W=BLOCK_W, num_warps=4,
        )
        return out
