"""kernrl
problem: L8_4_VideoDenoising_Temporal
launches:
  - kernel: denoise
    grid: ["cdiv(width, 64)", "cdiv(height, 8)"]
    args: [frames, flows, out, num_frames, height, width]
    constexprs: {BLOCK_H: 8, BLOCK_W: 64}
    num_warps: 4
"""
# Motion-compensated temporal denoising, one 8 x 64 tile of output pixels per program: for every
# other frame, the cumulative flow to the middle frame (summed in the reference's order), a
# bilinear zero-padded sample at the displaced position (in pixels), and an exp(-|cum| / 10)
# confidence weight; the weighted mean with the middle frame is written once.
import triton
import triton.language as tl


@triton.jit
def _tap(f_ptr, yy, xx, H, W, m):
    ok = m & (yy >= 0) & (yy < H) & (xx >= 0) & (xx < W)
    return tl.load(f_ptr + yy * W + xx, mask=ok, other=0.0)


@triton.jit
def denoise(frames_ptr, flows_ptr, out_ptr, T, H, W, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    x = (tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W))[None, :]
    y = (tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H))[:, None]
    m = (y < H) & (x < W)
    HW = H * W
    mid = T // 2
    acc = tl.load(frames_ptr + mid * HW + y * W + x, mask=m, other=0.0)
    wsum = tl.full((BLOCK_H, BLOCK_W), 1.0, tl.float32)
    fx = x.to(tl.float32)
    fy = y.to(tl.float32)
    for t in range(0, T):
        if t != mid:
            cx = tl.zeros((BLOCK_H, BLOCK_W), dtype=tl.float32)
            cy = tl.zeros((BLOCK_H, BLOCK_W), dtype=tl.float32)
            for i in range(0, T - 1):
                fwd = (i >= t) & (i < mid)
                bwd = (i >= mid) & (i < t)
                if fwd | bwd:
                    fl = flows_ptr + (i * HW + y * W + x) * 2
                    vx = tl.load(fl, mask=m, other=0.0)
                    vy = tl.load(fl + 1, mask=m, other=0.0)
                    if fwd:
                        cx += vx
                        cy += vy
                    else:
                        cx -= vx
                        cy -= vy
            sx = fx - cx * (W - 1) / W
            sy = fy - cy * (H - 1) / H
            x0f = tl.floor(sx)
            y0f = tl.floor(sy)
            ax = sx - x0f
            ay = sy - y0f
            x0 = x0f.to(tl.int32)
            y0 = y0f.to(tl.int32)
            fr = frames_ptr + t * HW
            v = (1.0 - ay) * ((1.0 - ax) * _tap(fr, y0, x0, H, W, m) + ax * _tap(fr, y0, x0 + 1, H, W, m)) \
                + ay * ((1.0 - ax) * _tap(fr, y0 + 1, x0, H, W, m) + ax * _tap(fr, y0 + 1, x0 + 1, H, W, m))
            conf = tl.exp(-tl.sqrt_rn(cx * cx + cy * cy) / 10.0)
            acc += v * conf
            wsum += conf
    tl.store(out_ptr + y * W + x, acc / wsum, mask=m)
