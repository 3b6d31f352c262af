import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# ConvTranspose3d stays on cuDNN. LayerNorm(normalized over the last dim,
# which has size out_channels == W' here) + exact GELU + scaling are fused
# into a single warp-per-row kernel that operates in place on the conv output.
# ---------------------------------------------------------------------------
ln_gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define WARPS_PER_BLOCK 8

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
    return v;
}

__device__ __forceinline__ float gelu_exact(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
}

// Row length D = 32 * VPL, values kept in registers (two-pass mean / var).
template <int VPL>
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
ln_gelu_scale_reg_kernel(float* __restrict__ data,
                         const float* __restrict__ gamma,
                         const float* __restrict__ beta,
                         int64_t rows, float eps, float scale)
{
    constexpr int D = 32 * VPL;
    const int lane = threadIdx.x & 31;
    const int64_t warp_global = (int64_t)blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    const int64_t nwarps = (int64_t)gridDim.x * WARPS_PER_BLOCK;

    // per-lane affine params (element index = lane * VPL + i, contiguous per lane)
    float g[VPL], b[VPL];
#pragma unroll
    for (int i = 0; i < VPL; ++i) {
        g[i] = gamma ? __ldg(gamma + lane * VPL + i) : 1.0f;
        b[i] = beta ? __ldg(beta + lane * VPL + i) : 0.0f;
    }

    for (int64_t row = warp_global; row < rows; row += nwarps) {
        float* p = data + row * D + lane * VPL;
        float v[VPL];
        if constexpr (VPL == 2) {
            float2 t = *reinterpret_cast<const float2*>(p);
            v[0] = t.x; v[1] = t.y;
        } else if constexpr (VPL % 4 == 0) {
#pragma unroll
            for (int i = 0; i < VPL; i += 4) {
                float4 t = *reinterpret_cast<const float4*>(p + i);
                v[i] = t.x; v[i + 1] = t.y; v[i + 2] = t.z; v[i + 3] = t.w;
            }
        } else {
#pragma unroll
            for (int i = 0; i < VPL; ++i) v[i] = p[i];
        }

        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < VPL; ++i) s += v[i];
        const float mean = warp_sum(s) * (1.0f / D);

        float sq = 0.0f;
#pragma unroll
        for (int i = 0; i < VPL; ++i) { const float d = v[i] - mean; sq += d * d; }
        const float rstd = rsqrtf(warp_sum(sq) * (1.0f / D) + eps);

#pragma unroll
        for (int i = 0; i < VPL; ++i) {
            const float yn = (v[i] - mean) * rstd * g[i] + b[i];
            v[i] = gelu_exact(yn) * scale;
        }

        if constexpr (VPL == 2) {
            *reinterpret_cast<float2*>(p) = make_float2(v[0], v[1]);
        } else if constexpr (VPL % 4 == 0) {
#pragma unroll
            for (int i = 0; i < VPL; i += 4)
                *reinterpret_cast<float4*>(p + i) = make_float4(v[i], v[i + 1], v[i + 2], v[i + 3]);
        } else {
#pragma unroll
            for (int i = 0; i < VPL; ++i) p[i] = v[i];
        }
    }
}

// Generic fallback: any row length, warp per row, reads the row three times
// (the re-reads hit L1/L2).
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
ln_gelu_scale_generic_kernel(float* __restrict__ data,
                             const float* __restrict__ gamma,
                             const float* __restrict__ beta,
                             int64_t rows, int D, float eps, float scale)
{
    const int lane = threadIdx.x & 31;
    const int64_t warp_global = (int64_t)blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
    const int64_t nwarps = (int64_t)gridDim.x * WARPS_PER_BLOCK;
    for (int64_t row = warp_global; row < rows; row += nwarps) {
        float* p = data + row * D;
        float s = 0.0f;
        for (int i = lane; i < D; i += 32) s += p[i];
        const float mean = warp_sum(s) / (float)D;
        float sq = 0.0f;
        for (int i = lane; i < D; i += 32) { const float d = p[i] - mean; sq += d * d; }
        const float rstd = rsqrtf(warp_sum(sq) / (float)D + eps);
        for (int i = lane; i < D; i += 32) {
            const float g = gamma ? __ldg(gamma + i) : 1.0f;
            const float b = beta ? __ldg(beta + i) : 0.0f;
            p[i] = gelu_exact((p[i] - mean) * rstd * g + b) * scale;
        }
    }
}

torch::Tensor ln_gelu_scale_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                                 double eps, double scale) {
    TORCH_CHECK(x.is_cuda(), "input must be CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "input must be float32");
    auto y = x.is_contiguous() ? x : x.contiguous();   // operate in place on the conv output
    const int64_t D = y.size(-1);
    const int64_t rows = y.numel() / std::max<int64_t>(D, 1);
    if (rows == 0 || D == 0) return y;

    const float* gptr = nullptr;
    const float* bptr = nullptr;
    torch::Tensor gc, bc;
    if (gamma.defined() && gamma.numel() > 0) {
        TORCH_CHECK(gamma.numel() == D, "gamma size mismatch");
        gc = gamma.contiguous(); gptr = gc.data_ptr<float>();
    }
    if (beta.defined() && beta.numel() > 0) {
        TORCH_CHECK(beta.numel() == D, "beta size mismatch");
        bc = beta.contiguous(); bptr = bc.data_ptr<float>();
    }

    auto stream = at::cuda::getCurrentCUDAStream();
    const int threads = WARPS_PER_BLOCK * 32;
    int sm_count = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    const int64_t max_blocks = (int64_t)sm_count * 64;
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK, max_blocks));
    float* dptr = y.data_ptr<float>();
    const float feps = (float)eps, fscale = (float)scale;

    switch (D) {
        case 32:
            ln_gelu_scale_reg_kernel<1><<<(unsigned)blocks, threads, 0, stream>>>(dptr, gptr, bptr, rows, feps, fscale);
            break;
        case 64:
            ln_gelu_scale_reg_kernel<2><<<(unsigned)blocks, threads, 0, stream>>>(dptr, gptr, bptr, rows, feps, fscale);
            break;
        case 128:
            ln_gelu_scale_reg_kernel<4><<<(unsigned)blocks, threads, 0, stream>>>(dptr, gptr, bptr, rows, feps, fscale);
            break;
        case 256:
            ln_gelu_scale_reg_kernel<8><<<(unsigned)blocks, threads, 0, stream>>>(dptr, gptr, bptr, rows, feps, fscale);
            break;
        default:
            ln_gelu_scale_generic_kernel<<<(unsigned)blocks, threads, 0, stream>>>(dptr, gptr, bptr, rows, (int)D, feps, fscale);
            break;
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ln_gelu_cpp_source = (
    "torch::Tensor ln_gelu_scale_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, "
    "double eps, double scale);"
)

ln_gelu_ext = load_inline(
    name="ln_gelu_scale_ext",
    cpp_sources=ln_gelu_cpp_source,
    cuda_sources=ln_gelu_source,
    functions=["ln_gelu_scale_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3", "-std=c++17"],
)


class ModelNew(nn.Module):
    """
    ConvTranspose3d (cuDNN) followed by a fused LayerNorm + GELU + scaling kernel.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True, eps=1e-5,
                 scaling_factor=1.0):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, bias=bias)
        self.layer_norm = nn.LayerNorm(out_channels, eps=eps)
        self.scaling_factor = scaling_factor
        self.ext = ln_gelu_ext

    def forward(self, x):
        x = self.conv_transpose(x)
        w = self.layer_norm.weight
        b = self.layer_norm.bias
        if w is None:
            w = torch.empty(0, device=x.device, dtype=x.dtype)
        if b is None:
            b = torch.empty(0, device=x.device, dtype=x.dtype)
        return self.ext.ln_gelu_scale_cuda(x, w, b, float(self.layer_norm.eps), float(self.scaling_factor))
