import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

divide_gelu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void divide_gelu_kernel(const float* input, float* output, float divisor, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) {
        float x = input[idx] / divisor;
        output[idx] = 0.5f * x * (1.0f + erff(x / 1.41421356f));
    }
}

torch::Tensor divide_gelu_cuda(torch::Tensor input, float divisor) {
    auto size = input.numel();
    auto output = torch::empty_like(input);
    const int block_size = 256;
    const int num_blocks = (size + block_size - 1) / block_size;
    divide_gelu_kernel<<<num_blocks, block_size>>>(input.data_ptr<float>(), output.data_ptr<float>(), divisor, size);
    return output;
}
"""

divide_gelu_cpp_source = "torch::Tensor divide_gelu_cuda(torch::Tensor input, float divisor);"

divide_gelu = load_inline(
    name="divide_gelu",
    cpp_sources=divide_gelu_cpp_source,
    cuda_sources=divide_gelu_source,
    functions=["divide_gelu_cuda"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        self.divide_gelu = divide_gelu

    def forward(self, x):
        x = self.linear(x)
        x = self.divide_gelu.divide_gelu_cuda(x, self.divisor)
        return x
