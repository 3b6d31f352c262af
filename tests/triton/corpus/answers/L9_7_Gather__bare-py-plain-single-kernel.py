"""kernrl
problem: L9_7_Gather
launches:
  - kernel: gather_kernel
    grid: [cdiv(num_index, 2048)]
    args: [source, index, out, num_source, num_index]
    constexprs: {BLOCK: 2048}
    num_warps: 8
"""
# out[i] = source[index[i]]: stream the int64 indices and the output (evict-first),
# keep the 4 MB source table hot in L2 (evict-last) for the random gathers.
import triton
import triton.language as tl


@triton.jit
def gather_kernel(source_ptr, index_ptr, out_ptr, num_source, num_index, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < num_index
    idx = tl.load(index_ptr + offs, mask=mask, other=0, eviction_policy="evict_first")
    vals = tl.load(source_ptr + idx, mask=mask, other=0.0, eviction_policy="evict_last")
    tl.store(out_ptr + offs, vals, mask=mask, cache_modifier=".cs")
