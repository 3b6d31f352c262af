"""kernrl
problem: L1_95_CrossEntropyLoss
launches:
  - kernel: ce_partial
    grid: ["cdiv(batch_size, 1024)"]
    args: [predictions, targets, partials, batch_size, num_classes]
    constexprs: {ROWS: 1024, BLOCK_C: 16}
    num_warps: 8
  - kernel: ce_final
    grid: [1]
    args: [partials, out, "cdiv(batch_size, 1024)", batch_size]
    constexprs: {BLOCK: 1024}
scratch:
  partials: {dtype: float32, count: "cdiv(batch_size, 1024)"}
"""
# Mean cross-entropy: each program computes the stable log-sum-exp loss of 1024 rows and their
# sum (a tree sum); one program then adds the per-program sums and divides by the batch.
import triton
import triton.language as tl


@triton.jit
def ce_partial(x_ptr, t_ptr, part_ptr, B, C, ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_C)
    rm = rows < B
    m2 = rm[:, None] & (cols[None, :] < C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=m2, other=float("-inf"))
    mx = tl.max(x, axis=1)
    mx = tl.where(rm, mx, 0.0)
    s = tl.sum(tl.exp(x - mx[:, None]), axis=1)
    t = tl.load(t_ptr + rows, mask=rm, other=0)
    xt = tl.sum(tl.where(cols[None, :] == t[:, None], x, 0.0), axis=1)
    loss = tl.where(rm, mx + tl.log(s) - xt, 0.0)
    tl.store(part_ptr + pid, tl.sum(loss, axis=0))


@triton.jit
def ce_final(part_ptr, out_ptr, P, B, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, P, BLOCK):
        acc += tl.load(part_ptr + i + offs, mask=i + offs < P, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / B)
