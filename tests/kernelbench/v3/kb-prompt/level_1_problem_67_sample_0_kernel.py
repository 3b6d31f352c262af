import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

conv1d_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// Tiled direct 1D convolution (stride 1, dilation 1, groups 1).
// Block tile: CO_T output channels x L_T output positions of one batch element.
// Each thread computes TPC channels x TPL consecutive positions.
constexpr int CO_T = 64;
constexpr int L_T  = 128;
constexpr int CI_T = 16;
constexpr int TPC  = 4;
constexpr int TPL  = 8;
constexpr int NTHREADS = (CO_T / TPC) * (L_T / TPL);   // 16 * 16 = 256

template <int K>
struct ConvCfg {
    static constexpr int WIN  = TPL + K - 1;              // input window needed per thread
    static constexpr int WIN4 = (WIN + 3) / 4;            // float4 loads per window
    static constexpr int XS_W = (L_T - TPL) + WIN4 * 4;   // shared row width (multiple of 4)
    static constexpr int XSPAN = L_T + K - 1;             // input positions actually needed
};

template <int K>
__global__ void __launch_bounds__(NTHREADS)
conv1d_tiled_kernel(const float* __restrict__ x,      // [B, Cin, L]
                    const float* __restrict__ wt,     // [Cin, K, Cout] (pre-transposed)
                    const float* __restrict__ bias,   // [Cout] or nullptr
                    float* __restrict__ y,            // [B, Cout, Lout]
                    int Cin, int Cout, int L, int Lout, int pad)
{
    using Cfg = ConvCfg<K>;
    __shared__ __align__(16) float Xs[CI_T][Cfg::XS_W];
    __shared__ __align__(16) float Ws[CI_T * K][CO_T];

    const int tid = threadIdx.x;
    const int tx = tid % (L_T / TPL);    // position group 0..15
    const int ty = tid / (L_T / TPL);    // channel group  0..15
    const int l0  = blockIdx.x * L_T;
    const int co0 = blockIdx.y * CO_T;
    const int b   = blockIdx.z;

    const float* xb = x + (size_t)b * Cin * L;

    float acc[TPC][TPL];
    #pragma unroll
    for (int c = 0; c < TPC; ++c)
        #pragma unroll
        for (int j = 0; j < TPL; ++j) acc[c][j] = 0.f;

    for (int ci0 = 0; ci0 < Cin; ci0 += CI_T) {
        // ---- load input tile: CI_T rows x XS_W positions (zero padded) ----
        for (int e = tid; e < CI_T * Cfg::XS_W; e += NTHREADS) {
            const int ci = e / Cfg::XS_W;
            const int p  = e % Cfg::XS_W;
            const int gci = ci0 + ci;
            const int gl  = l0 + p - pad;
            float v = 0.f;
            if (p < Cfg::XSPAN && gci < Cin && gl >= 0 && gl < L)
                v = __ldg(&xb[(size_t)gci * L + gl]);
            Xs[ci][p] = v;
        }
        // ---- load weight tile: (CI_T*K) rows x CO_T channels ----
        for (int e = tid; e < CI_T * K * CO_T; e += NTHREADS) {
            const int r  = e / CO_T;          // ci*K + k
            const int co = e % CO_T;
            const int gci = ci0 + r / K;
            const int gco = co0 + co;
            float v = 0.f;
            if (gci < Cin && gco < Cout)
                v = __ldg(&wt[((size_t)gci * K + (r % K)) * Cout + gco]);
            Ws[r][co] = v;
        }
        __syncthreads();

        #pragma unroll 4
        for (int ci = 0; ci < CI_T; ++ci) {
            float xr[Cfg::WIN4 * 4];
            const float4* xrow = reinterpret_cast<const float4*>(&Xs[ci][tx * TPL]);
            #pragma unroll
            for (int q = 0; q < Cfg::WIN4; ++q) {
                float4 v = xrow[q];
                xr[4 * q + 0] = v.x; xr[4 * q + 1] = v.y;
                xr[4 * q + 2] = v.z; xr[4 * q + 3] = v.w;
            }
            #pragma unroll
            for (int k = 0; k < K; ++k) {
                const float4 w4 = *reinterpret_cast<const float4*>(&Ws[ci * K + k][ty * TPC]);
                const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
                #pragma unroll
                for (int c = 0; c < TPC; ++c)
                    #pragma unroll
                    for (int j = 0; j < TPL; ++j)
                        acc[c][j] = fmaf(wv[c], xr[j + k], acc[c][j]);
            }
        }
        __syncthreads();
    }

    // ---- store ----
    #pragma unroll
    for (int c = 0; c < TPC; ++c) {
        const int co = co0 + ty * TPC + c;
        if (co >= Cout) continue;
        const float bv = bias ? __ldg(&bias[co]) : 0.f;
        float* yrow = y + ((size_t)b * Cout + co) * Lout;
        #pragma unroll
        for (int j = 0; j < TPL; ++j) {
            const int l = l0 + tx * TPL + j;
            if (l < Lout) yrow[l] = acc[c][j] + bv;
        }
    }
}

template <int K>
static void launch_conv(const torch::Tensor& x, const torch::Tensor& wt, const float* bptr,
                        torch::Tensor& y, int B, int Cin, int Cout, int L, int Lout, int pad,
                        cudaStream_t stream) {
    dim3 grid((Lout + L_T - 1) / L_T, (Cout + CO_T - 1) / CO_T, B);
    conv1d_tiled_kernel<K><<<grid, NTHREADS, 0, stream>>>(
        x.data_ptr<float>(), wt.data_ptr<float>(), bptr, y.data_ptr<float>(),
        Cin, Cout, L, Lout, pad);
}

torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                          int64_t padding, bool has_bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "inputs must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32, "float32 only");
    TORCH_CHECK(x.dim() == 3 && weight.dim() == 3, "expected 3D input and weight");
    auto xc = x.contiguous();
    const int B = (int)xc.size(0), Cin = (int)xc.size(1), L = (int)xc.size(2);
    const int Cout = (int)weight.size(0), K = (int)weight.size(2);
    TORCH_CHECK(weight.size(1) == Cin, "weight in_channels mismatch");
    const int pad = (int)padding;
    const int Lout = L + 2 * pad - K + 1;
    TORCH_CHECK(Lout > 0, "output length must be positive");
    TORCH_CHECK(B <= 65535, "batch too large");

    // [Cout, Cin, K] -> [Cin, K, Cout] so that a block's weight slice is coalesced
    auto wt = weight.permute({1, 2, 0}).contiguous();
    auto y = torch::empty({B, Cout, Lout}, xc.options());
    const float* bptr = nullptr;
    torch::Tensor bc;
    if (has_bias) { bc = bias.contiguous(); bptr = bc.data_ptr<float>(); }

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    switch (K) {
        case 1: launch_conv<1>(xc, wt, bptr, y, B, Cin, Cout, L, Lout, pad, stream); break;
        case 2: launch_conv<2>(xc, wt, bptr, y, B, Cin, Cout, L, Lout, pad, stream); break;
        case 3: launch_conv<3>(xc, wt, bptr, y, B, Cin, Cout, L, Lout, pad, stream); break;
        case 4: launch_conv<4>(xc, wt, bptr, y, B, Cin, Cout, L, Lout, pad, stream); break;
        case 5: launch_conv<5>(xc, wt, bptr, y, B, Cin, Cout, L, Lout, pad, stream); break;
        case 7: launch_conv<7>(xc, wt, bptr, y, B, Cin, Cout, L, Lout, pad, stream); break;
        default: TORCH_CHECK(false, "unsupported kernel size");
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

conv1d_cpp_source = (
    "torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
    "int64_t padding, bool has_bias);"
)

conv1d_ext = load_inline(
    name="conv1d_tiled_ext",
    cpp_sources=conv1d_cpp_source,
    cuda_sources=conv1d_source,
    functions=["conv1d_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)

_SUPPORTED_K = (1, 2, 3, 4, 5, 7)


class ModelNew(nn.Module):
    """
    Conv1d with a custom shared-memory tiled CUDA kernel (register-blocked 4x8 outputs
    per thread, sliding input window reused across kernel taps). Falls back to
    PyTorch for configurations the kernel does not cover (stride/dilation/groups != 1).
    """
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super(ModelNew, self).__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)
        self.ext = conv1d_ext

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv1d
        k = c.kernel_size[0]
        pad = c.padding[0] if isinstance(c.padding, (tuple, list)) else None
        fast = (
            x.is_cuda and x.dtype == torch.float32
            and c.stride[0] == 1 and c.dilation[0] == 1 and c.groups == 1
            and isinstance(pad, int) and c.padding_mode == "zeros"
            and k in _SUPPORTED_K
        )
        if not fast:
            return c(x)
        has_bias = c.bias is not None
        b = c.bias if has_bias else c.weight  # dummy tensor when there is no bias
        return self.ext.conv1d_cuda(x, c.weight, b, pad, has_bias)
