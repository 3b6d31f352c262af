import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Algebraic simplification: sum_j (x . w_j) / 2 * s == (x . sum_j w_j) * s / 2.
# Kernel 1 reduces the weight over its rows (hidden dim) into a vector of input_size,
# kernel 2 computes one dot product per batch row. This replaces an (B x I x H) GEMM by
# O(H*I + B*I) work.
gemm_sum_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

#define THREADS 256

// w: (H, I) row-major. wsum[i] += sum_{h in slice} w[h, i]. One thread per column (coalesced
// across i); blockIdx.y splits the H rows into slices that are combined with atomicAdd.
__global__ void weight_colsum_kernel(const float* __restrict__ w, float* __restrict__ wsum,
                                     int H, int I, int rows_per_slice) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= I) return;
    int h0 = blockIdx.y * rows_per_slice;
    int h1 = min(h0 + rows_per_slice, H);
    float s = 0.0f;
    for (int h = h0; h < h1; ++h) s += w[(long long)h * I + i];
    atomicAdd(&wsum[i], s);
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

// out[b] = (x[b, :] . wsum) * scale ; one block per batch row.
__global__ void row_dot_scale_kernel(const float* __restrict__ x, const float* __restrict__ wsum,
                                     float* __restrict__ out, int I, float scale) {
    const float* xr = x + (long long)blockIdx.x * I;
    float s = 0.0f;
    for (int i = threadIdx.x; i < I; i += THREADS) s += xr[i] * wsum[i];
    __shared__ float ws[THREADS / 32];
    s = warp_sum(s);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) ws[wid] = s;
    __syncthreads();
    if (wid == 0) {
        s = lane < THREADS / 32 ? ws[lane] : 0.0f;
        s = warp_sum(s);
        if (lane == 0) out[blockIdx.x] = s * scale;
    }
}

torch::Tensor gemm_div_sum_scale(torch::Tensor x, torch::Tensor weight, double scaling_factor) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "inputs must be CUDA tensors");
    x = x.contiguous();
    weight = weight.contiguous();
    const int B = x.size(0);
    const int I = x.size(1);
    const int H = weight.size(0);
    TORCH_CHECK(weight.size(1) == I, "weight shape mismatch");

    auto wsum = torch::zeros({I}, x.options());
    auto out = torch::empty({B, 1}, x.options());
    const int slices = H < 64 ? (H > 0 ? H : 1) : 64;
    const int rows_per_slice = (H + slices - 1) / slices;
    dim3 grid1((I + THREADS - 1) / THREADS, slices);
    if (I > 0 && H > 0) {
        weight_colsum_kernel<<<grid1, THREADS>>>(weight.data_ptr<float>(), wsum.data_ptr<float>(),
                                                 H, I, rows_per_slice);
    }
    if (B > 0) {
        row_dot_scale_kernel<<<B, THREADS>>>(x.data_ptr<float>(), wsum.data_ptr<float>(),
                                             out.data_ptr<float>(), I, (float)(scaling_factor / 2.0));
    }
    return out;
}
"""

gemm_sum_cpp = "torch::Tensor gemm_div_sum_scale(torch::Tensor x, torch::Tensor weight, double scaling_factor);"

gemm_sum_ext = load_inline(
    name="gemm_divide_sum_scaling_fused",
    cpp_sources=gemm_sum_cpp,
    cuda_sources=gemm_sum_source,
    functions=["gemm_div_sum_scale"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Gemm -> divide -> sum -> scale, computed as a reduced weight vector and a batched dot product.
    """
    def __init__(self, input_size, hidden_size, scaling_factor):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return gemm_sum_ext.gemm_div_sum_scale(x, self.weight, float(self.scaling_factor))
