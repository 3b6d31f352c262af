import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# AvgPool1d(k) over the Linear outputs is linear, so it commutes with the GEMM:
#   avg_{r<k}(x . W[j*k+r] + b[j*k+r]) = x . mean_r(W[j*k+r]) + mean_r(b[j*k+r])
# We pool the weight matrix first (out_features/k rows), run a k-times smaller GEMM,
# and finish with a fused GELU * scale + row-max kernel.
source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cmath>

// Wp[j, :] = mean_{r<ks} W[j*ks + r, :],  bp[j] = mean_{r<ks} b[j*ks + r]
// grid: (ceil(IN4 / threads), P)
template <bool VEC>
__global__ void pool_weight_kernel(const float* __restrict__ W, const float* __restrict__ b,
                                   float* __restrict__ Wp, float* __restrict__ bp,
                                   int IN, int ks, float inv_ks)
{
    const int j = blockIdx.y;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t row0 = (size_t)j * ks;
    if (VEC) {
        const int IN4 = IN >> 2;
        if (i < IN4) {
            float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
            for (int r = 0; r < ks; ++r) {
                const float4 v = __ldg(reinterpret_cast<const float4*>(W + (row0 + r) * IN) + i);
                acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
            }
            acc.x *= inv_ks; acc.y *= inv_ks; acc.z *= inv_ks; acc.w *= inv_ks;
            reinterpret_cast<float4*>(Wp + (size_t)j * IN)[i] = acc;
        }
    } else {
        if (i < IN) {
            float acc = 0.f;
            for (int r = 0; r < ks; ++r) acc += __ldg(W + (row0 + r) * IN + i);
            Wp[(size_t)j * IN + i] = acc * inv_ks;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float acc = 0.f;
        for (int r = 0; r < ks; ++r) acc += b[row0 + r];
        bp[j] = acc * inv_ks;
    }
}

__device__ __forceinline__ float gelu_erf(float v) {
    return 0.5f * v * (1.f + erff(v * 0.70710678118654752440f));
}

// One warp per row: out[row] = max_j scale * gelu(y[row, j])
template <bool VEC>
__global__ void gelu_scale_rowmax_kernel(const float* __restrict__ y, float* __restrict__ out,
                                         int rows, int P, float scale)
{
    const int warps_per_block = blockDim.x >> 5;
    const int row = blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const float* yr = y + (size_t)row * P;
    float m = -INFINITY;
    if (VEC) {
        const float4* y4 = reinterpret_cast<const float4*>(yr);
        for (int i = lane; i < (P >> 2); i += 32) {
            const float4 v = __ldg(&y4[i]);
            m = fmaxf(m, scale * gelu_erf(v.x));
            m = fmaxf(m, scale * gelu_erf(v.y));
            m = fmaxf(m, scale * gelu_erf(v.z));
            m = fmaxf(m, scale * gelu_erf(v.w));
        }
    } else {
        for (int i = lane; i < P; i += 32) m = fmaxf(m, scale * gelu_erf(__ldg(&yr[i])));
    }
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));
    if (lane == 0) out[row] = m;
}

std::vector<torch::Tensor> pool_weights_cuda(torch::Tensor W, torch::Tensor b, int64_t ks) {
    TORCH_CHECK(W.is_cuda() && b.is_cuda(), "CUDA tensors required");
    TORCH_CHECK(W.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 required");
    auto Wc = W.contiguous();
    auto bc = b.contiguous();
    const int OUT = (int)Wc.size(0), IN = (int)Wc.size(1);
    const int P = OUT / (int)ks;                    // AvgPool1d drops the remainder
    TORCH_CHECK(P > 0, "pool kernel larger than out_features");
    auto Wp = torch::empty({P, IN}, Wc.options());
    auto bp = torch::empty({P}, Wc.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const bool vec = (IN % 4 == 0);
    const int work = vec ? IN / 4 : IN;
    dim3 grid((work + threads - 1) / threads, P);
    if (vec)
        pool_weight_kernel<true><<<grid, threads, 0, stream>>>(
            Wc.data_ptr<float>(), bc.data_ptr<float>(), Wp.data_ptr<float>(), bp.data_ptr<float>(),
            IN, (int)ks, 1.f / (float)ks);
    else
        pool_weight_kernel<false><<<grid, threads, 0, stream>>>(
            Wc.data_ptr<float>(), bc.data_ptr<float>(), Wp.data_ptr<float>(), bp.data_ptr<float>(),
            IN, (int)ks, 1.f / (float)ks);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {Wp, bp};
}

torch::Tensor gelu_scale_rowmax_cuda(torch::Tensor y, double scale) {
    TORCH_CHECK(y.is_cuda() && y.dim() == 2 && y.scalar_type() == torch::kFloat32, "bad input");
    auto yc = y.contiguous();
    const int rows = (int)yc.size(0), P = (int)yc.size(1);
    auto out = torch::empty({rows}, yc.options());
    if (rows == 0) return out;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;                 // 8 rows per block
    const int rpb = threads / 32;
    const int blocks = (rows + rpb - 1) / rpb;
    if (P % 4 == 0)
        gelu_scale_rowmax_kernel<true><<<blocks, threads, 0, stream>>>(
            yc.data_ptr<float>(), out.data_ptr<float>(), rows, P, (float)scale);
    else
        gelu_scale_rowmax_kernel<false><<<blocks, threads, 0, stream>>>(
            yc.data_ptr<float>(), out.data_ptr<float>(), rows, P, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = r"""
#include <vector>
std::vector<torch::Tensor> pool_weights_cuda(torch::Tensor W, torch::Tensor b, int64_t ks);
torch::Tensor gelu_scale_rowmax_cuda(torch::Tensor y, double scale);
"""

ext = load_inline(
    name="matmul_avgpool_gelu_scale_max_ext",
    cpp_sources=cpp_source,
    cuda_sources=source,
    functions=["pool_weights_cuda", "gelu_scale_rowmax_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Matmul -> AvgPool -> GELU -> Scale -> Max, with the average pool folded into the
    weights (custom pooling kernel), a pool_kernel_size-times smaller GEMM (cuBLAS),
    and a fused warp-per-row GELU * scale + max reduction kernel.
    """
    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.pool_kernel_size = int(pool_kernel_size)
        self.scale_factor = float(scale_factor)
        self.ext = ext

    def forward(self, x):
        Wp, bp = self.ext.pool_weights_cuda(self.matmul.weight, self.matmul.bias, self.pool_kernel_size)
        y = torch.addmm(bp, x, Wp.t())
        return self.ext.gelu_scale_rowmax_cuda(y, self.scale_factor)
