import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

maxpool2d_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cfloat>

__global__ void maxpool2d_kernel(const float* input, float* output,
                                 int batch_size, int channels,
                                 int input_height, int input_width,
                                 int output_height, int output_width,
                                 int kernel_size, int stride, int padding, int dilation) {
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    int total = batch_size * channels * output_height * output_width;
    if (index >= total) return;

    int ow = index % output_width;
    int oh = (index / output_width) % output_height;
    int c = (index / (output_width * output_height)) % channels;
    int b = index / (output_width * output_height * channels);

    const float* in_ptr = input + ((size_t)b * channels + c) * input_height * input_width;
    float max_val = -FLT_MAX;
    for (int kh = 0; kh < kernel_size; ++kh) {
        int ih = oh * stride - padding + kh * dilation;
        if (ih < 0 || ih >= input_height) continue;
        for (int kw = 0; kw < kernel_size; ++kw) {
            int iw = ow * stride - padding + kw * dilation;
            if (iw < 0 || iw >= input_width) continue;
            max_val = fmaxf(max_val, in_ptr[ih * input_width + iw]);
        }
    }
    output[index] = max_val;
}

torch::Tensor maxpool2d_cuda(torch::Tensor input, int kernel_size, int stride, int padding, int dilation) {
    auto batch_size = input.size(0);
    auto channels = input.size(1);
    auto input_height = input.size(2);
    auto input_width = input.size(3);

    auto output_height = (input_height + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1;
    auto output_width = (input_width + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1;

    auto output = torch::empty({batch_size, channels, output_height, output_width}, input.options());

    int total = batch_size * channels * output_height * output_width;
    const int block_size = 256;
    const int num_blocks = (total + block_size - 1) / block_size;

    maxpool2d_kernel<<<num_blocks, block_size>>>(
        input.data_ptr<float>(), output.data_ptr<float>(),
        batch_size, channels, input_height, input_width,
        output_height, output_width, kernel_size, stride, padding, dilation);

    return output;
}
"""

maxpool2d_cpp_source = (
    "torch::Tensor maxpool2d_cuda(torch::Tensor input, int kernel_size, int stride, int padding, int dilation);"
)

maxpool2d = load_inline(
    name="maxpool2d",
    cpp_sources=maxpool2d_cpp_source,
    cuda_sources=maxpool2d_source,
    functions=["maxpool2d_cuda"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super(ModelNew, self).__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.maxpool2d = maxpool2d

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool2d.maxpool2d_cuda(x, self.kernel_size, self.stride, self.padding, self.dilation)
