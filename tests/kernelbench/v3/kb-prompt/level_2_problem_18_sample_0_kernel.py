import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# Algebraic simplification:
#   y = x @ W^T + b                    (B, O)
#   s = sum_j y[:, j]                  (B, 1)
#   max / mean / logsumexp / logsumexp over a size-1 dim are identities.
# Hence  out[i] = x[i] . (sum_j W[j, :]) + sum_j b[j]
# which replaces a (B x I x O) GEMM by a column-sum of W plus a GEMV.
#
# Kernel 1: column sums of W (and the bias sum) into a scratch vector of
#           length I + 1 (tiled over columns and row-chunks, atomics to merge).
# Kernel 2: one block per batch row: dot(x[i], wsum) + bsum with float4 loads
#           and a warp-shuffle reduction.
# ---------------------------------------------------------------------------
fused_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define CS_TX 32
#define CS_TY 8
#define ROWS_PER_BLOCK 256

__global__ void __launch_bounds__(CS_TX * CS_TY)
weight_colsum_kernel(const float* __restrict__ W,     // (O, I)
                     const float* __restrict__ bias,  // (O) or nullptr
                     float* __restrict__ scratch,     // (I + 1), zero-initialised
                     int O, int I)
{
    __shared__ float red[CS_TY][CS_TX + 1];
    const int col = blockIdx.x * CS_TX + threadIdx.x;
    const int r0 = blockIdx.y * ROWS_PER_BLOCK;
    const int r1 = min(r0 + ROWS_PER_BLOCK, O);

    float acc = 0.0f;
    if (col < I) {
        int r = r0 + threadIdx.y;
        for (; r + 3 * CS_TY < r1; r += 4 * CS_TY) {
            float a = __ldg(W + (size_t)r * I + col);
            float b = __ldg(W + (size_t)(r + CS_TY) * I + col);
            float c = __ldg(W + (size_t)(r + 2 * CS_TY) * I + col);
            float d = __ldg(W + (size_t)(r + 3 * CS_TY) * I + col);
            acc += (a + b) + (c + d);
        }
        for (; r < r1; r += CS_TY) acc += __ldg(W + (size_t)r * I + col);
    }
    red[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < I) {
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < CS_TY; ++i) s += red[i][threadIdx.x];
        atomicAdd(scratch + col, s);
    }

    // The blocks of the first column tile also reduce the bias slice that
    // corresponds to their row range.
    if (bias != nullptr && blockIdx.x == 0) {
        __syncthreads();
        const int tid = threadIdx.y * CS_TX + threadIdx.x;
        float bsum = 0.0f;
        for (int r = r0 + tid; r < r1; r += CS_TX * CS_TY) bsum += __ldg(bias + r);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) bsum += __shfl_down_sync(0xffffffff, bsum, off);
        __shared__ float wsum[CS_TY];
        if ((tid & 31) == 0) wsum[tid >> 5] = bsum;
        __syncthreads();
        if (tid == 0) {
            float t = 0.0f;
#pragma unroll
            for (int i = 0; i < CS_TY; ++i) t += wsum[i];
            atomicAdd(scratch + I, t);
        }
    }
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
row_dot_kernel(const float* __restrict__ x,        // (B, I)
               const float* __restrict__ scratch,  // (I + 1)
               float* __restrict__ out,            // (B)
               int B, int I, bool vec_ok)
{
    __shared__ float warp_part[BLOCK / 32];
    const int row = blockIdx.x;
    if (row >= B) return;
    const float* xr = x + (size_t)row * I;

    float acc = 0.0f;
    if (vec_ok) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        const float4* w4 = reinterpret_cast<const float4*>(scratch);
        const int n4 = I >> 2;
        for (int i = threadIdx.x; i < n4; i += BLOCK) {
            float4 a = __ldg(x4 + i);
            float4 w = __ldg(w4 + i);
            acc = fmaf(a.x, w.x, acc);
            acc = fmaf(a.y, w.y, acc);
            acc = fmaf(a.z, w.z, acc);
            acc = fmaf(a.w, w.w, acc);
        }
    } else {
        for (int i = threadIdx.x; i < I; i += BLOCK) acc = fmaf(__ldg(xr + i), __ldg(scratch + i), acc);
    }

#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffff, acc, off);
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) warp_part[wid] = acc;
    __syncthreads();
    if (wid == 0) {
        acc = (lane < BLOCK / 32) ? warp_part[lane] : 0.0f;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffff, acc, off);
        if (lane == 0) out[row] = acc + scratch[I];
    }
}

torch::Tensor linear_sum_reduce_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "float32 expected");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2, "x and weight must be 2D");
    TORCH_CHECK(x.size(1) == weight.size(1), "in_features mismatch");

    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int B = (int)xc.size(0);
    const int I = (int)xc.size(1);
    const int O = (int)wc.size(0);

    const float* bptr = nullptr;
    torch::Tensor bc;
    if (bias.defined() && bias.numel() > 0) {
        bc = bias.contiguous();
        TORCH_CHECK(bc.numel() == O, "bias size mismatch");
        bptr = bc.data_ptr<float>();
    }

    auto out = torch::empty({B, 1}, xc.options());
    if (B == 0) return out;
    auto scratch = torch::zeros({I + 1}, xc.options());
    auto stream = at::cuda::getCurrentCUDAStream();

    if (O > 0) {
        dim3 block(CS_TX, CS_TY);
        dim3 grid((I + CS_TX - 1) / CS_TX, (O + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
        if (I == 0) grid.x = 1;
        weight_colsum_kernel<<<grid, block, 0, stream>>>(wc.data_ptr<float>(), bptr,
                                                          scratch.data_ptr<float>(), O, I);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }

    const bool vec_ok = (I % 4 == 0) &&
                        (reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0);
    row_dot_kernel<256><<<B, 256, 0, stream>>>(xc.data_ptr<float>(), scratch.data_ptr<float>(),
                                                out.data_ptr<float>(), B, I, vec_ok);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

fused_cpp_source = (
    "torch::Tensor linear_sum_reduce_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"
)

linear_sum_ext = load_inline(
    name="linear_sum_reduce_ext",
    cpp_sources=fused_cpp_source,
    cuda_sources=fused_source,
    functions=["linear_sum_reduce_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Linear -> sum(dim=1) -> max -> mean -> logsumexp -> logsumexp, collapsed to
    x @ colsum(W) + sum(b) (all trailing reductions act on a size-1 dim).
    """
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.ext = linear_sum_ext

    def forward(self, x):
        bias = self.linear.bias
        if bias is None:
            bias = torch.empty(0, device=x.device, dtype=x.dtype)
        return self.ext.linear_sum_reduce_cuda(x, self.linear.weight, bias)
