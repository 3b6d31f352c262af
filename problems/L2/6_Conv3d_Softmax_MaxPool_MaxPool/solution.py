"""kernrl
problem: L2_6_Conv3d_Softmax_MaxPool_MaxPool
launches:
  - kernel: conv3d_softmax_pool2
    grid: ["cdiv(batch_size * ((depth - kernel_size + 1) / pool_kernel_size / pool_kernel_size) * ((height - kernel_size + 1) / pool_kernel_size / pool_kernel_size) * ((width - kernel_size + 1) / pool_kernel_size / pool_kernel_size), 32)"]
    args: [x, weight, bias, out, batch_size, in_channels, out_channels, depth, height, width, kernel_size, pool_kernel_size]
    constexprs: {BLOCK_P: 32, BLOCK_C: 16}
    num_warps: 4
"""
# Two max-pools of size p in a row (floor sizes) are one max-pool of size p*p over the convolution
# outputs. Each program takes 32 final outputs x all (<= 16) channels: for every tap of the p*p
# window, the 3-D convolution, a softmax across the channel axis in registers, and a running max.
import triton
import triton.language as tl


@triton.jit
def conv3d_softmax_pool2(x_ptr, w_ptr, cb_ptr, out_ptr, B, CI, CO, D, H, W, KS, KP,
                         BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    W4 = KP * KP
    OD = D - KS + 1
    OH = H - KS + 1
    OW = W - KS + 1
    PD = OD // KP // KP
    PH = OH // KP // KP
    PW = OW // KP // KP
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.arange(0, BLOCK_C)
    pm = p < B * PD * PH * PW
    cm = co < CO
    pw = p % PW
    ph = (p // PW) % PH
    pd = (p // (PW * PH)) % PD
    b = p // (PW * PH * PD)
    cb = tl.load(cb_ptr + co, mask=cm, other=0.0)
    best = tl.full((BLOCK_P, BLOCK_C), float("-inf"), tl.float32)
    for dz in range(0, W4):
        for dy in range(0, W4):
            for dx in range(0, W4):
                xoff = b.to(tl.int64) * CI * D * H * W + ((pd * W4 + dz) * H + (ph * W4 + dy)) * W + (pw * W4 + dx)
                acc = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
                for ci in range(0, CI):
                    for kd in range(0, KS):
                        for kh in range(0, KS):
                            for kw in range(0, KS):
                                xv = tl.load(x_ptr + xoff + ((ci * D + kd) * H + kh) * W + kw, mask=pm, other=0.0)
                                wv = tl.load(w_ptr + (((co * CI + ci) * KS + kd) * KS + kh) * KS + kw, mask=cm, other=0.0)
                                acc += xv[:, None] * wv[None, :]
                y = tl.where(cm[None, :], acc + cb[None, :], float("-inf"))
                mx = tl.max(y, axis=1)
                e = tl.exp(y - mx[:, None])
                best = tl.maximum(best, e / tl.sum(e, axis=1)[:, None])
    NPP = PD * PH * PW
    optr = out_ptr + (b.to(tl.int64) * CO * NPP + (pd * PH + ph) * PW + pw)[:, None] + (co * NPP)[None, :]
    tl.store(optr, best, mask=pm[:, None] & cm[None, :])
