#include "suite_problems.h"

namespace kernrl::test {

ProblemSpec suite_linear(const std::string& divisor) {
  return parse_problem_yaml(R"(id: L2_86_Matmul_Divide_GELU
level: 2
name: Matmul_Divide_GELU
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 128, input_size: 512, output_size: 1024}
  test:
    - {batch_size: 3, input_size: 33, output_size: 17}
    - {batch_size: 7, input_size: 64, output_size: 40}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, input_size], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: linear.weight, dtype: float32, shape: [output_size, input_size], init: custom}
  - {name: linear.bias, dtype: float32, shape: [output_size], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, output_size]}
flops: "0"
bytes: auto
torch: |
  import torch
  class Model(torch.nn.Module):
      def __init__(self, input_size, output_size, divisor):
          super().__init__()
          self.linear = torch.nn.Linear(input_size, output_size)
          self.divisor = divisor
      def forward(self, x):
          return torch.nn.functional.gelu(self.linear(x) / self.divisor)
  batch_size = 128
  input_size = 512
  output_size = 1024
  divisor = )" + divisor + R"(
  def get_inputs():
      return [torch.rand(batch_size, input_size)]
  def get_init_inputs():
      return [input_size, output_size, divisor]
)",
                            "suite.yaml");
}

}  // namespace kernrl::test
