import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# After the cuBLAS GEMM one block per row computes the row max of (y + bias), then
# subtracts the mean over dim 1 of the (B, 1) max tensor (i.e. the value itself) and
# applies exact GELU, all in one kernel.
max_sub_gelu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math_constants.h>

#define THREADS 256

__global__ void bias_rowmax_sub_gelu_kernel(const float* __restrict__ y, const float* __restrict__ bias,
                                            float* __restrict__ out, int N) {
    const float* yr = y + (long long)blockIdx.x * N;
    float m = -CUDART_INF_F;
    bool nan_seen = false;
    for (int j = threadIdx.x; j < N; j += THREADS) {
        float v = yr[j] + bias[j];
        if (v != v) nan_seen = true;
        m = fmaxf(m, v);
    }
    if (nan_seen) m = CUDART_NAN_F;
    for (int o = 16; o > 0; o >>= 1) {
        float other = __shfl_xor_sync(0xffffffff, m, o);
        m = (m != m || other != other) ? CUDART_NAN_F : fmaxf(m, other);
    }
    __shared__ float sh[THREADS / 32];
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) sh[wid] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        float r = sh[0];
        for (int w = 1; w < THREADS / 32; ++w) {
            float o = sh[w];
            r = (r != r || o != o) ? CUDART_NAN_F : fmaxf(r, o);
        }
        // mean over dim=1 of the (B, 1) max tensor is the value itself
        float mean = r;
        float d = r - mean;
        out[blockIdx.x] = 0.5f * d * (1.0f + erff(d * 0.7071067811865476f));
    }
}

torch::Tensor bias_rowmax_sub_gelu(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda(), "y must be a CUDA tensor");
    y = y.contiguous();
    bias = bias.contiguous();
    const int B = y.size(0);
    const int N = y.size(1);
    auto out = torch::empty({B, 1}, y.options());
    if (B == 0) return out;
    bias_rowmax_sub_gelu_kernel<<<B, THREADS>>>(y.data_ptr<float>(), bias.data_ptr<float>(),
                                                out.data_ptr<float>(), N);
    return out;
}
"""

max_sub_gelu_cpp = "torch::Tensor bias_rowmax_sub_gelu(torch::Tensor y, torch::Tensor bias);"

max_sub_gelu_ext = load_inline(
    name="gemm_max_subtract_gelu",
    cpp_sources=max_sub_gelu_cpp,
    cuda_sources=max_sub_gelu_source,
    functions=["bias_rowmax_sub_gelu"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    GEMM (cuBLAS) + fused bias / row max / mean subtraction / GELU CUDA kernel.
    """
    def __init__(self, in_features, out_features, max_dim):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        if self.max_dim == 1 or self.max_dim == -1:
            y = torch.mm(x, self.gemm.weight.t())
            return max_sub_gelu_ext.bias_rowmax_sub_gelu(y, self.gemm.bias)
        # generic path for other reduction dims
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)
