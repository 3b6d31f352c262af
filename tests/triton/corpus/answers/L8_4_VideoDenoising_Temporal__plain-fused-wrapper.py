"""kernrl
problem: L8_4_VideoDenoising_Temporal
launches:
  - kernel: temporal_denoise_kernel
    grid: [cdiv(height * width, 512)]
    args: [frames, flows, out, num_frames, height, width]
    constexprs: {BLOCK: 512}
    num_warps: 4
"""
# One fused pass per pixel: cumulative flows (summed in the reference's order),
# grid_sample(bilinear, zeros, align_corners=True) through normalized coordinates
# (linspace emulated like torch's CUDA linspace), confidence weighting, final divide.
import triton
import triton.language as tl


@triton.jit
def _bilinear_zeros(frame_ptr, gxn, gyn, Wm1, Hm1, width, height, mask):
    # unnormalize (align_corners=True): ((g + 1) / 2) * (size - 1)
    ix = ((gxn + 1.0) * 0.5) * Wm1
    iy = ((gyn + 1.0) * 0.5) * Hm1
    # keep far-away coordinates in int range; all their taps are outside anyway
    ix = tl.minimum(tl.maximum(ix, -2.0), Wm1 + 2.0)
    iy = tl.minimum(tl.maximum(iy, -2.0), Hm1 + 2.0)
    ix0f = tl.floor(ix)
    iy0f = tl.floor(iy)
    ix1f = ix0f + 1.0
    iy1f = iy0f + 1.0
    ix0 = ix0f.to(tl.int32)
    iy0 = iy0f.to(tl.int32)
    ix1 = ix0 + 1
    iy1 = iy0 + 1

    w_nw = (ix1f - ix) * (iy1f - iy)
    w_ne = (ix - ix0f) * (iy1f - iy)
    w_sw = (ix1f - ix) * (iy - iy0f)
    w_se = (ix - ix0f) * (iy - iy0f)

    vx0 = (ix0 >= 0) & (ix0 < width)
    vx1 = (ix1 >= 0) & (ix1 < width)
    vy0 = (iy0 >= 0) & (iy0 < height)
    vy1 = (iy1 >= 0) & (iy1 < height)

    v_nw = tl.load(frame_ptr + iy0 * width + ix0, mask=mask & vx0 & vy0, other=0.0)
    v_ne = tl.load(frame_ptr + iy0 * width + ix1, mask=mask & vx1 & vy0, other=0.0)
    v_sw = tl.load(frame_ptr + iy1 * width + ix0, mask=mask & vx0 & vy1, other=0.0)
    v_se = tl.load(frame_ptr + iy1 * width + ix1, mask=mask & vx1 & vy1, other=0.0)

    res = v_nw * w_nw
    res = res + v_ne * w_ne
    res = res + v_sw * w_sw
    res = res + v_se * w_se
    return res


@triton.jit
def temporal_denoise_kernel(frames_ptr, flows_ptr, out_ptr, num_frames, height, width,
                            BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    HW = height * width
    mask = offs < HW
    y = offs // width
    x = offs % width

    Wf = width.to(tl.float32)
    Hf = height.to(tl.float32)
    Wm1 = Wf - 1.0
    Hm1 = Hf - 1.0
    half_w = Wf * 0.5
    half_h = Hf * 0.5

    # torch.linspace(-1, 1, n) as computed on CUDA
    step_x = 2.0 / Wm1
    step_y = 2.0 / Hm1
    xf = x.to(tl.float32)
    yf = y.to(tl.float32)
    X = tl.where(x < width // 2, -1.0 + step_x * xf, 1.0 - step_x * (Wm1 - xf))
    Y = tl.where(y < height // 2, -1.0 + step_y * yf, 1.0 - step_y * (Hm1 - yf))

    mid = num_frames // 2
    acc = tl.load(frames_ptr + mid * HW + offs, mask=mask, other=0.0)
    wsum = tl.full((BLOCK,), 1.0, tl.float32)

    # frames before the middle: cum = flows[t] + ... + flows[mid-1]
    for t in range(0, mid):
        cx = tl.zeros((BLOCK,), dtype=tl.float32)
        cy = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(t, mid):
            fb = flows_ptr + (i * HW + offs) * 2
            cx = cx + tl.load(fb, mask=mask, other=0.0)
            cy = cy + tl.load(fb + 1, mask=mask, other=0.0)
        gxn = X - cx / half_w
        gyn = Y - cy / half_h
        warped = _bilinear_zeros(frames_ptr + t * HW, gxn, gyn, Wm1, Hm1, width, height, mask)
        conf = tl.exp(-tl.sqrt(cx * cx + cy * cy) / 10.0)
        acc = acc + warped * conf
        wsum = wsum + conf

    # frames after the middle: cum = -flows[mid] - ... - flows[t-1]
    for t in range(mid + 1, num_frames):
        cx = tl.zeros((BLOCK,), dtype=tl.float32)
        cy = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(mid, t):
            fb = flows_ptr + (i * HW + offs) * 2
            cx = cx - tl.load(fb, mask=mask, other=0.0)
            cy = cy - tl.load(fb + 1, mask=mask, other=0.0)
        gxn = X - cx / half_w
        gyn = Y - cy / half_h
        warped = _bilinear_zeros(frames_ptr + t * HW, gxn, gyn, Wm1, Hm1, width, height, mask)
        conf = tl.exp(-tl.sqrt(cx * cx + cy * cy) / 10.0)
        acc = acc + warped * conf
        wsum = wsum + conf

    tl.store(out_ptr + offs, acc / wsum, mask=mask)


# ---------------------------------------------------------------------------
# Host wrapper (ignored by kernrl; handy for local testing)
# ---------------------------------------------------------------------------
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, num_frames=5):
        super().__init__()
        self.num_frames = num_frames

    def forward(self, frames, flows):
        T, H, W = frames.shape
        frames = frames.contiguous()
        flows = flows.contiguous()
        out = torch.empty((H, W), device=frames.device, dtype=torch.float32)
        grid = (triton.cdiv(H * W, 512),)
        temporal_denoise_kernel[grid](frames, flows, out, T, H, W, BLOCK=512, num_warps=4)
        return out
