"""kernrl
problem: L1_95_CrossEntropyLoss
launches:
  - kernel: ce_rows_kernel
    grid: [cdiv(batch_size, 512)]
    args: [predictions, targets, partial, batch_size, num_classes]
    constexprs: {ROWS: 512}
    num_warps: 8
  - kernel: ce_mean_kernel
    grid: [1]
    args: [partial, out, batch_size]
    constexprs: {ROWS: 512, RBLOCK: 1024}
    num_warps: 4
scratch:
  partial: {dtype: float32, count: cdiv(batch_size, 512)}
"""
import triton
import triton.language as tl


# Stage 1: per-row numerically stable log-sum-exp loss, summed per block of ROWS rows.
# BLOCK_C (the padded class dimension) comes from a heuristic on num_classes.
@triton.heuristics({
    "BLOCK_C": lambda args: triton.next_power_of_2(args["num_classes"]),
})
@triton.jit
def ce_rows_kernel(pred_ptr, tgt_ptr, partial_ptr, batch_size, num_classes,
                   ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_C)
    rmask = rows < batch_size
    cmask = cols < num_classes
    m2 = rmask[:, None] & cmask[None, :]

    ptrs = pred_ptr + rows.to(tl.int64)[:, None] * num_classes + cols[None, :]
    x = tl.load(ptrs, mask=m2, other=float("-inf"))

    row_max = tl.max(x, axis=1)
    row_max = tl.where(rmask, row_max, 0.0)            # keep padded rows finite
    e = tl.exp(x - row_max[:, None])                    # exp(-inf) = 0 for padding
    s = tl.sum(e, axis=1)
    lse = row_max + tl.log(s)

    t = tl.load(tgt_ptr + rows, mask=rmask, other=0).to(tl.int32)
    x_t = tl.sum(tl.where(cols[None, :] == t[:, None], x, 0.0), axis=1)

    loss = tl.where(rmask, lse - x_t, 0.0)
    tl.store(partial_ptr + pid, tl.sum(loss, axis=0))


# Stage 2: one program tree-sums the per-block partials and divides by batch_size.
@triton.jit
def ce_mean_kernel(partial_ptr, out_ptr, batch_size, ROWS: tl.constexpr, RBLOCK: tl.constexpr):
    n_part = tl.cdiv(batch_size, ROWS)
    acc = tl.zeros([RBLOCK], dtype=tl.float32)
    for p0 in range(0, n_part, RBLOCK):
        idx = p0 + tl.arange(0, RBLOCK)
        acc += tl.load(partial_ptr + idx, mask=idx < n_part, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr, total / batch_size.to(tl.float32))
