import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

sum_reduce_source = """
#include <torch/extension.h>

// Sum over dim 1 of a (B, R, I) tensor, keepdim: out is (B, 1, I)
__global__ void sum_dim_kernel(const float* __restrict__ x, float* __restrict__ out,
                               int outer, int reduce, int inner) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    int o = idx / inner;
    int i = idx % inner;
    const float* p = x + (size_t)o * reduce * inner + i;
    float acc = 0.0f;
    for (int r = 0; r < reduce; ++r) acc += p[(size_t)r * inner];
    out[idx] = acc;
}

torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim) {
    auto sizes = x.sizes().vec();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    int64_t reduce = x.size(dim);
    sizes[dim] = 1;
    auto out = torch::empty(sizes, x.options());
    int threads = 256;
    int blocks = (outer * inner + threads - 1) / threads;
    sum_dim_kernel<<<blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), outer, reduce, inner);
    return out;
}
"""

sum_reduce = load_inline(
    name="sum_reduce",
    cpp_sources="torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim);",
    cuda_sources=sum_reduce_source,
    functions=["sum_dim_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return sum_reduce.sum_dim_cuda(x, self.dim)
