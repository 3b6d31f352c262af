import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# Conv3d stays on cuDNN. Everything after it is done in two custom kernels:
#
#  1) instnorm_stats: one block per (n, c); two-pass (mean, then centred sum of
#     squares) block reduction over the spatial volume (float4 loads).  Because
#     the InstanceNorm input is x * m_c, its statistics are m_c*mean and
#     m_c^2*var, folded into a per-(n,c) affine:  z = x * a + b.
#  2) norm_clamp_mul_max: one thread per (n, spatial) position loops over the
#     channels computing clamp(x*a+b) * m_c and keeps the running max, writing
#     the (N, D, H, W) result directly.  Reads stay coalesced along the spatial
#     index.
# ---------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__device__ __forceinline__ float block_sum(float v, float* sh) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();                 // protect sh from a previous use
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    const int nw = (blockDim.x + 31) >> 5;
    v = (threadIdx.x < nw) ? sh[threadIdx.x] : 0.f;
    if (wid == 0) v = warp_sum(v);
    if (threadIdx.x == 0) sh[0] = v;
    __syncthreads();
    return sh[0];
}

__global__ void instnorm_stats_kernel(const float* __restrict__ x,
                                      const float* __restrict__ mult,
                                      float2* __restrict__ ab,     // [N*C] (a, b)
                                      int C, int S, float eps)
{
    __shared__ float sh[32];
    const int nc = blockIdx.x;
    const int c = nc % C;
    const float* p = x + (long long)nc * S;
    const bool vec = (S % 4 == 0);

    // pass 1: mean
    float s = 0.f;
    if (vec) {
        const float4* p4 = reinterpret_cast<const float4*>(p);
        for (int i = threadIdx.x; i < S / 4; i += blockDim.x) {
            float4 v = __ldg(p4 + i);
            s += (v.x + v.y) + (v.z + v.w);
        }
    } else {
        for (int i = threadIdx.x; i < S; i += blockDim.x) s += __ldg(p + i);
    }
    const float mean = block_sum(s, sh) / (float)S;

    // pass 2: centred variance (data is L1/L2 resident)
    float ss = 0.f;
    if (vec) {
        const float4* p4 = reinterpret_cast<const float4*>(p);
        for (int i = threadIdx.x; i < S / 4; i += blockDim.x) {
            float4 v = __ldg(p4 + i);
            float d0 = v.x - mean, d1 = v.y - mean, d2 = v.z - mean, d3 = v.w - mean;
            ss += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
        }
    } else {
        for (int i = threadIdx.x; i < S; i += blockDim.x) {
            float d = __ldg(p + i) - mean;
            ss += d * d;
        }
    }
    const float var = block_sum(ss, sh) / (float)S;

    if (threadIdx.x == 0) {
        const float m = mult[c];
        // y = m*x ; mean_y = m*mean ; var_y = m^2*var
        const float rstd = rsqrtf(m * m * var + eps);
        const float a = m * rstd;
        const float b = -m * mean * rstd;
        ab[nc] = make_float2(a, b);
    }
}

__global__ void norm_clamp_mul_max_kernel(const float* __restrict__ x,
                                          const float2* __restrict__ ab,
                                          const float* __restrict__ mult,
                                          float* __restrict__ out,
                                          int N, int C, int S, float cmin, float cmax)
{
    extern __shared__ float smem[];    // [C] a, [C] b, [C] m for this block's batch index
    const int n = blockIdx.y;
    float* sa = smem;
    float* sb = smem + C;
    float* sm = smem + 2 * C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float2 v = ab[n * C + c];
        sa[c] = v.x;
        sb[c] = v.y;
        sm[c] = mult[c];
    }
    __syncthreads();

    const float* xn = x + (long long)n * C * S;
    float* on = out + (long long)n * S;
    for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < S; s += gridDim.x * blockDim.x) {
        float best = -INFINITY;
        for (int c = 0; c < C; ++c) {
            float z = fmaf(__ldg(xn + (long long)c * S + s), sa[c], sb[c]);
            z = fminf(fmaxf(z, cmin), cmax);
            best = fmaxf(best, z * sm[c]);
        }
        on[s] = best;
    }
}

torch::Tensor instnorm_clamp_mul_max_cuda(torch::Tensor x, torch::Tensor multiplier,
                                          double eps, double cmin, double cmax) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() == 5, "x must be 5D");
    x = x.contiguous();
    auto m = multiplier.contiguous().view({-1});
    const int N = x.size(0), C = x.size(1);
    const int D = x.size(2), H = x.size(3), W = x.size(4);
    const int S = D * H * W;
    TORCH_CHECK(m.numel() == C, "multiplier must have one value per channel");

    auto out = torch::empty({N, D, H, W}, x.options());
    if (x.numel() == 0) return out;
    auto ab = torch::empty({(long long)N * C * 2}, x.options());

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    instnorm_stats_kernel<<<N * C, 256, 0, stream>>>(
        x.data_ptr<float>(), m.data_ptr<float>(), reinterpret_cast<float2*>(ab.data_ptr<float>()),
        C, S, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    const int threads = 256;
    dim3 grid((S + threads - 1) / threads, N);
    norm_clamp_mul_max_kernel<<<grid, threads, 3 * C * sizeof(float), stream>>>(
        x.data_ptr<float>(), reinterpret_cast<const float2*>(ab.data_ptr<float>()), m.data_ptr<float>(),
        out.data_ptr<float>(), N, C, S, (float)cmin, (float)cmax);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor instnorm_clamp_mul_max_cuda(torch::Tensor x, torch::Tensor multiplier, double eps, double cmin, double cmax);"

fused = load_inline(
    name="instnorm_clamp_mul_max",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["instnorm_clamp_mul_max_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Conv3d (cuDNN) followed by fused multiply -> InstanceNorm3d -> clamp -> multiply -> max(dim=1).
    """
    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape, clamp_min, clamp_max):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.instance_norm = nn.InstanceNorm3d(out_channels)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.fused = fused

    def forward(self, x):
        x = self.conv(x)
        return self.fused.instnorm_clamp_mul_max_cuda(
            x, self.multiplier, self.instance_norm.eps, float(self.clamp_min), float(self.clamp_max))
