import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

compact_source = """
#include <torch/extension.h>

__global__ void count_kernel(const float* x, int* count, float threshold, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] >= threshold) atomicAdd(count, 1);
}

__global__ void scatter_kernel(const float* x, float* out, int* pos, float threshold, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] >= threshold) out[atomicAdd(pos, 1)] = x[i];
}

std::vector<torch::Tensor> compact(torch::Tensor x, float threshold) {
    int n = x.numel();
    auto count = torch::zeros({1}, x.options().dtype(torch::kInt32));
    int blocks = (n + 255) / 256;
    count_kernel<<<blocks, 256>>>(x.data_ptr<float>(), count.data_ptr<int>(), threshold, n);
    int kept = count.item<int>();
    auto out = torch::zeros({n}, x.options());
    auto pos = torch::zeros({1}, x.options().dtype(torch::kInt32));
    scatter_kernel<<<blocks, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), pos.data_ptr<int>(), threshold, n);
    return {torch::full({1}, kept, x.options().dtype(torch::kInt64)), out};
}
"""

compact_ext = load_inline(
    name="compact_ext",
    cpp_sources="std::vector<torch::Tensor> compact(torch::Tensor x, float threshold);",
    cuda_sources=compact_source,
    functions=["compact"],
)


class ModelNew(nn.Module):
    def __init__(self, threshold=0.5):
        super().__init__()
        self.threshold = threshold

    def forward(self, x):
        count, out = compact_ext.compact(x, self.threshold)
        return count, out
