"""kernrl
problem: L9_1_PrefixSum_ExclusiveScan
launches:
  - kernel: tile_sums
    grid: ["cdiv(n, 4096)"]
    args: [x, tile_off, n]
    constexprs: {TILE: 4096}
    num_warps: 8
  - kernel: scan_tile_sums
    grid: [1]
    args: [tile_off, "cdiv(n, 4096)"]
    constexprs: {BLOCK: 1024}
    num_warps: 8
  - kernel: tile_scan
    grid: ["cdiv(n, 4096)"]
    args: [x, tile_off, out, n]
    constexprs: {TILE: 4096}
    num_warps: 8
scratch:
  tile_off: {dtype: float32, count: "cdiv(n, 4096)"}
"""
# Exclusive prefix sum in three launches (reduce, scan, scan-then-propagate): the sums of 4096-wide
# tiles, an exclusive scan of those sums in one program (tl.cumsum over 1024-wide chunks with a
# running carry), and per tile an inclusive tl.cumsum minus the element plus the tile's offset.
import triton
import triton.language as tl


@triton.jit
def tile_sums(x_ptr, off_ptr, n, TILE: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * TILE + tl.arange(0, TILE)
    tl.store(off_ptr + pid, tl.sum(tl.load(x_ptr + idx, mask=idx < n, other=0.0), axis=0))


@triton.jit
def scan_tile_sums(off_ptr, T, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    carry = tl.sum(tl.zeros([BLOCK], dtype=tl.float32), axis=0)
    for i in range(0, T, BLOCK):
        m = i + offs < T
        v = tl.load(off_ptr + i + offs, mask=m, other=0.0)
        inc = tl.cumsum(v, axis=0)
        tl.store(off_ptr + i + offs, inc - v + carry, mask=m)
        carry += tl.sum(v, axis=0)


@triton.jit
def tile_scan(x_ptr, off_ptr, out_ptr, n, TILE: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid * TILE + tl.arange(0, TILE)
    m = idx < n
    v = tl.load(x_ptr + idx, mask=m, other=0.0)
    tl.store(out_ptr + idx, tl.cumsum(v, axis=0) - v + tl.load(off_ptr + pid), mask=m)
