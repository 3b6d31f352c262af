// import_kernelbench: forward's Python values as Python computes them (string escapes in
// f-strings, lists changed in place, any() and all() stopping early, getattr's names,
// integer overflow), or a refusal.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "grading/prepare.h"
#include "import/import_error.h"
#include "import/kernelbench_import.h"
#include "import/python_reader.h"
#include "parse/launch_block.h"
#include "suite_problems.h"

using namespace kernrl;
using kernrl::test::suite_linear;

namespace {

const char* kScaleGelu = R"(
__global__ void scale_gelu(const float* y, float* out, float inv, long long n) {}
torch::Tensor epilogue(torch::Tensor y, double divisor) {
  auto out = torch::empty_like(y);
  long long n = y.numel();
  int blocks = (int)((n + 255) / 256);
  if (blocks > 16) blocks = 16;
  scale_gelu<<<blocks, 256>>>(y.data_ptr<float>(), out.data_ptr<float>(), (float)(1.0 / divisor), n);
  return out;
}
)";

// ModelNew of suite_linear: `methods` (indented 4), then forward's body `forward` (indented 8),
// which ends in ext.epilogue(y, d) on y = self.linear(x).
std::string linear_module(const std::string& forward, const std::string& methods = "",
                          const std::string& cuda = kScaleGelu) {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         cuda +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"epilogue\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, input_size, output_size, divisor):\n"
         "        super().__init__()\n"
         "        self.linear = nn.Linear(input_size, output_size)\n"
         "        self.divisor = divisor\n" +
         methods + "\n    def forward(self, x):\n        y = self.linear(x)\n" + forward + "\n";
}

LaunchPlan checked_plan(const KernelBenchImport& r, const ProblemSpec& p) {
  ExtractedSource src = extract_kernel(r.kernel_file, "converted.cu");
  LaunchPlan plan = parse_launch_block(src);
  check_plan(plan, p, 132);
  return plan;
}

// The `inv` argument (1.0 / divisor) of every scale_gelu launch of the converted module, joined
// by spaces, or "refused: REASON".
std::string scales(const std::string& py) {
  ProblemSpec p = suite_linear();
  auto r = import_kernelbench(py, p);
  if (!r.converted) return "refused: " + r.reason;
  std::string out;
  for (const auto& l : checked_plan(r, p).launches)
    if (l.kernel == "scale_gelu") out += (out.empty() ? "" : " ") + l.args.at(2).text;
  return out;
}

// The reason a refused conversion gives (empty when it converts).
std::string refusal(const std::string& s) {
  return s.rfind("refused: ", 0) == 0 ? s.substr(9) : "";
}

}  // namespace

TEST_CASE("python reader: a brace written as an escape in an f-string is literal text") {
  auto text_of = [](const std::string& src) {
    std::vector<kbimport::PyLine> ls = kbimport::py_lines(src);
    REQUIRE(ls.size() == 1);
    REQUIRE(ls[0].toks.size() == 3);
    return ls[0].toks[2].text;
  };
  // In an f-string, literal braces are doubled; fields stay as written.
  CHECK(text_of(R"(s = f"\x7bk\x7d")") == "{{k}}");
  CHECK(text_of(R"(s = f"\173k\175")") == "{{k}}");
  CHECK(text_of(R"(s = f"\u007bk\U0000007d")") == "{{k}}");
  CHECK(text_of(R"(s = f"{{k}}{k}\x41")") == "{{k}}{k}A");
  CHECK(text_of(R"(s = f"{k:\x41}")") == R"({k:\x41})");  // (refused where it is formatted)
  CHECK(text_of(R"(s = f"\{k}")") == R"(\{k})");          // a backslash, then the field
  // A plain string decodes its escapes to the characters; a raw one keeps them.
  CHECK(text_of(R"(s = "\x7bk\x7d")") == "{k}");
  CHECK(text_of(R"(s = rf"\x7bk\x7d")") == R"(\x7bk\x7d)");
  CHECK(text_of(R"(s = b"\N{X}\u0041")") == R"(\N{X}\u0041)");
  // A named escape is not decoded, and a truncated one is Python's syntax error: refused.
  for (const char* bad : {R"(s = f"\N{LEFT CURLY BRACKET}k}")", R"(s = "\N{DIGIT ONE}")",
                          R"(s = "\x4")", R"(s = "\u12")"})
    CHECK_THROWS_AS_MESSAGE(kbimport::py_lines(bad), kbimport::ImportError, bad);
}

TEST_CASE("import_kernelbench: an f-string's escaped braces are literal text") {
  const std::string tail = "        return ext.epilogue(y, 2.0 if flag else 4.0)";
  auto with = [&](const std::string& test) {
    return scales(linear_module("        flag = " + test + "\n" + tail));
  };
  // Python: f"\x7b1\x7d" is "{1}", not "1".
  CHECK(with(R"(f"\x7b1\x7d" == "1")") == "0.25");
  CHECK(with(R"(f"\x7b1\x7d" == "{1}")") == "0.5");
  CHECK(with(R"(f"\173{1}\175" == "{1}")") == "0.5");
  CHECK(with(R"(f"\u007b1\u007d" == "{1}")") == "0.5");
  CHECK(with(R"(f"{{1}}" == "{1}")") == "0.5");
  CHECK(with(R"(f"{1}" == "1")") == "0.5");
  // A field with an escape is Python's syntax error: not formatted, so not compared.
  CHECK_FALSE(refusal(with(R"(f"{\x31}" == "1")")).empty());
  CHECK(refusal(with(R"(f"\N{LEFT CURLY BRACKET}1}" == "1")")).find("\\N{...}") !=
        std::string::npos);
}

TEST_CASE("import_kernelbench: a CUDA source f-string keeps escaped braces as text") {
  ProblemSpec p = suite_linear();
  // The module's CUDA source an f-string of a module constant, with a comment that is
  // `// {K} 4` in Python (its C++ braces doubled).
  std::string cuda = "// \\x7bK\\x7d {K}\n";
  for (const char* c = kScaleGelu; *c; ++c)
    cuda += *c == '{' ? "{{" : *c == '}' ? "}}" : std::string(1, *c);
  std::string py = linear_module("        return ext.epilogue(y, 2.0)", "", cuda);
  py.replace(py.find("src = \"\"\""), 9, "K = 4\nsrc = f\"\"\"");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.kernel_file.find("// {K} 4") != std::string::npos);
  CHECK(r.kernel_file.find("// 4 4") == std::string::npos);
  // A field's text is what Python's str() gives the constant, or the file is refused.
  auto comment = [&](const std::string& k) {
    std::string q = linear_module("        return ext.epilogue(y, 2.0)", "", cuda);
    q.replace(q.find("src = \"\"\""), 9, "K = " + k + "\nsrc = f\"\"\"");
    auto c = import_kernelbench(q, p);
    if (!c.converted) return "refused: " + c.reason;
    size_t at = c.kernel_file.find("// {K} ");
    return at == std::string::npos
               ? std::string("?")
               : c.kernel_file.substr(at + 7, c.kernel_file.find('\n', at) - at - 7);
  };
  CHECK(comment("0x10") == "16");
  CHECK(comment("1_000") == "1000");
  CHECK(comment("0.5") == "0.5");
  CHECK(comment("'ab'") == "ab");
  for (const char* k : {"2.50", "1e3", "0.00001", "1.", "f'{{x}}'", "99999999999999999999"})
    CHECK_MESSAGE(comment(k).find("does not write as Python does") != std::string::npos, k, ": ",
                  comment(k));
}

TEST_CASE("import_kernelbench: += and *= change a list in place, as every name sees it") {
  const std::string ret = "        return ext.epilogue(y, float(len(a)))";
  // Python: b is a, so a has the items b gets.
  CHECK(scales(linear_module("        a = [1]\n        b = a\n        b += [2, 3, 4]\n" + ret)) ==
        "0.25");
  CHECK(scales(linear_module("        a = [1, 2]\n        b = a\n        b *= 2\n" + ret)) ==
        "0.25");
  CHECK(scales(linear_module("        a = [1]\n        c = (a, 0)\n        a += (2,)\n"
                             "        a = c[0]\n" +
                             ret)) == "0.5");
  CHECK(scales(linear_module("        a = [1, 2]\n        b = a\n        b *= 0\n"
                             "        a.append(1)\n        a.append(2)\n" +
                             ret)) == "0.5");
  // An empty list repeated any number of times is empty (and quickly so).
  CHECK(scales(
            linear_module("        a = [] * 9223372036854775807\n        a *= 9223372036854775807\n"
                          "        t = () * 9223372036854775807\n"
                          "        a.append(len(t))\n" +
                          ret)) == "1.0");
  // A new list bound to b leaves a as it is; tuples are not changed in place.
  CHECK(scales(linear_module("        a = [1]\n        b = a\n        b = b + [2, 3, 4]\n" +
                             ret)) == "1.0");
  CHECK(scales(linear_module("        a = (1,)\n        b = a\n        b += (2, 3, 4)\n" + ret)) ==
        "1.0");
  // A list kernrl does not know every name of (a method's argument): refused.
  std::string why = refusal(scales(
      linear_module("        a = [1]\n        self._add(a, 2)\n" + ret,
                    "\n    def _add(self, acc, v):\n        acc += [v]\n        return None\n")));
  CHECK_MESSAGE(
      why.find("extends `acc`, which is not a list made in the same function") != std::string::npos,
      why);
  // While a loop iterates over it, or with a value kernrl does not follow: refused.
  why =
      refusal(scales(linear_module("        a = [1]\n        for i in a:\n"
                                   "            if len(a) < 3:\n                a += [i]\n" +
                                   ret)));
  CHECK_MESSAGE(why.find("while a `for` loop iterates over it") != std::string::npos, why);
  why = refusal(scales(linear_module("        a = [1]\n        a += 'xy'\n" + ret)));
  CHECK_MESSAGE(why.find("with a value kernrl does not follow") != std::string::npos, why);
}

TEST_CASE("import_kernelbench: any() and all() stop at the first item that decides") {
  // Python: the generator's first item decides, so the extension runs once in any().
  CHECK(scales(linear_module("        flag = any(ext.epilogue(y, 2.0) is not None for i in "
                             "range(3))\n"
                             "        return ext.epilogue(y, 4.0)")) == "0.5 0.25");
  CHECK(scales(linear_module("        flag = all(ext.epilogue(y, 2.0) is None for i in range(3))\n"
                             "        return ext.epilogue(y, 4.0 if flag else 8.0)")) ==
        "0.5 0.125");
  // Items after the one that decides are never made, even ones kernrl could not follow.
  CHECK(scales(linear_module("        flag = any(i == 0 or x.tolist() for i in range(2))\n"
                             "        return ext.epilogue(y, 4.0 if flag else 8.0)")) == "0.25");
  // tuple() and list() take every item.
  CHECK(scales(linear_module("        t = tuple(ext.epilogue(y, 2.0) for i in range(2))\n"
                             "        return ext.epilogue(y, 4.0)")) == "0.5 0.5 0.25");
}

TEST_CASE("import_kernelbench: a private attribute is followed where Python mangles it alike") {
  const std::string init = "        self.__div = 2.0\n";
  // In ModelNew's methods `self.__div` is the attribute __init__ sets (both `_ModelNew__div`).
  CHECK(scales(linear_module("        return ext.epilogue(y, self.__div)", init)) == "0.5");
  CHECK(scales(linear_module("        return ext.epilogue(y, self._d())",
                             init + "\n    def _d(self):\n        return self.__div\n")) == "0.5");
  // getattr is given a name Python does not mangle, and a mangled name is another attribute
  // than kernrl's by the name written: refused.
  for (const char* read : {"getattr(self, '__div')", "getattr(self, '_ModelNew__div')"}) {
    std::string why = refusal(
        scales(linear_module(std::string("        return ext.epilogue(y, ") + read + ")", init)));
    CHECK_MESSAGE(why.find("with the private name") != std::string::npos, read, ": ", why);
  }
  std::string why =
      refusal(scales(linear_module("        return ext.epilogue(y, self._ModelNew__div)", init)));
  CHECK_MESSAGE(why.find("a private attribute by its mangled name") != std::string::npos, why);
  // A function of the module is outside the class: Python reads `__div` itself there.
  std::string py = linear_module("        return ext.epilogue(y, hd(self))", init);
  py.insert(py.find("class ModelNew"), "def hd(m):\n    return m.__div\n\n");
  why = refusal(scales(py));
  CHECK_MESSAGE(why.find("outside a method of its class") != std::string::npos, why);
  // A plain private name is mangled in a class body too: a method's `__scale` is not the
  // module's (Python's NameError), a local one is the method's own.
  py = linear_module("        return ext.epilogue(y, __scale)");
  py.insert(py.find("class ModelNew"), "__scale = 2.0\n\n");
  why = refusal(scales(py));
  CHECK_MESSAGE(
      why.find("a private name, which Python mangles in a class body") != std::string::npos, why);
  py = linear_module("        return ext.epilogue(y, __half(2.0))");
  py.insert(py.find("class ModelNew"), "def __half(v):\n    return v\n\n");
  CHECK_FALSE(refusal(scales(py)).empty());
  CHECK(scales(linear_module("        __s = 2.0\n        return ext.epilogue(y, __s)")) == "0.5");
}

TEST_CASE("import_kernelbench: integer arithmetic past 64 bits is refused, not wrapped") {
  auto with = [](const std::string& k) {
    return scales(linear_module("        k = " + k +
                                "\n        return ext.epilogue(y, 2.0 if k > 0 else 4.0)"));
  };
  CHECK(with("9223372036854775806 + 1") == "0.5");
  CHECK(with("-9223372036854775807 - 1") == "0.25");
  // Python's integers grow: each of these is positive there.
  for (const char* k :
       {"9223372036854775807 + 1", "4611686018427387904 * 2", "-(-9223372036854775807 - 1)",
        "(-9223372036854775807 - 1) // -1", "18446744073709551615", "0xFFFFFFFFFFFFFFFF",
        "99999999999999999999", "int(1e30)", "int(-1e19) * -1"}) {
    std::string s = with(k);
    CHECK_MESSAGE(s.rfind("refused: ", 0) == 0, k, ": ", s);
  }
  CHECK(refusal(with("9223372036854775807 + 1")).find("overflows a 64-bit integer") !=
        std::string::npos);
  // A range ending near the bound ends there, not past it.
  CHECK(with("len(range(9223372036854775800, 9223372036854775807, 5))") == "0.5");
  CHECK(with("int(-2.5)") == "0.25");
}

TEST_CASE("import_kernelbench: modules() of anything but ModelNew's self is refused, saying so") {
  ProblemSpec p = suite_linear();
  p.modules = {{"linear", {"Linear"}}};
  auto reason = [&](const std::string& py) {
    auto r = import_kernelbench(py, p);
    return r.converted ? std::string("converted") : r.reason;
  };
  const std::string ret = "\n        return ext.epilogue(y, 2.0 if flag else 4.0)";
  std::string why = reason(linear_module(
      "        flag = any(isinstance(m, nn.ReLU) for m in self.linear.modules())" + ret));
  CHECK_MESSAGE(why.find("kernrl follows only `self.modules()` of ModelNew") != std::string::npos,
                why);
  std::string py = linear_module("        flag = has_relu(self)" + ret);
  py.insert(py.find("class ModelNew"),
            "def has_relu(model):\n"
            "    return any(isinstance(m, nn.ReLU) for m in model.modules())\n\n");
  why = reason(py);
  CHECK_MESSAGE(
      why.find("forward calls `model.modules()`; kernrl follows only") != std::string::npos, why);
  // ModelNew's own, in forward: followed.
  CHECK(reason(linear_module("        flag = any(isinstance(m, nn.Linear) for m in "
                             "self.modules())" +
                             ret)) == "converted");
  // A list repeated by a float is Python's TypeError.
  CHECK(reason(linear_module("        flag = len([0] * float(2)) > 1" + ret)) != "converted");
}

TEST_CASE("import_kernelbench: getattr of names from joined and repeated tuples and strings") {
  ProblemSpec p =
      load_problem(find_problem_dir(problems_dir(), "L2_40_Matmul_Scaling_ResidualAdd"));
  auto module = [](const std::string& names, const std::string& scale) {
    return R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = """
#include <torch/extension.h>
__global__ void fused(const float* x, const float* w, const float* b, float* out, int batch,
                      int in_f, int out_f, float scale) {}
torch::Tensor fused_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, float s) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  fused<<<dim3((w.size(0) + 15) / 16, (x.size(0) + 15) / 16), dim3(16, 16)>>>(
      x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(),
      x.size(0), x.size(1), w.size(0), s);
  return out;
}
"""

ext = load_inline(name="ext", cpp_sources="", cuda_sources=src, functions=["fused_forward"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super(ModelNew, self).__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.randn(out_features))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        names = )" +
           names + R"(
        w, b = [getattr(self, n) for n in names]
        return ext.fused_forward(x, w, b, getattr(self, )" +
           scale + "))\n";
  };
  auto r =
      import_kernelbench(module(R"(("weight",) + ("bias",) * 1)", R"("scaling_" + f"factor")"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  ExtractedSource src = extract_kernel(r.kernel_file, "converted.cu");
  LaunchPlan plan = parse_launch_block(src);
  check_plan(plan, p, 132);
  REQUIRE(plan.launches.size() == 1);
  std::vector<std::string> args;
  for (const auto& a : plan.launches[0].args) args.push_back(a.text);
  CHECK(args == std::vector<std::string>{"x", "weight", "bias", "out", "batch_size", "in_features",
                                         "out_features", "scaling_factor"});
  // The tuple repeated no times: one name, two targets.
  CHECK_FALSE(import_kernelbench(module(R"(("weight",) + ("bias",) * 0)", R"("scaling_factor")"), p)
                  .converted);
  // The names in the other order: the weight is the bias and the bias the weight, as in Python.
  r = import_kernelbench(module(R"(("bias",) + ("weight",))", R"("scaling_factor")"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  const LaunchSpec swapped =
      parse_launch_block(extract_kernel(r.kernel_file, "c.cu")).launches.at(0);
  CHECK(swapped.args.at(1).text == "bias");
  CHECK(swapped.args.at(2).text == "weight");
}
