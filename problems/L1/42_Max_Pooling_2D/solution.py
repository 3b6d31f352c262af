"""kernrl
problem: L1_42_Max_Pooling_2D
launches:
  - kernel: maxpool2d
    grid: ["cdiv(batch_size * channels * ((height + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1) * ((width + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1), 1024)"]
    args:
      - x
      - out
      - height
      - width
      - "(height + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1"
      - "(width + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1"
      - "batch_size * channels * ((height + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1) * ((width + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1)"
    constexprs: {KS: 2, STRIDE: 2, PAD: 1, DIL: 3, BLOCK: 1024}
    num_warps: 4
"""
# 2-D max pooling (kernel 2, stride 2, padding 1, dilation 3): one output per lane, the window's
# taps unrolled at compile time; padded taps count as -inf, as in PyTorch.
import triton
import triton.language as tl


@triton.jit
def maxpool2d(x_ptr, out_ptr, H, W, OH, OW, total,
              KS: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr, DIL: tl.constexpr,
              BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    plane = offs // (OW * OH)
    base = plane.to(tl.int64) * H * W
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for kh in tl.static_range(KS):
        ih = oh * STRIDE - PAD + kh * DIL
        for kw in tl.static_range(KS):
            iw = ow * STRIDE - PAD + kw * DIL
            ok = m & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            v = tl.load(x_ptr + base + ih * W + iw, mask=ok, other=float("-inf"))
            best = tl.maximum(best, v)
    tl.store(out_ptr + offs, best, mask=m)
