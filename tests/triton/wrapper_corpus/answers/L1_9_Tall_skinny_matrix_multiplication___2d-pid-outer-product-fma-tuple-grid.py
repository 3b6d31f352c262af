import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tall_skinny_matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # C[M, N] = A[M, K] @ B[K, N] with a tiny K: accumulate K rank-1 updates in exact fp32
    # FMAs; the kernel is bound by writing C.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + offs_m * stride_am + k * stride_ak, mask=mask_m, other=0.0)
        b = tl.load(b_ptr + k * stride_bk + offs_n * stride_bn, mask=mask_n, other=0.0)
        acc += a[:, None] * b[None, :]

    c_ptrs = c_ptr + offs_m.to(tl.int64)[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        assert A.is_cuda and B.is_cuda
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        K2, N = B.shape
        assert K == K2
        out = torch.empty((M, N), device=A.device, dtype=torch.float32)
        BLOCK_M, BLOCK_N = 64, 256
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        tall_skinny_matmul_kernel[grid](
            A, B, out,
            M, N, K,
            A.stride(0), A.stride(1),
            B.stride(0), B.stride(1),
            out.stride(0), out.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8,
        )
        return out
