import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

max_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math_constants.h>

__global__ void max_dim_kernel(const float* __restrict__ x, float* __restrict__ out,
                               long long outer, long long R, long long inner) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    long long o = idx / inner;
    long long i = idx - o * inner;
    const float* p = x + o * R * inner + i;
    float m = -CUDART_INF_F;
    bool has_nan = false;
    for (long long r = 0; r < R; ++r) {
        float v = p[r * inner];
        if (v != v) has_nan = true;
        m = fmaxf(m, v);
    }
    out[idx] = has_nan ? CUDART_NAN_F : m;
}

torch::Tensor max_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    const int nd = x.dim();
    if (dim < 0) dim += nd;
    TORCH_CHECK(dim >= 0 && dim < nd, "dim out of range");
    TORCH_CHECK(x.size(dim) > 0, "cannot reduce over an empty dimension");

    long long outer = 1, inner = 1;
    std::vector<int64_t> out_shape;
    for (int d = 0; d < nd; ++d) {
        if (d < dim) outer *= x.size(d);
        else if (d > dim) inner *= x.size(d);
        if (d != dim) out_shape.push_back(x.size(d));
    }
    const long long R = x.size(dim);
    auto out = torch::empty(out_shape, x.options());
    long long total = outer * inner;
    if (total == 0) return out;
    const int threads = 256;
    long long blocks = (total + threads - 1) / threads;
    max_dim_kernel<<<(unsigned int)blocks, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), outer, R, inner);
    return out;
}
"""

max_cpp = "torch::Tensor max_dim_cuda(torch::Tensor x, int64_t dim);"

max_ext = load_inline(
    name="max_reduce_dim",
    cpp_sources=max_cpp,
    cuda_sources=max_source,
    functions=["max_dim_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    """
    Max reduction over a specified dimension (values only) with a custom CUDA kernel.
    """
    def __init__(self, dim: int):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return max_ext.max_dim_cuda(x, self.dim)
