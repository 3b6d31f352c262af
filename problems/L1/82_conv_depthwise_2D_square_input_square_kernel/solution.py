"""kernrl
problem: L1_82_conv_depthwise_2D_square_input_square_kernel
launches:
  - kernel: dwconv2d
    grid: ["cdiv(width - kernel_size + 1, 128)", "cdiv(height - kernel_size + 1, 16)", "batch_size * in_channels"]
    args: [x, weight, out, in_channels, height, width, kernel_size]
    constexprs: {BLOCK_H: 16, BLOCK_W: 128}
    num_warps: 4
"""
# Depthwise 2-D convolution: 2-D tiles of 16 x 128 output pixels, the third program id walks the
# (image, channel) planes; taps are shifted loads of the tile (served from L1).
import triton
import triton.language as tl


@triton.jit
def dwconv2d(x_ptr, w_ptr, out_ptr, C, H, W, KS, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    OH = H - KS + 1
    OW = W - KS + 1
    ow = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    oh = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    plane = tl.program_id(2)
    c = plane % C
    m = (oh[:, None] < OH) & (ow[None, :] < OW)
    xb = x_ptr + plane.to(tl.int64) * H * W
    acc = tl.zeros((BLOCK_H, BLOCK_W), dtype=tl.float32)
    for kh in range(0, KS):
        for kw in range(0, KS):
            wv = tl.load(w_ptr + (c * KS + kh) * KS + kw)
            xv = tl.load(xb + (oh[:, None] + kh) * W + (ow[None, :] + kw), mask=m, other=0.0)
            acc += xv * wv
    ob = out_ptr + plane.to(tl.int64) * OH * OW
    tl.store(ob + oh[:, None] * OW + ow[None, :], acc, mask=m)
