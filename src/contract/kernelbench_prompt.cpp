#include "contract/kernelbench_prompt.h"

#include "contract/prompt.h"

namespace kernrl {

namespace {

const char* kExample = R"(```python
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void scale_add_kernel(const float* x, const float* bias, float* out, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * s + bias[i];
}

torch::Tensor scale_add(torch::Tensor x, torch::Tensor bias, double s) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    scale_add_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), bias.data_ptr<float>(),
                                                out.data_ptr<float>(), (float)s, n);
    return out;
}
"""

ext = load_inline(name="scale_add", cpp_sources="torch::Tensor scale_add(torch::Tensor x, torch::Tensor bias, double s);",
                  cuda_sources=cuda_source, functions=["scale_add"])

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return ext.scale_add(x, self.bias, 2.0)
```
)";

}  // namespace

std::string kernelbench_prompt(const ProblemSpec& p) {
  std::string s;
  s += "You write custom CUDA kernels to replace the PyTorch operators of the architecture below "
       "and "
       "make it faster. You may replace some operators and keep others, fuse several into one "
       "kernel (a matmul with its activation), or change the algorithm (an online softmax).\n\n";
  s += "The architecture (" + p.id + "):\n\n```python\n" + p.torch + "```\n\n";
  s += "Sizes (the first line is the timed one; the others are checked too):\n" + sizes_text(p) +
       "\nTensors (parameters and buffers are named by module path; `self.conv.weight` is "
       "`conv.weight`):\n" +
       tensors_text(p) + "\n";
  s += "An example of the expected form, for a module that computes x * 2 + bias:\n\n";
  s += kExample;
  s +=
      "\nRewrite the architecture named Model with custom CUDA kernels, compiled with load_inline, "
      "as a module named ModelNew that takes the same __init__ and forward arguments. Answer with "
      "the complete Python file in one code block: real code that compiles, no pseudocode, no "
      "tests.\n";
  return s;
}

}  // namespace kernrl
