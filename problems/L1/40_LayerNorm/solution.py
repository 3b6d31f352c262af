"""kernrl
problem: L1_40_LayerNorm
launches:
  - kernel: ln_partial
    grid: ["min(256, cdiv(features * dim1 * dim2, 4096))", batch_size]
    args: [x, psum, psq, "features * dim1 * dim2", "min(256, cdiv(features * dim1 * dim2, 4096))"]
    constexprs: {BLOCK: 1024, MAX_PARTS: 256}
    num_warps: 4
  - kernel: ln_apply
    grid: ["min(256, cdiv(features * dim1 * dim2, 4096))", batch_size]
    args: [x, weight, bias, psum, psq, out, "features * dim1 * dim2", "min(256, cdiv(features * dim1 * dim2, 4096))", eps]
    constexprs: {BLOCK: 1024, MAX_PARTS: 256}
    num_warps: 4
scratch:
  psum: {dtype: float64, count: "batch_size * 256"}
  psq: {dtype: float64, count: "batch_size * 256"}
"""
# LayerNorm over (features, dim1, dim2) of each sample: up to 256 programs per sample each reduce
# a slice to a sum and a sum of squares (stored as float64 partials); the second launch combines
# a sample's partials in float64 and normalises its slice with the elementwise weight and bias.
import triton
import triton.language as tl


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
