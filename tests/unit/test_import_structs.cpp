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
       "Args a", "needs an integer kernrl can compute"},
      {"struct Args { const float* p; int n; };", "  Args a = {x.data_ptr<float>(), 3};", "Args a",
       "kernrl follows a struct's fields set one by one, or `{}`"},
      // A name with more than one definition: which one C++ means depends on its scopes.
      {"namespace u { struct Args { const float* p; double n; }; }\n"
       "struct Args { const float* p; int n; };",
       set_p + " a.n = 3;", "Args a", "is defined more than once in the source"},
      {"struct Outer { struct Args { const float* p; double n; } in; };\n"
       "struct Args { const float* p; int n; };",
       set_p + " a.n = 3;", "Args a", "is defined more than once in the source"},
      // A layout other than the default alignment's.
      {"#pragma pack(push, 1)\nstruct Args { const float* p; int8_t c; int n; };\n#pragma "
       "pack(pop)",
       set_p + " a.n = 3;", "Args a", "changes how structs are laid out"},
      {"struct Args { int n; const float* p; } __attribute__((packed));", set_p + " a.n = 3;",
       "Args a", "has `__attribute__` after it"},
      {"struct Args { int n; const float* p; } __attribute__((aligned(32)));", set_p + " a.n = 3;",
       "Args a", "has `__attribute__` after it"},
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
      // enumerate() and zip() read the list lazily: Python sees what the body appends.
      {"        lo = [1]\n        for i, v in enumerate(lo):\n            if i < 3:\n"
       "                lo.append(v)\n",
       "ext.f(x, lo, lo)", "while a `for` loop iterates over it"},
      {"        lo = [1]\n        hi = [2]\n        for a, b in zip(lo, hi):\n"
       "            lo.append(a)\n            hi.append(b)\n",
       "ext.f(x, lo, hi)", "while a `for` loop iterates over it"},
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
  CHECK_MESSAGE(
      big.reason.find("beyond the range of `int`: pybind11 refuses it") != std::string::npos,
      big.reason);
}

namespace {

// x -> out through k(Args a, float* y) after k2(V v, float* y) is given `arg`, `fill` setting
// `a` in the wrapper.
std::string read_back_module(const std::string& decl, const std::string& fill,
                             const std::string& v_type, const std::string& arg) {
  return struct_module(decl + "\n__global__ void k2(" + v_type + " v, float* y) {}",
                       fill + "\n  k2<<<1, 1>>>(" + arg + ", y.data_ptr<float>());");
}

// f(x, lo) of `type` lo, its struct Ranges filled from lo[0] and lo[1] (`body`, else as ints).
std::string list_module(const std::string& type, const std::string& forward,
                        const std::string& body = "  r.lo[0] = lo[0]; r.lo[1] = lo[1];",
                        const std::string& fields = "int lo[2];") {
  return module("struct Ranges { " + fields +
                    " };\n__global__ void k(const float* x, float* y, Ranges r) {}\n"
                    "torch::Tensor f(torch::Tensor x, " +
                    type + " lo) {\n  auto y = torch::empty_like(x);\n  Ranges r;\n" + body +
                    "\n  k<<<1, 1>>>(x.data_ptr<float>(), y.data_ptr<float>(), r);\n"
                    "  return y;\n}\n",
                "f", forward, "ext.f(x, lo)");
}

std::string converted_arg(const std::string& src, size_t launch, size_t arg) {
  auto r = import_kernelbench(src, gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  return checked_plan(r, gelu()).launches.at(launch).args.at(arg).text;
}

void check_refused(const std::string& src, const std::string& reason) {
  auto r = import_kernelbench(src, gelu(), "gen.py");
  CHECK_MESSAGE(!r.converted, src);
  CHECK_MESSAGE(r.reason.find(reason) != std::string::npos, r.reason);
}

}  // namespace

TEST_CASE("import_kernelbench: a struct field or narrow local holds its value as C++ converts it") {
  const std::string decl =
      "struct Args { const float* p; int8_t c; short s; int n; float f; long long l; };";
  const std::string set_p = "  Args a{};\n  a.p = x.data_ptr<float>();\n";
  // Constants wrap around to the field's type (two's complement); a float is rounded.
  CHECK(converted_arg(struct_module(decl, set_p + "  a.c = 200; a.s = 70000; a.n = 5000000000; "
                                                  "a.f = 16777217; a.l = 5000000000;"),
                      0, 0) ==
        "struct(ptr x, i8 -56, i16 4464, i32 705032704, f32 16777216.0, i64 5000000000)");
  // A field read back on the host is the converted value.
  CHECK(converted_arg(read_back_module(decl, set_p + "  a.c = 200;", "int", "a.c"), 0, 0) == "-56");
  CHECK(converted_arg(read_back_module(decl, set_p + "  a.f = 16777217;", "int", "(int)a.f"), 0,
                      0) == "16777216");
  // So does a narrow local, declared with its value or assigned later.
  CHECK(converted_arg(struct_module(decl, set_p + "  int8_t c = 200;\n  short s;\n  s = 70000;\n"
                                                  "  a.n = c + s;"),
                      0, 0) == "struct(ptr x, i8 0, i16 0, i32 4408, f32 0.0, i64 0)");
  CHECK(converted_arg(read_back_module(decl, set_p + "  float s = 0.1;", "double", "s"), 0, 0) ==
        "0.10000000149011612");
  CHECK(converted_arg(read_back_module(decl, set_p + "  float t;\n  t = 0.2;", "double", "t"), 0,
                      0) == "0.20000000298023224");
  // A value of the sizes beyond the field's range at some size set: refused.
  check_refused(struct_module(decl, set_p + "  a.c = x.size(1);"),
                "at some size set, beyond the range of `int8_t`");
  check_refused(struct_module(decl, set_p + "  a.n = x.numel() * 100000;"),
                "at some size set, beyond the range of `int`");
  // So does a signed integer parameter of a kernel.
  CHECK(converted_arg(read_back_module(decl, set_p, "int", "5000000000LL"), 0, 0) == "705032704");
  check_refused(read_back_module(decl, set_p, "int", "x.numel() * 100000"),
                "at some size set, beyond the range of `int`");
  // In a loop run as a launch-block repeat: the field's value at every pass must fit.
  auto loop = [&](const std::string& field) {
    return module(decl +
                      "\n__global__ void k(Args a, float* y) {}\n"
                      "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n"
                      "  for (int i = 0; i < x.size(1); ++i) {\n    Args a{};\n"
                      "    a.p = x.data_ptr<float>();\n    a." +
                      field +
                      " = i;\n    k<<<1, 1>>>(a, y.data_ptr<float>());\n  }\n  return y;\n}\n",
                  "f", "", "ext.f(x)");
  };
  CHECK(converted_arg(loop("n"), 0, 0) == "struct(ptr x, i8 0, i16 0, i32 i, f32 0.0, i64 0)");
  check_refused(loop("c"), "at some size set, beyond the range of `int8_t`");
  // A float field holding a value of the sizes kernrl cannot round, read back: refused.
  check_refused(read_back_module(decl, set_p + "  a.f = 1.0f / x.size(1);", "double", "a.f"),
                "reads back the `float` field `f`");
}

TEST_CASE("import_kernelbench: assignments through references are refused") {
  const std::string decl = "struct Args { const float* p; int n; };";
  const std::string set_p = "  Args a{};\n  a.p = x.data_ptr<float>();\n";
  check_refused(struct_module(decl, set_p + "  Args& r = a;\n  r.n = 7;"),
                "assigns to `r`, a reference");
  check_refused(struct_module(decl, set_p + "  auto& r = a;\n  r.n = 7;"),
                "assigns to `r`, a reference");
  check_refused(struct_module(decl, set_p + "  const Args& r = a;\n  a.n = 7;"),
                "assigns to `a`, which the reference `r` refers to");
  check_refused(struct_module(decl, set_p + "  int m = 0;\n  int& r = m;\n  r = 7;\n  a.n = m;"),
                "assigns to `r`, a reference");
  check_refused(struct_module(decl + "\nvoid g(int& v) { v = 5; }",
                              set_p + "  int m = 0;\n  g(m);\n  a.n = m;"),
                "a reference parameter of `g`");
  // Read only, a reference is its value.
  CHECK(converted_arg(struct_module(decl, set_p + "  a.n = 3;\n  const Args& r = a;\n"
                                                  "  int& m = a.n;\n  int q = m + r.n;\n"
                                                  "  Args b = r;\n  b.n = q;"),
                      0, 0) == "struct(ptr x, i32 3)");
}

TEST_CASE("import_kernelbench: Python lists given to std::vector<T> convert as pybind11 does") {
  // Items of a std::vector<float> / <double> are floats: lo[0] / 2 is 0.5.
  CHECK(converted_arg(list_module("std::vector<float>", "        lo = [1, 3]\n",
                                  "  r.s = lo[0] / 2; r.n = lo[1] / 2;", "float s; int n;"),
                      0, 2) == "struct(f32 0.5, i32 1)");
  CHECK(converted_arg(list_module("std::vector<double>", "        lo = [1, True]\n",
                                  "  r.s = lo[0] / 2; r.n = lo[1] * 3;", "float s; int n;"),
                      0, 2) == "struct(f32 0.5, i32 3)");
  // Any spelling of an integer type; bools as Python's bool() of the item.
  for (const char* type :
       {"std::vector<std::int64_t>", "std::vector<long int>", "const std::vector<int>&",
        "std::vector<unsigned>", "std::vector<size_t>", "std::vector<uint8_t>",
        "std::vector<int16_t>", "at::IntArrayRef", "std::vector<int8_t>"})
    CHECK_MESSAGE(converted_arg(list_module(type, "        lo = [3, True]\n"), 0, 2) ==
                      "struct(i32 3, i32 1)",
                  type);
  CHECK(converted_arg(list_module("std::vector<bool>", "        lo = [3, 0.0]\n"), 0, 2) ==
        "struct(i32 1, i32 0)");
  // What pybind11 refuses: a float for an integer type, a value beyond the type's range.
  for (const char* type : {"std::vector<std::int64_t>", "std::vector<long int>",
                           "std::vector<int8_t>", "std::vector<unsigned>", "std::vector<size_t>",
                           "std::vector<uint8_t>", "std::vector<int16_t>", "c10::IntArrayRef"})
    check_refused(list_module(type, "        lo = [1.5, 4]\n"), "is not an integer");
  check_refused(list_module("std::vector<uint8_t>", "        lo = [300, 4]\n"),
                "is 300, beyond the range of `uint8_t`: pybind11 refuses it");
  check_refused(list_module("std::vector<int16_t>", "        lo = [70000, 4]\n"),
                "is 70000, beyond the range of `int16_t`: pybind11 refuses it");
  check_refused(list_module("std::vector<size_t>", "        lo = [-1, 4]\n"),
                "is -1, beyond the range of `size_t`: pybind11 refuses it");
  check_refused(list_module("std::vector<unsigned>", "        lo = [x.shape[1] - 100000, 4]\n"),
                "at some size set, beyond the range of `unsigned`: pybind11 refuses it");
  check_refused(list_module("std::vector<char>", "        lo = [1, 4]\n"),
                "kernrl passes a Python list to a std::vector of integers, float, double or "
                "bool only");
  // C++ does not count from the end of a vector.
  check_refused(list_module("std::vector<int64_t>", "        lo = [1, 2]\n",
                            "  r.lo[0] = lo[0]; r.lo[1] = lo[-1];"),
                "indexes with the negative value -1");
  // `[1] * True` is [1]; `[1] * 2.0` raises.
  CHECK(converted_arg(list_module("std::vector<int64_t>", "        lo = [1] * True + [2]\n"), 0,
                      2) == "struct(i32 1, i32 2)");
  check_refused(list_module("std::vector<int64_t>", "        lo = [1] * 2.0\n"),
                "multiplies a list by a float: Python raises a TypeError");
}
