import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rgb2yuv_source = """
#include <torch/extension.h>

__constant__ float M[9] = {0.299f, 0.587f, 0.114f,
                           -0.147f, -0.289f, 0.436f,
                           0.615f, -0.515f, -0.100f};

__global__ void rgb_to_yuv_kernel(const float* __restrict__ rgb, float* __restrict__ yuv, int height, int width) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    size_t p = ((size_t)y * width + x) * 3;
    float r = rgb[p], g = rgb[p + 1], b = rgb[p + 2];
    yuv[p]     = M[0] * r + M[1] * g + M[2] * b;
    yuv[p + 1] = M[3] * r + M[4] * g + M[5] * b;
    yuv[p + 2] = M[6] * r + M[7] * g + M[8] * b;
}

torch::Tensor rgb_to_yuv(torch::Tensor rgb) {
    auto height = rgb.size(0);
    auto width = rgb.size(1);
    auto yuv = torch::empty_like(rgb);
    dim3 block(16, 16);
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    rgb_to_yuv_kernel<<<grid, block>>>(rgb.data_ptr<float>(), yuv.data_ptr<float>(), height, width);
    return yuv;
}
"""

rgb2yuv = load_inline(
    name="rgb2yuv",
    cpp_sources="torch::Tensor rgb_to_yuv(torch::Tensor rgb);",
    cuda_sources=rgb2yuv_source,
    functions=["rgb_to_yuv"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, rgb):
        return rgb2yuv.rgb_to_yuv(rgb)
