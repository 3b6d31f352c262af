import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# After the Linear layer, x is summed over the feature dimension (-> [B, 1]).
# max / mean / logsumexp / logsumexp over a size-1 dimension are all the identity,
# so   out[b] = sum_j (x[b] . W[j] + bias[j]) = x[b] . (sum_j W[j]) + sum_j bias[j].
# We therefore only need the column sums of W (one pass over W) and a GEMV.

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define SPLITS 32          // row splits of W for the column-sum pass
#define CS_TX 32
#define CS_TY 8
#define RED_THREADS 256

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// block-wide sum for RED_THREADS threads; result valid in every thread
__device__ __forceinline__ float block_sum(float v, float* s_warp) {
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) s_warp[wid] = v;
    __syncthreads();
    float t = (threadIdx.x < (RED_THREADS / 32)) ? s_warp[threadIdx.x] : 0.0f;
    if (wid == 0) t = warp_sum(t);
    if (threadIdx.x == 0) s_warp[0] = t;
    __syncthreads();
    const float r = s_warp[0];
    __syncthreads();
    return r;
}

// Stage 1: partial[s, k] = sum_{r in split s} W[r, k]
__global__ void __launch_bounds__(CS_TX * CS_TY)
colsum_partial_kernel(const float* __restrict__ W, float* __restrict__ partial,
                      int O, int I, int rows_per_split) {
    __shared__ float sm[CS_TY][CS_TX + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int k = blockIdx.x * CS_TX + tx;
    const int r0 = blockIdx.y * rows_per_split;
    const int r1 = min(O, r0 + rows_per_split);

    float s0 = 0.f, s1 = 0.f;
    if (k < I) {
        int r = r0 + ty;
        for (; r + CS_TY < r1; r += 2 * CS_TY) {
            s0 += __ldg(W + (size_t)r * I + k);
            s1 += __ldg(W + (size_t)(r + CS_TY) * I + k);
        }
        if (r < r1) s0 += __ldg(W + (size_t)r * I + k);
    }
    sm[ty][tx] = s0 + s1;
    __syncthreads();
    if (ty == 0 && k < I) {
        float s = sm[0][tx];
#pragma unroll
        for (int t = 1; t < CS_TY; ++t) s += sm[t][tx];
        partial[(size_t)blockIdx.y * I + k] = s;
    }
}

// Stage 2: wsum[k] = sum_s partial[s, k]; the last block writes wsum[I] = sum(bias).
__global__ void __launch_bounds__(RED_THREADS)
colsum_final_kernel(const float* __restrict__ partial, const float* __restrict__ bias,
                    float* __restrict__ wsum, int I, int O) {
    __shared__ float s_warp[RED_THREADS / 32];
    if (blockIdx.x == gridDim.x - 1) {
        float s = 0.f;
        for (int j = threadIdx.x; j < O; j += RED_THREADS) s += __ldg(bias + j);
        s = block_sum(s, s_warp);
        if (threadIdx.x == 0) wsum[I] = s;
        return;
    }
    const int k = blockIdx.x * RED_THREADS + threadIdx.x;
    if (k < I) {
        float s = 0.f;
#pragma unroll 8
        for (int sp = 0; sp < SPLITS; ++sp) s += partial[(size_t)sp * I + k];
        wsum[k] = s;
    }
}

// Stage 3: out[b] = x[b] . wsum[0:I] + wsum[I]
__global__ void __launch_bounds__(RED_THREADS)
row_dot_kernel(const float* __restrict__ x, const float* __restrict__ wsum,
               float* __restrict__ out, int I) {
    __shared__ float s_warp[RED_THREADS / 32];
    const int b = blockIdx.x;
    const float* xr = x + (size_t)b * I;
    float s0 = 0.f, s1 = 0.f;
    int k = threadIdx.x;
    for (; k + RED_THREADS < I; k += 2 * RED_THREADS) {
        s0 = fmaf(__ldg(xr + k), wsum[k], s0);
        s1 = fmaf(__ldg(xr + k + RED_THREADS), wsum[k + RED_THREADS], s1);
    }
    if (k < I) s0 = fmaf(__ldg(xr + k), wsum[k], s0);
    const float s = block_sum(s0 + s1, s_warp);
    if (threadIdx.x == 0) out[b] = s + wsum[I];
}

torch::Tensor fused_linear_sum(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "float32 expected");
    TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(), "contiguous expected");

    const int B = (int)x.size(0);
    const int I = (int)x.size(1);
    const int O = (int)weight.size(0);
    TORCH_CHECK(weight.size(1) == I, "weight shape mismatch");

    auto partial = torch::empty({SPLITS, I}, x.options());
    auto wsum = torch::empty({I + 1}, x.options());
    auto out = torch::empty({B, 1}, x.options());

    const int rows_per_split = (O + SPLITS - 1) / SPLITS;
    dim3 g1((I + CS_TX - 1) / CS_TX, SPLITS);
    dim3 b1(CS_TX, CS_TY);
    colsum_partial_kernel<<<g1, b1>>>(weight.data_ptr<float>(), partial.data_ptr<float>(),
                                      O, I, rows_per_split);

    const int g2 = (I + RED_THREADS - 1) / RED_THREADS + 1;
    colsum_final_kernel<<<g2, RED_THREADS>>>(partial.data_ptr<float>(), bias.data_ptr<float>(),
                                             wsum.data_ptr<float>(), I, O);

    row_dot_kernel<<<B, RED_THREADS>>>(x.data_ptr<float>(), wsum.data_ptr<float>(),
                                       out.data_ptr<float>(), I);
    return out;
}
"""

cpp_source = "torch::Tensor fused_linear_sum(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

ext = load_inline(
    name="linear_sum_reduce_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["fused_linear_sum"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """
    Linear -> sum -> max -> mean -> logsumexp -> logsumexp, collapsed algebraically
    into a column-sum of the weight followed by a GEMV, all in custom kernels.
    """
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return ext.fused_linear_sum(x, self.linear.weight, self.linear.bias)
