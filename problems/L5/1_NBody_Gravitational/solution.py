"""kernrl
problem: L5_1_NBody_Gravitational
launches:
  - kernel: nbody_accel
    grid: ["cdiv(num_particles, 64)"]
    args: [positions, masses, out, num_particles, softening]
    constexprs: {BLOCK_I: 64, BLOCK_J: 128}
    num_warps: 4
"""
# All-pairs gravitational acceleration: a program owns 64 bodies and sweeps the others 128 at a
# time as a 2-D tile of interactions (rsqrt of the softened squared distance, cubed), reducing
# each tile along j into the 64 accumulators.
import triton
import triton.language as tl


@triton.jit
def nbody_accel(pos_ptr, m_ptr, out_ptr, N, softening, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr):
    i = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    im = i < N
    xi = tl.load(pos_ptr + i * 3 + 0, mask=im, other=0.0)
    yi = tl.load(pos_ptr + i * 3 + 1, mask=im, other=0.0)
    zi = tl.load(pos_ptr + i * 3 + 2, mask=im, other=0.0)
    eps2 = softening * softening
    ax = tl.zeros([BLOCK_I], dtype=tl.float32)
    ay = tl.zeros([BLOCK_I], dtype=tl.float32)
    az = tl.zeros([BLOCK_I], dtype=tl.float32)
    for j0 in range(0, N, BLOCK_J):
        j = j0 + tl.arange(0, BLOCK_J)
        jm = j < N
        xj = tl.load(pos_ptr + j * 3 + 0, mask=jm, other=0.0)
        yj = tl.load(pos_ptr + j * 3 + 1, mask=jm, other=0.0)
        zj = tl.load(pos_ptr + j * 3 + 2, mask=jm, other=0.0)
        mj = tl.load(m_ptr + j, mask=jm, other=0.0)
        dx = xj[None, :] - xi[:, None]
        dy = yj[None, :] - yi[:, None]
        dz = zj[None, :] - zi[:, None]
        d2 = dx * dx + dy * dy + dz * dz + eps2
        inv = 1.0 / tl.sqrt_rn(d2)
        f = mj[None, :] * (inv * inv * inv)
        ax += tl.sum(f * dx, axis=1)
        ay += tl.sum(f * dy, axis=1)
        az += tl.sum(f * dz, axis=1)
    tl.store(out_ptr + i * 3 + 0, ax, mask=im)
    tl.store(out_ptr + i * 3 + 1, ay, mask=im)
    tl.store(out_ptr + i * 3 + 2, az, mask=im)
