import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# cuBLAS GEMM, then one block per row: bias + exact GELU + softmax.
# The GELU'd row is staged in dynamic shared memory (N floats) so it is computed only once.
gelu_softmax_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math_constants.h>

#define THREADS 512

__device__ __forceinline__ float gelu_exact(float v) {
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

__device__ __forceinline__ float block_reduce_max(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = lane < THREADS / 32 ? sh[lane] : -CUDART_INF_F;
        for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
        if (lane == 0) sh[0] = v;
    }
    __syncthreads();
    float r = sh[0];
    __syncthreads();
    return r;
}

__device__ __forceinline__ float block_reduce_sum(float v, float* sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = lane < THREADS / 32 ? sh[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        if (lane == 0) sh[0] = v;
    }
    __syncthreads();
    float r = sh[0];
    __syncthreads();
    return r;
}

__global__ void bias_gelu_softmax_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                         float* __restrict__ y, int N) {
    extern __shared__ float row[];
    __shared__ float red[32];
    const float* xr = x + (long long)blockIdx.x * N;
    float* yr = y + (long long)blockIdx.x * N;

    float m = -CUDART_INF_F;
    for (int j = threadIdx.x; j < N; j += THREADS) {
        float g = gelu_exact(xr[j] + bias[j]);
        row[j] = g;
        m = fmaxf(m, g);
    }
    m = block_reduce_max(m, red);

    float s = 0.0f;
    for (int j = threadIdx.x; j < N; j += THREADS) {
        float e = __expf(row[j] - m);
        row[j] = e;
        s += e;
    }
    s = block_reduce_sum(s, red);
    const float inv = 1.0f / s;
    for (int j = threadIdx.x; j < N; j += THREADS) yr[j] = row[j] * inv;
}

torch::Tensor bias_gelu_softmax(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2D");
    x = x.contiguous();
    bias = bias.contiguous();
    const int B = x.size(0);
    const int N = x.size(1);
    auto y = torch::empty_like(x);
    if (B == 0 || N == 0) return y;
    size_t smem = (size_t)N * sizeof(float);
    if (smem > 48 * 1024) {
        cudaFuncSetAttribute(bias_gelu_softmax_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    }
    bias_gelu_softmax_kernel<<<B, THREADS, smem>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                                   y.data_ptr<float>(), N);
    return y;
}
"""

gelu_softmax_cpp = "torch::Tensor bias_gelu_softmax(torch::Tensor x, torch::Tensor bias);"

gelu_softmax_ext = load_inline(
    name="matmul_gelu_softmax_rows",
    cpp_sources=gelu_softmax_cpp,
    cuda_sources=gelu_softmax_source,
    functions=["bias_gelu_softmax"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Linear (cuBLAS) + fused bias / GELU / row softmax CUDA kernel.
    """
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        return gelu_softmax_ext.bias_gelu_softmax(y, self.linear.bias)
