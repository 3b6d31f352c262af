// import_kernelbench: a tensor times or divided by a Python number in forward (`w * (1.0 /
// D_out)`) as a `mul` / `div` torch step, the number a real expression of the sizes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/expr.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "import/kernelbench_import.h"
#include "parse/launch_block.h"
#include "suite_problems.h"

using namespace kernrl;
using kernrl::test::suite_conv_transpose;
using kernrl::test::suite_linear;

namespace {

const char* kEpilogue = R"(
__global__ void scale_gelu(const float* y, float* out, float inv, long long n) {}
torch::Tensor epilogue(torch::Tensor y, double divisor) {
  auto out = torch::empty_like(y);
  long long n = y.numel();
  scale_gelu<<<(int)((n + 255) / 256), 256>>>(y.data_ptr<float>(), out.data_ptr<float>(), (float)(1.0 / divisor), n);
  return out;
}
)";

// suite_linear's ModelNew (its linear layer, its divisor) whose forward runs `body`.
std::string scaled_module(const std::string& body) {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         std::string(kEpilogue) +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"epilogue\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, input_size, output_size, divisor):\n"
         "        super().__init__()\n"
         "        self.linear = nn.Linear(input_size, output_size)\n"
         "        self.divisor = divisor\n\n"
         "    def forward(self, x):\n" +
         body + "\n";
}

// forward scales the weight by `scaled` (an expression of `w`), then the product and epilogue.
std::string weight_scaled(const std::string& scaled) {
  return scaled_module(
      "        w = self.linear.weight\n        B, D = x.shape\n        w2 = " + scaled +
      "\n        y = F.linear(x, w2, self.linear.bias)\n"
      "        return ext.epilogue(y, float(self.divisor))");
}

LaunchPlan checked(const KernelBenchImport& r, const ProblemSpec& p) {
  ExtractedSource src = extract_kernel(r.kernel_file, "converted.cu");
  LaunchPlan plan = parse_launch_block(src);
  check_plan(plan, p, 132);
  return plan;
}

// The value of a step's number at each of the problem's size sets.
std::vector<double> values(const LaunchArg& a, const ProblemSpec& p) {
  std::vector<double> v;
  std::vector<Vars> sets = {p.bench};
  sets.insert(sets.end(), p.tests.begin(), p.tests.end());
  for (const Vars& s : sets)
    v.push_back(eval_real_expr(a.text, plan_vars(p, s, 132), plan_reals(p)));
  return v;
}

std::vector<double> per_set(const ProblemSpec& p, double (*f)(double input_size)) {
  std::vector<double> v;
  std::vector<Vars> sets = {p.bench};
  sets.insert(sets.end(), p.tests.begin(), p.tests.end());
  for (const Vars& s : sets) v.push_back(f(static_cast<double>(s.at("input_size"))));
  return v;
}

}  // namespace

TEST_CASE("import_kernelbench: a tensor times a number of the sizes is a mul torch step") {
  ProblemSpec p = suite_linear();
  auto r = import_kernelbench(weight_scaled("w * (1.0 / D)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked(r, p);
  REQUIRE(plan.launches.size() == 3);
  const LaunchSpec& mul = plan.launches[0];
  CHECK(mul.torch == "mul");
  REQUIRE(mul.args.size() == 2);
  CHECK(mul.args[0].text == "linear.weight");
  CHECK(mul.args[0].kind == ArgKind::Tensor);
  // Python's `1.0 / D`, in double, at every size set: a real expression of the sizes.
  CHECK(mul.args[1].kind == ArgKind::FloatExpr);
  CHECK(mul.args[1].text == "1.0 / input_size");
  CHECK(values(mul.args[1], p) == per_set(p, [](double d) { return 1.0 / d; }));
  // Its result, a buffer of the weight's shape and dtype, is what the product reads.
  CHECK(plan.launches[1].torch == "linear");
  CHECK(plan.launches[1].args[1].text == mul.out);
  bool shaped = false;
  for (const auto& s : plan.scratch)
    if (s.name == mul.out)
      shaped = s.shape == std::vector<std::string>{"output_size", "input_size"} &&
               s.dtype.name == "float32";
  CHECK(shaped);

  // The number first (`s * w` is w.mul(s)); a division by a number; an int stays an int; a
  // true division of two ints, a float constant, a float of __init__ times a size.
  struct Case {
    const char* scaled;
    const char* op;
    const char* number;
    ArgKind kind;
  };
  for (const Case& c : {
           Case{"(1.0 / D) * w", "mul", "1.0 / input_size", ArgKind::FloatExpr},
           Case{"w / (D * 2.0)", "div", "input_size * 2.0", ArgKind::FloatExpr},
           Case{"w / D", "div", "input_size", ArgKind::IntExpr},
           Case{"w * 3", "mul", "3", ArgKind::IntExpr},
           Case{"w * (D / 2)", "mul", "1.0 * input_size / 2", ArgKind::FloatExpr},
           Case{"w * 0.5", "mul", "0.5", ArgKind::FloatLiteral},
           Case{"w / self.divisor", "div", "10.0", ArgKind::FloatLiteral},
           Case{"w * (self.divisor / (B * D))", "mul", "10.0 / (batch_size * input_size)",
                ArgKind::FloatExpr},
           Case{"w * (1.0 - 1 / (D + 1))", "mul", "1.0 - (1.0 / (input_size + 1))",
                ArgKind::FloatExpr},
       }) {
    r = import_kernelbench(weight_scaled(c.scaled), p);
    REQUIRE_MESSAGE(r.converted, c.scaled, ": ", r.reason);
    plan = checked(r, p);
    REQUIRE(plan.launches.size() == 3);
    CHECK_MESSAGE(plan.launches[0].torch == c.op, c.scaled);
    CHECK_MESSAGE(plan.launches[0].args[0].text == "linear.weight", c.scaled);
    CHECK_MESSAGE(plan.launches[0].args[1].text == c.number, c.scaled);
    CHECK_MESSAGE(plan.launches[0].args[1].kind == c.kind, c.scaled);
  }
  // Two numbers in a row are two steps, as PyTorch runs two operators (each product rounded).
  r = import_kernelbench(weight_scaled("w * 2.0 / D"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked(r, p);
  REQUIRE(plan.launches.size() == 4);
  CHECK(plan.launches[0].torch == "mul");
  CHECK(plan.launches[1].torch == "div");
  CHECK(plan.launches[1].args[0].text == plan.launches[0].out);
  // A view is copied into a buffer of its shape first, and the step reads the copy.
  r = import_kernelbench(weight_scaled("w.view(-1, D) * (0.5 / D)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked(r, p);
  bool stepped = false;
  for (const auto& l : plan.launches)
    stepped = stepped || (l.torch == "mul" && l.args[1].text == "0.5 / input_size");
  CHECK(stepped);
}

TEST_CASE("import_kernelbench: a float of the sizes computed in forward reaches a kernel") {
  // `D * 0.5` is a real expression, passed to the wrapper's double and on to the kernel's float
  // as C++ computes it there ((float)(1.0 / divisor)).
  ProblemSpec p = suite_linear();
  auto r =
      import_kernelbench(scaled_module("        B, D = x.shape\n"
                                       "        return ext.epilogue(self.linear(x), D * 0.5 + 1)"),
                         p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked(r, p);
  REQUIRE(plan.launches.size() == 2);
  const LaunchArg& inv = plan.launches[1].args[2];
  CHECK(inv.kind == ArgKind::FloatExpr);
  CHECK(values(inv, p) == per_set(p, [](double d) { return 1.0 / (d * 0.5 + 1); }));
}

TEST_CASE("import_kernelbench: a tensor by a number is refused where PyTorch differs or raises") {
  ProblemSpec p = suite_linear();
  auto refused = [&](const std::string& scaled, const std::string& why) {
    auto r = import_kernelbench(weight_scaled(scaled), p);
    CHECK_MESSAGE(!r.converted, scaled);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, scaled, ": ", r.reason);
    return r.category;
  };
  // A number divided by a tensor is another operator (a reciprocal).
  CHECK(refused("(1.0 / D) / w", "Tensor.__rtruediv__") == "torch_op_in_forward");
  // Floor division of a tensor, another tensor operator.
  CHECK(refused("w // 2", "PyTorch op `//`") == "torch_op_in_forward");
  // In place: every name sharing the tensor (here the parameter) would see the change.
  CHECK(refused("w\n        w2 *= 0.5", "PyTorch op `*`") == "torch_op_in_forward");
  // Python raises at some size set (a test set's input_size is 33); a float's floor division is
  // not computed.
  CHECK(refused("w * (1.0 / (D - 33))", "cannot be computed at some size set") == "host_logic");
  CHECK(refused("w * ((D * 1.0) // 2)", "floors a float") == "host_logic");
  // A bool is not mapped; nor two tensors.
  CHECK(refused("w * True", "a bool") == "torch_op_in_forward");
  CHECK(refused("w * w", "PyTorch op `*`") == "torch_op_in_forward");
  // An integer tensor times a float is promoted by PyTorch's rules: not followed.
  ProblemSpec ints = suite_linear();
  ints.inputs[0].dtype = *dtype_from_name("int64");
  auto r = import_kernelbench(scaled_module("        return ext.epilogue(x * 0.5, 1.0)"), ints);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("kernrl maps floating tensors only") != std::string::npos, r.reason);
  // kernrl's own problems: the kernels do all of the work.
  ProblemSpec own = p;
  own.torchscript.clear();
  r = import_kernelbench(weight_scaled("w * (1.0 / D)"), own);
  CHECK_FALSE(r.converted);
  CHECK(r.category == "torch_op_in_forward");
}

namespace {

// ModelNew of suite_conv_transpose()'s problem whose forward computes `y` with `body`, then the
// activation kernel.
std::string conv_transpose_module(const std::string& body) {
  return R"(import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

src = """
#include <torch/extension.h>
__global__ void tanh_k(float* y, int n) {}
torch::Tensor act(torch::Tensor y) {
  int n = y.numel();
  tanh_k<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), n);
  return y;
}
"""

ext = load_inline(name="ext", cpp_sources="", cuda_sources=src, functions=["act"])

class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        ct = self.conv_transpose
)" + body +
         "\n        return ext.act(y)\n";
}

}  // namespace

TEST_CASE("import_kernelbench: F.conv_transpose2d with a scaled weight is two torch steps") {
  ProblemSpec p = suite_conv_transpose();
  // As L2_13's generation: the weight scaled by a number of the sizes, then the functional
  // transposed convolution with the layer's settings by keyword (a tuple slice is a tuple).
  for (const char* call :
       {"F.conv_transpose2d(x, w, ct.bias, stride=ct.stride[0:], padding=ct.padding, "
        "output_padding=ct.output_padding[-2:], dilation=ct.dilation)",
        "F.conv_transpose2d(x, w, ct.bias, 2, 1, 1)",
        "torch.conv_transpose2d(x, w, bias=ct.bias, stride=2, padding=(1, 1), output_padding=1, "
        "groups=1, dilation=1)"}) {
    auto r = import_kernelbench(
        conv_transpose_module("        B, C, H, W = x.shape\n"
                              "        w = ct.weight * (1.0 / (2 * H + 1))\n        y = " +
                              std::string(call)),
        p);
    REQUIRE_MESSAGE(r.converted, call, ": ", r.reason);
    LaunchPlan plan = checked(r, p);  // the step's result fits `out` at every size set
    REQUIRE(plan.launches.size() == 3);
    CHECK(plan.launches[0].torch == "mul");
    CHECK(plan.launches[0].args[1].text == "1.0 / (2 * height + 1)");
    const LaunchSpec& ct = plan.launches[1];
    CHECK(ct.torch == "conv_transpose2d");
    std::vector<std::string> args;
    for (const auto& a : ct.args) args.push_back(a.text);
    const std::vector<std::string> want = {
        "x", plan.launches[0].out, "conv_transpose.bias", "2, 2", "1, 1", "1, 1", "1", "1, 1"};
    CHECK_MESSAGE(args == want, call);
  }
  // Near misses: an argument given twice (Python raises), a keyword the function does not take,
  // a string padding.
  auto refused = [&](const std::string& call, const std::string& why) {
    auto r =
        import_kernelbench(conv_transpose_module("        w = ct.weight\n        y = " + call), p);
    CHECK_MESSAGE(!r.converted, call);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, call, ": ", r.reason);
  };
  refused("F.conv_transpose2d(x, w, ct.bias, 2, stride=2)", "gives `stride` twice");
  refused("F.conv_transpose2d(x, w, ct.bias, 2, 1, 1, output_size=(9, 9))",
          "the keyword argument `output_size`");
  refused("F.conv_transpose2d(x, w, ct.bias, 2, 'same')", "a stride, padding or dilation");
}
