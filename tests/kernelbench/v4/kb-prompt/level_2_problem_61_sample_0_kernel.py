import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# ConvTranspose3d stays on cuDNN.  ReLU + GroupNorm are fused into two
# bandwidth-oriented kernels:
#   1) relu_gn_stats : each (n, group) is split over many blocks; every block
#      reduces sum / sum-of-squares of relu(x) (float4 loads, warp-shuffle
#      reduction) and atomically accumulates into a per-group double buffer.
#   2) relu_gn_apply : each block works inside one group, derives mean/rstd
#      once, folds gamma/beta into a per-channel (scale, shift) table in shared
#      memory, and writes relu(x) * scale + shift in place (float4).
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

template <bool VEC>
__global__ void relu_gn_stats_kernel(const float* __restrict__ x,
                                     double* __restrict__ stats,   // [NG, 2]
                                     long long group_size,
                                     long long chunk)              // elements per block (multiple of 4 when VEC)
{
    const int grp = blockIdx.y;
    const long long start = (long long)blockIdx.x * chunk;
    long long end = start + chunk;
    if (end > group_size) end = group_size;
    const float* gx = x + (long long)grp * group_size;

    float s = 0.f, ss = 0.f;
    if (VEC) {
        const float4* p = reinterpret_cast<const float4*>(gx + start);
        const long long nvec = (end - start) >> 2;
        for (long long i = threadIdx.x; i < nvec; i += blockDim.x) {
            float4 v = __ldg(p + i);
            float a = fmaxf(v.x, 0.f), b = fmaxf(v.y, 0.f), c = fmaxf(v.z, 0.f), d = fmaxf(v.w, 0.f);
            s += (a + b) + (c + d);
            ss += (a * a + b * b) + (c * c + d * d);
        }
    } else {
        for (long long i = start + threadIdx.x; i < end; i += blockDim.x) {
            float a = fmaxf(__ldg(gx + i), 0.f);
            s += a;
            ss += a * a;
        }
    }

    __shared__ float sh_s[32], sh_ss[32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    s = warp_sum(s);
    ss = warp_sum(ss);
    if (lane == 0) { sh_s[wid] = s; sh_ss[wid] = ss; }
    __syncthreads();
    if (wid == 0) {
        const int nw = blockDim.x >> 5;
        s = lane < nw ? sh_s[lane] : 0.f;
        ss = lane < nw ? sh_ss[lane] : 0.f;
        s = warp_sum(s);
        ss = warp_sum(ss);
        if (lane == 0) {
            atomicAdd(stats + 2 * grp, (double)s);
            atomicAdd(stats + 2 * grp + 1, (double)ss);
        }
    }
}

template <bool VEC>
__global__ void relu_gn_apply_kernel(float* __restrict__ x,
                                     const double* __restrict__ stats,
                                     const float* __restrict__ gamma,
                                     const float* __restrict__ beta,
                                     int G, int Cg, long long spatial,
                                     long long group_size, long long chunk, float eps)
{
    extern __shared__ float sm[];   // [2 * Cg]
    float* sc = sm;
    float* sh = sm + Cg;

    const int grp = blockIdx.y;
    const int g = grp % G;
    const double mean_d = stats[2 * grp] / (double)group_size;
    double var_d = stats[2 * grp + 1] / (double)group_size - mean_d * mean_d;
    if (var_d < 0.0) var_d = 0.0;
    const float mean = (float)mean_d;
    const float rstd = rsqrtf((float)var_d + eps);

    for (int i = threadIdx.x; i < Cg; i += blockDim.x) {
        const int c = g * Cg + i;
        const float a = gamma[c] * rstd;
        sc[i] = a;
        sh[i] = beta[c] - mean * a;
    }
    __syncthreads();

    const long long start = (long long)blockIdx.x * chunk;
    long long end = start + chunk;
    if (end > group_size) end = group_size;
    float* gx = x + (long long)grp * group_size;

    if (VEC) {
        // spatial % 4 == 0 -> a float4 never straddles two channels
        float4* p = reinterpret_cast<float4*>(gx);
        for (long long i = (start >> 2) + threadIdx.x; i < (end >> 2); i += blockDim.x) {
            const int cl = (int)((i << 2) / spatial);
            const float a = sc[cl], b = sh[cl];
            float4 v = p[i];
            v.x = fmaf(fmaxf(v.x, 0.f), a, b);
            v.y = fmaf(fmaxf(v.y, 0.f), a, b);
            v.z = fmaf(fmaxf(v.z, 0.f), a, b);
            v.w = fmaf(fmaxf(v.w, 0.f), a, b);
            p[i] = v;
        }
    } else {
        for (long long i = start + threadIdx.x; i < end; i += blockDim.x) {
            const int cl = (int)(i / spatial);
            gx[i] = fmaf(fmaxf(gx[i], 0.f), sc[cl], sh[cl]);
        }
    }
}

torch::Tensor relu_group_norm_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                                   int64_t groups, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a float32 CUDA tensor");
    x = x.contiguous();
    gamma = gamma.contiguous();
    beta = beta.contiguous();

    const int N = x.size(0), C = x.size(1);
    const int G = (int)groups;
    TORCH_CHECK(C % G == 0, "channels must be divisible by groups");
    const int Cg = C / G;
    const long long spatial = x.numel() / ((long long)N * C);
    const long long group_size = (long long)Cg * spatial;
    const int NG = N * G;
    if (x.numel() == 0) return x;

    auto stats = torch::zeros({NG, 2}, x.options().dtype(torch::kFloat64));
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();

    const int threads = 256;
    const bool vec = (spatial % 4 == 0);
    // ~8 elements per thread per block-chunk keeps plenty of blocks in flight
    long long chunk = (long long)threads * 4 * 8;
    long long nchunks = (group_size + chunk - 1) / chunk;
    if (nchunks > 65535) {
        nchunks = 65535;
        chunk = (group_size + nchunks - 1) / nchunks;
        chunk = (chunk + 3) & ~3LL;
        nchunks = (group_size + chunk - 1) / chunk;
    }
    dim3 grid((unsigned)nchunks, (unsigned)NG);

    if (vec) {
        relu_gn_stats_kernel<true><<<grid, threads, 0, stream>>>(x.data_ptr<float>(), stats.data_ptr<double>(), group_size, chunk);
    } else {
        relu_gn_stats_kernel<false><<<grid, threads, 0, stream>>>(x.data_ptr<float>(), stats.data_ptr<double>(), group_size, chunk);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    const size_t smem = 2 * Cg * sizeof(float);
    if (vec) {
        relu_gn_apply_kernel<true><<<grid, threads, smem, stream>>>(
            x.data_ptr<float>(), stats.data_ptr<double>(), gamma.data_ptr<float>(), beta.data_ptr<float>(),
            G, Cg, spatial, group_size, chunk, (float)eps);
    } else {
        relu_gn_apply_kernel<false><<<grid, threads, smem, stream>>>(
            x.data_ptr<float>(), stats.data_ptr<double>(), gamma.data_ptr<float>(), beta.data_ptr<float>(),
            G, Cg, spatial, group_size, chunk, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return x;
}
"""

cpp_source = "torch::Tensor relu_group_norm_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, int64_t groups, double eps);"

relu_gn = load_inline(
    name="relu_group_norm_fused",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_group_norm_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    ConvTranspose3d (cuDNN) followed by a fused ReLU + GroupNorm CUDA implementation.
    """
    def __init__(self, in_channels, out_channels, kernel_size, groups, bias=False):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, bias=bias)
        self.relu = nn.ReLU()
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels)
        self.relu_gn = relu_gn

    def forward(self, x):
        x = self.conv_transpose(x)
        return self.relu_gn.relu_group_norm_cuda(
            x, self.group_norm.weight, self.group_norm.bias,
            self.group_norm.num_groups, self.group_norm.eps)
