import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Fused conv2d + BatchNorm (inference) + scaling.
# Grid: (spatial tiles, out_channel, batch). The filter of the block's output
# channel is staged in dynamic shared memory; BN and scaling are folded into
# one per-channel multiply-add.

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void conv_bn_scale_kernel(const float* __restrict__ x,
                                     const float* __restrict__ w,
                                     const float* __restrict__ cb,
                                     const float* __restrict__ gamma,
                                     const float* __restrict__ beta,
                                     const float* __restrict__ rmean,
                                     const float* __restrict__ rvar,
                                     float* __restrict__ out,
                                     int Cin, int H, int W, int Cout, int K,
                                     int Ho, int Wo, float eps, float scaling) {
    extern __shared__ float sw[];   // Cin * K * K
    int oc = blockIdx.y;
    int n = blockIdx.z;
    int wsize = Cin * K * K;
    const float* wc = w + (size_t)oc * wsize;
    for (int i = threadIdx.x; i < wsize; i += blockDim.x) sw[i] = wc[i];
    __syncthreads();

    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int HW = Ho * Wo;
    if (p >= HW) return;
    int oh = p / Wo;
    int ow = p - oh * Wo;

    const float* xn = x + (size_t)n * Cin * H * W;
    float acc = cb[oc];
    for (int ic = 0; ic < Cin; ++ic) {
        const float* xp = xn + ((size_t)ic * H + oh) * W + ow;
        const float* wp = sw + ic * K * K;
        for (int kh = 0; kh < K; ++kh) {
            for (int kw = 0; kw < K; ++kw) {
                acc += xp[kh * W + kw] * wp[kh * K + kw];
            }
        }
    }
    float inv_std = 1.0f / sqrtf(rvar[oc] + eps);
    float v = (acc - rmean[oc]) * inv_std * gamma[oc] + beta[oc];
    out[((size_t)n * Cout + oc) * HW + p] = v * scaling;
}

torch::Tensor conv_bn_scale(torch::Tensor x, torch::Tensor w, torch::Tensor cb,
                            torch::Tensor gamma, torch::Tensor beta,
                            torch::Tensor rmean, torch::Tensor rvar,
                            double eps, double scaling) {
    int N = x.size(0);
    int Cin = x.size(1);
    int H = x.size(2);
    int W = x.size(3);
    int Cout = w.size(0);
    int K = w.size(2);
    int Ho = H - K + 1;
    int Wo = W - K + 1;
    auto out = torch::empty({N, Cout, Ho, Wo}, x.options());
    int threads = 256;
    dim3 grid((Ho * Wo + threads - 1) / threads, Cout, N);
    size_t shmem = (size_t)Cin * K * K * sizeof(float);
    conv_bn_scale_kernel<<<grid, threads, shmem>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), cb.data_ptr<float>(),
        gamma.data_ptr<float>(), beta.data_ptr<float>(),
        rmean.data_ptr<float>(), rvar.data_ptr<float>(), out.data_ptr<float>(),
        Cin, H, W, Cout, K, Ho, Wo, (float)eps, (float)scaling);
    return out;
}
"""

cpp_source = ("torch::Tensor conv_bn_scale(torch::Tensor x, torch::Tensor w, torch::Tensor cb, "
              "torch::Tensor gamma, torch::Tensor beta, torch::Tensor rmean, torch::Tensor rvar, "
              "double eps, double scaling);")

ext = load_inline(
    name="l2_73_conv_bn_scale",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["conv_bn_scale"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps, scaling_factor):
        super().__init__()
        self.conv_weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size, kernel_size))
        self.conv_bias = nn.Parameter(torch.empty(out_channels))
        self.bn_weight = nn.Parameter(torch.empty(out_channels))
        self.bn_bias = nn.Parameter(torch.empty(out_channels))
        self.register_buffer("bn_running_mean", torch.zeros(out_channels))
        self.register_buffer("bn_running_var", torch.ones(out_channels))
        self.eps = eps
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return ext.conv_bn_scale(x, self.conv_weight, self.conv_bias, self.bn_weight, self.bn_bias,
                                 self.bn_running_mean, self.bn_running_var,
                                 float(self.eps), float(self.scaling_factor))
