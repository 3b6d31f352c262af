"""kernrl
problem: L2_82_Conv2d_Tanh_Scaling_BiasAdd_Max
launches:
  - kernel: conv_tanh_scale_bias_maxpool
    grid: ["cdiv(batch_size * ((height - kernel_size + 1) / pool_kernel_size) * ((width - kernel_size + 1) / pool_kernel_size), 64)", "cdiv(out_channels, 16)"]
    args: [x, conv_weight, conv_bias, bias, out, batch_size, in_channels, out_channels, height, width, kernel_size, pool_kernel_size, scaling_factor]
    constexprs: {BLOCK_P: 64, BLOCK_C: 16}
    num_warps: 4
"""
# Each program computes 64 pooled outputs x 16 channels: for every tap of the pooling window the
# convolution, tanh (libdevice), scaling and bias, kept as a running max; only pooled values are stored.
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
def conv_tanh_scale_bias_maxpool(x_ptr, w_ptr, cb_ptr, bias_ptr, out_ptr, B, CI, CO, H, W, KS, KP, scale,
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
    bias = tl.load(bias_ptr + co, mask=cm, other=0.0)
    best = tl.full((BLOCK_P, BLOCK_C), float("-inf"), tl.float32)
    for dy in range(0, KP):
        for dx in range(0, KP):
            xoff = b.to(tl.int64) * CI * H * W + (ph * KP + dy) * W + (pw * KP + dx)
            y = conv_tile(x_ptr, w_ptr, xoff, pm, co, cm, CI, H, W, KS, BLOCK_P, BLOCK_C)
            y = tl.extra.cuda.libdevice.tanh(y + cb[None, :]) * scale + bias[None, :]
            best = tl.maximum(best, y)
    optr = out_ptr + (b.to(tl.int64) * CO * PH * PW + ph * PW + pw)[:, None] + (co * (PH * PW))[None, :]
    tl.store(optr, best, mask=pm[:, None] & cm[None, :])
