import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv2d on cuDNN, then one fused kernel for:
#   (x - s1) -> tanh -> (- s2) -> AvgPool2d(k)
# Each thread produces one pooled output; the activated full-resolution tensor
# is never written. Note mean(tanh(x - s1) - s2) = mean(tanh(x - s1)) - s2.

fused_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

template <int PK>
__global__ void sub_tanh_sub_avgpool_kernel(const float* __restrict__ x,   // (N*C, H, W)
                                            float* __restrict__ out,       // (N*C, OH, OW)
                                            long long total,
                                            int H, int W, int OH, int OW, int pk_rt,
                                            float s1, float s2, float inv_area) {
    const int K = (PK > 0) ? PK : pk_rt;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)blockDim.x * gridDim.x) {
        const int ow = (int)(idx % OW);
        long long t = idx / OW;
        const int oh = (int)(t % OH);
        const long long nc = t / OH;

        const float* p = x + nc * (long long)H * W + (long long)(oh * K) * W + ow * K;
        float sum = 0.f;
        if (PK == 2) {
            // 2x2 window, rows are 8B-aligned when W is even
            const float2 r0 = __ldg(reinterpret_cast<const float2*>(p));
            const float2 r1 = __ldg(reinterpret_cast<const float2*>(p + W));
            sum = tanhf(r0.x - s1) + tanhf(r0.y - s1) + tanhf(r1.x - s1) + tanhf(r1.y - s1);
        } else {
#pragma unroll
            for (int i = 0; i < K; ++i) {
#pragma unroll
                for (int j = 0; j < K; ++j) {
                    sum += tanhf(__ldg(p + (long long)i * W + j) - s1);
                }
            }
        }
        out[idx] = sum * inv_area - s2;
    }
}

torch::Tensor sub_tanh_sub_avgpool_cuda(torch::Tensor x, double s1, double s2, int64_t pool_k) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be float32 CUDA");
    TORCH_CHECK(x.dim() == 4, "x must be NCHW");
    auto xc = x.contiguous();
    const int N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int K = (int)pool_k;
    const int OH = (H - K) / K + 1;
    const int OW = (W - K) / K + 1;

    auto out = torch::empty({N, C, OH, OW}, xc.options());
    const long long total = (long long)N * C * OH * OW;
    if (total <= 0) return out;

    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 65535LL * 32) blocks = 65535LL * 32;
    const float inv_area = 1.0f / (float)(K * K);

    const bool vec2 = (K == 2) && (W % 2 == 0) &&
                      ((reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 8) == 0);
    if (vec2) {
        sub_tanh_sub_avgpool_kernel<2><<<(unsigned)blocks, threads>>>(
            xc.data_ptr<float>(), out.data_ptr<float>(), total, H, W, OH, OW, K,
            (float)s1, (float)s2, inv_area);
    } else if (K == 3) {
        sub_tanh_sub_avgpool_kernel<3><<<(unsigned)blocks, threads>>>(
            xc.data_ptr<float>(), out.data_ptr<float>(), total, H, W, OH, OW, K,
            (float)s1, (float)s2, inv_area);
    } else {
        sub_tanh_sub_avgpool_kernel<0><<<(unsigned)blocks, threads>>>(
            xc.data_ptr<float>(), out.data_ptr<float>(), total, H, W, OH, OW, K,
            (float)s1, (float)s2, inv_area);
    }
    return out;
}
"""

fused_cpp_source = (
    "torch::Tensor sub_tanh_sub_avgpool_cuda(torch::Tensor x, double s1, double s2, int64_t pool_k);"
)

fused_ext = load_inline(
    name="sub_tanh_sub_avgpool",
    cpp_sources=fused_cpp_source,
    cuda_sources=fused_source,
    functions=["sub_tanh_sub_avgpool_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Conv2d (cuDNN) + fused subtract/tanh/subtract/avg-pool CUDA kernel.
    """
    def __init__(self, in_channels, out_channels, kernel_size, subtract1_value, subtract2_value, kernel_size_pool):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract1_value = subtract1_value
        self.subtract2_value = subtract2_value
        self.kernel_size_pool = kernel_size_pool
        self.avgpool = nn.AvgPool2d(kernel_size_pool)

    def forward(self, x):
        x = self.conv(x)
        return fused_ext.sub_tanh_sub_avgpool_cuda(
            x, float(self.subtract1_value), float(self.subtract2_value), int(self.kernel_size_pool)
        )
