import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

kl_div_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

// KL(targets || predictions), reduction='batchmean':
//   sum_i t_i * (log t_i - log p_i) / batch
// (terms with t_i == 0 contribute 0, matching torch's xlogy semantics)

__device__ __forceinline__ float kl_term(float p, float t) {
    return (t > 0.0f) ? t * __logf(__fdividef(t, p)) : 0.0f;
}

template <int BLOCK>
__device__ __forceinline__ float block_reduce_sum(float v) {
    __shared__ float warp_sums[BLOCK / 32];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    if (lane == 0) warp_sums[wid] = v;
    __syncthreads();
    v = (threadIdx.x < BLOCK / 32) ? warp_sums[threadIdx.x] : 0.0f;
    if (wid == 0) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;   // valid in thread 0
}

// Stage 1: grid-stride, float4 vectorised partial sums -> one float per block
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
kl_div_partial_kernel(const float* __restrict__ pred, const float* __restrict__ targ,
                      float* __restrict__ partials, long long n, int use_vec) {
    float acc = 0.0f;
    const long long tid = (long long)blockIdx.x * BLOCK + threadIdx.x;
    const long long stride = (long long)gridDim.x * BLOCK;

    long long tail_start = 0;
    if (use_vec) {
        const long long n4 = n >> 2;
        const float4* __restrict__ p4 = reinterpret_cast<const float4*>(pred);
        const float4* __restrict__ t4 = reinterpret_cast<const float4*>(targ);
#pragma unroll 2
        for (long long i = tid; i < n4; i += stride) {
            const float4 p = __ldcs(p4 + i);
            const float4 t = __ldcs(t4 + i);
            acc += kl_term(p.x, t.x) + kl_term(p.y, t.y) + kl_term(p.z, t.z) + kl_term(p.w, t.w);
        }
        tail_start = n4 << 2;
    }
    for (long long i = tail_start + tid; i < n; i += stride) {
        acc += kl_term(pred[i], targ[i]);
    }

    acc = block_reduce_sum<BLOCK>(acc);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Stage 2: single block, double-precision reduction of the block partials
template <int BLOCK>
__global__ void kl_div_final_kernel(const float* __restrict__ partials, int num_partials,
                                    float* __restrict__ out, double inv_batch) {
    __shared__ double sdata[BLOCK];
    double s = 0.0;
    for (int i = threadIdx.x; i < num_partials; i += BLOCK) s += (double)partials[i];
    sdata[threadIdx.x] = s;
    __syncthreads();
#pragma unroll
    for (int off = BLOCK / 2; off > 0; off >>= 1) {
        if (threadIdx.x < off) sdata[threadIdx.x] += sdata[threadIdx.x + off];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = (float)(sdata[0] * inv_batch);
}

torch::Tensor kl_div_batchmean_cuda(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(predictions.scalar_type() == torch::kFloat32 &&
                targets.scalar_type() == torch::kFloat32, "inputs must be float32");
    TORCH_CHECK(predictions.sizes() == targets.sizes(), "shape mismatch");
    predictions = predictions.contiguous();
    targets = targets.contiguous();

    const long long n = predictions.numel();
    const long long batch = predictions.dim() > 0 ? predictions.size(0) : 1;
    auto out = torch::empty(std::vector<int64_t>{}, predictions.options());

    constexpr int BLOCK = 256;
    const int sm_count = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    int64_t blocks = (n / 4 + BLOCK - 1) / BLOCK;
    const int64_t max_blocks = (int64_t)sm_count * 8;
    if (blocks > max_blocks) blocks = max_blocks;
    if (blocks < 1) blocks = 1;

    auto partials = torch::empty({blocks}, predictions.options());
    const float* pp = predictions.data_ptr<float>();
    const float* tp = targets.data_ptr<float>();
    const int use_vec = (((reinterpret_cast<uintptr_t>(pp) | reinterpret_cast<uintptr_t>(tp)) & 15) == 0) ? 1 : 0;

    auto stream = at::cuda::getCurrentCUDAStream();
    kl_div_partial_kernel<BLOCK><<<(unsigned int)blocks, BLOCK, 0, stream>>>(
        pp, tp, partials.data_ptr<float>(), n, use_vec);
    kl_div_final_kernel<512><<<1, 512, 0, stream>>>(
        partials.data_ptr<float>(), (int)blocks, out.data_ptr<float>(), 1.0 / (double)batch);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "kl_div kernel launch failed");
    return out;
}
"""

kl_div_cpp_source = "torch::Tensor kl_div_batchmean_cuda(torch::Tensor predictions, torch::Tensor targets);"

kl_div_ext = load_inline(
    name="kl_div_batchmean_ext",
    cpp_sources=kl_div_cpp_source,
    cuda_sources=kl_div_source,
    functions=["kl_div_batchmean_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    KL divergence (batchmean) fused into one bandwidth-bound pass:
    log(predictions), the pointwise KL term and the reduction are computed in a
    single vectorised kernel, followed by a tiny double-precision final reduce.
    """
    def __init__(self):
        super(ModelNew, self).__init__()
        self.ext = kl_div_ext

    def forward(self, predictions, targets):
        return self.ext.kl_div_batchmean_cuda(predictions, targets)
