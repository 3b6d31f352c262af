"""kernrl
problem: L7_6_Resample_Bilinear
launches:
  - kernel: resample_bilinear
    grid: ["cdiv(output_width, 64)", "cdiv(output_height, 16)", channels]
    args: [image, out, input_height, input_width, output_height, output_width]
    constexprs: {BLOCK_H: 16, BLOCK_W: 64}
    num_warps: 4
"""
# Bilinear resize with align_corners=False, as PyTorch computes it: source = (dst + 0.5) * in/out
# - 0.5 clamped at 0, the upper neighbour clamped to the last row/column. 2-D tiles of outputs,
# the channel as the third program id.
import triton
import triton.language as tl


@triton.jit
def resample_bilinear(in_ptr, out_ptr, IH, IW, OH, OW, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    ox = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    oy = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    c = tl.program_id(2).to(tl.int64)
    sh = IH.to(tl.float32) / OH
    sw = IW.to(tl.float32) / OW
    fy = tl.maximum((oy.to(tl.float32) + 0.5) * sh - 0.5, 0.0)
    fx = tl.maximum((ox.to(tl.float32) + 0.5) * sw - 0.5, 0.0)
    y0 = fy.to(tl.int32)
    x0 = fx.to(tl.int32)
    y1 = tl.where(y0 < IH - 1, y0 + 1, y0)
    x1 = tl.where(x0 < IW - 1, x0 + 1, x0)
    ly = (fy - y0.to(tl.float32))[:, None]
    lx = (fx - x0.to(tl.float32))[None, :]
    m = (oy[:, None] < OH) & (ox[None, :] < OW)
    base = in_ptr + c * IH * IW
    v00 = tl.load(base + y0[:, None] * IW + x0[None, :], mask=m, other=0.0)
    v01 = tl.load(base + y0[:, None] * IW + x1[None, :], mask=m, other=0.0)
    v10 = tl.load(base + y1[:, None] * IW + x0[None, :], mask=m, other=0.0)
    v11 = tl.load(base + y1[:, None] * IW + x1[None, :], mask=m, other=0.0)
    top = (1.0 - lx) * v00 + lx * v01
    bot = (1.0 - lx) * v10 + lx * v11
    res = (1.0 - ly) * top + ly * bot
    tl.store(out_ptr + c * OH * OW + oy[:, None] * OW + ox[None, :], res, mask=m)
