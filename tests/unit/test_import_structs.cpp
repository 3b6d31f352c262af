// The KernelBench importer's plain structs passed to kernels by value (`struct(...)` arguments,
// docs/kernel-format.md) and Python lists of integers given to std::vector<int64_t> parameters
// of the wrapper (docs/import-kernelbench.md).
#include <doctest/doctest.h>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "import/kernelbench_import.h"
#include "parse/launch_block.h"

using namespace kernrl;

namespace {

const ProblemSpec& gelu() {  // x, out: float32 [batch_size, dim]
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_26"));
  return p;
}

// A module whose CUDA source is `cuda` (after #include <torch/extension.h>) and whose forward
// runs `body` (indented lines) then returns `ret`.
std::string module(const std::string& cuda, const std::string& fn, const std::string& body,
                   const std::string& ret) {
  return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
         "src = \"\"\"\n#include <torch/extension.h>\n#include <vector>\n" +
         cuda + "\"\"\"\next = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, " +
         "functions=[\"" + fn +
         "\"])\n\nclass ModelNew(nn.Module):\n    def __init__(self, *args):\n"
         "        super().__init__()\n\n    def forward(self, x):\n" +
         body + "        return " + ret + "\n";
}

LaunchPlan checked_plan(const KernelBenchImport& r, const ProblemSpec& p) {
  LaunchPlan plan = parse_launch_block(extract_kernel(r.kernel_file, "converted.cu"));
  check_plan(plan, p, 132);
  return plan;
}

// x -> out through kernel k(Args a, float* y), `fill` setting `a` in the wrapper.
std::string struct_module(const std::string& decl, const std::string& fill,
                          const std::string& kernel_param = "Args a") {
  return module(decl + "\n__global__ void k(" + kernel_param +
                    ", float* y) {}\n"
                    "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n" +
                    fill + "\n  k<<<1, 1>>>(a, y.data_ptr<float>());\n  return y;\n}\n",
                "f", "", "ext.f(x)");
}

}  // namespace

TEST_CASE("import_kernelbench: a plain struct filled in the wrapper becomes a struct argument") {
  const std::string decl =
      "#define N 3\nstruct Args {\n  const float* __restrict__ src[2];\n  int64_t total;\n"
      "  int begin[N], count[N];\n  float scale;\n  double eps;\n  short tag;\n  float* none;\n};";
  const std::string fill =
      "  torch::Tensor ts[2] = {x, y};\n  Args a;\n  int at = 0;\n"
      "  for (int k = 0; k < 2; ++k) a.src[k] = ts[k].data_ptr<float>() + k;\n"
      "  for (int k = 0; k < N; ++k) { a.begin[k] = at; a.count[k] = (int)x.size(1) * k; "
      "at += a.count[k]; }\n"
      "  a.total = x.numel();\n  a.scale = 1.0f / x.size(1);\n  a.eps = 1e-5;\n  a.tag = 7;\n"
      "  a.none = nullptr;";
  auto r = import_kernelbench(struct_module(decl, fill), gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, gelu());
  REQUIRE(plan.launches.size() == 1);
  const auto& args = plan.launches[0].args;
  REQUIRE(args.size() == 2);
  CHECK(args[0].kind == ArgKind::Struct);
  CHECK(args[0].text ==
        "struct(ptr x, ptr out + 1, i64 batch_size * dim, i32 0, i32 0 + dim * 0, "
        "i32 0 + dim * 0 + dim, i32 dim * 0, i32 dim, i32 dim * 2, f32 1.0 / dim, f64 1e-5, "
        "i16 7, ptr null)");
  CHECK(args[1].text == "out");
  // `T a{};` value-initialises every field; a copy of a struct is that struct.
  r = import_kernelbench(struct_module("struct Args { const float* p; int n; };",
                                       "  Args b{};\n  b.n = 4;\n"
                                       "  Args a = b;"),
                         gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, gelu()).launches[0].args[0].text == "struct(ptr null, i32 4)");
}

TEST_CASE("import_kernelbench: structs kernrl does not pass as C++ would are refused") {
  struct Case {
    std::string decl, fill, param, reason;
  };
  const std::string set_p = "  Args a;\n  a.p = x.data_ptr<float>();";
  const std::vector<Case> cases = {
      {"struct Args { const float* p; unsigned n; };", set_p + " a.n = 1;", "Args a",
       "the type `unsigned`"},
      {"struct Args { const float* p; size_t n; };", set_p + " a.n = 1;", "Args a",
       "the type `size_t`"},
      {"struct Args { const float* p; bool b; };", set_p + " a.b = true;", "Args a",
       "the type `bool`"},
      {"struct Args { const float* p; float2 v; };", set_p, "Args a", "the type `float2`"},
      {"struct Args { const float* p; int n = 3; };", set_p, "Args a", "has a default value"},
      {"struct Args { const float* p; int n : 4; };", set_p, "Args a", "bitfield"},
      {"struct Args { const float* p; Args() : p(nullptr) {} };", set_p, "Args a",
       "is a function or constructor"},
      {"struct Base { int n; };\nstruct Args : Base { const float* p; };", set_p, "Args a",
       "has base classes"},
      {"struct In { int n; };\nstruct Args { const float* p; In in; };", set_p, "Args a",
       "the type `In`"},
      {"struct Args { const float* p; static const int n = 3; };", set_p, "Args a",
       "not a plain data member (`static`)"},
      {"struct Args { const float* p; int n[M]; };", set_p, "Args a",
       "an array length kernrl cannot compute"},
      {"typedef struct { const float* p; } Args;", set_p, "Args a",
       "is not defined as `struct Args { ... };`"},
      // By reference or pointer, to the kernel or to a function of the wrapper.
      {"struct Args { const float* p; };", set_p, "const Args& a",
       "takes a struct of the source by reference"},
      {"struct Args { const float* p; };\nvoid fill(Args& a, torch::Tensor x) { a.p = "
       "x.data_ptr<float>(); }",
       "  Args a;\n  fill(a, x);", "Args a", "takes the struct `Args` by reference"},
      // A field that is not set on every path, or set to what kernrl cannot follow.
      {"struct Args { const float* p; int n[2]; };", set_p + " a.n[0] = 1;", "Args a",
       "whose field `n[1]` kernrl cannot compute before the launch"},
      {"struct Args { const float* p; int n; };", set_p + " a.n = x.data_ptr<float>() != 0;",
       "Args a", ""},
      {"struct Args { const float* p; int n; };", "  Args a = {x.data_ptr<float>(), 3};", "Args a",
       "kernrl follows a struct's fields set one by one, or `{}`"},
  };
  for (const auto& c : cases) {
    auto r = import_kernelbench(struct_module(c.decl, c.fill, c.param), gelu(), "gen.py");
    CHECK_MESSAGE(!r.converted, std::string(c.decl + "\n" + c.fill));
    CHECK_MESSAGE(r.reason.find(c.reason) != std::string::npos, r.reason);
  }
}

namespace {

// A wrapper f(x, lo, hi) whose kernel gets lo and hi in a struct (as L2_44 of KernelBench v4).
const char* kRanges = R"(
#define MAXK 4
struct Ranges { int lo[MAXK], hi[MAXK]; };
__global__ void k(const float* x, float* y, Ranges r, int n) {}
torch::Tensor f(torch::Tensor x, std::vector<int64_t> lo, std::vector<int64_t> hi) {
  TORCH_CHECK(lo.size() == hi.size() && lo.size() <= MAXK, "bad ranges");
  auto y = torch::empty_like(x);
  const int K = (int)lo.size();
  Ranges r;
  for (int k = 0; k < MAXK; ++k) {
    r.lo[k] = k < K ? (int)lo[k] : 1;
    r.hi[k] = k < K ? (int)hi[k] : 0;
  }
  k<<<1, 1>>>(x.data_ptr<float>(), y.data_ptr<float>(), r, K);
  return y;
}
)";

}  // namespace

TEST_CASE("import_kernelbench: Python lists of integers given to std::vector<int64_t>") {
  auto r =
      import_kernelbench(module(kRanges, "f",
                                "        n = x.shape[1]\n        lo, hi = [], []\n"
                                "        for k in range(3):\n            lo.append(max(0, k - 1))\n"
                                "            hi.append(min(n - 1, (n - 1 - k) // 2))\n",
                                "ext.f(x, lo, hi)"),
                         gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, gelu());
  CHECK(plan.launches.at(0).args.at(2).text ==
        "struct(i32 0, i32 0, i32 1, i32 1, i32 min(dim - 1, (dim - 1) / 2), i32 min(dim - 1, "
        "(dim - 1 - 1) / 2), i32 min(dim - 1, (dim - 1 - 2) / 2), i32 0)");
  CHECK(plan.launches.at(0).args.at(3).text == "3");
  // `[a] * n`, `a + b` of lists, a list literal; an alias of the list sees what is appended.
  r = import_kernelbench(module(kRanges, "f",
                                "        lo = [0] * 2 + [1]\n        hi = [5, 6]\n"
                                "        h2 = hi\n        h2.append(7)\n",
                                "ext.f(x, lo, hi)"),
                         gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, gelu()).launches.at(0).args.at(2).text ==
        "struct(i32 0, i32 0, i32 1, i32 1, i32 5, i32 6, i32 7, i32 0)");

  // A bool is an int to pybind11: 0 or 1.
  r = import_kernelbench(
      module(kRanges, "f", "        lo = [True, x.shape[0] > 0]\n", "ext.f(x, lo, lo)"), gelu(),
      "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, gelu()).launches.at(0).args.at(2).text ==
        "struct(i32 1, i32 1, i32 1, i32 1, i32 1, i32 1, i32 0, i32 0)");

  struct Case {
    std::string body, call, reason;
  };
  const std::vector<Case> cases = {
      // A list kernrl does not know every holder of.
      {"        lo = list(x.shape)\n        lo.append(1)\n", "ext.f(x, lo, lo)",
       "appends to `lo`, which is not a list made in the same function"},
      {"        lo = [1]\n        for v in lo:\n            lo.append(v)\n", "ext.f(x, lo, lo)",
       "while a `for` loop iterates over it"},
      {"        lo = [1] * x.shape[0]\n", "ext.f(x, lo, lo)",
       "repeats a list a number of times kernrl does not know"},
      // What pybind11 would refuse.
      {"        lo = [1.5]\n", "ext.f(x, lo, lo)", "is not an integer: pybind11 refuses it"},
      // Python floors where C truncates.
      {"        lo = [(x.shape[1] - 3000) // 2]\n", "ext.f(x, lo, lo)",
       "may take a negative operand"},
  };
  for (const auto& c : cases) {
    auto bad = import_kernelbench(module(kRanges, "f", c.body, c.call), gelu(), "gen.py");
    CHECK_MESSAGE(!bad.converted, c.body);
    CHECK_MESSAGE(bad.reason.find(c.reason) != std::string::npos, bad.reason);
  }
  // std::vector<int>: an item beyond an int is refused (pybind11 raises).
  std::string narrow = kRanges;
  for (size_t at; (at = narrow.find("std::vector<int64_t>")) != std::string::npos;)
    narrow.replace(at, 20, "std::vector<int>");
  auto big = import_kernelbench(
      module(narrow, "f", "        lo = [x.shape[1] * 10000000]\n", "ext.f(x, lo, lo)"), gelu(),
      "gen.py");
  CHECK_FALSE(big.converted);
  CHECK_MESSAGE(big.reason.find("beyond an int: pybind11 refuses it") != std::string::npos,
                big.reason);
}
