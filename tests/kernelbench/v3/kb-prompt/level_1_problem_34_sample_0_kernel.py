import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

instance_norm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// One thread block per (n, c) plane.
//  pass 1: shifted sum / sum of squares (float4 loads) -> mean, rstd
//  pass 2: normalise, walking the plane backwards so that the most recently
//          read part of the plane is still L2 resident; streaming stores.
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
instance_norm_fwd_kernel(const float* __restrict__ x, float* __restrict__ y,
                         long long HW, float eps) {
    const long long plane = blockIdx.x;
    const float* __restrict__ xp = x + plane * HW;
    float* __restrict__ yp = y + plane * HW;

    // shift by the first element for better numerical behaviour of E[x^2]-E[x]^2
    const float shift = __ldg(xp);
    const bool vec = ((HW & 3LL) == 0);

    float s = 0.0f, ss = 0.0f;
    if (vec) {
        const float4* __restrict__ x4 = reinterpret_cast<const float4*>(xp);
        const long long n4 = HW >> 2;
#pragma unroll 4
        for (long long i = threadIdx.x; i < n4; i += THREADS) {
            const float4 v = __ldg(x4 + i);
            const float a = v.x - shift, b = v.y - shift, c = v.z - shift, d = v.w - shift;
            s += (a + b) + (c + d);
            ss = fmaf(a, a, ss); ss = fmaf(b, b, ss); ss = fmaf(c, c, ss); ss = fmaf(d, d, ss);
        }
    } else {
        for (long long i = threadIdx.x; i < HW; i += THREADS) {
            const float a = __ldg(xp + i) - shift;
            s += a;
            ss = fmaf(a, a, ss);
        }
    }

    __shared__ float red_s[THREADS / 32];
    __shared__ float red_ss[THREADS / 32];
    __shared__ float sh_mean, sh_rstd;

    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    s = warp_reduce_sum(s);
    ss = warp_reduce_sum(ss);
    if (lane == 0) { red_s[wid] = s; red_ss[wid] = ss; }
    __syncthreads();
    if (wid == 0) {
        s = (lane < THREADS / 32) ? red_s[lane] : 0.0f;
        ss = (lane < THREADS / 32) ? red_ss[lane] : 0.0f;
        s = warp_reduce_sum(s);
        ss = warp_reduce_sum(ss);
        if (lane == 0) {
            const float inv_n = 1.0f / (float)HW;
            const float m_sh = s * inv_n;
            float var = ss * inv_n - m_sh * m_sh;
            var = fmaxf(var, 0.0f);
            sh_mean = shift + m_sh;
            sh_rstd = rsqrtf(var + eps);
        }
    }
    __syncthreads();
    const float mean = sh_mean;
    const float rstd = sh_rstd;
    const float nb = -mean * rstd;   // y = x * rstd + nb

    if (vec) {
        const float4* __restrict__ x4 = reinterpret_cast<const float4*>(xp);
        float4* __restrict__ y4 = reinterpret_cast<float4*>(yp);
        const long long n4 = HW >> 2;
#pragma unroll 4
        for (long long i = n4 - 1 - threadIdx.x; i >= 0; i -= THREADS) {
            const float4 v = __ldcs(x4 + i);
            float4 o;
            o.x = fmaf(v.x, rstd, nb);
            o.y = fmaf(v.y, rstd, nb);
            o.z = fmaf(v.z, rstd, nb);
            o.w = fmaf(v.w, rstd, nb);
            __stcs(y4 + i, o);
        }
    } else {
        for (long long i = HW - 1 - threadIdx.x; i >= 0; i -= THREADS) {
            yp[i] = fmaf(xp[i], rstd, nb);
        }
    }
}

torch::Tensor instance_norm_cuda(torch::Tensor x, double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 3, "expected input of shape (N, C, *spatial)");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const long long planes = x.size(0) * x.size(1);
    const long long HW = x.numel() / planes;
    if (planes == 0 || HW == 0) return y;

    constexpr int THREADS = 512;
    auto stream = at::cuda::getCurrentCUDAStream();
    instance_norm_fwd_kernel<THREADS><<<(unsigned int)planes, THREADS, 0, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), HW, (float)eps);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "instance_norm kernel launch failed");
    return y;
}
"""

instance_norm_cpp_source = "torch::Tensor instance_norm_cuda(torch::Tensor x, double eps);"

instance_norm_ext = load_inline(
    name="instance_norm_ext",
    cpp_sources=instance_norm_cpp_source,
    cuda_sources=instance_norm_source,
    functions=["instance_norm_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    """
    InstanceNorm2d (affine=False, no running stats, eps=1e-5) implemented as a
    single fused CUDA kernel: one block per (n, c) plane computes the statistics
    with a warp-shuffle reduction and then normalises the plane.
    """
    def __init__(self, num_features: int):
        super(ModelNew, self).__init__()
        self.num_features = num_features
        self.eps = 1e-5
        self.ext = instance_norm_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.instance_norm_cuda(x, self.eps)
