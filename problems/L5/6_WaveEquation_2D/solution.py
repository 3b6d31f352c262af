"""kernrl
problem: L5_6_WaveEquation_2D
launches:
  - kernel: wave_step
    grid: ["cdiv(grid_width, 128)", "cdiv(grid_height, 16)"]
    args: [u_curr, u_prev, out, grid_height, grid_width, c, dt, dx]
    constexprs: {BLOCK_H: 16, BLOCK_W: 128}
    num_warps: 4
"""
# One explicit step of the 2-D wave equation on 16 x 128 tiles (2-D program ids): the 5-point
# Laplacian from shifted loads (served by L1), the boundary rows and columns written as 0.
import triton
import triton.language as tl


@triton.jit
def wave_step(u_ptr, p_ptr, out_ptr, H, W, c, dt, dx, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    rows = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    r = rows[:, None]
    q = cols[None, :]
    inb = (r < H) & (q < W)
    interior = (r > 0) & (r < H - 1) & (q > 0) & (q < W - 1)
    idx = r * W + q
    u = tl.load(u_ptr + idx, mask=interior, other=0.0)
    up = tl.load(u_ptr + idx - W, mask=interior, other=0.0)
    dn = tl.load(u_ptr + idx + W, mask=interior, other=0.0)
    lf = tl.load(u_ptr + idx - 1, mask=interior, other=0.0)
    rt = tl.load(u_ptr + idx + 1, mask=interior, other=0.0)
    prev = tl.load(p_ptr + idx, mask=interior, other=0.0)
    dx2 = dx * dx
    ratio = c * dt / dx
    coeff = ratio * ratio
    lap = (up + dn + lf + rt - 4.0 * u) / dx2
    nxt = 2.0 * u - prev + coeff * lap * dx2
    tl.store(out_ptr + idx, tl.where(interior, nxt, 0.0), mask=inb)
