import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Sum over one dimension: the input is viewed as (outer, R, inner); one thread per
# (outer, inner) output accumulates over R. Adjacent threads read adjacent inner elements.
sum_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void sum_dim_kernel(const float* __restrict__ x, float* __restrict__ y,
                               long long outer, long long R, long long inner) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = outer * inner;
    if (idx >= total) return;
    long long o = idx / inner;
    long long in = idx - o * inner;
    const float* p = x + o * R * inner + in;
    float acc = 0.0f;
    long long r = 0;
    for (; r + 4 <= R; r += 4) {
        float a0 = p[(r + 0) * inner];
        float a1 = p[(r + 1) * inner];
        float a2 = p[(r + 2) * inner];
        float a3 = p[(r + 3) * inner];
        acc += (a0 + a1) + (a2 + a3);
    }
    for (; r < R; ++r) acc += p[r * inner];
    y[idx] = acc;
}

torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    const int nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");
    long long outer = 1, inner = 1;
    for (int d = 0; d < dim; ++d) outer *= x.size(d);
    for (int d = dim + 1; d < nd; ++d) inner *= x.size(d);
    long long R = x.size(dim);

    std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
    out_shape[dim] = 1;
    auto y = torch::empty(out_shape, x.options());
    long long total = outer * inner;
    if (total == 0) return y;
    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    sum_dim_kernel<<<(unsigned int)blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer, R, inner);
    return y;
}
"""

sum_cpp = "torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim);"

sum_ext = load_inline(
    name="sum_reduce_dim_keepdim",
    cpp_sources=sum_cpp,
    cuda_sources=sum_source,
    functions=["sum_dim_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Sum reduction over a specified dimension (keepdim=True) with a custom CUDA kernel.
    """
    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_ext.sum_dim_cuda(x, self.dim)
