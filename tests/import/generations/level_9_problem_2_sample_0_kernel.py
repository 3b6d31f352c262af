import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

reduce_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__inline__ __device__ float warpSum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__inline__ __device__ float blockSum(float v) {
    static __shared__ float shared[32];
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warpSum(v);
    if (lane == 0) shared[wid] = v;
    __syncthreads();
    v = (threadIdx.x < (blockDim.x >> 5)) ? shared[lane] : 0.0f;
    if (wid == 0) v = warpSum(v);
    return v;
}

// Pass 1: grid-stride partial sums, one per block.
__global__ void partial_sum_kernel(const float* __restrict__ in, float* __restrict__ partial, long long n) {
    float s = 0.0f;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        s += in[i];
    s = blockSum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Pass 2: one block sums the partials.
__global__ void final_sum_kernel(const float* __restrict__ partial, float* __restrict__ out, int m) {
    float s = 0.0f;
    for (int i = threadIdx.x; i < m; i += blockDim.x) s += partial[i];
    s = blockSum(s);
    if (threadIdx.x == 0) *out = s;
}

torch::Tensor reduce_sum(torch::Tensor x) {
    int device;
    cudaGetDevice(&device);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, device);
    const int threads = 512;
    const int blocks = prop.multiProcessorCount * 4;
    auto partial = torch::empty({blocks}, x.options());
    auto out = torch::empty({}, x.options());
    partial_sum_kernel<<<blocks, threads>>>(x.data_ptr<float>(), partial.data_ptr<float>(), x.numel());
    final_sum_kernel<<<1, 1024>>>(partial.data_ptr<float>(), out.data_ptr<float>(), blocks);
    return out;
}
"""

reduce_ext = load_inline(
    name="reduce_sum_ext",
    cpp_sources="torch::Tensor reduce_sum(torch::Tensor x);",
    cuda_sources=reduce_source,
    functions=["reduce_sum"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.reduce_ext = reduce_ext

    def forward(self, x):
        return self.reduce_ext.reduce_sum(x)
