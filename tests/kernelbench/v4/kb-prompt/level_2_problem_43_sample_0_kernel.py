import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Conv3d stays on cuDNN. MaxPool3d(2,2) + logsumexp over channels + ReLU are fused
# into a single kernel: one thread per pooled output voxel walks over all
# channels, takes the 2x2x2 max (float2 loads along W) and maintains an online
# (streaming) logsumexp, so the pooled tensor is never written to memory.

fused_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

template <bool VEC2>
__global__ void maxpool2_lse_relu_kernel(const float* __restrict__ y,   // (B, C, D, H, W)
                                         float* __restrict__ out,       // (B, 1, OD, OH, OW)
                                         int B, int C, int D, int H, int W,
                                         int OD, int OH, int OW) {
    const long long total = (long long)B * OD * OH * OW;
    const long long HW = (long long)H * W;
    const long long DHW = (long long)D * HW;

    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)blockDim.x * gridDim.x) {
        const int ow = (int)(idx % OW);
        long long t = idx / OW;
        const int oh = (int)(t % OH);
        t /= OH;
        const int od = (int)(t % OD);
        const int b = (int)(t / OD);

        const float* base = y + (long long)b * C * DHW
                              + (long long)(2 * od) * HW + (long long)(2 * oh) * W + 2 * ow;

        float m = -INFINITY;
        float s = 0.f;

#pragma unroll 4
        for (int c = 0; c < C; ++c) {
            const float* p = base + (long long)c * DHW;
            float v;
            if (VEC2) {
                const float2 a0 = __ldg(reinterpret_cast<const float2*>(p));
                const float2 a1 = __ldg(reinterpret_cast<const float2*>(p + W));
                const float2 a2 = __ldg(reinterpret_cast<const float2*>(p + HW));
                const float2 a3 = __ldg(reinterpret_cast<const float2*>(p + HW + W));
                v = fmaxf(fmaxf(fmaxf(a0.x, a0.y), fmaxf(a1.x, a1.y)),
                          fmaxf(fmaxf(a2.x, a2.y), fmaxf(a3.x, a3.y)));
            } else {
                v = fmaxf(fmaxf(fmaxf(__ldg(p), __ldg(p + 1)), fmaxf(__ldg(p + W), __ldg(p + W + 1))),
                          fmaxf(fmaxf(__ldg(p + HW), __ldg(p + HW + 1)),
                                fmaxf(__ldg(p + HW + W), __ldg(p + HW + W + 1))));
            }
            // online logsumexp
            if (v > m) {
                s = s * __expf(m - v) + 1.f;
                m = v;
            } else {
                s += __expf(v - m);
            }
        }
        const float lse = m + __logf(s);
        out[idx] = fmaxf(lse, 0.f);
    }
}

torch::Tensor maxpool_lse_relu_cuda(torch::Tensor y) {
    TORCH_CHECK(y.is_cuda() && y.scalar_type() == torch::kFloat32, "y must be float32 CUDA");
    TORCH_CHECK(y.dim() == 5, "y must be 5D");
    auto yc = y.contiguous();
    const int B = yc.size(0), C = yc.size(1), D = yc.size(2), H = yc.size(3), W = yc.size(4);
    const int OD = D / 2, OH = H / 2, OW = W / 2;

    auto out = torch::empty({B, 1, OD, OH, OW}, yc.options());
    const long long total = (long long)B * OD * OH * OW;
    if (total == 0) return out;

    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 65535LL * 32) blocks = 65535LL * 32;

    const bool vec = (W % 2 == 0) && ((reinterpret_cast<uintptr_t>(yc.data_ptr<float>()) % 8) == 0);
    if (vec) {
        maxpool2_lse_relu_kernel<true><<<(unsigned)blocks, threads>>>(
            yc.data_ptr<float>(), out.data_ptr<float>(), B, C, D, H, W, OD, OH, OW);
    } else {
        maxpool2_lse_relu_kernel<false><<<(unsigned)blocks, threads>>>(
            yc.data_ptr<float>(), out.data_ptr<float>(), B, C, D, H, W, OD, OH, OW);
    }
    return out;
}
"""

fused_cpp_source = "torch::Tensor maxpool_lse_relu_cuda(torch::Tensor y);"

fused_ext = load_inline(
    name="maxpool3d_logsumexp_relu",
    cpp_sources=fused_cpp_source,
    cuda_sources=fused_source,
    functions=["maxpool_lse_relu_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3", "--use_fast_math"],
)


class ModelNew(nn.Module):
    """
    Conv3d (cuDNN) followed by a fused MaxPool3d(2) + logsumexp(dim=1) + ReLU CUDA kernel.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.max_pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x):
        x = self.conv(x)
        return fused_ext.maxpool_lse_relu_cuda(x)
