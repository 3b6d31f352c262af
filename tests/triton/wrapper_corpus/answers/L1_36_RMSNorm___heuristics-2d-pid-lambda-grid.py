import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics(
    {
        "BLOCK_F": lambda args: triton.next_power_of_2(args["F"]),
        "BLOCK_S": lambda args: max(16, min(512, 8192 // triton.next_power_of_2(args["F"]))),
    }
)
@triton.jit
def rmsnorm_channel_kernel(x_ptr, out_ptr, F, S, eps, BLOCK_F: tl.constexpr, BLOCK_S: tl.constexpr):
    # x viewed as [B, F, S] with S = dim1 * dim2 contiguous positions per feature.
    # Each program owns BLOCK_S spatial positions of one batch entry and all F features,
    # so x is read exactly once and written once.
    pid_s = tl.program_id(0)
    pid_b = tl.program_id(1)
    offs_f = tl.arange(0, BLOCK_F)
    offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    mask = (offs_f[:, None] < F) & (offs_s[None, :] < S)
    base = pid_b.to(tl.int64) * F * S
    offs = base + offs_f[:, None] * S + offs_s[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean_sq = tl.sum(x * x, axis=0) / F
    rms = tl.sqrt(mean_sq + eps)
    y = x / rms[None, :]
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.features = features
        self.eps = eps

    def forward(self, x):
        assert x.is_cuda
        x = x.contiguous()
        B, F = x.shape[0], x.shape[1]
        S = x.numel() // (B * F)
        out = torch.empty_like(x)
        grid = lambda meta: (triton.cdiv(S, meta["BLOCK_S"]), B)
        rmsnorm_channel_kernel[grid](x, out, F, S, float(self.eps), num_warps=8)
        return out
