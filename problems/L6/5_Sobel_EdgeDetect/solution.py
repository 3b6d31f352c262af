"""kernrl
problem: L6_5_Sobel_EdgeDetect
launches:
  - kernel: sobel
    grid: ["cdiv(image_width, 128)", "cdiv(image_height, 16)"]
    args: [image, magnitude, angle, image_height, image_width]
    constexprs: {BLOCK_H: 16, BLOCK_W: 128}
    num_warps: 4
"""
# Sobel gradients with zero padding on 16 x 128 tiles: eight shifted loads, then the magnitude
# (IEEE sqrt) and the angle (libdevice atan2f) as two outputs.
import triton
import triton.language as tl


@triton.jit
def _px(img_ptr, r, q, H, W):
    return tl.load(img_ptr + r * W + q, mask=(r >= 0) & (r < H) & (q >= 0) & (q < W), other=0.0)


@triton.jit
def sobel(img_ptr, mag_ptr, ang_ptr, H, W, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    q = (tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W))[None, :]
    r = (tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H))[:, None]
    tl_ = _px(img_ptr, r - 1, q - 1, H, W)
    tc = _px(img_ptr, r - 1, q, H, W)
    tr = _px(img_ptr, r - 1, q + 1, H, W)
    ml = _px(img_ptr, r, q - 1, H, W)
    mr = _px(img_ptr, r, q + 1, H, W)
    bl = _px(img_ptr, r + 1, q - 1, H, W)
    bc = _px(img_ptr, r + 1, q, H, W)
    br = _px(img_ptr, r + 1, q + 1, H, W)
    gx = (tr - tl_) + 2.0 * (mr - ml) + (br - bl)
    gy = (bl - tl_) + 2.0 * (bc - tc) + (br - tr)
    m = (r < H) & (q < W)
    tl.store(mag_ptr + r * W + q, tl.sqrt_rn(gx * gx + gy * gy), mask=m)
    tl.store(ang_ptr + r * W + q, tl.extra.cuda.libdevice.atan2(gy, gx), mask=m)
