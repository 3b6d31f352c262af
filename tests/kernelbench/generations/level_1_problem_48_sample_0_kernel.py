import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mean_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// x viewed as (outer, R, inner); out[o, i] = mean_r x[o, r, i]
__global__ void mean_dim_kernel(const float* __restrict__ x, float* __restrict__ out,
                                long long outer, long long R, long long inner) {
    long long total = outer * inner;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        long long o = idx / inner;
        long long i = idx % inner;
        const float* p = x + o * R * inner + i;
        float s = 0.0f;
        #pragma unroll 8
        for (long long r = 0; r < R; ++r) s += p[r * inner];
        out[idx] = s / (float)R;
    }
}

torch::Tensor mean_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    int nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");

    long long outer = 1, inner = 1;
    std::vector<int64_t> out_shape;
    for (int d = 0; d < nd; ++d) {
        if (d < dim) outer *= x.size(d);
        if (d > dim) inner *= x.size(d);
        if (d != dim) out_shape.push_back(x.size(d));
    }
    long long R = x.size(dim);
    auto out = torch::empty(out_shape, x.options());
    long long total = outer * inner;
    if (total == 0) return out;

    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    if (blocks > 65535) blocks = 65535;
    mean_dim_kernel<<<(int)blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), outer, R, inner);
    return out;
}
"""

mean_cpp = "torch::Tensor mean_dim_cuda(torch::Tensor x, int64_t dim);"

mean_ext = load_inline(
    name="mean_reduce_dim",
    cpp_sources=mean_cpp,
    cuda_sources=mean_source,
    functions=["mean_dim_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Mean reduction over a specified dimension with a custom CUDA kernel.
    """
    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_ext.mean_dim_cuda(x, self.dim)
