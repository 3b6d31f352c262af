"""kernrl
problem: L2_46_Conv2d_Subtract_Tanh_Subtract_AvgPool
launches:
  - kernel: conv_sub_tanh_sub_avgpool
    grid: ["cdiv(batch_size * ((height - kernel_size + 1) / kernel_size_pool) * ((width - kernel_size + 1) / kernel_size_pool), 64)", "cdiv(out_channels, 16)"]
    args: [x, weight, bias, out, batch_size, in_channels, out_channels, height, width, kernel_size, kernel_size_pool, subtract1_value, subtract2_value]
    constexprs: {BLOCK_P: 64, BLOCK_C: 16}
    num_warps: 4
"""
# Each program computes 64 average-pooled outputs x 16 channels: for every tap of the pooling
# window the fp32 convolution, - s1, tanh (libdevice), - s2, summed; divided by the window size.
import triton
import triton.language as tl


@triton.jit
def conv_tile(x_ptr, w_ptr, xoff, pm, co, cm, CI, H, W, KS,
              BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    # [BLOCK_P pixels, BLOCK_C output channels] of a valid, stride-1 convolution; xoff is the
    # offset of each pixel's top-left input element in image 0 of channel 0 plus its image's base.
    acc = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for ci in range(0, CI):
        for kh in range(0, KS):
            for kw in range(0, KS):
                xv = tl.load(x_ptr + xoff + (ci * H + kh) * W + kw, mask=pm, other=0.0)
                wv = tl.load(w_ptr + ((co * CI + ci) * KS + kh) * KS + kw, mask=cm, other=0.0)
                acc += xv[:, None] * wv[None, :]
    return acc


@triton.jit
def conv_sub_tanh_sub_avgpool(x_ptr, w_ptr, cb_ptr, out_ptr, B, CI, CO, H, W, KS, KP, s1, s2,
                              BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    OH = H - KS + 1
    OW = W - KS + 1
    PH = OH // KP
    PW = OW // KP
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    pm = p < B * PH * PW
    cm = co < CO
    pw = p % PW
    ph = (p // PW) % PH
    b = p // (PW * PH)
    cb = tl.load(cb_ptr + co, mask=cm, other=0.0)
    total = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for dy in range(0, KP):
        for dx in range(0, KP):
            xoff = b.to(tl.int64) * CI * H * W + (ph * KP + dy) * W + (pw * KP + dx)
            y = conv_tile(x_ptr, w_ptr, xoff, pm, co, cm, CI, H, W, KS, BLOCK_P, BLOCK_C)
            total += tl.extra.cuda.libdevice.tanh(y + cb[None, :] - s1) - s2
    optr = out_ptr + (b.to(tl.int64) * CO * PH * PW + ph * PW + pw)[:, None] + (co * (PH * PW))[None, :]
    tl.store(optr, total / (KP * KP), mask=pm[:, None] & cm[None, :])
