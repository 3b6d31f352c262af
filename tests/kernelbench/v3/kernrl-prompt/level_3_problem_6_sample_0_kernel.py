import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// Inception module, all branches written straight into their channel slice of the
// concatenated output (no torch.cat):
//   K1 conv1x1_gemm<false>: the three 1x1 convs that read x (branch1x1, 3x3-reduce,
//      5x5-reduce) as ONE GEMM over the stacked output channels; rows are routed
//      to out[:, 0:c1], r3 scratch and r5 scratch.
//   K2 conv1x1_gemm<true> : max-pool 3x3/s1/p1 fused into the B-operand load,
//      followed by the pool projection -> out[:, c1+c3+c5 :]
//   K3 conv_kxk<3>        : 3x3 conv on r3 -> out[:, c1 : c1+c3]
//   K4 conv_kxk<5>        : 5x5 conv on r5 -> out[:, c1+c3 : c1+c3+c5]

// ------------------------------------------------------------------------------
// 1x1 conv as GEMM: D[co][p] = sum_ci W[co][ci] * X[n][ci][p] + b[co]
// Block tile 64 (co) x 128 (pixels) x 16 (ci), 256 threads, 4x8 per thread.
// ------------------------------------------------------------------------------
#define G_BM 64
#define G_BN 128
#define G_BK 16

template <bool POOL>
__global__ void __launch_bounds__(256)
conv1x1_gemm_kernel(const float* __restrict__ x,
                    const float* __restrict__ wA, const float* __restrict__ bA, int nA,
                    float* dA, int dA_C, int dA_off,
                    const float* __restrict__ wB, const float* __restrict__ bB, int nB,
                    float* dB, int dB_C, int dB_off,
                    const float* __restrict__ wC, const float* __restrict__ bC, int nC,
                    float* dC, int dC_C, int dC_off,
                    int Cin, int H, int W)
{
    __shared__ __align__(16) float As[G_BK][G_BM + 4];
    __shared__ __align__(16) float Bs[G_BK][G_BN];

    const int HW = H * W;
    const int Ctot = nA + nB + nC;
    const int tid = threadIdx.x;
    const int tx = tid & 15;   // pixel group: tx*4 and 64 + tx*4
    const int ty = tid >> 4;   // channel group: ty*4
    const int m0 = blockIdx.x * G_BM;
    const int p0 = blockIdx.y * G_BN;
    const int n = blockIdx.z;
    const float* xn = x + (size_t)n * Cin * HW;

    // ---- A (weights) loader: k = tid & 15, m = (tid >> 4) + 16*i ----
    const int la_k = tid & 15;
    const int la_m = tid >> 4;
    const float* arow[4];
    bool aok[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        int co = m0 + la_m + 16 * i;
        aok[i] = co < Ctot;
        const float* r = wA;
        if (aok[i]) {
            if (co < nA) r = wA + (size_t)co * Cin;
            else if (co < nA + nB) r = wB + (size_t)(co - nA) * Cin;
            else r = wC + (size_t)(co - nA - nB) * Cin;
        }
        arow[i] = r;
    }
    // ---- B (activations) loader: p = tid & 127, k = (tid >> 7) + 2*i ----
    const int lb_p = tid & 127;
    const int lb_k = tid >> 7;
    const int gp = p0 + lb_p;
    const bool pok = gp < HW;
    const int ph = pok ? gp / W : 0;
    const int pw = pok ? gp - ph * W : 0;

    float ra[4], rb[8];
    auto gload = [&](int k0) {
        const int ka = k0 + la_k;
#pragma unroll
        for (int i = 0; i < 4; ++i)
            ra[i] = (aok[i] && ka < Cin) ? __ldg(arow[i] + ka) : 0.0f;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int kb = k0 + lb_k + 2 * i;
            float v = 0.0f;
            if (pok && kb < Cin) {
                const float* plane = xn + (size_t)kb * HW;
                if (POOL) {
                    float m = __int_as_float((int)0xff800000);   // -inf padding
#pragma unroll
                    for (int dh = -1; dh <= 1; ++dh) {
                        const int hh = ph + dh;
                        if (hh < 0 || hh >= H) continue;
#pragma unroll
                        for (int dw = -1; dw <= 1; ++dw) {
                            const int ww = pw + dw;
                            if (ww < 0 || ww >= W) continue;
                            m = fmaxf(m, __ldg(plane + hh * W + ww));
                        }
                    }
                    v = m;
                } else {
                    v = __ldg(plane + gp);
                }
            }
            rb[i] = v;
        }
    };
    auto sstore = [&]() {
#pragma unroll
        for (int i = 0; i < 4; ++i) As[la_k][la_m + 16 * i] = ra[i];
#pragma unroll
        for (int i = 0; i < 8; ++i) Bs[lb_k + 2 * i][lb_p] = rb[i];
    };

    float acc[4][8];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    const int nT = (Cin + G_BK - 1) / G_BK;
    gload(0);
    sstore();
    __syncthreads();
    for (int t = 0; t < nT; ++t) {
        const bool has_next = (t + 1) < nT;
        if (has_next) gload((t + 1) * G_BK);
#pragma unroll
        for (int kk = 0; kk < G_BK; ++kk) {
            const float4 a = *reinterpret_cast<const float4*>(&As[kk][ty * 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][64 + tx * 4]);
            const float av[4] = {a.x, a.y, a.z, a.w};
            const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        if (has_next) {
            __syncthreads();
            sstore();
            __syncthreads();
        }
    }

    const bool vec = (HW & 3) == 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int co = m0 + ty * 4 + i;
        if (co >= Ctot) continue;
        float* dst;
        float bias;
        if (co < nA) {
            dst = dA + ((size_t)n * dA_C + dA_off + co) * HW;
            bias = __ldg(&bA[co]);
        } else if (co < nA + nB) {
            const int c = co - nA;
            dst = dB + ((size_t)n * dB_C + dB_off + c) * HW;
            bias = __ldg(&bB[c]);
        } else {
            const int c = co - nA - nB;
            dst = dC + ((size_t)n * dC_C + dC_off + c) * HW;
            bias = __ldg(&bC[c]);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int p = p0 + h * 64 + tx * 4;
            if (vec && p + 3 < HW) {
                *reinterpret_cast<float4*>(dst + p) =
                    make_float4(acc[i][h * 4 + 0] + bias, acc[i][h * 4 + 1] + bias,
                                acc[i][h * 4 + 2] + bias, acc[i][h * 4 + 3] + bias);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (p + j < HW) dst[p + j] = acc[i][h * 4 + j] + bias;
            }
        }
    }
}

// ------------------------------------------------------------------------------
// KSxKS conv, stride 1, pad KS/2.  Block: 16x32 output pixels x 32 output channels.
// Thread: 2 rows (tr, tr+8) x 4 consecutive columns x 8 output channels.
// ------------------------------------------------------------------------------
#define C_CO 32
#define C_TH 16
#define C_TW 32

template <int KS, int CI_T>
__global__ void __launch_bounds__(256)
conv_kxk_kernel(const float* __restrict__ in, const float* __restrict__ w,
                const float* __restrict__ b, float* out,
                int Cin, int Cout, int H, int W, int outC, int outOff, int tilesW)
{
    constexpr int PAD = KS / 2;
    constexpr int IH = C_TH + KS - 1;
    constexpr int IW = C_TW + KS - 1;
    constexpr int IWS = IW + 1;          // odd row stride -> conflict-free row reads
    constexpr int KK = KS * KS;

    __shared__ float xs[CI_T][IH][IWS];
    __shared__ __align__(16) float ws[CI_T][KK][C_CO];

    const int tid = threadIdx.x;
    const int s = tid & 63;
    const int cg = tid >> 6;      // 8-channel group (uniform per warp)
    const int tr = s >> 3;        // 0..7
    const int tc = s & 7;         // 0..7

    const int co0 = blockIdx.x * C_CO;
    const int tH = blockIdx.y / tilesW;
    const int tW = blockIdx.y - tH * tilesW;
    const int h0 = tH * C_TH;
    const int w0 = tW * C_TW;
    const int n = blockIdx.z;
    const float* inN = in + (size_t)n * Cin * H * W;

    float acc[2][4][8];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int px = 0; px < 4; ++px)
#pragma unroll
            for (int c = 0; c < 8; ++c) acc[r][px][c] = 0.0f;

    for (int ci0 = 0; ci0 < Cin; ci0 += CI_T) {
        for (int e = tid; e < CI_T * IH * IW; e += 256) {
            const int cl = e / (IH * IW);
            const int rem = e - cl * (IH * IW);
            const int r = rem / IW;
            const int c = rem - r * IW;
            const int ci = ci0 + cl;
            const int ih = h0 - PAD + r;
            const int iw = w0 - PAD + c;
            float v = 0.0f;
            if (ci < Cin && ih >= 0 && ih < H && iw >= 0 && iw < W)
                v = __ldg(&inN[((size_t)ci * H + ih) * W + iw]);
            xs[cl][r][c] = v;
        }
        for (int e = tid; e < C_CO * CI_T * KK; e += 256) {
            const int col = e / (CI_T * KK);
            const int rem = e - col * (CI_T * KK);
            const int cl = rem / KK;
            const int tap = rem - cl * KK;
            const int co = co0 + col;
            const int ci = ci0 + cl;
            float v = 0.0f;
            if (co < Cout && ci < Cin) v = __ldg(&w[((size_t)co * Cin + ci) * KK + tap]);
            ws[cl][tap][col] = v;
        }
        __syncthreads();

        for (int cl = 0; cl < CI_T; ++cl) {
#pragma unroll
            for (int kh = 0; kh < KS; ++kh) {
                float r0[KS + 3], r1[KS + 3];
#pragma unroll
                for (int j = 0; j < KS + 3; ++j) {
                    r0[j] = xs[cl][tr + kh][tc * 4 + j];
                    r1[j] = xs[cl][tr + 8 + kh][tc * 4 + j];
                }
#pragma unroll
                for (int kw = 0; kw < KS; ++kw) {
                    const float4 wa = *reinterpret_cast<const float4*>(&ws[cl][kh * KS + kw][cg * 8]);
                    const float4 wb = *reinterpret_cast<const float4*>(&ws[cl][kh * KS + kw][cg * 8 + 4]);
                    const float wv[8] = {wa.x, wa.y, wa.z, wa.w, wb.x, wb.y, wb.z, wb.w};
#pragma unroll
                    for (int px = 0; px < 4; ++px) {
                        const float v0 = r0[px + kw];
                        const float v1 = r1[px + kw];
#pragma unroll
                        for (int c = 0; c < 8; ++c) {
                            acc[0][px][c] = fmaf(v0, wv[c], acc[0][px][c]);
                            acc[1][px][c] = fmaf(v1, wv[c], acc[1][px][c]);
                        }
                    }
                }
            }
        }
        __syncthreads();
    }

    const int owb = w0 + tc * 4;
    const bool vec = ((W & 3) == 0) && (owb + 3 < W);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int oh = h0 + tr + 8 * r;
        if (oh >= H) continue;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
            const int co = co0 + cg * 8 + c;
            if (co >= Cout) continue;
            const float bv = __ldg(&b[co]);
            float* dst = out + (((size_t)n * outC + outOff + co) * H + oh) * W;
            if (vec) {
                *reinterpret_cast<float4*>(dst + owb) =
                    make_float4(acc[r][0][c] + bv, acc[r][1][c] + bv, acc[r][2][c] + bv, acc[r][3][c] + bv);
            } else {
#pragma unroll
                for (int px = 0; px < 4; ++px)
                    if (owb + px < W) dst[owb + px] = acc[r][px][c] + bv;
            }
        }
    }
}

torch::Tensor inception_forward(torch::Tensor x,
                                torch::Tensor w1, torch::Tensor b1,
                                torch::Tensor w3r, torch::Tensor b3r,
                                torch::Tensor w3, torch::Tensor b3,
                                torch::Tensor w5r, torch::Tensor b5r,
                                torch::Tensor w5, torch::Tensor b5,
                                torch::Tensor wp, torch::Tensor bp)
{
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "x must be a contiguous CUDA tensor");
    const int N = (int)x.size(0);
    const int Cin = (int)x.size(1);
    const int H = (int)x.size(2);
    const int W = (int)x.size(3);
    const int HW = H * W;
    const int c1 = (int)w1.size(0);
    const int c3r = (int)w3r.size(0);
    const int c3 = (int)w3.size(0);
    const int c5r = (int)w5r.size(0);
    const int c5 = (int)w5.size(0);
    const int cp = (int)wp.size(0);
    const int Cout = c1 + c3 + c5 + cp;

    auto out = torch::empty({N, Cout, H, W}, x.options());
    auto r3 = torch::empty({N, c3r, H, W}, x.options());
    auto r5 = torch::empty({N, c5r, H, W}, x.options());

    const float* xp = x.data_ptr<float>();
    float* op = out.data_ptr<float>();

    // K1: stacked 1x1 convs (branch1x1 | 3x3 reduce | 5x5 reduce)
    dim3 g1((c1 + c3r + c5r + G_BM - 1) / G_BM, (HW + G_BN - 1) / G_BN, N);
    conv1x1_gemm_kernel<false><<<g1, 256>>>(xp,
        w1.data_ptr<float>(), b1.data_ptr<float>(), c1, op, Cout, 0,
        w3r.data_ptr<float>(), b3r.data_ptr<float>(), c3r, r3.data_ptr<float>(), c3r, 0,
        w5r.data_ptr<float>(), b5r.data_ptr<float>(), c5r, r5.data_ptr<float>(), c5r, 0,
        Cin, H, W);

    // K2: maxpool(3,1,1) fused into the pool-projection 1x1 conv
    dim3 g2((cp + G_BM - 1) / G_BM, (HW + G_BN - 1) / G_BN, N);
    conv1x1_gemm_kernel<true><<<g2, 256>>>(xp,
        wp.data_ptr<float>(), bp.data_ptr<float>(), cp, op, Cout, c1 + c3 + c5,
        wp.data_ptr<float>(), bp.data_ptr<float>(), 0, op, Cout, 0,
        wp.data_ptr<float>(), bp.data_ptr<float>(), 0, op, Cout, 0,
        Cin, H, W);

    const int tilesW = (W + C_TW - 1) / C_TW;
    const int tilesH = (H + C_TH - 1) / C_TH;

    // K3: 3x3 conv on the reduced tensor
    dim3 g3((c3 + C_CO - 1) / C_CO, tilesH * tilesW, N);
    conv_kxk_kernel<3, 8><<<g3, 256>>>(r3.data_ptr<float>(), w3.data_ptr<float>(), b3.data_ptr<float>(),
                                       op, c3r, c3, H, W, Cout, c1, tilesW);

    // K4: 5x5 conv on the reduced tensor
    dim3 g4((c5 + C_CO - 1) / C_CO, tilesH * tilesW, N);
    conv_kxk_kernel<5, 4><<<g4, 256>>>(r5.data_ptr<float>(), w5.data_ptr<float>(), b5.data_ptr<float>(),
                                       op, c5r, c5, H, W, Cout, c1 + c3, tilesW);
    return out;
}
"""

cpp_source = """
torch::Tensor inception_forward(torch::Tensor x,
                                torch::Tensor w1, torch::Tensor b1,
                                torch::Tensor w3r, torch::Tensor b3r,
                                torch::Tensor w3, torch::Tensor b3,
                                torch::Tensor w5r, torch::Tensor b5r,
                                torch::Tensor w5, torch::Tensor b5,
                                torch::Tensor wp, torch::Tensor bp);
"""

ext = load_inline(
    name="inception_module_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["inception_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_1x1, reduce_3x3, out_3x3, reduce_5x5, out_5x5, pool_proj):
        super(ModelNew, self).__init__()
        self.branch1x1 = nn.Conv2d(in_channels, out_1x1, kernel_size=1)
        self.branch3x3 = nn.Sequential(
            nn.Conv2d(in_channels, reduce_3x3, kernel_size=1),
            nn.Conv2d(reduce_3x3, out_3x3, kernel_size=3, padding=1),
        )
        self.branch5x5 = nn.Sequential(
            nn.Conv2d(in_channels, reduce_5x5, kernel_size=1),
            nn.Conv2d(reduce_5x5, out_5x5, kernel_size=5, padding=2),
        )
        self.branch_pool = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1),
            nn.Conv2d(in_channels, pool_proj, kernel_size=1),
        )

    def forward(self, x):
        return ext.inception_forward(
            x,
            self.branch1x1.weight, self.branch1x1.bias,
            self.branch3x3[0].weight, self.branch3x3[0].bias,
            self.branch3x3[1].weight, self.branch3x3[1].bias,
            self.branch5x5[0].weight, self.branch5x5[0].bias,
            self.branch5x5[1].weight, self.branch5x5[1].bias,
            self.branch_pool[1].weight, self.branch_pool[1].bias,
        )
