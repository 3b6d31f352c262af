#include "contract/prompt.h"

#include <map>
#include <sstream>
#include <vector>

#include "contract/contract.h"

namespace kernrl {
namespace {

std::string c_type(const DType& d) {
  static const std::map<std::string, std::string> m = {
      {"float32", "float"},          {"float64", "double"},   {"float16", "__half"},
      {"bfloat16", "__nv_bfloat16"}, {"complex64", "float2"}, {"int8", "int8_t"},
      {"uint8", "uint8_t"},          {"int16", "int16_t"},    {"int32", "int"},
      {"uint32", "uint32_t"},        {"int64", "long long"},  {"bool", "bool"}};
  return m.at(d.name);
}

std::string shape_text(const TensorSpec& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + t.shape[i];
  return s + "]";
}

}  // namespace

std::string tensors_text(const ProblemSpec& p) {
  std::ostringstream o;
  auto row = [&](const TensorSpec& t, const char* role) {
    o << "  " << t.name << "  " << t.dtype.name << " " << shape_text(t) << "  (" << role;
    if (role == std::string("output")) {
      if (t.compare == "exact")
        o << ", compared exactly";
      else
        o << ", atol " << t.tolerance.atol << " rtol " << t.tolerance.rtol;
      if (!t.count.empty()) o << ", first `" << t.count << "` rows compared";
    }
    o << ")\n";
  };
  for (const auto& t : p.inputs) row(t, "input");
  for (const auto& t : p.parameters) row(t, "parameter");
  for (const auto& t : p.outputs) row(t, "output");
  for (const auto& s : p.scalars)
    o << "  " << s.name << "  " << s.dtype << " scalar = " << s.value << "\n";
  return o.str();
}

std::string sizes_text(const ProblemSpec& p) {
  std::ostringstream o;
  o << "  bench:";
  for (const auto& n : p.size_names) o << " " << n << "=" << p.bench.at(n);
  o << "\n";
  for (const auto& t : p.tests) {
    o << "  test: ";
    for (const auto& n : p.size_names) o << " " << n << "=" << t.at(n);
    o << "\n";
  }
  return o.str();
}

std::string kernel_template(const ProblemSpec& p) {
  std::ostringstream o;
  bool half = false, bf16 = false;
  std::vector<std::string> args, params;
  for (const auto* list : {&p.inputs, &p.parameters, &p.outputs})
    for (const auto& t : *list) {
      bool out = list == &p.outputs;
      half |= t.dtype.name == "float16";
      bf16 |= t.dtype.name == "bfloat16";
      args.push_back(t.name);
      params.push_back(std::string(out ? "" : "const ") + c_type(t.dtype) + "* __restrict__ " +
                       t.name);
    }
  for (const auto& s : p.scalars) {
    args.push_back(s.name);
    params.push_back(std::string(s.dtype == "float32"   ? "float"
                                 : s.dtype == "float64" ? "double"
                                 : s.dtype == "int32"   ? "int"
                                                        : "long long") +
                     " " + s.name);
  }
  for (const auto& n : p.size_names) {
    args.push_back(n);
    params.push_back("int " + n);
  }
  const TensorSpec& first_out = p.outputs.front();
  std::string numel;
  for (const auto& d : first_out.shape)
    numel += (numel.empty() ? "" : " * ") + std::string("(") + d + ")";
  if (numel.empty()) numel = "1";
  if (half) o << "#include <cuda_fp16.h>\n";
  if (bf16) o << "#include <cuda_bf16.h>\n";
  o << "/* kernrl\nproblem: " << p.id << "\nlaunches:\n  - kernel: "
    << "kernel_main\n"
    << "    grid: [cdiv(" << numel << ", 256)]\n    block: [256]\n    args: [";
  for (size_t i = 0; i < args.size(); ++i) o << (i ? ", " : "") << args[i];
  o << "]\n*/\n\nextern \"C\" __global__ void kernel_main(";
  for (size_t i = 0; i < params.size(); ++i)
    o << (i ? ",\n                                       " : "") << params[i];
  o << ") {\n  // One thread per element of `" << first_out.name
    << "` to start with; replace with your kernel.\n"
    << "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  (void)i;\n}\n";
  return o.str();
}

std::string task_prompt(const ProblemSpec& p, const std::string& language) {
  std::ostringstream o;
  if (language == "triton") {
    o << "Write a fast Triton kernel for the following problem.\n\n# Problem " << p.id << "\n\n"
      << p.description << "\n\nPyTorch equivalent:\n```python\n"
      << p.torch << "```\n\nTensors:\n"
      << tensors_text(p)
      << "\nSizes (your kernel must be correct for all of them, and is timed at bench):\n"
      << sizes_text(p) << "\n"
      << triton_contract_summary() << "\nStart from this template:\n```python\n"
      << triton_template(p)
      << "```\n\nAnswer with the complete kernel file in one ```python code block.\n";
    return o.str();
  }
  o << "Write a fast CUDA kernel for the following problem.\n\n# Problem " << p.id << "\n\n"
    << p.description << "\n\nPyTorch equivalent:\n```python\n"
    << p.torch << "```\n\nTensors:\n"
    << tensors_text(p)
    << "\nSizes (your kernel must be correct for all of them, and is timed at bench):\n"
    << sizes_text(p) << "\n"
    << contract_summary() << "\nStart from this template:\n```cuda\n"
    << kernel_template(p)
    << "```\n\nAnswer with the complete kernel file in one ```cuda code block.\n";
  return o.str();
}

}  // namespace kernrl
