import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hist256_kernel(
    data_ptr, out_ptr, n,
    ITERS: tl.constexpr, BLOCK: tl.constexpr, NUM_BINS: tl.constexpr,
):
    # each program builds a private histogram of ITERS * BLOCK values in registers,
    # then merges it into the global float32 counts with one atomic per non-empty bin
    pid = tl.program_id(0)
    hist = tl.zeros((NUM_BINS,), dtype=tl.int32)
    n_pad = tl.zeros((1,), dtype=tl.int32)
    for i in tl.static_range(ITERS):
        offs = (pid * ITERS + i).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(data_ptr + offs, mask=mask, other=0)
        v = tl.minimum(tl.maximum(v, 0), NUM_BINS - 1).to(tl.int32)
        v = tl.where(mask, v, 0)
        hist += tl.histogram(v, NUM_BINS)
        # masked lanes were counted in bin 0: remember how many
        n_pad += BLOCK - tl.sum(mask.to(tl.int32), axis=0)
    bins = tl.arange(0, NUM_BINS)
    hist = hist - tl.where(bins == 0, tl.sum(n_pad, axis=0), 0)
    tl.atomic_add(out_ptr + bins, hist.to(tl.float32), mask=hist != 0)


def triton_histogram256(data: torch.Tensor) -> torch.Tensor:
    assert data.is_cuda
    assert data.dtype == torch.int64
    data = data.contiguous()
    n = data.numel()
    out = torch.zeros((256,), device=data.device, dtype=torch.float32)
    if n == 0:
        return out
    BLOCK = 2048
    ITERS = 4
    grid = (triton.cdiv(n, BLOCK * ITERS),)
    hist256_kernel[grid](data, out, n, ITERS=ITERS, BLOCK=BLOCK, NUM_BINS=256, num_warps=8)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, data):
        return triton_histogram256(data)
