"""kernrl
problem: L1_23_Softmax
launches:
  - kernel: softmax_kernel
    grid: [batch_size]
    args: [x, out, dim]
    constexprs: {BLOCK: 1024}
    num_warps: 8
"""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * n_cols
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=float("-inf"))
        m = tl.maximum(m, v)
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=float("-inf"))
        s += tl.exp(v - row_max)
    total = tl.sum(s, axis=0)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(x_ptr + base + offs, mask=mask, other=float("-inf"))
        tl.store(out_ptr + base + offs, tl.exp(v - row_max) / total, mask=mask)


class ModelNew(torch.nn.Module):  # ignored by kernrl: it launches the kernel itself
    def forward(self, x):
        out = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=1024, num_warps=8)
        return out


if __name__ == "__main__":
    print(ModelNew()(torch.randn(4, 256, device="cuda")))
