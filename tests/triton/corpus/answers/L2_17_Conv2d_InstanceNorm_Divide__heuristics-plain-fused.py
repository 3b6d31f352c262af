"""kernrl
problem: L2_17_Conv2d_InstanceNorm_Divide
launches:
  - kernel: conv_instnorm_div_kernel
    grid: [batch_size * out_channels]
    args: [x, weight, bias, out, eps, divide_by, batch_size, in_channels, out_channels, height, width, kernel_size]
    num_warps: 4
"""
# One program per (image, output channel) plane: the whole conv output plane
# (30 x 30 = 900 values at the bench size) is held in registers, so the convolution,
# the instance-norm statistics (two-pass mean / biased variance) and the division
# are fused into a single pass over memory.  BLOCK (next power of two >= plane size)
# is supplied by @triton.heuristics from the actual sizes.
import triton
import triton.language as tl


@triton.heuristics({
    'BLOCK': lambda args: triton.next_power_of_2(
        max(1, (args['height'] - args['kernel_size'] + 1) * (args['width'] - args['kernel_size'] + 1))),
})
@triton.jit
def conv_instnorm_div_kernel(x_ptr, weight_ptr, bias_ptr, out_ptr, eps, divide_by,
                             batch_size, in_channels, out_channels, height, width, kernel_size,
                             BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // out_channels
    oc = pid % out_channels

    OH = height - kernel_size + 1
    OW = width - kernel_size + 1
    P = OH * OW

    offs = tl.arange(0, BLOCK)
    mask = offs < P
    oh = offs // OW
    ow = offs % OW
    pix = oh * width + ow

    HW = height * width
    KK = kernel_size * kernel_size
    x_img = x_ptr + n * in_channels * HW
    w_oc = weight_ptr + oc * in_channels * KK

    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c in range(in_channels):
        x_c = x_img + c * HW
        w_c = w_oc + c * KK
        for kh in range(kernel_size):
            for kw in range(kernel_size):
                wv = tl.load(w_c + kh * kernel_size + kw)
                xv = tl.load(x_c + pix + kh * width + kw, mask=mask, other=0.0)
                acc += xv * wv
    acc += tl.load(bias_ptr + oc)

    # instance norm (biased variance), two-pass in registers
    cnt = P.to(tl.float32)
    mean = tl.sum(tl.where(mask, acc, 0.0), axis=0) / cnt
    d = tl.where(mask, acc - mean, 0.0)
    var = tl.sum(d * d, axis=0) / cnt
    rstd = 1.0 / tl.sqrt(var + eps)
    y = d * rstd / divide_by

    tl.store(out_ptr + pid * P + offs, y, mask=mask)
