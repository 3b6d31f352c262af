import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv3d stays on cuDNN; Mish followed by Tanh is fused into a single in-place,
# float4-vectorized, grid-stride elementwise kernel (one read + one write).

mish_tanh_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float mish_tanh(float x) {
    // softplus with the usual overflow guard
    const float sp = (x > 20.f) ? x : log1pf(__expf(x));
    const float m = x * tanhf(sp);
    return tanhf(m);
}

__global__ void mish_tanh_vec4_kernel(float* __restrict__ x, long long n4) {
    float4* x4 = reinterpret_cast<float4*>(x);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (long long)blockDim.x * gridDim.x) {
        float4 v = x4[i];
        v.x = mish_tanh(v.x);
        v.y = mish_tanh(v.y);
        v.z = mish_tanh(v.z);
        v.w = mish_tanh(v.w);
        x4[i] = v;
    }
}

__global__ void mish_tanh_scalar_kernel(float* __restrict__ x, long long start, long long n) {
    for (long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        x[i] = mish_tanh(x[i]);
    }
}

torch::Tensor mish_tanh_inplace_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be float32 CUDA");
    auto y = x.contiguous();
    const long long n = y.numel();
    if (n == 0) return y;

    int dev, sms;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const long long max_blocks = (long long)sms * 16;
    const int threads = 256;

    float* ptr = y.data_ptr<float>();
    long long done = 0;
    if ((reinterpret_cast<uintptr_t>(ptr) % 16) == 0) {
        const long long n4 = n / 4;
        if (n4 > 0) {
            long long blocks = (n4 + threads - 1) / threads;
            if (blocks > max_blocks) blocks = max_blocks;
            mish_tanh_vec4_kernel<<<(unsigned)blocks, threads>>>(ptr, n4);
        }
        done = n4 * 4;
    }
    if (done < n) {
        const long long rem = n - done;
        long long blocks = (rem + threads - 1) / threads;
        if (blocks > max_blocks) blocks = max_blocks;
        mish_tanh_scalar_kernel<<<(unsigned)blocks, threads>>>(ptr, done, n);
    }
    return y;
}
"""

mish_tanh_cpp_source = "torch::Tensor mish_tanh_inplace_cuda(torch::Tensor x);"

mish_tanh_ext = load_inline(
    name="mish_tanh_fused",
    cpp_sources=mish_tanh_cpp_source,
    cuda_sources=mish_tanh_source,
    functions=["mish_tanh_inplace_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Conv3d (cuDNN) followed by a fused Mish + Tanh CUDA kernel applied in place.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        x = self.conv(x)
        return mish_tanh_ext.mish_tanh_inplace_cuda(x)
