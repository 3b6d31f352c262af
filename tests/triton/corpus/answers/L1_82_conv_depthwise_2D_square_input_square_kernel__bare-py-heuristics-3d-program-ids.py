"""kernrl
problem: L1_82_conv_depthwise_2D_square_input_square_kernel
launches:
  - kernel: depthwise_conv2d_kernel
    grid: [cdiv(width - kernel_size + 1, 128), cdiv(height - kernel_size + 1, 16), batch_size * in_channels]
    args: [x, weight, out, batch_size, in_channels, height, width]
    constexprs: {KS: kernel_size, BLOCK_H: 16, BLOCK_W: 128}
    num_warps: 4
"""
import triton
import triton.language as tl


@triton.heuristics({
    # tiles divide the output exactly -> no bounds masks needed
    "EVEN": lambda args: ((args["height"] - args["KS"] + 1) % args["BLOCK_H"] == 0)
    and ((args["width"] - args["KS"] + 1) % args["BLOCK_W"] == 0),
})
@triton.jit
def depthwise_conv2d_kernel(x_ptr, w_ptr, out_ptr, batch_size, in_channels, height, width,
                            KS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr,
                            EVEN: tl.constexpr):
    pid_w = tl.program_id(0)
    pid_h = tl.program_id(1)
    pid_nc = tl.program_id(2)          # n * in_channels + c
    c = pid_nc % in_channels

    OH = height - KS + 1
    OW = width - KS + 1

    rows = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    cols = pid_w * BLOCK_W + tl.arange(0, BLOCK_W)
    mask = (rows[:, None] < OH) & (cols[None, :] < OW)

    x_base = x_ptr + pid_nc.to(tl.int64) * height * width
    o_base = out_ptr + pid_nc.to(tl.int64) * OH * OW
    w_base = w_ptr + c * (KS * KS)

    in_off = rows[:, None] * width + cols[None, :]
    acc = tl.zeros((BLOCK_H, BLOCK_W), dtype=tl.float32)
    for kh in tl.static_range(KS):
        for kw in tl.static_range(KS):
            wv = tl.load(w_base + kh * KS + kw)
            if EVEN:
                xv = tl.load(x_base + in_off + (kh * width + kw))
            else:
                xv = tl.load(x_base + in_off + (kh * width + kw), mask=mask, other=0.0)
            acc += xv * wv

    out_off = rows[:, None] * OW + cols[None, :]
    if EVEN:
        tl.store(o_base + out_off, acc)
    else:
        tl.store(o_base + out_off, acc, mask=mask)
