import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Fused conv2d + x*tanh(softplus(x)) + BatchNorm (inference, running stats).
# Grid-stride loop, one output element per iteration.

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float softplus_f(float v) {
    // matches torch softplus (beta=1, threshold=20)
    return (v > 20.0f) ? v : log1pf(expf(v));
}

__global__ void conv_mish_bn_kernel(const float* __restrict__ x,
                                    const float* __restrict__ w,
                                    const float* __restrict__ cb,
                                    const float* __restrict__ gamma,
                                    const float* __restrict__ beta,
                                    const float* __restrict__ rmean,
                                    const float* __restrict__ rvar,
                                    float* __restrict__ out,
                                    int N, int Cin, int H, int W, int Cout, int K,
                                    int Ho, int Wo, float eps) {
    long long total = (long long)N * Cout * Ho * Wo;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        int ow = (int)(idx % Wo);
        long long t = idx / Wo;
        int oh = (int)(t % Ho);
        t /= Ho;
        int oc = (int)(t % Cout);
        int n = (int)(t / Cout);

        const float* xn = x + (size_t)n * Cin * H * W;
        const float* wc = w + (size_t)oc * Cin * K * K;
        float acc = cb[oc];
        for (int ic = 0; ic < Cin; ++ic) {
            const float* xp = xn + ((size_t)ic * H + oh) * W + ow;
            const float* wp = wc + ic * K * K;
            for (int kh = 0; kh < K; ++kh) {
                for (int kw = 0; kw < K; ++kw) {
                    acc += xp[kh * W + kw] * wp[kh * K + kw];
                }
            }
        }
        float v = tanhf(softplus_f(acc)) * acc;
        v = (v - rmean[oc]) / sqrtf(rvar[oc] + eps) * gamma[oc] + beta[oc];
        out[idx] = v;
    }
}

torch::Tensor conv_mish_bn(torch::Tensor x, torch::Tensor w, torch::Tensor cb,
                           torch::Tensor gamma, torch::Tensor beta,
                           torch::Tensor rmean, torch::Tensor rvar, double eps) {
    int N = x.size(0);
    int Cin = x.size(1);
    int H = x.size(2);
    int W = x.size(3);
    int Cout = w.size(0);
    int K = w.size(2);
    int Ho = H - K + 1;
    int Wo = W - K + 1;
    auto out = torch::empty({N, Cout, Ho, Wo}, x.options());
    long long total = (long long)N * Cout * Ho * Wo;
    int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    conv_mish_bn_kernel<<<(unsigned int)blocks, threads>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), cb.data_ptr<float>(),
        gamma.data_ptr<float>(), beta.data_ptr<float>(),
        rmean.data_ptr<float>(), rvar.data_ptr<float>(), out.data_ptr<float>(),
        N, Cin, H, W, Cout, K, Ho, Wo, (float)eps);
    return out;
}
"""

cpp_source = ("torch::Tensor conv_mish_bn(torch::Tensor x, torch::Tensor w, torch::Tensor cb, "
              "torch::Tensor gamma, torch::Tensor beta, torch::Tensor rmean, torch::Tensor rvar, double eps);")

ext = load_inline(
    name="l2_52_conv_act_batchnorm",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["conv_mish_bn"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps):
        super().__init__()
        self.conv_weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size, kernel_size))
        self.conv_bias = nn.Parameter(torch.empty(out_channels))
        self.bn_weight = nn.Parameter(torch.empty(out_channels))
        self.bn_bias = nn.Parameter(torch.empty(out_channels))
        self.register_buffer("bn_running_mean", torch.zeros(out_channels))
        self.register_buffer("bn_running_var", torch.ones(out_channels))
        self.eps = eps

    def forward(self, x):
        return ext.conv_mish_bn(x, self.conv_weight, self.conv_bias, self.bn_weight, self.bn_bias,
                                self.bn_running_mean, self.bn_running_var, float(self.eps))
