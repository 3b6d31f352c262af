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

ProblemSpec suite_conv_transpose() {
  return parse_problem_yaml(R"(id: L2_5_ConvTranspose2d_Bias_Tanh
level: 2
name: ConvTranspose2d_Bias_Tanh
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 16, in_channels: 32, out_channels: 64, height: 16, width: 16}
  test:
    - {batch_size: 3, in_channels: 5, out_channels: 7, height: 9, width: 11}
    - {batch_size: 2, in_channels: 8, out_channels: 3, height: 5, width: 4}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, in_channels, height, width], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: conv_transpose.weight, dtype: float32, shape: [in_channels, out_channels, 4, 4], init: custom}
  - {name: conv_transpose.bias, dtype: float32, shape: [out_channels], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, out_channels, 2 * height + 1, 2 * width + 1]}
modules: {"conv_transpose": ["ConvTranspose2d"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, in_channels, out_channels):
          super().__init__()
          self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, output_padding=1)
      def forward(self, x):
          return torch.tanh(self.conv_transpose(x))
  batch_size = 16
  in_channels = 32
  out_channels = 64
  height = 16
  width = 16
  def get_inputs():
      return [torch.rand(batch_size, in_channels, height, width)]
  def get_init_inputs():
      return [in_channels, out_channels]
)",
                            "suite.yaml");
}

}  // namespace kernrl::test
