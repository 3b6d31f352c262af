# LayerNorm over (features, dim1, dim2): a first kernel reduces slices of each sample to partial
# sums (float64) in a scratch buffer, a second one combines them and normalises.
import torch
import torch.nn as nn
import triton
import triton.language as tl

MAX_PARTS = 256


@triton.jit
def ln_partial(x_ptr, psum_ptr, psq_ptr, N, parts, BLOCK: tl.constexpr, MAX_PARTS: tl.constexpr):
    part = tl.program_id(0)
    b = tl.program_id(1)
    chunk = tl.cdiv(tl.cdiv(N, parts), BLOCK) * BLOCK
    start = part * chunk
    end = tl.minimum(start + chunk, N)
    base = x_ptr + b.to(tl.int64) * N
    offs = tl.arange(0, BLOCK)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    q = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(start, end, BLOCK):
        v = tl.load(base + i + offs, mask=i + offs < end, other=0.0)
        s += v
        q += v * v
    tl.store(psum_ptr + b * MAX_PARTS + part, tl.sum(s, axis=0).to(tl.float64))
    tl.store(psq_ptr + b * MAX_PARTS + part, tl.sum(q, axis=0).to(tl.float64))


@triton.jit
def ln_apply(x_ptr, w_ptr, b_ptr, psum_ptr, psq_ptr, out_ptr, N, parts, eps,
             BLOCK: tl.constexpr, MAX_PARTS: tl.constexpr):
    part = tl.program_id(0)
    b = tl.program_id(1)
    pidx = tl.arange(0, MAX_PARTS)
    pm = pidx < parts
    tot = tl.sum(tl.load(psum_ptr + b * MAX_PARTS + pidx, mask=pm, other=0.0), axis=0)
    tot2 = tl.sum(tl.load(psq_ptr + b * MAX_PARTS + pidx, mask=pm, other=0.0), axis=0)
    mean64 = tot / N
    var64 = tot2 / N - mean64 * mean64
    mean = mean64.to(tl.float32)
    rstd = 1.0 / tl.sqrt_rn(var64.to(tl.float32) + eps)
    chunk = tl.cdiv(tl.cdiv(N, parts), BLOCK) * BLOCK
    start = part * chunk
    end = tl.minimum(start + chunk, N)
    xb = x_ptr + b.to(tl.int64) * N
    ob = out_ptr + b.to(tl.int64) * N
    offs = tl.arange(0, BLOCK)
    for i in range(start, end, BLOCK):
        idx = i + offs
        m = idx < end
        v = tl.load(xb + idx, mask=m, other=0.0)
        w = tl.load(w_ptr + idx, mask=m, other=0.0)
        bb = tl.load(b_ptr + idx, mask=m, other=0.0)
        tl.store(ob + idx, (v - mean) * rstd * w + bb, mask=m)


class ModelNew(nn.Module):
    def __init__(self, features, dim1, dim2, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(features, dim1, dim2))
        self.bias = nn.Parameter(torch.zeros(features, dim1, dim2))

    def forward(self, x):
        B = x.shape[0]
        N = x.numel() // B
        parts = min(MAX_PARTS, triton.cdiv(N, 4096))
        psum = torch.empty(B * MAX_PARTS, device=x.device, dtype=torch.float64)
        psq = torch.empty(B * MAX_PARTS, device=x.device, dtype=torch.float64)
        out = torch.empty_like(x)
        ln_partial[(parts, B)](x, psum, psq, N, parts, BLOCK=1024, MAX_PARTS=MAX_PARTS)
        ln_apply[(parts, B)](x, self.weight, self.bias, psum, psq, out, N, parts, self.eps,
                             BLOCK=1024, MAX_PARTS=MAX_PARTS)
        return out
