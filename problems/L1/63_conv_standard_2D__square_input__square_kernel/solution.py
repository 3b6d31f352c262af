"""kernrl
problem: L1_63_conv_standard_2D__square_input__square_kernel
launches:
  - kernel: conv2d_direct
    grid: ["cdiv((height - kernel_size + 1) * (width - kernel_size + 1), 128)", "cdiv(out_channels, 64)", batch_size]
    args: [x, weight, out, in_channels, out_channels, height, width, kernel_size]
    constexprs: {BLOCK_P: 128, BLOCK_C: 64}
    num_warps: 4
"""
# Direct 2-D convolution (no padding, stride 1): a program computes 128 output pixels x 64 output
# channels of one image as a sum of rank-1 updates over (input channel, kh, kw), in fp32 FMAs.
import triton
import triton.language as tl


@triton.jit
def conv2d_direct(x_ptr, w_ptr, out_ptr, CI, CO, H, W, KS,
                  BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    OH = H - KS + 1
    OW = W - KS + 1
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(2).to(tl.int64)
    pm = p < OH * OW
    cm = co < CO
    oh = p // OW
    ow = p % OW
    xb = x_ptr + b * CI * H * W
    acc = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for ci in range(0, CI):
        for kh in range(0, KS):
            for kw in range(0, KS):
                xv = tl.load(xb + ci * H * W + (oh + kh) * W + (ow + kw), mask=pm, other=0.0)
                wv = tl.load(w_ptr + ((co * CI + ci) * KS + kh) * KS + kw, mask=cm, other=0.0)
                acc += xv[:, None] * wv[None, :]
    ob = out_ptr + b * CO * OH * OW
    tl.store(ob + co[None, :] * (OH * OW) + p[:, None], acc, mask=pm[:, None] & cm[None, :])
