import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# The output is the spatial mean of a transposed convolution (times a scalar).
# Since the transposed conv is linear, its spatial sum factorizes:
#
#   sum_{oh,ow} y[b,co] = Hout*Wout*bias[co]
#       + sum_{ci,kh,kw} W[ci,co,kh,kw] * S[b,ci,kh,kw]
#
# where S[b,ci,kh,kw] is the sum of x[b,ci] over the rectangle of input
# positions whose scattered output position (ih*s - p + kh) lands inside the
# output. Those index sets are contiguous ranges, so S is a set of KHxKW
# rectangle sums that can be computed in ONE pass over the input.
#
# Kernel 1: per (b, ci) plane, compute all KHxKW rectangle sums (float4 loads,
#           warp-shuffle block reduction).
# Kernel 2: tiny contraction with the weights + bias, times multiplier / (Hout*Wout).
# The (B, Cout, 256, 256) intermediate is never formed.

source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <vector>

#define MAXK 8

struct Ranges {
    int lo_h[MAXK], hi_h[MAXK];
    int lo_w[MAXK], hi_w[MAXK];
};

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

template <int KH, int KW>
__global__ void rect_sums_kernel(const float* __restrict__ x,   // (B*Cin, H, W)
                                 float* __restrict__ S,         // (B*Cin, KH*KW)
                                 int H, int W, Ranges r, int vec) {
    const long long plane = blockIdx.x;
    const float* px = x + plane * (long long)H * W;

    float acc[KH * KW];
#pragma unroll
    for (int k = 0; k < KH * KW; ++k) acc[k] = 0.f;

    if (vec) {
        const int W4 = W >> 2;
        const int n4 = H * W4;
        const float4* px4 = reinterpret_cast<const float4*>(px);
        for (int i = threadIdx.x; i < n4; i += blockDim.x) {
            const int ih = i / W4;
            const int iw0 = (i - ih * W4) << 2;
            const float4 v4 = __ldg(px4 + i);
            const float vals[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                float sw = 0.f;
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int iw = iw0 + e;
                    sw += (iw >= r.lo_w[kw] && iw <= r.hi_w[kw]) ? vals[e] : 0.f;
                }
#pragma unroll
                for (int kh = 0; kh < KH; ++kh) {
                    if (ih >= r.lo_h[kh] && ih <= r.hi_h[kh]) acc[kh * KW + kw] += sw;
                }
            }
        }
    } else {
        const int n = H * W;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const int ih = i / W;
            const int iw = i - ih * W;
            const float v = __ldg(px + i);
#pragma unroll
            for (int kh = 0; kh < KH; ++kh) {
                const bool inh = (ih >= r.lo_h[kh] && ih <= r.hi_h[kh]);
#pragma unroll
                for (int kw = 0; kw < KW; ++kw) {
                    const bool inw = (iw >= r.lo_w[kw] && iw <= r.hi_w[kw]);
                    if (inh && inw) acc[kh * KW + kw] += v;
                }
            }
        }
    }

    __shared__ float red[32][KH * KW];
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
#pragma unroll
    for (int k = 0; k < KH * KW; ++k) {
        const float v = warp_sum(acc[k]);
        if (lane == 0) red[wid][k] = v;
    }
    __syncthreads();
    if (wid == 0) {
#pragma unroll
        for (int k = 0; k < KH * KW; ++k) {
            float v = (lane < nwarps) ? red[lane][k] : 0.f;
            v = warp_sum(v);
            if (lane == 0) S[plane * (KH * KW) + k] = v;
        }
    }
}

// out[b, co] = mult * (bias[co] + inv_area * sum_{ci,k} W[ci, co, k] * S[b, ci, k])
// one warp per (b, co)
__global__ void contract_kernel(const float* __restrict__ S,      // (B, Cin*KK)
                                const float* __restrict__ w,      // (Cin, Cout, KK)
                                const float* __restrict__ bias,   // (Cout) or null
                                float* __restrict__ out,          // (B, Cout)
                                int B, int Cin, int Cout, int KK,
                                float inv_area, float mult) {
    const int warps_per_block = blockDim.x >> 5;
    const long long gw = (long long)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (gw >= (long long)B * Cout) return;
    const int b = (int)(gw / Cout);
    const int co = (int)(gw % Cout);

    const float* sb = S + (long long)b * Cin * KK;
    const int n = Cin * KK;
    float acc = 0.f;
    for (int j = lane; j < n; j += 32) {
        const int ci = j / KK;
        const int k = j - ci * KK;
        acc = fmaf(__ldg(w + ((long long)ci * Cout + co) * KK + k), __ldg(sb + j), acc);
    }
    acc = warp_sum(acc);
    if (lane == 0) {
        const float bv = (bias != nullptr) ? bias[co] : 0.f;
        out[gw] = mult * (bv + acc * inv_area);
    }
}

torch::Tensor convt_gap_cuda(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias_opt,
                             std::vector<int64_t> lo_h, std::vector<int64_t> hi_h,
                             std::vector<int64_t> lo_w, std::vector<int64_t> hi_w,
                             int64_t Hout, int64_t Wout, double multiplier) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be float32 CUDA");
    auto xc = x.contiguous();
    auto wc = weight.contiguous();
    const int B = xc.size(0), Cin = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int Cout = wc.size(1), KH = wc.size(2), KW = wc.size(3);
    TORCH_CHECK((int)lo_h.size() == KH && (int)lo_w.size() == KW, "range size mismatch");
    TORCH_CHECK(KH == KW && KH >= 1 && KH <= 5, "unsupported kernel size");

    Ranges r;
    for (int k = 0; k < MAXK; ++k) {
        r.lo_h[k] = (k < KH) ? (int)lo_h[k] : 1;
        r.hi_h[k] = (k < KH) ? (int)hi_h[k] : 0;
        r.lo_w[k] = (k < KW) ? (int)lo_w[k] : 1;
        r.hi_w[k] = (k < KW) ? (int)hi_w[k] : 0;
    }

    const int KK = KH * KW;
    auto S = torch::empty({B, Cin, KK}, xc.options());
    const int vec = ((W % 4) == 0 && (reinterpret_cast<uintptr_t>(xc.data_ptr<float>()) % 16) == 0) ? 1 : 0;
    const int threads = 256;
    const unsigned planes = (unsigned)(B * Cin);

    switch (KH) {
        case 1: rect_sums_kernel<1, 1><<<planes, threads>>>(xc.data_ptr<float>(), S.data_ptr<float>(), H, W, r, vec); break;
        case 2: rect_sums_kernel<2, 2><<<planes, threads>>>(xc.data_ptr<float>(), S.data_ptr<float>(), H, W, r, vec); break;
        case 3: rect_sums_kernel<3, 3><<<planes, threads>>>(xc.data_ptr<float>(), S.data_ptr<float>(), H, W, r, vec); break;
        case 4: rect_sums_kernel<4, 4><<<planes, threads>>>(xc.data_ptr<float>(), S.data_ptr<float>(), H, W, r, vec); break;
        default: rect_sums_kernel<5, 5><<<planes, threads>>>(xc.data_ptr<float>(), S.data_ptr<float>(), H, W, r, vec); break;
    }

    const float* bptr = nullptr;
    torch::Tensor bc;
    if (bias_opt.has_value() && bias_opt.value().defined()) {
        bc = bias_opt.value().contiguous();
        bptr = bc.data_ptr<float>();
    }

    auto out = torch::empty({B, Cout, 1, 1}, xc.options());
    const int cthreads = 256;
    const int wpb = cthreads / 32;
    const long long nwarps = (long long)B * Cout;
    const unsigned cblocks = (unsigned)((nwarps + wpb - 1) / wpb);
    const float inv_area = (float)(1.0 / ((double)Hout * (double)Wout));
    contract_kernel<<<cblocks, cthreads>>>(S.data_ptr<float>(), wc.data_ptr<float>(), bptr,
                                           out.data_ptr<float>(), B, Cin, Cout, KK,
                                           inv_area, (float)multiplier);
    return out;
}
"""

cpp_source = """
#include <vector>
torch::Tensor convt_gap_cuda(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias_opt,
                             std::vector<int64_t> lo_h, std::vector<int64_t> hi_h,
                             std::vector<int64_t> lo_w, std::vector<int64_t> hi_w,
                             int64_t Hout, int64_t Wout, double multiplier);
"""

fused_ext = load_inline(
    name="convtranspose_global_avg_fused",
    cpp_sources=cpp_source,
    cuda_sources=source,
    functions=["convt_gap_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


def _valid_input_range(I, O, s, p, d, k):
    # input indices i in [0, I) such that 0 <= i*s - p + k*d <= O-1
    off = k * d - p
    lo = max(0, -(off // s))             # ceil(-off / s)
    hi = min(I - 1, (O - 1 - off) // s)  # floor((O-1-off) / s)
    return lo, hi


class ModelNew(nn.Module):
    """
    ConvTranspose2d -> *multiplier -> global mean -> global mean, computed without
    materializing the transposed-convolution output.
    """
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.multiplier = multiplier

    def forward(self, x):
        ct = self.conv_transpose
        KH, KW = ct.kernel_size
        if ct.groups != 1 or KH != KW or KH > 5 or not x.is_cuda:
            y = ct(x) * self.multiplier
            y = torch.mean(y, dim=[2, 3], keepdim=True)
            return torch.mean(y, dim=[2, 3], keepdim=True)

        H, W = x.shape[2], x.shape[3]
        sh, sw = ct.stride
        ph, pw = ct.padding
        dh, dw = ct.dilation
        oph, opw = ct.output_padding
        Hout = (H - 1) * sh - 2 * ph + dh * (KH - 1) + oph + 1
        Wout = (W - 1) * sw - 2 * pw + dw * (KW - 1) + opw + 1

        lo_h, hi_h, lo_w, hi_w = [], [], [], []
        for k in range(KH):
            l, h = _valid_input_range(H, Hout, sh, ph, dh, k)
            lo_h.append(l)
            hi_h.append(h)
        for k in range(KW):
            l, h = _valid_input_range(W, Wout, sw, pw, dw, k)
            lo_w.append(l)
            hi_w.append(h)

        return fused_ext.convt_gap_cuda(x, ct.weight, ct.bias, lo_h, hi_h, lo_w, hi_w,
                                        Hout, Wout, float(self.multiplier))
