"""kernrl
problem: L6_8_ColorSpaceConvert_RGB_YUV
launches:
  - kernel: rgb_to_yuv
    grid: ["cdiv(image_height * image_width, 1024)"]
    args: [rgb, out, "image_height * image_width"]
    constexprs: {BLOCK: 1024}
    num_warps: 4
"""
# RGB -> YUV per pixel with the 3 x 3 matrix as constants; the interleaved channels are loaded as
# a [pixels, 4] tile (the 4th column masked off) so each row's loads stay contiguous.
import triton
import triton.language as tl


@triton.jit
def rgb_to_yuv(rgb_ptr, out_ptr, n_pix, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ch = tl.arange(0, 4)
    m = (p[:, None] < n_pix) & (ch[None, :] < 3)
    v = tl.load(rgb_ptr + p[:, None] * 3 + ch[None, :], mask=m, other=0.0)
    r = tl.sum(tl.where(ch[None, :] == 0, v, 0.0), axis=1)
    g = tl.sum(tl.where(ch[None, :] == 1, v, 0.0), axis=1)
    b = tl.sum(tl.where(ch[None, :] == 2, v, 0.0), axis=1)
    y = 0.299 * r + 0.587 * g + 0.114 * b
    u = -0.147 * r + -0.289 * g + 0.436 * b
    w = 0.615 * r + -0.515 * g + -0.100 * b
    res = tl.where(ch[None, :] == 0, y[:, None], tl.where(ch[None, :] == 1, u[:, None], w[:, None]))
    tl.store(out_ptr + p[:, None] * 3 + ch[None, :], res, mask=m)
