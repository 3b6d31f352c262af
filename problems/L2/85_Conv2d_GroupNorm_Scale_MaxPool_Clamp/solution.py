"""kernrl
problem: L2_85_Conv2d_GroupNorm_Scale_MaxPool_Clamp
launches:
  - kernel: conv_groupnorm_scale_maxpool_clamp
    grid: [batch_size, num_groups]
    args: [x, conv_weight, conv_bias, group_norm_weight, group_norm_bias, scale, out, in_channels, out_channels, height, width, kernel_size, num_groups, maxpool_kernel_size, clamp_min, clamp_max, eps]
    constexprs: {BLOCK_P: 128, BLOCK_C: 16}
    num_warps: 4
"""
# One program per (image, group): a first sweep computes the group's convolution outputs' sum and
# sum of squares; the second sweep walks the pooled outputs, recomputes the convolution at each
# tap of the pooling window, normalises, applies the affine GroupNorm and the per-channel scale,
# keeps the max and clamps. The group's channels (at most 16) are the tile's second axis.
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
def conv_groupnorm_scale_maxpool_clamp(x_ptr, w_ptr, cb_ptr, gw_ptr, gb_ptr, sc_ptr, out_ptr,
                                       CI, CO, H, W, KS, G, KP, lo, hi, eps,
                                       BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    OH = H - KS + 1
    OW = W - KS + 1
    NP = OH * OW
    PH = OH // KP
    PW = OW // KP
    b = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1)
    gs = CO // G
    cl = tl.arange(0, BLOCK_C)
    cm = cl < gs
    co = g * gs + cl
    cb = tl.load(cb_ptr + co, mask=cm, other=0.0)
    ps = tl.arange(0, BLOCK_P)
    xbase = b * CI * H * W
    s1 = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    s2 = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for p0 in range(0, NP, BLOCK_P):
        p = p0 + ps
        pm = p < NP
        y = conv_tile(x_ptr, w_ptr, xbase + (p // OW) * W + p % OW, pm, co, cm, CI, H, W, KS,
                      BLOCK_P, BLOCK_C) + cb[None, :]
        y = tl.where(pm[:, None] & cm[None, :], y, 0.0)
        s1 += y
        s2 += y * y
    cnt = NP * gs
    mean = tl.sum(tl.sum(s1, axis=1), axis=0) / cnt
    var = tl.maximum(tl.sum(tl.sum(s2, axis=1), axis=0) / cnt - mean * mean, 0.0)
    rstd = 1.0 / tl.sqrt_rn(var + eps)
    gw = tl.load(gw_ptr + co, mask=cm, other=0.0)
    gb = tl.load(gb_ptr + co, mask=cm, other=0.0)
    sc = tl.load(sc_ptr + co, mask=cm, other=0.0)
    NPP = PH * PW
    for p0 in range(0, NPP, BLOCK_P):
        p = p0 + ps
        pm = p < NPP
        ph = p // PW
        pw = p % PW
        best = tl.full((BLOCK_P, BLOCK_C), float("-inf"), tl.float32)
        for dy in range(0, KP):
            for dx in range(0, KP):
                xoff = xbase + (ph * KP + dy) * W + (pw * KP + dx)
                y = conv_tile(x_ptr, w_ptr, xoff, pm, co, cm, CI, H, W, KS, BLOCK_P, BLOCK_C) + cb[None, :]
                y = ((y - mean) * rstd * gw[None, :] + gb[None, :]) * sc[None, :]
                best = tl.maximum(best, y)
        best = tl.minimum(tl.maximum(best, lo), hi)
        optr = out_ptr + b * CO * NPP + (co * NPP)[None, :] + p[:, None]
        tl.store(optr, best, mask=pm[:, None] & cm[None, :])
