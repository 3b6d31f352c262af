import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# im2col via ATen, GEMM in a custom kernel
source = """
#include <torch/extension.h>

__global__ void gemm_kernel(const float* A, const float* B, float* C, int M, int K, int N) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < M && c < N) {
        float acc = 0.f;
        for (int k = 0; k < K; ++k) acc += A[r * K + k] * B[k * N + c];
        C[r * N + c] = acc;
    }
}

torch::Tensor conv_im2col(torch::Tensor x, torch::Tensor w) {
    int N = x.size(0), Cout = w.size(0), K = w.size(2);
    int Hout = x.size(2) - K + 1, Wout = x.size(3) - K + 1;
    auto cols = torch::nn::functional::unfold(x, torch::nn::functional::UnfoldFuncOptions({K, K}));
    auto out = torch::empty({N, Cout, Hout, Wout}, x.options());
    int Kdim = cols.size(1), L = cols.size(2);
    dim3 block(16, 16), grid((L + 15) / 16, (Cout + 15) / 16);
    for (int n = 0; n < N; ++n) {
        gemm_kernel<<<grid, block>>>(w.data_ptr<float>(), cols[n].data_ptr<float>(),
                                     out[n].data_ptr<float>(), Cout, Kdim, L);
    }
    return out;
}
"""

conv = load_inline(name="conv_im2col", cpp_sources="torch::Tensor conv_im2col(torch::Tensor x, torch::Tensor w);",
                   cuda_sources=source, functions=["conv_im2col"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=False):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size, kernel_size))

    def forward(self, x):
        return conv.conv_im2col(x, self.weight)
