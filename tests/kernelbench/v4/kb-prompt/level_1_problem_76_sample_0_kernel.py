import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Strided + dilated 1D convolution as an implicit GEMM:
#   out[b, co, l] = sum_{ci, k} W[co, ci, k] * x[b, ci, l*stride + k*dilation]
# Each block computes a 128 (out channels) x 128 (output positions) tile for one
# batch element. Input channels are processed in chunks of 8: the weight chunk
# (pre-transposed to [ci][k][co]) and the needed input span are staged in shared
# memory, and each thread accumulates an 8x8 register tile.

conv1d_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define CO_T 128
#define L_T 128
#define CI_T 8
#define NTHREADS 256

__global__ void __launch_bounds__(NTHREADS)
conv1d_tiled_kernel(const float* __restrict__ x,      // (B, Cin, Lin)
                    const float* __restrict__ wt,     // (Cin, K, Cout)  transposed weight
                    const float* __restrict__ bias,   // (Cout) or nullptr
                    float* __restrict__ out,          // (B, Cout, Lout)
                    int Cin, int Cout, int Lin, int Lout,
                    int K, int stride, int dil, int span) {
    extern __shared__ __align__(16) float smem[];
    float* Ws = smem;                         // CI_T * K * CO_T
    float* Xs = smem + CI_T * K * CO_T;       // CI_T * span

    const int tid = threadIdx.x;
    const int tx = tid & 15;   // position lane
    const int ty = tid >> 4;   // channel lane

    const int l0 = blockIdx.x * L_T;
    const int co0 = blockIdx.y * CO_T;
    const int b = blockIdx.z;

    const float* xb = x + (size_t)b * Cin * Lin;
    const long long in_base = (long long)l0 * stride;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    const int wchunk = CI_T * K * CO_T;

    for (int ci0 = 0; ci0 < Cin; ci0 += CI_T) {
        // stage weights: Ws[(ci*K + k)*CO_T + co]
        for (int e = tid; e < wchunk; e += NTHREADS) {
            const int co = e % CO_T;
            const int ck = e / CO_T;            // ci*K + k
            const int ci = ck / K;
            const int k = ck - ci * K;
            const int gci = ci0 + ci;
            const int gco = co0 + co;
            float v = 0.f;
            if (gci < Cin && gco < Cout) v = __ldg(wt + ((size_t)gci * K + k) * Cout + gco);
            Ws[e] = v;
        }
        // stage input span: Xs[ci*span + p] = x[b, ci0+ci, in_base + p]
        for (int ci = 0; ci < CI_T; ++ci) {
            const int gci = ci0 + ci;
            const float* xrow = xb + (size_t)gci * Lin;
            for (int p = tid; p < span; p += NTHREADS) {
                const long long gp = in_base + p;
                float v = 0.f;
                if (gci < Cin && gp < Lin) v = __ldg(xrow + gp);
                Xs[ci * span + p] = v;
            }
        }
        __syncthreads();

#pragma unroll 2
        for (int ci = 0; ci < CI_T; ++ci) {
            const float* xs = Xs + ci * span;
            for (int k = 0; k < K; ++k) {
                const float* ws = Ws + (ci * K + k) * CO_T;
                const float4 w0 = *reinterpret_cast<const float4*>(ws + ty * 4);
                const float4 w1 = *reinterpret_cast<const float4*>(ws + 64 + ty * 4);
                const float wv[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
                const int koff = k * dil;
                float xv[8];
#pragma unroll
                for (int j = 0; j < 8; ++j) xv[j] = xs[(tx + 16 * j) * stride + koff];
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j)
                        acc[i][j] = fmaf(wv[i], xv[j], acc[i][j]);
            }
        }
        __syncthreads();
    }

    float* ob = out + (size_t)b * Cout * Lout;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int co = co0 + ((i < 4) ? (ty * 4 + i) : (64 + ty * 4 + (i - 4)));
        if (co >= Cout) continue;
        const float bv = (bias != nullptr) ? __ldg(bias + co) : 0.f;
        float* orow = ob + (size_t)co * Lout;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int l = l0 + tx + 16 * j;
            if (l < Lout) orow[l] = acc[i][j] + bv;
        }
    }
}

torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias_opt,
                          int64_t stride, int64_t dilation) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    TORCH_CHECK(x.dim() == 3 && weight.dim() == 3, "bad dims");

    auto xc = x.contiguous();
    const int64_t B = xc.size(0), Cin = xc.size(1), Lin = xc.size(2);
    const int64_t Cout = weight.size(0), K = weight.size(2);
    TORCH_CHECK(weight.size(1) == Cin, "groups != 1 not supported");

    const int64_t Lout = (Lin - dilation * (K - 1) - 1) / stride + 1;
    auto out = torch::empty({B, Cout, Lout > 0 ? Lout : 0}, xc.options());
    if (Lout <= 0 || B == 0) return out;

    const int64_t span = (L_T - 1) * stride + (K - 1) * dilation + 1;
    const size_t smem = (size_t)(CI_T * K * CO_T + CI_T * span) * sizeof(float);
    if (smem > 48 * 1024) {
        // very large receptive field: fall back to cuDNN
        return at::conv1d(xc, weight, bias_opt, {stride}, {0}, {dilation}, 1);
    }

    // weight (Cout, Cin, K) -> (Cin, K, Cout)
    auto wt = weight.permute({1, 2, 0}).contiguous();

    const float* bptr = nullptr;
    torch::Tensor bias_c;
    if (bias_opt.has_value() && bias_opt.value().defined()) {
        bias_c = bias_opt.value().contiguous();
        bptr = bias_c.data_ptr<float>();
    }

    dim3 grid((unsigned)((Lout + L_T - 1) / L_T), (unsigned)((Cout + CO_T - 1) / CO_T), (unsigned)B);
    conv1d_tiled_kernel<<<grid, NTHREADS, smem>>>(
        xc.data_ptr<float>(), wt.data_ptr<float>(), bptr, out.data_ptr<float>(),
        (int)Cin, (int)Cout, (int)Lin, (int)Lout, (int)K, (int)stride, (int)dilation, (int)span);
    return out;
}
"""

conv1d_cpp_source = (
    "torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias_opt, "
    "int64_t stride, int64_t dilation);"
)

conv1d_ext = load_inline(
    name="conv1d_strided_dilated",
    cpp_sources=conv1d_cpp_source,
    cuda_sources=conv1d_source,
    functions=["conv1d_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Standard 1D convolution (strided, dilated) computed by a custom tiled CUDA kernel.
    """
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, dilation: int = 1, bias: bool = False):
        super(ModelNew, self).__init__()
        # keep nn.Conv1d for identical parameter initialization
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation, bias=bias)
        self.stride = stride
        self.dilation = dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return conv1d_ext.conv1d_cuda(x, self.conv1d.weight, self.conv1d.bias, self.stride, self.dilation)
