import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Keep cuDNN's convolution; fuse instance norm + divide into one kernel.
instnorm_div_source = """
#include <torch/extension.h>

__global__ void instance_norm_divide_kernel(const float* x, float* y, int HW, float eps, float divide_by) {
    // one block per (n, c) plane
    extern __shared__ float buf[];
    const float* p = x + (size_t)blockIdx.x * HW;
    float* q = y + (size_t)blockIdx.x * HW;
    float s = 0.f, ss = 0.f;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) { float v = p[i]; s += v; ss += v * v; }
    buf[threadIdx.x] = s;
    buf[threadIdx.x + blockDim.x] = ss;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            buf[threadIdx.x] += buf[threadIdx.x + k];
            buf[threadIdx.x + blockDim.x] += buf[threadIdx.x + blockDim.x + k];
        }
        __syncthreads();
    }
    float mean = buf[0] / HW;
    float var = buf[blockDim.x] / HW - mean * mean;
    float inv = rsqrtf(var + eps) / divide_by;
    for (int i = threadIdx.x; i < HW; i += blockDim.x) q[i] = (p[i] - mean) * inv;
}

torch::Tensor instance_norm_divide(torch::Tensor x, float eps, float divide_by) {
    auto y = torch::empty_like(x);
    int planes = x.size(0) * x.size(1);
    int HW = x.size(2) * x.size(3);
    instance_norm_divide_kernel<<<planes, 256, 2 * 256 * sizeof(float)>>>(x.data_ptr<float>(), y.data_ptr<float>(), HW, eps, divide_by);
    return y;
}
"""

instnorm_div = load_inline(
    name="instnorm_div",
    cpp_sources="torch::Tensor instance_norm_divide(torch::Tensor x, float eps, float divide_by);",
    cuda_sources=instnorm_div_source,
    functions=["instance_norm_divide"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps, divide_by):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size, kernel_size))
        self.bias = nn.Parameter(torch.empty(out_channels))
        self.eps = eps
        self.divide_by = divide_by

    def forward(self, x):
        x = F.conv2d(x, self.weight, self.bias)
        return instnorm_div.instance_norm_divide(x, self.eps, self.divide_by)
