"""kernrl
problem: L2_73_Conv2d_BatchNorm_Scaling
launches:
  - kernel: conv_bn_scale
    grid: ["cdiv(batch_size * (height - kernel_size + 1) * (width - kernel_size + 1), 128)", "cdiv(out_channels, 16)"]
    args: [x, conv_weight, conv_bias, bn_weight, bn_bias, bn_running_mean, bn_running_var, out, batch_size, in_channels, out_channels, height, width, kernel_size, eps, scaling_factor]
    constexprs: {BLOCK_P: 128, BLOCK_C: 16}
    num_warps: 4
"""
# Direct convolution of 128 output pixels (flattened over the batch) x 16 channels per program,
# eval-mode BatchNorm and the scaling applied in registers before the single store.
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
def conv_bn_scale(x_ptr, w_ptr, cb_ptr, bw_ptr, bb_ptr, rm_ptr, rv_ptr, out_ptr,
                  B, CI, CO, H, W, KS, eps, scale, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    OH = H - KS + 1
    OW = W - KS + 1
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    pm = p < B * OH * OW
    cm = co < CO
    ow = p % OW
    oh = (p // OW) % OH
    b = p // (OW * OH)
    xoff = b.to(tl.int64) * CI * H * W + oh * W + ow
    y = conv_tile(x_ptr, w_ptr, xoff, pm, co, cm, CI, H, W, KS, BLOCK_P, BLOCK_C)
    y += tl.load(cb_ptr + co, mask=cm, other=0.0)[None, :]
    mean = tl.load(rm_ptr + co, mask=cm, other=0.0)
    var = tl.load(rv_ptr + co, mask=cm, other=1.0)
    g = tl.load(bw_ptr + co, mask=cm, other=0.0)
    bb = tl.load(bb_ptr + co, mask=cm, other=0.0)
    y = ((y - mean[None, :]) / tl.sqrt_rn(var + eps)[None, :] * g[None, :] + bb[None, :]) * scale
    optr = out_ptr + (b.to(tl.int64) * CO * OH * OW + oh * OW + ow)[:, None] + (co * (OH * OW))[None, :]
    tl.store(optr, y, mask=pm[:, None] & cm[None, :])
