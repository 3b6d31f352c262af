import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# GEMM stays on cuBLAS (F.linear). GroupNorm + row-wise min are fused into a
# single kernel (one block per batch row, one thread per group, group values
# kept in registers), producing a (B,) vector of row minima. A second kernel
# materialises the broadcast  out[0, c, n, 0] = rowmin[n] + bias[c].
# ---------------------------------------------------------------------------
gn_min_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float nan_min(float a, float b) {
    return (a < b || isnan(a)) ? a : b;
}

template <int BLOCK>
__device__ __forceinline__ float block_min(float v, float* sh) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = nan_min(v, __shfl_xor_sync(0xffffffff, v, off));
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = (lane < BLOCK / 32) ? sh[lane] : INFINITY;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v = nan_min(v, __shfl_xor_sync(0xffffffff, v, off));
    }
    return v;
}

// CPG = channels per group known at compile time (multiple of 4)
template <int BLOCK, int CPG>
__global__ void __launch_bounds__(BLOCK)
groupnorm_rowmin_kernel(const float* __restrict__ x,      // (B, C)
                        const float* __restrict__ gamma,  // (C)
                        const float* __restrict__ beta,   // (C)
                        float* __restrict__ rowmin,       // (B)
                        int C, int G, float eps)
{
    __shared__ float sh[32];
    const int row = blockIdx.x;
    const float* xr = x + (size_t)row * C;
    float m = INFINITY;

    for (int g = threadIdx.x; g < G; g += BLOCK) {
        const int c0 = g * CPG;
        float v[CPG];
#pragma unroll
        for (int i = 0; i < CPG; i += 4) {
            float4 t = __ldg(reinterpret_cast<const float4*>(xr + c0 + i));
            v[i] = t.x; v[i + 1] = t.y; v[i + 2] = t.z; v[i + 3] = t.w;
        }
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < CPG; ++i) s += v[i];
        const float mean = s * (1.0f / CPG);
        float sq = 0.0f;
#pragma unroll
        for (int i = 0; i < CPG; ++i) { const float d = v[i] - mean; sq += d * d; }
        const float rstd = rsqrtf(sq * (1.0f / CPG) + eps);
#pragma unroll
        for (int i = 0; i < CPG; i += 4) {
            float4 gm = __ldg(reinterpret_cast<const float4*>(gamma + c0 + i));
            float4 bt = __ldg(reinterpret_cast<const float4*>(beta + c0 + i));
            m = nan_min(m, (v[i]     - mean) * rstd * gm.x + bt.x);
            m = nan_min(m, (v[i + 1] - mean) * rstd * gm.y + bt.y);
            m = nan_min(m, (v[i + 2] - mean) * rstd * gm.z + bt.z);
            m = nan_min(m, (v[i + 3] - mean) * rstd * gm.w + bt.w);
        }
    }
    m = block_min<BLOCK>(m, sh);
    if (threadIdx.x == 0) rowmin[row] = m;
}

// Generic version: runtime channels-per-group, scalar loads, two passes.
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
groupnorm_rowmin_generic_kernel(const float* __restrict__ x,
                                const float* __restrict__ gamma,
                                const float* __restrict__ beta,
                                float* __restrict__ rowmin,
                                int C, int G, int cpg, float eps)
{
    __shared__ float sh[32];
    const int row = blockIdx.x;
    const float* xr = x + (size_t)row * C;
    float m = INFINITY;
    for (int g = threadIdx.x; g < G; g += BLOCK) {
        const float* p = xr + (size_t)g * cpg;
        float s = 0.0f;
        for (int i = 0; i < cpg; ++i) s += __ldg(p + i);
        const float mean = s / (float)cpg;
        float sq = 0.0f;
        for (int i = 0; i < cpg; ++i) { const float d = __ldg(p + i) - mean; sq += d * d; }
        const float rstd = rsqrtf(sq / (float)cpg + eps);
        for (int i = 0; i < cpg; ++i) {
            const int c = g * cpg + i;
            m = nan_min(m, (__ldg(p + i) - mean) * rstd * __ldg(gamma + c) + __ldg(beta + c));
        }
    }
    m = block_min<BLOCK>(m, sh);
    if (threadIdx.x == 0) rowmin[row] = m;
}

// out[c * B + n] = rowmin[n] + bias[c]   (layout of shape (1, C, B, 1))
__global__ void broadcast_bias_kernel(const float* __restrict__ rowmin,
                                      const float* __restrict__ bias,
                                      float* __restrict__ out, int B, int C)
{
    const int64_t total = (int64_t)B * C;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int c = (int)(i / B);
        const int n = (int)(i - (int64_t)c * B);
        out[i] = __ldg(rowmin + n) + __ldg(bias + c);
    }
}

torch::Tensor groupnorm_rowmin_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                                    int64_t num_groups, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be CUDA float32");
    TORCH_CHECK(x.dim() == 2, "x must be 2D (B, C)");
    auto xc = x.contiguous();
    auto gc = gamma.contiguous();
    auto bc = beta.contiguous();
    const int B = (int)xc.size(0);
    const int C = (int)xc.size(1);
    const int G = (int)num_groups;
    TORCH_CHECK(G > 0 && C % G == 0, "C must be divisible by num_groups");
    TORCH_CHECK(gc.numel() == C && bc.numel() == C, "affine parameter size mismatch");
    const int cpg = C / G;

    auto rowmin = torch::empty({B}, xc.options());
    if (B == 0) return rowmin;
    auto stream = at::cuda::getCurrentCUDAStream();
    const float feps = (float)eps;

    const bool aligned = (reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16 == 0) &&
                         (reinterpret_cast<uintptr_t>(gc.data_ptr<float>()) % 16 == 0) &&
                         (reinterpret_cast<uintptr_t>(bc.data_ptr<float>()) % 16 == 0);
    constexpr int BLOCK = 256;
    if (aligned && cpg == 16) {
        groupnorm_rowmin_kernel<BLOCK, 16><<<B, BLOCK, 0, stream>>>(
            xc.data_ptr<float>(), gc.data_ptr<float>(), bc.data_ptr<float>(),
            rowmin.data_ptr<float>(), C, G, feps);
    } else if (aligned && cpg == 8) {
        groupnorm_rowmin_kernel<BLOCK, 8><<<B, BLOCK, 0, stream>>>(
            xc.data_ptr<float>(), gc.data_ptr<float>(), bc.data_ptr<float>(),
            rowmin.data_ptr<float>(), C, G, feps);
    } else if (aligned && cpg == 32) {
        groupnorm_rowmin_kernel<BLOCK, 32><<<B, BLOCK, 0, stream>>>(
            xc.data_ptr<float>(), gc.data_ptr<float>(), bc.data_ptr<float>(),
            rowmin.data_ptr<float>(), C, G, feps);
    } else if (aligned && cpg == 4) {
        groupnorm_rowmin_kernel<BLOCK, 4><<<B, BLOCK, 0, stream>>>(
            xc.data_ptr<float>(), gc.data_ptr<float>(), bc.data_ptr<float>(),
            rowmin.data_ptr<float>(), C, G, feps);
    } else {
        groupnorm_rowmin_generic_kernel<BLOCK><<<B, BLOCK, 0, stream>>>(
            xc.data_ptr<float>(), gc.data_ptr<float>(), bc.data_ptr<float>(),
            rowmin.data_ptr<float>(), C, G, cpg, feps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return rowmin;
}

torch::Tensor broadcast_bias_cuda(torch::Tensor rowmin, torch::Tensor bias) {
    TORCH_CHECK(rowmin.is_cuda() && bias.is_cuda(), "tensors must be CUDA");
    auto rc = rowmin.contiguous();
    auto bc = bias.contiguous();
    const int B = (int)rc.numel();
    const int C = (int)bc.numel();
    auto out = torch::empty({1, C, B, 1}, rc.options());
    const int64_t total = (int64_t)B * C;
    if (total == 0) return out;
    int sm_count = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t blocks = std::min<int64_t>((total + 255) / 256, (int64_t)sm_count * 16);
    broadcast_bias_kernel<<<(unsigned)blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        rc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), B, C);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

gn_min_cpp_source = """
torch::Tensor groupnorm_rowmin_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                                    int64_t num_groups, double eps);
torch::Tensor broadcast_bias_cuda(torch::Tensor rowmin, torch::Tensor bias);
"""

gn_min_ext = load_inline(
    name="groupnorm_rowmin_bias_ext",
    cpp_sources=gn_min_cpp_source,
    cuda_sources=gn_min_source,
    functions=["groupnorm_rowmin_cuda", "broadcast_bias_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    GEMM (cuBLAS) -> fused GroupNorm + min(dim=1) kernel -> broadcast bias-add kernel.
    """
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.ext = gn_min_ext

    def forward(self, x):
        x = F.linear(x, self.gemm.weight, self.gemm.bias)
        gn = self.group_norm
        if gn.affine:
            gamma, beta = gn.weight, gn.bias
        else:
            gamma = torch.ones(gn.num_channels, device=x.device, dtype=x.dtype)
            beta = torch.zeros(gn.num_channels, device=x.device, dtype=x.dtype)
        rowmin = self.ext.groupnorm_rowmin_cuda(x, gamma, beta, gn.num_groups, float(gn.eps))  # (B,)
        bias = self.bias
        if bias.dim() == 4 and bias.size(0) == 1 and bias.size(2) == 1 and bias.size(3) == 1:
            return self.ext.broadcast_bias_cuda(rowmin, bias)
        return rowmin.view(-1, 1) + bias
