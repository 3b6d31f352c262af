import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

selu_cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define SELU_ALPHA 1.6732632423543772848170429916717f
#define SELU_SCALE 1.0507009873554804934193349852946f

__device__ __forceinline__ float selu_f(float v) {
    return v > 0.0f ? SELU_SCALE * v : (SELU_SCALE * SELU_ALPHA) * expm1f(v);
}

// Memory-bound elementwise op: 128-bit loads/stores, two float4 per thread per
// iteration for extra memory-level parallelism, grid-stride loop, scalar tail.
__global__ void __launch_bounds__(256) selu_kernel(const float* __restrict__ x,
                                                   float* __restrict__ y,
                                                   int64_t n) {
    const int64_t n4 = n >> 2;
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
    float4* __restrict__ y4 = reinterpret_cast<float4*>(y);

    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;

    int64_t i = tid;
    for (; i + stride < n4; i += 2 * stride) {
        float4 a = __ldg(x4 + i);
        float4 b = __ldg(x4 + i + stride);
        a.x = selu_f(a.x); a.y = selu_f(a.y); a.z = selu_f(a.z); a.w = selu_f(a.w);
        b.x = selu_f(b.x); b.y = selu_f(b.y); b.z = selu_f(b.z); b.w = selu_f(b.w);
        y4[i] = a;
        y4[i + stride] = b;
    }
    if (i < n4) {
        float4 a = __ldg(x4 + i);
        a.x = selu_f(a.x); a.y = selu_f(a.y); a.z = selu_f(a.z); a.w = selu_f(a.w);
        y4[i] = a;
    }

    // tail: at most 3 scalars
    const int64_t t = (n4 << 2) + tid;
    if (t < n) y[t] = selu_f(__ldg(x + t));
}

torch::Tensor selu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");

    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int64_t n4 = n >> 2;
    // ~8 float4 per thread (4 iterations of the 2x unrolled loop) for the big case
    int64_t blocks = (n4 + threads * 8 - 1) / (threads * 8);
    if (blocks < 1) blocks = 1;
    if (blocks > 1048576) blocks = 1048576;

    selu_kernel<<<(unsigned)blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

selu_cpp_source = "torch::Tensor selu_forward(torch::Tensor x);"

selu_ext = load_inline(
    name="selu_ext_f4",
    cpp_sources=selu_cpp_source,
    cuda_sources=selu_cuda_source,
    functions=["selu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    """
    SELU activation computed by a vectorised custom CUDA kernel.
    """
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return selu_ext.selu_forward(x)
