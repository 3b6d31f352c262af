"""kernrl
problem: L1_42_Max_Pooling_2D
launches:
  - kernel: kernel_main
    grid: [cdiv((batch_size) * (channels) * ((height + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1) * ((width + 2 * 1 - 3 * (2 - 1) - 1) / 2 + 1), 1024)]
    args: [x, out, kernel_size, stride, padding, dilation, batch_size, channels, height, width]
    constexprs: {BLOCK: 1024}
    num_warps: 4
"""
import triton
import triton.language as tl


@triton.jit
def kernel_main(x_ptr, out_ptr, kernel_size, stride, padding, dilation,
                batch_size, channels, height, width, BLOCK: tl.constexpr):
    # Output geometry (same formula as PyTorch, floor mode)
    OH = (height + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    OW = (width + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1
    total = batch_size * channels * OH * OW

    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total

    ow = offs % OW
    t = offs // OW
    oh = t % OH
    nc = t // OH                      # fused (n, c) plane index

    plane = nc * height * width
    h0 = oh * stride - padding
    w0 = ow * stride - padding

    acc = tl.full([BLOCK], float("-inf"), tl.float32)
    for kh in range(0, kernel_size):
        h = h0 + kh * dilation
        h_ok = (h >= 0) & (h < height)
        for kw in range(0, kernel_size):
            w = w0 + kw * dilation
            ok = mask & h_ok & (w >= 0) & (w < width)
            v = tl.load(x_ptr + plane + h * width + w, mask=ok, other=float("-inf"))
            acc = tl.maximum(acc, v)

    tl.store(out_ptr + offs, acc, mask=mask)
