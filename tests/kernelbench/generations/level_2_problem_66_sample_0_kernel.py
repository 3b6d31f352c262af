import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Row softmax (one block per row, online max/sum) with an optional fused bias add.
# In eval mode (or p == 0) dropout is the identity, so bias + softmax run fused right after
# the cuBLAS GEMM; in training mode dropout is applied with PyTorch's RNG first.
softmax_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math_constants.h>

#define THREADS 512

__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    float mn = fmaxf(m, m2);
    if (mn == -CUDART_INF_F) { m = mn; s = 0.0f; return; }
    s = s * __expf(m - mn) + s2 * __expf(m2 - mn);
    m = mn;
}

__global__ void bias_softmax_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                    float* __restrict__ y, int N, bool use_bias) {
    const float* xr = x + (long long)blockIdx.x * N;
    float* yr = y + (long long)blockIdx.x * N;

    float m = -CUDART_INF_F, s = 0.0f;
    for (int j = threadIdx.x; j < N; j += THREADS) {
        float v = xr[j] + (use_bias ? bias[j] : 0.0f);
        if (v > m) { s = s * __expf(m - v) + 1.0f; m = v; }
        else { s += __expf(v - m); }
    }
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffff, m, o);
        float s2 = __shfl_xor_sync(0xffffffff, s, o);
        combine(m, s, m2, s2);
    }
    __shared__ float sm[THREADS / 32], ss[THREADS / 32];
    __shared__ float fin_m, fin_s;
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { sm[wid] = m; ss[wid] = s; }
    __syncthreads();
    if (wid == 0) {
        m = lane < THREADS / 32 ? sm[lane] : -CUDART_INF_F;
        s = lane < THREADS / 32 ? ss[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) {
            float m2 = __shfl_xor_sync(0xffffffff, m, o);
            float s2 = __shfl_xor_sync(0xffffffff, s, o);
            combine(m, s, m2, s2);
        }
        if (lane == 0) { fin_m = m; fin_s = s; }
    }
    __syncthreads();
    const float mx = fin_m;
    const float inv = 1.0f / fin_s;
    for (int j = threadIdx.x; j < N; j += THREADS) {
        float v = xr[j] + (use_bias ? bias[j] : 0.0f);
        yr[j] = __expf(v - mx) * inv;
    }
}

torch::Tensor bias_softmax(torch::Tensor x, torch::Tensor bias, bool use_bias) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2D");
    x = x.contiguous();
    bias = bias.contiguous();
    auto y = torch::empty_like(x);
    const int B = x.size(0);
    const int N = x.size(1);
    if (B == 0 || N == 0) return y;
    bias_softmax_kernel<<<B, THREADS>>>(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
                                        N, use_bias);
    return y;
}
"""

softmax_cpp = "torch::Tensor bias_softmax(torch::Tensor x, torch::Tensor bias, bool use_bias);"

softmax_ext = load_inline(
    name="matmul_dropout_softmax_fused",
    cpp_sources=softmax_cpp,
    cuda_sources=softmax_source,
    functions=["bias_softmax"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Linear (cuBLAS) -> Dropout -> Softmax with a custom fused bias/softmax kernel.
    """
    def __init__(self, in_features, out_features, dropout_p):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        if self.training and self.dropout.p > 0.0:
            y = self.dropout(self.matmul(x))
            return softmax_ext.bias_softmax(y, self.matmul.bias, False)
        y = torch.mm(x, self.matmul.weight.t())
        return softmax_ext.bias_softmax(y, self.matmul.bias, True)
