import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

bn_gelu_relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// ---------------------------------------------------------------------------
// Column statistics of a (B, F) row-major matrix.  grid = (ceil(F4/256), RC):
// each thread owns 4 adjacent columns (float4) and a chunk of rows, so every
// warp reads 512 contiguous bytes per row.  Partials go to [RC, F] buffers.
// ---------------------------------------------------------------------------
__global__ void col_partial_stats_vec4_kernel(const float4* __restrict__ y,
                                              float4* __restrict__ psum,
                                              float4* __restrict__ psq,
                                              int B, int F4, int rows_per_chunk) {
    const int col4 = blockIdx.x * blockDim.x + threadIdx.x;
    if (col4 >= F4) return;
    const int r0 = blockIdx.y * rows_per_chunk;
    int r1 = r0 + rows_per_chunk;
    if (r1 > B) r1 = B;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 q = make_float4(0.f, 0.f, 0.f, 0.f);
    #pragma unroll 4
    for (int r = r0; r < r1; ++r) {
        const float4 v = __ldg(y + (int64_t)r * F4 + col4);
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
        q.x = fmaf(v.x, v.x, q.x); q.y = fmaf(v.y, v.y, q.y);
        q.z = fmaf(v.z, v.z, q.z); q.w = fmaf(v.w, v.w, q.w);
    }
    psum[(int64_t)blockIdx.y * F4 + col4] = s;
    psq[(int64_t)blockIdx.y * F4 + col4] = q;
}

__global__ void col_partial_stats_kernel(const float* __restrict__ y,
                                         float* __restrict__ psum,
                                         float* __restrict__ psq,
                                         int B, int Fdim, int rows_per_chunk) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= Fdim) return;
    const int r0 = blockIdx.y * rows_per_chunk;
    int r1 = r0 + rows_per_chunk;
    if (r1 > B) r1 = B;
    float s = 0.f, q = 0.f;
    for (int r = r0; r < r1; ++r) {
        const float v = __ldg(y + (int64_t)r * Fdim + col);
        s += v;
        q = fmaf(v, v, q);
    }
    psum[(int64_t)blockIdx.y * Fdim + col] = s;
    psq[(int64_t)blockIdx.y * Fdim + col] = q;
}

// ---------------------------------------------------------------------------
// Finalize: per feature, build  z = y * scale + shift  where y = x @ W^T
// (WITHOUT the linear bias).  In training mode the linear bias cancels in
// the normalisation; it only enters the running-mean update.  In eval mode
// it is folded into shift.
// ---------------------------------------------------------------------------
__global__ void bn_finalize_kernel(const float* __restrict__ psum,
                                   const float* __restrict__ psq,
                                   int RC, int Fdim, int B,
                                   const float* __restrict__ lin_bias,
                                   const float* __restrict__ gamma,
                                   const float* __restrict__ beta,
                                   float* __restrict__ running_mean,
                                   float* __restrict__ running_var,
                                   int use_batch, int update, float momentum, float eps,
                                   float* __restrict__ scale,
                                   float* __restrict__ shift) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= Fdim) return;
    const double lb = lin_bias ? (double)lin_bias[f] : 0.0;
    const double g = gamma ? (double)gamma[f] : 1.0;
    const double bt = beta ? (double)beta[f] : 0.0;
    if (use_batch) {
        double s = 0.0, q = 0.0;
        for (int r = 0; r < RC; ++r) {
            s += (double)psum[(int64_t)r * Fdim + f];
            q += (double)psq[(int64_t)r * Fdim + f];
        }
        const double cnt = (double)B;
        const double mean_y = s / cnt;
        double var = q / cnt - mean_y * mean_y;
        if (var < 0.0) var = 0.0;
        const double sc = g / sqrt(var + (double)eps);
        scale[f] = (float)sc;
        shift[f] = (float)(bt - mean_y * sc);
        if (update) {
            const double unbiased = cnt > 1.0 ? var * cnt / (cnt - 1.0) : var;
            running_mean[f] = (float)((1.0 - momentum) * (double)running_mean[f] + momentum * (mean_y + lb));
            running_var[f] = (float)((1.0 - momentum) * (double)running_var[f] + momentum * unbiased);
        }
    } else {
        const double sc = g / sqrt((double)running_var[f] + (double)eps);
        scale[f] = (float)sc;
        shift[f] = (float)(bt + (lb - (double)running_mean[f]) * sc);
    }
}

__device__ __forceinline__ float gelu_relu(float z) {
    // exact (erf) GELU followed by ReLU
    const float g = 0.5f * z * (1.f + erff(z * 0.70710678118654752f));
    return fmaxf(g, 0.f);
}

__global__ void bn_gelu_relu_apply_vec4_kernel(const float4* __restrict__ y,
                                               float4* __restrict__ out,
                                               const float4* __restrict__ scale,
                                               const float4* __restrict__ shift,
                                               int64_t total4, int F4) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total4;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int c4 = (int)(i % F4);
        const float4 v = __ldg(y + i);
        const float4 a = __ldg(scale + c4);
        const float4 b = __ldg(shift + c4);
        float4 r;
        r.x = gelu_relu(fmaf(v.x, a.x, b.x));
        r.y = gelu_relu(fmaf(v.y, a.y, b.y));
        r.z = gelu_relu(fmaf(v.z, a.z, b.z));
        r.w = gelu_relu(fmaf(v.w, a.w, b.w));
        out[i] = r;
    }
}

__global__ void bn_gelu_relu_apply_kernel(const float* __restrict__ y,
                                          float* __restrict__ out,
                                          const float* __restrict__ scale,
                                          const float* __restrict__ shift,
                                          int64_t total, int Fdim) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int c = (int)(i % Fdim);
        out[i] = gelu_relu(fmaf(__ldg(y + i), __ldg(scale + c), __ldg(shift + c)));
    }
}

torch::Tensor bn_gelu_relu_forward(torch::Tensor y,            // (B, F) = x @ W^T (no bias)
                                   torch::Tensor lin_bias,
                                   torch::Tensor gamma,
                                   torch::Tensor beta,
                                   torch::Tensor running_mean,
                                   torch::Tensor running_var,
                                   bool training,
                                   double momentum,
                                   double eps) {
    TORCH_CHECK(y.is_cuda() && y.dim() == 2, "y must be a 2D CUDA tensor");
    TORCH_CHECK(y.scalar_type() == torch::kFloat32, "y must be float32");
    auto yc = y.contiguous();
    const int B = (int)yc.size(0);
    const int Fdim = (int)yc.size(1);
    auto out = torch::empty_like(yc);
    if (yc.numel() == 0) return out;

    const bool has_lb = lin_bias.numel() == Fdim;
    const bool has_g = gamma.numel() == Fdim;
    const bool has_b = beta.numel() == Fdim;
    const bool has_running = running_mean.numel() == Fdim && running_var.numel() == Fdim;
    const bool use_batch = training || !has_running;
    const bool update = training && has_running;

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    auto opts = yc.options();
    auto scale = torch::empty({Fdim}, opts);
    auto shift = torch::empty({Fdim}, opts);

    const bool vec = (Fdim % 4 == 0) &&
                     ((reinterpret_cast<uintptr_t>(yc.data_ptr<float>()) & 15) == 0) &&
                     ((reinterpret_cast<uintptr_t>(out.data_ptr<float>()) & 15) == 0);

    int RC = 1;
    torch::Tensor psum, psq;
    if (use_batch) {
        const int rows_per_chunk = 64;
        RC = (B + rows_per_chunk - 1) / rows_per_chunk;
        TORCH_CHECK(RC <= 65535, "batch too large");
        psum = torch::empty({(int64_t)RC * Fdim}, opts);
        psq = torch::empty({(int64_t)RC * Fdim}, opts);
        const int threads = 256;
        if (vec) {
            const int F4 = Fdim / 4;
            dim3 grid((F4 + threads - 1) / threads, RC);
            col_partial_stats_vec4_kernel<<<grid, threads, 0, stream>>>(
                reinterpret_cast<const float4*>(yc.data_ptr<float>()),
                reinterpret_cast<float4*>(psum.data_ptr<float>()),
                reinterpret_cast<float4*>(psq.data_ptr<float>()),
                B, F4, rows_per_chunk);
        } else {
            dim3 grid((Fdim + threads - 1) / threads, RC);
            col_partial_stats_kernel<<<grid, threads, 0, stream>>>(
                yc.data_ptr<float>(), psum.data_ptr<float>(), psq.data_ptr<float>(),
                B, Fdim, rows_per_chunk);
        }
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }

    {
        const int threads = 256;
        bn_finalize_kernel<<<(Fdim + threads - 1) / threads, threads, 0, stream>>>(
            use_batch ? psum.data_ptr<float>() : nullptr,
            use_batch ? psq.data_ptr<float>() : nullptr,
            RC, Fdim, B,
            has_lb ? lin_bias.data_ptr<float>() : nullptr,
            has_g ? gamma.data_ptr<float>() : nullptr,
            has_b ? beta.data_ptr<float>() : nullptr,
            has_running ? running_mean.data_ptr<float>() : nullptr,
            has_running ? running_var.data_ptr<float>() : nullptr,
            use_batch ? 1 : 0, update ? 1 : 0, (float)momentum, (float)eps,
            scale.data_ptr<float>(), shift.data_ptr<float>());
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }

    {
        const int threads = 256;
        const int64_t total = yc.numel();
        if (vec) {
            const int64_t total4 = total / 4;
            int64_t blocks = (total4 + threads - 1) / threads;
            if (blocks > 132 * 64) blocks = 132 * 64;
            bn_gelu_relu_apply_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
                reinterpret_cast<const float4*>(yc.data_ptr<float>()),
                reinterpret_cast<float4*>(out.data_ptr<float>()),
                reinterpret_cast<const float4*>(scale.data_ptr<float>()),
                reinterpret_cast<const float4*>(shift.data_ptr<float>()),
                total4, Fdim / 4);
        } else {
            int64_t blocks = (total + threads - 1) / threads;
            if (blocks > 132 * 64) blocks = 132 * 64;
            bn_gelu_relu_apply_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
                yc.data_ptr<float>(), out.data_ptr<float>(),
                scale.data_ptr<float>(), shift.data_ptr<float>(), total, Fdim);
        }
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return out;
}
"""

bn_gelu_relu_cpp_source = (
    "torch::Tensor bn_gelu_relu_forward(torch::Tensor y, torch::Tensor lin_bias, torch::Tensor gamma, "
    "torch::Tensor beta, torch::Tensor running_mean, torch::Tensor running_var, bool training, "
    "double momentum, double eps);"
)

bn_gelu_relu_ext = load_inline(
    name="gemm_bn_gelu_relu_fused",
    cpp_sources=bn_gelu_relu_cpp_source,
    cuda_sources=bn_gelu_relu_source,
    functions=["bn_gelu_relu_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    GEMM via cuBLAS (the Linear bias is folded analytically into the BatchNorm
    statistics, so a plain mm is used), then custom CUDA kernels for the
    BatchNorm column statistics and a fused BN-apply + GELU + ReLU pass.
    """
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)
        self._empty = None

    def _get_empty(self, ref):
        if self._empty is None or self._empty.device != ref.device:
            self._empty = torch.empty(0, device=ref.device, dtype=torch.float32)
        return self._empty

    def forward(self, x):
        bn = self.batch_norm
        empty = self._get_empty(x)
        y = torch.mm(x, self.gemm.weight.t())

        momentum = 0.0
        if bn.training and bn.track_running_stats and bn.num_batches_tracked is not None:
            bn.num_batches_tracked.add_(1)
            if bn.momentum is None:
                momentum = 1.0 / float(bn.num_batches_tracked.item())
            else:
                momentum = bn.momentum

        lin_bias = self.gemm.bias if self.gemm.bias is not None else empty
        gamma = bn.weight if bn.weight is not None else empty
        beta = bn.bias if bn.bias is not None else empty
        rm = bn.running_mean if bn.running_mean is not None else empty
        rv = bn.running_var if bn.running_var is not None else empty
        return bn_gelu_relu_ext.bn_gelu_relu_forward(
            y, lin_bias, gamma, beta, rm, rv, bool(bn.training), float(momentum), float(bn.eps)
        )
