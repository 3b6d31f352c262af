import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scalar_mul_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

// Vectorised grid-stride kernel: each thread handles 2 x float4 per iteration
// (more bytes in flight per thread for a purely bandwidth-bound op).
__global__ void scalar_mul_vec4_kernel(const float4* __restrict__ in,
                                       float4* __restrict__ out,
                                       float s, long long n4) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + stride < n4; i += 2 * stride) {
        float4 a = __ldcs(in + i);
        float4 b = __ldcs(in + i + stride);
        a.x *= s; a.y *= s; a.z *= s; a.w *= s;
        b.x *= s; b.y *= s; b.z *= s; b.w *= s;
        __stcs(out + i, a);
        __stcs(out + i + stride, b);
    }
    if (i < n4) {
        float4 a = __ldcs(in + i);
        a.x *= s; a.y *= s; a.z *= s; a.w *= s;
        __stcs(out + i, a);
    }
}

__global__ void scalar_mul_scalar_kernel(const float* __restrict__ in,
                                         float* __restrict__ out,
                                         float s, long long start, long long n) {
    long long i = start + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) out[i] = in[i] * s;
}

torch::Tensor scalar_mul_cuda(torch::Tensor A, double s) {
    TORCH_CHECK(A.is_cuda(), "A must be a CUDA tensor");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32, "A must be float32");
    A = A.contiguous();
    auto out = torch::empty_like(A);
    const long long n = A.numel();
    if (n == 0) return out;

    const float fs = (float)s;
    const float* in_ptr = A.data_ptr<float>();
    float* out_ptr = out.data_ptr<float>();
    auto stream = at::cuda::getCurrentCUDAStream();

    int sm_count = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int threads = 256;

    long long vec_end = 0;
    const bool aligned = ((reinterpret_cast<uintptr_t>(in_ptr) & 15) == 0) &&
                         ((reinterpret_cast<uintptr_t>(out_ptr) & 15) == 0);
    if (aligned) {
        const long long n4 = n / 4;
        if (n4 > 0) {
            long long blocks = (n4 + threads - 1) / threads;
            const long long max_blocks = (long long)sm_count * 16;
            if (blocks > max_blocks) blocks = max_blocks;
            scalar_mul_vec4_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(
                reinterpret_cast<const float4*>(in_ptr), reinterpret_cast<float4*>(out_ptr), fs, n4);
        }
        vec_end = n4 * 4;
    }
    if (vec_end < n) {
        const long long rem = n - vec_end;
        long long blocks = (rem + threads - 1) / threads;
        if (blocks > (long long)sm_count * 16) blocks = (long long)sm_count * 16;
        scalar_mul_scalar_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(
            in_ptr, out_ptr, fs, vec_end, n);
    }
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "scalar_mul kernel launch failed");
    return out;
}
"""

scalar_mul_cpp_source = "torch::Tensor scalar_mul_cuda(torch::Tensor A, double s);"

scalar_mul = load_inline(
    name="scalar_mul_ext",
    cpp_sources=scalar_mul_cpp_source,
    cuda_sources=scalar_mul_source,
    functions=["scalar_mul_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Matrix-scalar multiplication with a bandwidth-optimised, float4-vectorised
    grid-stride CUDA kernel (streaming loads/stores).
    """
    def __init__(self):
        super(ModelNew, self).__init__()
        self.scalar_mul = scalar_mul

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return self.scalar_mul.scalar_mul_cuda(A, float(s))
