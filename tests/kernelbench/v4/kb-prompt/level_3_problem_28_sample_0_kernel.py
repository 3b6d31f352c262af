import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# ---------------------------------------------------------------------------
# Vision Transformer with custom CUDA kernels.
#
# Note on semantics: nn.TransformerEncoderLayer defaults to batch_first=False,
# so the (B, N+1, D) tensor is interpreted as (seq=B, batch=N+1, D): attention
# runs over a sequence of length B (=2) for each of the N+1 tokens.  The
# custom path reproduces exactly that (post-norm, ReLU FFN).
#
# GEMMs stay on cuBLAS (full FP32, no TF32).  Custom kernels:
#   * embed_assemble  : patch-embedding bias + cls token concat + positional add
#   * mha_small_seq   : one warp per (query, batch, head); online softmax over
#                       the (short) key sequence, q/k/v read straight from the
#                       packed in_proj output, heads written already merged
#   * add_layernorm   : residual add + LayerNorm (one block per row, two-pass)
#   * bias_act        : bias + ReLU / exact-erf GELU epilogue (float4)
# ---------------------------------------------------------------------------
cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

#define MAX_HD_PER_LANE 8   // head_dim <= 256

// ---------------------------------------------------------------- embedding assembly
// out[b, 0, :] = cls + pos[0];  out[b, i, :] = (xw[b, i-1, :] + bias) + pos[i]
__global__ void embed_assemble_kernel(const float* __restrict__ xw, const float* __restrict__ bias,
                                      const float* __restrict__ cls, const float* __restrict__ pos,
                                      float* __restrict__ out, int B, int T, int D)
{
    const long long total = (long long)B * T * D;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const int d = (int)(i % D);
        const long long r = i / D;
        const int t = (int)(r % T);
        const int b = (int)(r / T);
        float v;
        if (t == 0) v = cls[d];
        else v = xw[((long long)b * (T - 1) + (t - 1)) * D + d] + bias[d];
        out[i] = v + pos[(long long)t * D + d];
    }
}

torch::Tensor embed_assemble_cuda(torch::Tensor xw, torch::Tensor bias, torch::Tensor cls, torch::Tensor pos) {
    xw = xw.contiguous();
    const int B = xw.size(0), Np = xw.size(1), D = xw.size(2);
    const int T = Np + 1;
    auto out = torch::empty({B, T, D}, xw.options());
    const long long total = out.numel();
    const int threads = 256;
    const int blocks = (int)std::min<long long>((total + threads - 1) / threads, 65535LL);
    embed_assemble_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xw.data_ptr<float>(), bias.contiguous().data_ptr<float>(), cls.contiguous().data_ptr<float>(),
        pos.contiguous().data_ptr<float>(), out.data_ptr<float>(), B, T, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// ---------------------------------------------------------------- attention
// qkv: [S*Bt, 3*E] rows ordered (s, b); out: [S*Bt, E]
__global__ void mha_small_seq_kernel(const float* __restrict__ qkv, float* __restrict__ out,
                                     int S, int Bt, int E, int nheads, int hd, float scale)
{
    const int warps_per_block = blockDim.x >> 5;
    const int lane = threadIdx.x & 31;
    const long long nq = (long long)S * Bt * nheads;
    const long long gw = (long long)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    if (gw >= nq) return;

    const int h = (int)(gw % nheads);
    const long long sb = gw / nheads;            // = s * Bt + b
    const int b = (int)(sb % Bt);
    const long long row_stride = 3LL * E;

    const float* qp = qkv + sb * row_stride + h * hd;
    float q[MAX_HD_PER_LANE], acc[MAX_HD_PER_LANE];
#pragma unroll
    for (int k = 0; k < MAX_HD_PER_LANE; ++k) {
        const int d = lane + 32 * k;
        q[k] = (d < hd) ? qp[d] * scale : 0.f;
        acc[k] = 0.f;
    }

    float m = -INFINITY, l = 0.f;
    for (int j = 0; j < S; ++j) {
        const long long krow = ((long long)j * Bt + b) * row_stride;
        const float* kp = qkv + krow + E + h * hd;
        const float* vp = qkv + krow + 2 * E + h * hd;
        float dot = 0.f;
#pragma unroll
        for (int k = 0; k < MAX_HD_PER_LANE; ++k) {
            const int d = lane + 32 * k;
            if (d < hd) dot = fmaf(q[k], kp[d], dot);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffff, dot, o);

        const float m_new = fmaxf(m, dot);
        const float corr = expf(m - m_new);     // exp(-inf) = 0 on the first key
        const float p = expf(dot - m_new);
        l = l * corr + p;
#pragma unroll
        for (int k = 0; k < MAX_HD_PER_LANE; ++k) {
            const int d = lane + 32 * k;
            if (d < hd) acc[k] = fmaf(p, vp[d], acc[k] * corr);
        }
        m = m_new;
    }
    const float inv_l = 1.f / l;
    float* op = out + sb * E + h * hd;
#pragma unroll
    for (int k = 0; k < MAX_HD_PER_LANE; ++k) {
        const int d = lane + 32 * k;
        if (d < hd) op[d] = acc[k] * inv_l;
    }
}

torch::Tensor mha_small_seq_cuda(torch::Tensor qkv, int64_t S, int64_t Bt, int64_t E, int64_t nheads) {
    qkv = qkv.contiguous();
    const int hd = (int)(E / nheads);
    TORCH_CHECK(hd * nheads == E && hd <= 32 * MAX_HD_PER_LANE, "unsupported head dim");
    auto out = torch::empty({S * Bt, E}, qkv.options());
    const long long nq = S * Bt * nheads;
    const int threads = 256;
    const long long blocks = (nq + (threads / 32) - 1) / (threads / 32);
    const float scale = 1.0f / sqrtf((float)hd);
    mha_small_seq_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        qkv.data_ptr<float>(), out.data_ptr<float>(), (int)S, (int)Bt, (int)E, (int)nheads, hd, scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// ---------------------------------------------------------------- residual + LayerNorm
__device__ __forceinline__ float block_allreduce_sum(float v, float* sh) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    const int nw = blockDim.x >> 5;
    v = (lane < nw) ? sh[lane] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__global__ void add_layernorm_kernel(const float* __restrict__ x, const float* __restrict__ r,
                                     const float* __restrict__ gamma, const float* __restrict__ beta,
                                     float* __restrict__ out, int D, float eps)
{
    extern __shared__ float rowbuf[];    // D floats
    __shared__ float sh[32];
    const long long row = blockIdx.x;
    const float* xr = x + row * D;
    const float* rr = r + row * D;

    float s = 0.f;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        const float v = xr[i] + rr[i];
        rowbuf[i] = v;
        s += v;
    }
    const float mean = block_allreduce_sum(s, sh) / (float)D;
    float ss = 0.f;
    for (int i = threadIdx.x; i < D; i += blockDim.x) {
        const float d = rowbuf[i] - mean;
        ss += d * d;
    }
    const float var = block_allreduce_sum(ss, sh) / (float)D;
    const float rstd = rsqrtf(var + eps);
    float* orow = out + row * D;
    for (int i = threadIdx.x; i < D; i += blockDim.x)
        orow[i] = (rowbuf[i] - mean) * rstd * gamma[i] + beta[i];
}

torch::Tensor add_layernorm_cuda(torch::Tensor x, torch::Tensor r, torch::Tensor gamma, torch::Tensor beta, double eps) {
    x = x.contiguous(); r = r.contiguous();
    const int D = x.size(-1);
    const long long rows = x.numel() / D;
    auto out = torch::empty_like(x);
    int threads = 128;
    while (threads < D / 4 && threads < 1024) threads <<= 1;
    add_layernorm_kernel<<<(unsigned)rows, threads, D * sizeof(float), at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), r.data_ptr<float>(), gamma.contiguous().data_ptr<float>(), beta.contiguous().data_ptr<float>(),
        out.data_ptr<float>(), D, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// ---------------------------------------------------------------- bias + activation (in place)
__device__ __forceinline__ float apply_act(float v, int act) {
    if (act == 1) return fmaxf(v, 0.f);
    if (act == 2) return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    return v;
}

__global__ void bias_act_vec4_kernel(float4* __restrict__ y, const float4* __restrict__ bias,
                                     long long total4, int cols4, int act)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total4; i += (long long)gridDim.x * blockDim.x) {
        const float4 b = __ldg(bias + (i % cols4));
        float4 v = y[i];
        v.x = apply_act(v.x + b.x, act);
        v.y = apply_act(v.y + b.y, act);
        v.z = apply_act(v.z + b.z, act);
        v.w = apply_act(v.w + b.w, act);
        y[i] = v;
    }
}

__global__ void bias_act_kernel(float* __restrict__ y, const float* __restrict__ bias, long long total, int cols, int act) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        y[i] = apply_act(y[i] + bias[i % cols], act);
}

torch::Tensor bias_act_cuda(torch::Tensor y, torch::Tensor bias, int64_t act) {
    TORCH_CHECK(y.is_contiguous(), "y must be contiguous");
    const int cols = y.size(-1);
    const long long total = y.numel();
    if (total == 0) return y;
    auto b = bias.contiguous();
    const int threads = 256;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (cols % 4 == 0) {
        const long long t4 = total / 4;
        const int blocks = (int)std::min<long long>((t4 + threads - 1) / threads, 65535LL);
        bias_act_vec4_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<float4*>(y.data_ptr<float>()),
            reinterpret_cast<const float4*>(b.data_ptr<float>()), t4, cols / 4, (int)act);
    } else {
        const int blocks = (int)std::min<long long>((total + threads - 1) / threads, 65535LL);
        bias_act_kernel<<<blocks, threads, 0, stream>>>(y.data_ptr<float>(), b.data_ptr<float>(), total, cols, (int)act);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = r"""
torch::Tensor embed_assemble_cuda(torch::Tensor xw, torch::Tensor bias, torch::Tensor cls, torch::Tensor pos);
torch::Tensor mha_small_seq_cuda(torch::Tensor qkv, int64_t S, int64_t Bt, int64_t E, int64_t nheads);
torch::Tensor add_layernorm_cuda(torch::Tensor x, torch::Tensor r, torch::Tensor gamma, torch::Tensor beta, double eps);
torch::Tensor bias_act_cuda(torch::Tensor y, torch::Tensor bias, int64_t act);
"""

vit_ops = load_inline(
    name="vit_fused_ops",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["embed_assemble_cuda", "mha_small_seq_cuda", "add_layernorm_cuda", "bias_act_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)

ACT_NONE, ACT_RELU, ACT_GELU = 0, 1, 2


class ModelNew(nn.Module):
    def __init__(self, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels=3, dropout=0.1, emb_dropout=0.1):
        super(ModelNew, self).__init__()

        assert image_size % patch_size == 0, "Image dimensions must be divisible by the patch size."
        num_patches = (image_size // patch_size) ** 2
        patch_dim = channels * patch_size ** 2

        self.patch_size = patch_size
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.patch_to_embedding = nn.Linear(patch_dim, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)

        self.transformer = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d_model=dim, nhead=heads, dim_feedforward=mlp_dim, dropout=dropout),
            num_layers=depth
        )

        self.to_cls_token = nn.Identity()
        self.mlp_head = nn.Sequential(
            nn.Linear(dim, mlp_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(mlp_dim, num_classes)
        )
        self.heads = heads

    # ------------------------------------------------------------------ reference path (used only if dropout is active)
    def _reference_forward(self, img):
        p = self.patch_size
        x = img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, p * p * img.shape[1])
        x = self.patch_to_embedding(x)
        cls_tokens = self.cls_token.expand(img.shape[0], -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x += self.pos_embedding
        x = self.dropout(x)
        x = self.transformer(x)
        x = self.to_cls_token(x[:, 0])
        return self.mlp_head(x)

    def _dropout_active(self):
        if not self.training:
            return False
        return any(isinstance(m, nn.Dropout) and m.p > 0 for m in self.modules())

    def _encoder_layer(self, x2d, layer, S, Bt):
        E = x2d.shape[1]
        attn = layer.self_attn
        # packed q/k/v projection (cuBLAS)
        qkv = torch.addmm(attn.in_proj_bias, x2d, attn.in_proj_weight.t())
        a = vit_ops.mha_small_seq_cuda(qkv, S, Bt, E, attn.num_heads)
        a = torch.addmm(attn.out_proj.bias, a, attn.out_proj.weight.t())
        x2d = vit_ops.add_layernorm_cuda(x2d, a, layer.norm1.weight, layer.norm1.bias, layer.norm1.eps)
        # feed-forward: GEMM + fused bias/ReLU epilogue, GEMM (+bias) , residual + LN
        h = torch.mm(x2d, layer.linear1.weight.t())
        h = vit_ops.bias_act_cuda(h, layer.linear1.bias, ACT_RELU)
        f = torch.addmm(layer.linear2.bias, h, layer.linear2.weight.t())
        x2d = vit_ops.add_layernorm_cuda(x2d, f, layer.norm2.weight, layer.norm2.bias, layer.norm2.eps)
        return x2d

    def forward(self, img):
        if self._dropout_active():
            return self._reference_forward(img)
        layers = self.transformer.layers
        if any(getattr(l, "norm_first", False) or getattr(l.self_attn, "batch_first", False)
               or getattr(l, "activation", F.relu) is not F.relu for l in layers):
            return self._reference_forward(img)

        p = self.patch_size
        B = img.shape[0]
        x = img.unfold(2, p, p).unfold(3, p, p).reshape(B, -1, p * p * img.shape[1])
        Np = x.shape[1]
        D = self.patch_to_embedding.out_features

        # patch embedding GEMM; bias, cls-token concat and positional embedding fused
        xw = torch.mm(x.reshape(B * Np, -1), self.patch_to_embedding.weight.t()).view(B, Np, D)
        x = vit_ops.embed_assemble_cuda(xw, self.patch_to_embedding.bias,
                                        self.cls_token.reshape(-1), self.pos_embedding.reshape(-1))

        # encoder is batch_first=False: (seq = B, batch = Np + 1, D)
        S, Bt = B, Np + 1
        x2d = x.view(S * Bt, D)
        for layer in layers:
            x2d = self._encoder_layer(x2d, layer, S, Bt)
        if self.transformer.norm is not None:
            x2d = F.layer_norm(x2d, (D,), self.transformer.norm.weight, self.transformer.norm.bias,
                               self.transformer.norm.eps)
        x = x2d.view(B, Bt, D)

        cls = self.to_cls_token(x[:, 0])
        lin1, lin2 = self.mlp_head[0], self.mlp_head[3]
        h = torch.mm(cls, lin1.weight.t())
        h = vit_ops.bias_act_cuda(h, lin1.bias, ACT_GELU)
        return torch.addmm(lin2.bias, h, lin2.weight.t())
