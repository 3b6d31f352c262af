"""kernrl
problem: L2_86_Matmul_Divide_GELU
launches:
  - kernel: linear_div_gelu_kernel
    grid: [cdiv(batch_size, 128), cdiv(output_size, 64)]
    args: [x, weight, bias, out, divisor, batch_size, input_size, output_size]
    constexprs: {BLOCK_M: 128, BLOCK_N: 64}
"""
# Fused Linear -> /divisor -> exact GELU.
#  * 2-D grid of (BLOCK_M x BLOCK_N) output tiles, K-loop with tl.dot in true fp32
#    (input_precision="ieee": TF32 would break atol 1e-6).
#  * erf from libdevice for the exact GELU.
#  * BLOCK_K / num_warps / num_stages autotuned; tile sizes fixed since the grid uses them.
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_K": 32}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_K": 16}, num_warps=8, num_stages=4),
        triton.Config({"BLOCK_K": 64}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_K": 16}, num_warps=4, num_stages=4),
    ],
    key=["batch_size", "input_size", "output_size"],
)
@triton.jit
def linear_div_gelu_kernel(x_ptr, w_ptr, b_ptr, out_ptr, divisor,
                           batch_size, input_size, output_size,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m < batch_size
    n_mask = offs_n < output_size

    x_ptrs = x_ptr + offs_m[:, None] * input_size + offs_k[None, :]     # [BM, BK]
    w_ptrs = w_ptr + offs_n[None, :] * input_size + offs_k[:, None]     # [BK, BN] (W^T)

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, input_size, BLOCK_K):
        k_mask = (k0 + offs_k) < input_size
        a = tl.load(x_ptrs, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0)
    y = (acc + bias[None, :]) / divisor
    out = 0.5 * y * (1.0 + libdevice.erf(y * 0.7071067811865476))

    o_ptrs = out_ptr + offs_m[:, None] * output_size + offs_n[None, :]
    tl.store(o_ptrs, out, mask=m_mask[:, None] & n_mask[None, :])


# ---------------------------------------------------------------------------
# Host wrapper + self-test (ignored by kernrl)
# ---------------------------------------------------------------------------
import torch
import torch.nn as nn
import torch.nn.functional as F

BLOCK_M, BLOCK_N = 128, 64


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(output_size, input_size))
        self.bias = nn.Parameter(torch.empty(output_size))
        nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)
        bound = 1.0 / input_size ** 0.5
        nn.init.uniform_(self.bias, -bound, bound)
        self.divisor = float(divisor)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.weight.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=torch.float32)
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        linear_div_gelu_kernel[grid](x, self.weight, self.bias, out, self.divisor,
                                     M, K, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    for (M, K, N) in [(8192, 512, 1024), (3, 512, 1024), (7, 45, 91), (131, 130, 129)]:
        model = ModelNew(K, N, 10.0).cuda()
        x = torch.randn(M, K, device="cuda")
        out = model(x)
        with torch.no_grad():
            ref = F.gelu(F.linear(x, model.weight, model.bias) / 10.0)
        ok = torch.allclose(out, ref, atol=1e-6, rtol=1e-4)
        print(f"M={M} K={K} N={N}: max abs err {(out - ref).abs().max().item():.3e} ok={ok}")
