import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Split the tensor in two halves and overlap them on two CUDA streams.
src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void gelu_part(const float* in, float* out, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = in[i]; out[i] = 0.5f * v * (1.f + erff(v * 0.70710678f)); }
}

torch::Tensor gelu_two_streams(torch::Tensor x) {
    auto out = torch::empty_like(x);
    long n = x.numel();
    long half = n / 2;
    cudaStream_t streams[2];
    for (int i = 0; i < 2; ++i) cudaStreamCreate(&streams[i]);
    gelu_part<<<(half + 255) / 256, 256, 0, streams[0]>>>(x.data_ptr<float>(), out.data_ptr<float>(), half);
    gelu_part<<<(n - half + 255) / 256, 256, 0, streams[1]>>>(x.data_ptr<float>() + half, out.data_ptr<float>() + half, n - half);
    for (int i = 0; i < 2; ++i) { cudaStreamSynchronize(streams[i]); cudaStreamDestroy(streams[i]); }
    return out;
}
"""

gelu_streams = load_inline(name="gelu_streams", cpp_sources="torch::Tensor gelu_two_streams(torch::Tensor x);",
                           cuda_sources=src, functions=["gelu_two_streams"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_streams.gelu_two_streams(x)
