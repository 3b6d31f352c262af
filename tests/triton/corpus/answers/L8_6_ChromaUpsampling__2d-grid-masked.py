"""kernrl
problem: L8_6_ChromaUpsampling
launches:
  - kernel: chroma_upsample_kernel
    grid: [cdiv(2 * half_width, 512), 2 * half_height]
    args: [y_full, u_half, v_half, y_out, u_full, v_full, half_height, half_width]
    constexprs: {BLOCK: 512}
    num_warps: 4
"""
# One program = one output row Y (program_id(1)) x BLOCK output columns (program_id(0)).
# Bilinear, align_corners=False, scale 1/2:
#   src = max((dst + 0.5) * 0.5 - 0.5, 0);  i0 = floor(src);  i1 = i0 + (i0 < in - 1);
#   l1 = src - i0;  l0 = 1 - l1
# Same arithmetic order as PyTorch's upsample_bilinear2d:
#   out = l0y * (l0x * v00 + l1x * v01) + l1y * (l0x * v10 + l1x * v11)
import triton
import triton.language as tl


@triton.jit
def chroma_upsample_kernel(y_full_ptr, u_half_ptr, v_half_ptr,
                           y_out_ptr, u_full_ptr, v_full_ptr,
                           half_height, half_width, BLOCK: tl.constexpr):
    pid_x = tl.program_id(0)
    Y = tl.program_id(1)                      # output row, < 2 * half_height
    W = 2 * half_width

    X = pid_x * BLOCK + tl.arange(0, BLOCK)
    xmask = X < W
    out_off = Y * W + X

    # ---- luma: straight copy ----
    yv = tl.load(y_full_ptr + out_off, mask=xmask, other=0.0)
    tl.store(y_out_ptr + out_off, yv, mask=xmask)

    # ---- vertical source coordinate (scalar for the whole program) ----
    sy = tl.maximum((Y.to(tl.float32) + 0.5) * 0.5 - 0.5, 0.0)
    y0 = sy.to(tl.int32)                      # sy >= 0, so truncation == floor
    y1 = y0 + tl.where(y0 < half_height - 1, 1, 0)
    ly1 = sy - y0.to(tl.float32)
    ly0 = 1.0 - ly1

    # ---- horizontal source coordinates (vector) ----
    sx = tl.maximum((X.to(tl.float32) + 0.5) * 0.5 - 0.5, 0.0)
    x0 = sx.to(tl.int32)
    x0 = tl.minimum(x0, half_width - 1)       # only matters for masked lanes
    x1 = x0 + tl.where(x0 < half_width - 1, 1, 0)
    lx1 = sx - x0.to(tl.float32)
    lx0 = 1.0 - lx1

    r0 = y0 * half_width
    r1 = y1 * half_width

    u00 = tl.load(u_half_ptr + r0 + x0, mask=xmask, other=0.0)
    u01 = tl.load(u_half_ptr + r0 + x1, mask=xmask, other=0.0)
    u10 = tl.load(u_half_ptr + r1 + x0, mask=xmask, other=0.0)
    u11 = tl.load(u_half_ptr + r1 + x1, mask=xmask, other=0.0)
    u = ly0 * (lx0 * u00 + lx1 * u01) + ly1 * (lx0 * u10 + lx1 * u11)
    tl.store(u_full_ptr + out_off, u, mask=xmask)

    v00 = tl.load(v_half_ptr + r0 + x0, mask=xmask, other=0.0)
    v01 = tl.load(v_half_ptr + r0 + x1, mask=xmask, other=0.0)
    v10 = tl.load(v_half_ptr + r1 + x0, mask=xmask, other=0.0)
    v11 = tl.load(v_half_ptr + r1 + x1, mask=xmask, other=0.0)
    v = ly0 * (lx0 * v00 + lx1 * v01) + ly1 * (lx0 * v10 + lx1 * v11)
    tl.store(v_full_ptr + out_off, v, mask=xmask)
