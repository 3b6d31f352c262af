// The KernelBench importer on any text: a generation's Python (and the C++ in its strings) is read
// in the grading process, so no text may crash it, and what it converts must be a kernel file whose
// launch block parses. Two suite problems (torch steps and views allowed): a linear layer, and an
// attention whose embedding splits into heads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "import/kernelbench_import.h"
#include "parse/launch_block.h"

namespace {

const char* kLinear = R"(id: L2_86_Matmul_Divide_GELU
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
modules: {"linear": ["Linear"]}
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
  divisor = 10.0
  def get_inputs():
      return [torch.rand(batch_size, input_size)]
  def get_init_inputs():
      return [input_size, output_size, divisor]
)";

const char* kAttention = R"(id: L3_43_MinGPTCausalAttention
level: 3
name: MinGPTCausalAttention
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 4, seq_len: 40, n_embd: 192, n_head: 12}
  test:
    - {batch_size: 3, seq_len: 7, n_embd: 112, n_head: 7}
    - {batch_size: 2, seq_len: 10, n_embd: 64, n_head: 4}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, seq_len, n_embd], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: c_attn.weight, dtype: float32, shape: [3 * n_embd, n_embd], init: custom}
  - {name: c_attn.bias, dtype: float32, shape: [3 * n_embd], init: custom}
  - {name: c_proj.weight, dtype: float32, shape: [n_embd, n_embd], init: custom}
  - {name: c_proj.bias, dtype: float32, shape: [n_embd], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, seq_len, n_embd]}
modules: {"c_attn": ["Linear"], "c_proj": ["Linear"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, n_embd, n_head):
          super().__init__()
          self.c_attn = nn.Linear(n_embd, 3 * n_embd)
          self.c_proj = nn.Linear(n_embd, n_embd)
          self.n_head = n_head
          self.n_embd = n_embd
      def forward(self, x):
          return self.c_proj(x)
  batch_size = 4
  seq_len = 40
  n_embd = 192
  n_head = 12
  def get_inputs():
      return [torch.rand(batch_size, seq_len, n_embd)]
  def get_init_inputs():
      return [n_embd, n_head]
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kernrl::ProblemSpec linear = kernrl::parse_problem_yaml(kLinear, "linear.yaml");
  static const kernrl::ProblemSpec attention =
      kernrl::parse_problem_yaml(kAttention, "attention.yaml");
  std::string text(reinterpret_cast<const char*>(data), size);
  for (const kernrl::ProblemSpec* p : {&linear, &attention}) {
    kernrl::KernelBenchImport r = kernrl::import_kernelbench(text, *p, "fuzz.py");
    if (!r.converted) continue;
    // A converted file is a kernel file whose launch block parses (extraction may still refuse
    // the text itself, e.g. NUL bytes kept from a comment: a format_error, as in the pipeline).
    kernrl::ExtractedSource src;
    try {
      src = kernrl::extract_kernel(r.kernel_file, "converted.cu");
    } catch (const kernrl::FormatError&) {
      continue;
    }
    kernrl::parse_launch_block(src);
  }
  return 0;
}
