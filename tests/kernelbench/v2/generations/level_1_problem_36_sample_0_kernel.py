import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# RMSNorm over the feature dimension (dim=1) of an NCHW-like tensor.
# One thread per (batch, spatial position): it walks the features with a
# stride of dim1*dim2 (so neighbouring threads read neighbouring addresses),
# accumulates the sum of squares, then makes a second pass to scale.

cuda_source = r"""
#include <torch/extension.h>

__global__ void rms_norm_dim1_kernel(const float* __restrict__ x,
                                     float* __restrict__ y,
                                     int batch, int features, int spatial,
                                     float eps) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)batch * spatial;
    if (idx >= total) return;

    int b = (int)(idx / spatial);
    int s = (int)(idx % spatial);
    long long base = (long long)b * features * spatial + s;

    float sumsq = 0.0f;
    for (int f = 0; f < features; ++f) {
        float v = x[base + (long long)f * spatial];
        sumsq += v * v;
    }
    float inv_rms = rsqrtf(sumsq / (float)features + eps);

    for (int f = 0; f < features; ++f) {
        long long off = base + (long long)f * spatial;
        y[off] = x[off] * inv_rms;
    }
}

torch::Tensor rms_norm(torch::Tensor x, double eps) {
    int batch = x.size(0);
    int features = x.size(1);
    int spatial = 1;
    for (int d = 2; d < x.dim(); ++d) spatial *= x.size(d);
    auto y = torch::empty_like(x);
    long long total = (long long)batch * spatial;
    const int threads = 256;
    int blocks = (int)((total + threads - 1) / threads);
    rms_norm_dim1_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                              batch, features, spatial, (float)eps);
    return y;
}
"""

cpp_source = "torch::Tensor rms_norm(torch::Tensor x, double eps);"

ext = load_inline(
    name="kb_l1_p36_rms_norm",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["rms_norm"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.features = features
        self.eps = eps

    def forward(self, x):
        return ext.rms_norm(x, self.eps)
