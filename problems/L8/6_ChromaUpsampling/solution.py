"""kernrl
problem: L8_6_ChromaUpsampling
launches:
  - kernel: chroma_upsample
    grid: ["cdiv(2 * half_width, 128)", "cdiv(2 * half_height, 8)"]
    args: [y_full, u_half, v_half, y_out, u_full, v_full, half_height, half_width]
    constexprs: {BLOCK_H: 8, BLOCK_W: 128}
    num_warps: 4
"""
# 4:2:0 -> 4:4:4: the luma is copied; both chroma planes are upsampled 2x bilinearly
# (align_corners=False: source = (dst + 0.5) / 2 - 0.5 clamped at 0, neighbours clamped at the
# edge), one 2-D tile of full-resolution pixels per program, three outputs per pixel.
import triton
import triton.language as tl


@triton.jit
def chroma_upsample(y_ptr, u_ptr, v_ptr, yo_ptr, uo_ptr, vo_ptr, HH, HW,
                    BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    H = 2 * HH
    W = 2 * HW
    ox = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    oy = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    m = (oy[:, None] < H) & (ox[None, :] < W)
    full = oy[:, None] * W + ox[None, :]
    tl.store(yo_ptr + full, tl.load(y_ptr + full, mask=m, other=0.0), mask=m)
    fy = tl.maximum((oy.to(tl.float32) + 0.5) * 0.5 - 0.5, 0.0)
    fx = tl.maximum((ox.to(tl.float32) + 0.5) * 0.5 - 0.5, 0.0)
    y0 = fy.to(tl.int32)
    x0 = fx.to(tl.int32)
    y1 = tl.where(y0 < HH - 1, y0 + 1, y0)
    x1 = tl.where(x0 < HW - 1, x0 + 1, x0)
    ly = (fy - y0.to(tl.float32))[:, None]
    lx = (fx - x0.to(tl.float32))[None, :]
    i00 = y0[:, None] * HW + x0[None, :]
    i01 = y0[:, None] * HW + x1[None, :]
    i10 = y1[:, None] * HW + x0[None, :]
    i11 = y1[:, None] * HW + x1[None, :]
    u = (1.0 - ly) * ((1.0 - lx) * tl.load(u_ptr + i00, mask=m, other=0.0) + lx * tl.load(u_ptr + i01, mask=m, other=0.0)) \
        + ly * ((1.0 - lx) * tl.load(u_ptr + i10, mask=m, other=0.0) + lx * tl.load(u_ptr + i11, mask=m, other=0.0))
    v = (1.0 - ly) * ((1.0 - lx) * tl.load(v_ptr + i00, mask=m, other=0.0) + lx * tl.load(v_ptr + i01, mask=m, other=0.0)) \
        + ly * ((1.0 - lx) * tl.load(v_ptr + i10, mask=m, other=0.0) + lx * tl.load(v_ptr + i11, mask=m, other=0.0))
    tl.store(uo_ptr + full, u, mask=m)
    tl.store(vo_ptr + full, v, mask=m)
