"""kernrl
problem: L5_7_MonteCarlo_Pi
launches:
  - kernel: count_inside_kernel
    grid: [cdiv(num_samples, 4096)]
    args: [random_points, partial_counts, num_samples]
    constexprs: {BLOCK: 4096}
    num_warps: 8
  - kernel: finalize_pi_kernel
    grid: [1]
    args: [partial_counts, out, num_samples, cdiv(num_samples, 4096)]
    constexprs: {RBLOCK: 1024}
    num_warps: 4
scratch:
  partial_counts: {dtype: float32, count: cdiv(num_samples, 4096)}
"""
# Stage 1: each program counts the points of its BLOCK-point slice that fall inside the
#          unit circle and writes the count (exact small integer, <= 4096) to scratch.
# Stage 2: one program sums the partial counts as int32 (exact) and writes
#          4 * count / num_samples with an IEEE-rounded division, as PyTorch computes it.
import triton
import triton.language as tl


@triton.jit
def count_inside_kernel(points_ptr, partial_ptr, num_samples, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # load the interleaved [x, y] pairs of BLOCK points as one contiguous chunk
    offs = pid * (2 * BLOCK) + tl.arange(0, 2 * BLOCK)
    mask = offs < 2 * num_samples
    v = tl.load(points_ptr + offs, mask=mask, other=2.0)   # padding lands outside the circle
    sq = v * v
    r2 = tl.sum(tl.reshape(sq, (BLOCK, 2)), axis=1)        # x*x + y*y per point
    inside = (r2 <= 1.0).to(tl.int32)
    cnt = tl.sum(inside, axis=0)
    tl.store(partial_ptr + pid, cnt.to(tl.float32))


@triton.jit
def finalize_pi_kernel(partial_ptr, out_ptr, num_samples, num_partials, RBLOCK: tl.constexpr):
    acc = tl.zeros((RBLOCK,), dtype=tl.int32)
    for start in range(0, num_partials, RBLOCK):
        offs = start + tl.arange(0, RBLOCK)
        v = tl.load(partial_ptr + offs, mask=offs < num_partials, other=0.0)
        acc += v.to(tl.int32)
    total = tl.sum(acc, axis=0)
    pi_est = tl.div_rn(total.to(tl.float32) * 4.0, num_samples.to(tl.float32))
    tl.store(out_ptr, pi_est)
