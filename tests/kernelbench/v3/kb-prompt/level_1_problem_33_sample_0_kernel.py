import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

batchnorm_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define BN_THREADS 256

__device__ __forceinline__ float warp_reduce_sum(float v) {
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// ---------------------------------------------------------------------------
// Pass 1: per-channel partial sums.  grid = (P, C).  Block p of channel c
// covers a strided slice of every (n, c) plane.  Partials are written to a
// scratch buffer (deterministic, no atomics).
// ---------------------------------------------------------------------------
__global__ void bn_partial_stats_kernel(const float* __restrict__ x,
                                        float* __restrict__ psum,
                                        float* __restrict__ psq,
                                        int N, int C, int64_t HW, int P, int vec) {
    const int c = blockIdx.y;
    const int p = blockIdx.x;
    const int64_t start = (int64_t)p * BN_THREADS + threadIdx.x;
    const int64_t step = (int64_t)P * BN_THREADS;

    float s = 0.f, q = 0.f;
    for (int n = 0; n < N; ++n) {
        const float* plane = x + ((int64_t)n * C + c) * HW;
        if (vec) {
            const float4* p4 = reinterpret_cast<const float4*>(plane);
            const int64_t HW4 = HW >> 2;
            for (int64_t i = start; i < HW4; i += step) {
                const float4 v = __ldg(p4 + i);
                s += (v.x + v.y) + (v.z + v.w);
                q += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
            }
        } else {
            for (int64_t i = start; i < HW; i += step) {
                const float v = __ldg(plane + i);
                s += v;
                q += v * v;
            }
        }
    }

    __shared__ float sh_s[BN_THREADS / 32];
    __shared__ float sh_q[BN_THREADS / 32];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    s = warp_reduce_sum(s);
    q = warp_reduce_sum(q);
    if (lane == 0) { sh_s[wid] = s; sh_q[wid] = q; }
    __syncthreads();
    if (wid == 0) {
        s = (lane < BN_THREADS / 32) ? sh_s[lane] : 0.f;
        q = (lane < BN_THREADS / 32) ? sh_q[lane] : 0.f;
        s = warp_reduce_sum(s);
        q = warp_reduce_sum(q);
        if (lane == 0) {
            psum[(int64_t)c * P + p] = s;
            psq[(int64_t)c * P + p] = q;
        }
    }
}

// ---------------------------------------------------------------------------
// Pass 2: finalize.  One thread per channel; reduces the partials in double,
// produces y = x * scale + shift coefficients and updates running stats.
// ---------------------------------------------------------------------------
__global__ void bn_finalize_kernel(const float* __restrict__ psum,
                                   const float* __restrict__ psq,
                                   int C, int P, double count,
                                   const float* __restrict__ weight,
                                   const float* __restrict__ bias,
                                   float* __restrict__ running_mean,
                                   float* __restrict__ running_var,
                                   int use_batch_stats, int update_running,
                                   float momentum, float eps,
                                   float* __restrict__ scale,
                                   float* __restrict__ shift) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double mean, var;
    if (use_batch_stats) {
        double s = 0.0, q = 0.0;
        for (int p = 0; p < P; ++p) {
            s += (double)psum[(int64_t)c * P + p];
            q += (double)psq[(int64_t)c * P + p];
        }
        mean = s / count;
        var = q / count - mean * mean;
        if (var < 0.0) var = 0.0;
        if (update_running) {
            const double unbiased = count > 1.0 ? var * count / (count - 1.0) : var;
            running_mean[c] = (float)((1.0 - momentum) * (double)running_mean[c] + momentum * mean);
            running_var[c]  = (float)((1.0 - momentum) * (double)running_var[c] + momentum * unbiased);
        }
    } else {
        mean = (double)running_mean[c];
        var = (double)running_var[c];
    }
    const double inv_std = 1.0 / sqrt(var + (double)eps);
    const double w = weight ? (double)weight[c] : 1.0;
    const double b = bias ? (double)bias[c] : 0.0;
    const double sc = w * inv_std;
    scale[c] = (float)sc;
    shift[c] = (float)(b - mean * sc);
}

// ---------------------------------------------------------------------------
// Pass 3: normalize.  One block per (n, c) plane, float4 streaming.
// ---------------------------------------------------------------------------
__global__ void bn_apply_kernel(const float* __restrict__ x,
                                float* __restrict__ y,
                                const float* __restrict__ scale,
                                const float* __restrict__ shift,
                                int C, int64_t HW, int vec) {
    const int64_t plane = blockIdx.x;
    const int c = (int)(plane % C);
    const float a = __ldg(scale + c);
    const float b = __ldg(shift + c);
    const float* xp = x + plane * HW;
    float* yp = y + plane * HW;
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xp);
        float4* y4 = reinterpret_cast<float4*>(yp);
        const int64_t HW4 = HW >> 2;
        for (int64_t i = threadIdx.x; i < HW4; i += blockDim.x) {
            float4 v = __ldg(x4 + i);
            v.x = fmaf(v.x, a, b);
            v.y = fmaf(v.y, a, b);
            v.z = fmaf(v.z, a, b);
            v.w = fmaf(v.w, a, b);
            y4[i] = v;
        }
    } else {
        for (int64_t i = threadIdx.x; i < HW; i += blockDim.x) {
            yp[i] = fmaf(__ldg(xp + i), a, b);
        }
    }
}

torch::Tensor batchnorm_forward(torch::Tensor x,
                                torch::Tensor weight,
                                torch::Tensor bias,
                                torch::Tensor running_mean,
                                torch::Tensor running_var,
                                bool training,
                                double momentum,
                                double eps) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() >= 2, "x must have at least 2 dims");
    auto xc = x.contiguous();
    const int N = (int)xc.size(0);
    const int C = (int)xc.size(1);
    const int64_t HW = (N > 0 && C > 0) ? xc.numel() / ((int64_t)N * C) : 0;
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;

    const bool has_w = weight.numel() == C;
    const bool has_b = bias.numel() == C;
    const bool has_running = running_mean.numel() == C && running_var.numel() == C;
    const bool use_batch = training || !has_running;
    const bool update = training && has_running;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    auto fopts = xc.options().dtype(torch::kFloat32);
    auto scale = torch::empty({C}, fopts);
    auto shift = torch::empty({C}, fopts);

    const int vec = (HW % 4 == 0) &&
                    ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) & 15) == 0) &&
                    ((reinterpret_cast<uintptr_t>(y.data_ptr<float>()) & 15) == 0);

    int P = 1;
    torch::Tensor psum, psq;
    if (use_batch) {
        const int64_t work = vec ? HW / 4 : HW;
        int64_t p = (work + (int64_t)BN_THREADS * 4 - 1) / ((int64_t)BN_THREADS * 4);
        if (p < 1) p = 1;
        if (p > 128) p = 128;
        P = (int)p;
        TORCH_CHECK(C <= 65535, "too many channels for grid.y");
        psum = torch::empty({(int64_t)C * P}, fopts);
        psq = torch::empty({(int64_t)C * P}, fopts);
        dim3 grid(P, C);
        bn_partial_stats_kernel<<<grid, BN_THREADS, 0, stream>>>(
            xc.data_ptr<float>(), psum.data_ptr<float>(), psq.data_ptr<float>(),
            N, C, HW, P, vec);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }

    {
        const int threads = 128;
        const int blocks = (C + threads - 1) / threads;
        bn_finalize_kernel<<<blocks, threads, 0, stream>>>(
            use_batch ? psum.data_ptr<float>() : nullptr,
            use_batch ? psq.data_ptr<float>() : nullptr,
            C, P, (double)N * (double)HW,
            has_w ? weight.data_ptr<float>() : nullptr,
            has_b ? bias.data_ptr<float>() : nullptr,
            has_running ? running_mean.data_ptr<float>() : nullptr,
            has_running ? running_var.data_ptr<float>() : nullptr,
            use_batch ? 1 : 0, update ? 1 : 0,
            (float)momentum, (float)eps,
            scale.data_ptr<float>(), shift.data_ptr<float>());
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }

    {
        const int64_t planes = (int64_t)N * C;
        bn_apply_kernel<<<(unsigned)planes, BN_THREADS, 0, stream>>>(
            xc.data_ptr<float>(), y.data_ptr<float>(),
            scale.data_ptr<float>(), shift.data_ptr<float>(), C, HW, vec);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

batchnorm_cpp_source = (
    "torch::Tensor batchnorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
    "torch::Tensor running_mean, torch::Tensor running_var, bool training, double momentum, double eps);"
)

batchnorm_ext = load_inline(
    name="batchnorm2d_custom_fwd",
    cpp_sources=batchnorm_cpp_source,
    cuda_sources=batchnorm_source,
    functions=["batchnorm_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    BatchNorm2d with custom CUDA kernels: partial per-channel statistics,
    a finalize kernel (double precision, running-stat update) and a
    vectorised normalisation pass.
    """
    def __init__(self, num_features: int):
        super(ModelNew, self).__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)
        self._empty = None

    def _empty_like(self, x):
        if self._empty is None or self._empty.device != x.device:
            self._empty = torch.empty(0, device=x.device, dtype=torch.float32)
        return self._empty

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        empty = self._empty_like(x)
        momentum = 0.0
        if bn.training and bn.track_running_stats and bn.num_batches_tracked is not None:
            bn.num_batches_tracked.add_(1)
            if bn.momentum is None:
                momentum = 1.0 / float(bn.num_batches_tracked.item())
            else:
                momentum = bn.momentum
        weight = bn.weight.detach() if bn.weight is not None else empty
        bias = bn.bias.detach() if bn.bias is not None else empty
        rm = bn.running_mean if bn.running_mean is not None else empty
        rv = bn.running_var if bn.running_var is not None else empty
        return batchnorm_ext.batchnorm_forward(
            x, weight, bias, rm, rv, bool(bn.training), float(momentum), float(bn.eps)
        )
