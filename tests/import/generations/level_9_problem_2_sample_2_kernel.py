import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

multipass_source = """
#include <torch/extension.h>

__global__ void reduce_pass(const float* in, float* out, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * 512 + threadIdx.x;
    float v = 0.f;
    if (i < n) v += in[i];
    if (i + 256 < n) v += in[i + 256];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

torch::Tensor multipass_sum(torch::Tensor x) {
    int n = x.numel();
    auto buf_a = torch::empty({(n + 511) / 512}, x.options());
    auto buf_b = torch::empty({(n + 511) / 512}, x.options());
    const float* in = x.data_ptr<float>();
    float* out = buf_a.data_ptr<float>();
    float* other = buf_b.data_ptr<float>();
    while (n > 1) {
        int blocks = (n + 511) / 512;
        reduce_pass<<<blocks, 256>>>(in, out, n);
        n = blocks;
        in = out;
        std::swap(out, other);
    }
    return buf_a.index({0});
}
"""

multipass = load_inline(
    name="multipass_sum",
    cpp_sources="torch::Tensor multipass_sum(torch::Tensor x);",
    cuda_sources=multipass_source,
    functions=["multipass_sum"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return multipass.multipass_sum(x)
