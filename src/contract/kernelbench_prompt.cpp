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

const char* kTritonExample = R"(```python
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, bias_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * s + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        scale_add_kernel[grid](x, self.bias, out, 2.0, n, BLOCK=1024)
        return out
```
)";

// What the grader runs of the wrapper, so that the model writes a forward kernrl can follow.
const char* kTritonRules =
    "How it is graded: forward is run once per size set on stand-in tensors that have shapes but "
    "no values, to record the kernel launches it makes; then only those Triton kernels run, on "
    "the grader's own buffers. So forward may read shapes, strides, numel and dtypes, compute "
    "integers from them (triton.cdiv, arithmetic), allocate the output and scratch buffers "
    "(torch.empty, torch.empty_like, torch.zeros) and launch kernels with kernel[grid](...) (the "
    "grid a tuple or a lambda of the meta-parameters; constexprs, num_warps and num_stages as "
    "keyword arguments). Everything forward computes must be done by a Triton kernel: no torch "
    "operations on tensors (no torch.matmul, F.relu, x + y, x.sum()), no .item(), no slicing, "
    "no branches on tensor values. Return the tensor the kernels wrote (a tuple, in the order "
    "of the outputs, when there are several); never write into an input. Parameters keep the "
    "names and shapes of Model's (nn.Linear and other layers are fine for holding them), and "
    "define every @triton.jit kernel at the top level of the file.\n";

const char* kCudaRules =
    "How it is graded: the module is not run. kernrl reads it and converts it into a kernel file "
    "(the CUDA kernels and the launches your C++ function makes), then runs only your kernels, on "
    "the grader's own buffers, at every size set above. So forward may only call your "
    "extension's functions with its inputs and the module's parameters (self.weight, "
    "self.conv.weight) and attributes set from the constructor's arguments. The C++ function may "
    "read sizes (x.size(i), x.numel()), compute integers from them, allocate the outputs and "
    "scratch buffers (torch::empty, torch::empty_like, torch::zeros) and launch your __global__ "
    "kernels with <<<grid, block, shared_bytes>>>; the same launches must suit every size set "
    "(no branches that choose differently between them). Everything the module computes must be "
    "done by your kernels: no PyTorch operations in forward (no torch.mm, F.conv2d, calling "
    "self.linear or self.conv, x + y, x.sum()) or in the C++ function (no torch::matmul, "
    "at::conv2d), no cuBLAS, cuDNN or other libraries, no .item(). "
    "Return a tensor your kernels wrote; never write into an input. Kernel parameters are "
    "pointers into tensors (data_ptr<float>(), or data_ptr<float>() + an integer computed from "
    "the sizes, within the tensor) and int, int64_t, float or double scalars. Parameters keep the "
    "names and shapes of Model's (nn.Linear and other layers are fine for holding them).\n";

// What both styles' prompts say of the problem: the architecture, its sizes and tensors, and the
// line that introduces the example.
std::string architecture_part(const ProblemSpec& p) {
  std::string s = "The architecture (" + p.id + "):\n\n```python\n" + p.torch + "```\n\n";
  s += "Sizes (the first line is the timed one; the others are checked too):\n" + sizes_text(p) +
       "\nTensors (parameters and buffers are named by module path; `self.conv.weight` is "
       "`conv.weight`):\n" +
       tensors_text(p) + "\n";
  s += "An example of the expected form, for a module that computes x * 2 + bias:\n\n";
  return s;
}

}  // namespace

std::string kernelbench_triton_prompt(const ProblemSpec& p) {
  std::string s;
  s += "You write Triton kernels to replace the PyTorch operators of the architecture below and "
       "make it faster. You may fuse several operators into one kernel (a matmul with its "
       "activation) or change the algorithm (an online softmax).\n\n";
  s += architecture_part(p);
  s += kTritonExample;
  s += "\n";
  s += kTritonRules;
  s += "\nRewrite the architecture named Model with Triton kernels as a module named ModelNew that "
       "takes the same __init__ and forward arguments. Answer with the complete Python file in one "
       "code block: real code that compiles, no pseudocode, no tests.\n";
  return s;
}

std::string kernelbench_prompt(const ProblemSpec& p) {
  std::string s;
  s += "You write custom CUDA kernels to replace the PyTorch operators of the architecture below "
       "and make it faster. You may fuse several operators into one kernel (a matmul with its "
       "activation) or change the algorithm (an online softmax).\n\n";
  s += architecture_part(p);
  s += kExample;
  s += "\n";
  s += kCudaRules;
  s +=
      "\nRewrite the architecture named Model with custom CUDA kernels, compiled with load_inline, "
      "as a module named ModelNew that takes the same __init__ and forward arguments. Answer with "
      "the complete Python file in one code block: real code that compiles, no pseudocode, no "
      "tests.\n";
  return s;
}

}  // namespace kernrl
