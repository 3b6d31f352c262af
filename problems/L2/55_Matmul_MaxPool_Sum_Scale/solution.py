"""kernrl
problem: L2_55_Matmul_MaxPool_Sum_Scale
launches:
  - kernel: linear_maxpool_sum_scale
    grid: ["cdiv(batch_size, 256)"]
    args: [x, weight, bias, out, batch_size, in_features, out_features, kernel_size, scale_factor]
    constexprs: {ROWS: 256, BLOCK_K: 16}
    num_warps: 4
"""
# A tiny linear layer (out_features of about 5) per row, max-pooled over windows of kernel_size
# consecutive features, summed and scaled: one lane per row, each output feature a dot product
# over the row's inputs, the pooling and the sum carried in registers.
import triton
import triton.language as tl


@triton.jit
def linear_maxpool_sum_scale(x_ptr, w_ptr, b_ptr, out_ptr, B, K, N, KP, scale,
                             ROWS: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rm = rows < B
    cols = tl.arange(0, BLOCK_K)
    n_pooled = (N // KP) * KP
    cur = tl.zeros([ROWS], dtype=tl.float32)
    total = tl.zeros([ROWS], dtype=tl.float32)
    for j in range(0, n_pooled):
        y = tl.zeros([ROWS], dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            kk = k0 + cols
            km = kk < K
            xv = tl.load(x_ptr + rows[:, None] * K + kk[None, :], mask=rm[:, None] & km[None, :], other=0.0)
            wv = tl.load(w_ptr + j * K + kk, mask=km, other=0.0)
            y += tl.sum(xv * wv[None, :], axis=1)
        y += tl.load(b_ptr + j)
        pos = j % KP
        cur = tl.where(pos == 0, y, tl.maximum(cur, y))
        total += tl.where(pos == KP - 1, cur, 0.0)
    tl.store(out_ptr + rows, total * scale, mask=rm)
