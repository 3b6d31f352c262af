import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

thrust_source = """
#include <torch/extension.h>
#include <thrust/reduce.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>

torch::Tensor thrust_sum(torch::Tensor x) {
    thrust::device_ptr<float> p(x.data_ptr<float>());
    float total = thrust::reduce(thrust::device, p, p + x.numel(), 0.0f);
    return torch::full({}, total, x.options());
}
"""

thrust_sum = load_inline(
    name="thrust_sum",
    cpp_sources="torch::Tensor thrust_sum(torch::Tensor x);",
    cuda_sources=thrust_source,
    functions=["thrust_sum"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return thrust_sum.thrust_sum(x)
