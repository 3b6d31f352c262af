// The KernelBench importer's host side converting values as C++ and pybind11 do: integers
// narrowed at casts, at the parameters of the source's functions and at the values they return;
// arguments from forward as pybind11 converts them; unsigned sizes; and the preprocessor's
// conditions as the host compile sees them (docs/import-kernelbench.md).
#include <doctest/doctest.h>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "import/kernelbench_import.h"
#include "parse/launch_block.h"

using namespace kernrl;

namespace {

const ProblemSpec& gelu() {  // x, out: float32 [batch_size, dim]; bench x.numel() is 2^26
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_26"));
  return p;
}

const char* kHead =
    "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n";

// A module whose wrapper f(x`params`) runs `host`, then launches k(`type` v, float* y) with v =
// `arg`; forward returns `call`. `defs` come before the kernel; `flags` are load_inline's extra
// arguments.
std::string wrapper(const std::string& defs, const std::string& host, const std::string& arg,
                    const std::string& type = "long long", const std::string& params = "",
                    const std::string& call = "ext.f(x)", const std::string& flags = "") {
  return std::string(kHead) + "src = \"\"\"\n#include <torch/extension.h>\n" + defs +
         "\n__global__ void k(" + type +
         " v, float* y) {}\n"
         "torch::Tensor f(torch::Tensor x" +
         params + ") {\n  auto y = torch::empty_like(x);\n" + host + "\n  k<<<1, 1>>>(" + arg +
         ", y.data_ptr<float>());\n  return y;\n}\n\"\"\"\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, functions=[\"f\"]" +
         flags +
         ")\n\nclass ModelNew(nn.Module):\n    def __init__(self, *args):\n"
         "        super().__init__()\n\n    def forward(self, x):\n        return " +
         call + "\n";
}

std::string converted_arg(const std::string& src) {
  auto r = import_kernelbench(src, gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = parse_launch_block(extract_kernel(r.kernel_file, "converted.cu"));
  check_plan(plan, gelu(), 132);
  return plan.launches.at(0).args.at(0).text;
}

void check_refused(const std::string& src, const std::string& reason) {
  auto r = import_kernelbench(src, gelu(), "gen.py");
  CHECK_MESSAGE(!r.converted, src);
  CHECK_MESSAGE(r.reason.find(reason) != std::string::npos, r.reason);
}

}  // namespace

TEST_CASE("import_kernelbench: a cast to an integer type narrows as C++ converts") {
  // A constant wraps around to the type cast to; a float is truncated.
  CHECK(converted_arg(wrapper("", "", "(int)5000000000LL")) == "705032704");
  CHECK(converted_arg(wrapper("", "", "static_cast<int8_t>(200)")) == "-56");
  CHECK(converted_arg(wrapper("", "", "(unsigned short)70000")) == "4464");
  CHECK(converted_arg(wrapper("", "", "int(2.75)")) == "2");
  CHECK(converted_arg(wrapper("", "auto n = (short)x.size(1);", "n")) == "dim");
  // A value of the sizes beyond the type at some size set (2^32 at the bench sizes: 0 in C++).
  for (const char* cast :
       {"(int)(x.numel() * 64)", "static_cast<int>(x.numel() * 64)", "int(x.numel() * 64)",
        "(int32_t)(x.numel() * 64)", "(unsigned)(x.numel() * 64)"})
    check_refused(wrapper("", std::string("auto n = ") + cast + ";", "n"),
                  "at some size set, beyond the range of");
  // A float beyond the type: undefined in C++.
  check_refused(wrapper("", "", "(int)3e9"), "converts a floating-point value beyond the range");
  // Near miss: a 64-bit type holds it.
  CHECK(converted_arg(wrapper("", "auto n = (long long)(x.numel() * 64);", "n")) ==
        "(batch_size * dim) * 64");
}

TEST_CASE("import_kernelbench: a function of the source narrows its arguments and result") {
  // A parameter of a narrower type than the argument's.
  const std::string g = "static long long g(int n) { return n; }";
  CHECK(converted_arg(wrapper(g, "", "g(5000000000LL)")) == "705032704");
  check_refused(wrapper(g, "", "g(x.numel() * 64)"),
                "`int n` is 4294967296 at some size set, beyond the range of `int`");
  CHECK(converted_arg(wrapper("static long long g(long long n) { return n; }", "",
                              "g(x.numel() * 64)")) == "(batch_size * dim) * 64");
  // A value returned: converted to the declared return type.
  CHECK(converted_arg(wrapper("static int c() { return 5000000000LL; }", "", "c()")) ==
        "705032704");
  check_refused(wrapper("static int count(torch::Tensor t) { return t.numel() * 64; }",
                        "long long n = count(x);", "n"),
                "return of int count(...)");
  CHECK(converted_arg(wrapper("static int64_t count(torch::Tensor t) { return t.numel() * 64; }",
                              "long long n = count(x);", "n")) == "(batch_size * dim) * 64");
  // A float function's value divides as a float; an int function's truncates.
  CHECK(converted_arg(wrapper("static float h(int n) { return n; }", "", "h(3) / 2", "double")) ==
        "1.5");
  CHECK(converted_arg(wrapper("static int h(float n) { return n; }", "", "h(3.5f) / 2")) == "1");
}

TEST_CASE("import_kernelbench: scalar arguments from forward convert as pybind11 does") {
  const std::string p = ", int n";
  // A Python int (a bool is one) for an integer parameter.
  CHECK(converted_arg(wrapper("", "", "n", "long long", p, "ext.f(x, x.numel() // x.size(1))")) ==
        "(batch_size * dim) / dim");
  CHECK(converted_arg(wrapper("", "", "n", "long long", p, "ext.f(x, True)")) == "1");
  // A Python float is refused with a TypeError, whatever its value.
  for (const char* arg : {"x.numel() / x.size(1)", "2.0", "float(x.size(0))"})
    check_refused(wrapper("", "", "n", "long long", p, std::string("ext.f(x, ") + arg + ")"),
                  "is given a Python float by forward: pybind11 refuses it");
  // An int beyond the parameter's type.
  check_refused(wrapper("", "", "n", "long long", p, "ext.f(x, x.numel() * 64)"),
                "is 4294967296 at some size set, beyond the range of `int`: pybind11 refuses it");
  check_refused(wrapper("", "", "n", "long long", ", unsigned n", "ext.f(x, -1)"),
                "is -1, beyond the range of `unsigned`: pybind11 refuses it");
  check_refused(wrapper("", "", "n", "long long", ", uint8_t n", "ext.f(x, 256)"),
                "is 256, beyond the range of `uint8_t`: pybind11 refuses it");
  // Near misses: a 64-bit parameter; a Python int for a floating parameter.
  CHECK(converted_arg(wrapper("", "", "n", "long long", ", int64_t n",
                              "ext.f(x, x.numel() * 64)")) == "(batch_size * dim) * 64");
  CHECK(converted_arg(wrapper("", "", "s / 2", "double", ", double s", "ext.f(x, 3)")) == "1.5");
}

TEST_CASE("import_kernelbench: sizeof and std::vector::size are unsigned") {
  // -1 < sizeof(float) is false in C++ (-1 converts to a huge unsigned value): refused.
  check_refused(
      wrapper("", "int pad = -1;\n  long long r = 1;\n  if (pad < sizeof(float)) r = 2;", "r"),
      "compares an unsigned integer with a value that may be negative");
  check_refused(wrapper("",
                        "std::vector<int> v = {1, 2};\n  long long r = 1;\n"
                        "  if (-1 < v.size()) r = 2;",
                        "r"),
                "compares an unsigned integer with a value that may be negative");
  check_refused(wrapper("", "long long r = 1;\n  if (-1 < 4u) r = 2;", "r"),
                "compares an unsigned integer with a value that may be negative");
  // Near misses: non-negative values compare as C++ compares them.
  CHECK(converted_arg(wrapper("",
                              "std::vector<int> v = {1, 2};\n  long long r = 0;\n"
                              "  for (int i = 0; i < v.size(); ++i) r += v[i];\n"
                              "  if (r < sizeof(float)) r = r * 10;",
                              "r")) == "30");
  // A size_t converted to a signed type is signed again.
  CHECK(converted_arg(wrapper("",
                              "int b = sizeof(float);\n  long long r = 0;\n"
                              "  if (b - 8 < 0) r = 1;",
                              "r")) == "1");
}

namespace {

// A module whose source starts with `directives` and whose wrapper launches k(G).
std::string macro_module(const std::string& directives, const std::string& flags = "") {
  return wrapper(directives, "", "G", "long long", "", "ext.f(x)", flags);
}

}  // namespace

TEST_CASE("import_kernelbench: #if, #ifdef and #ifndef as the host compile sees them") {
  // An #elif or #else after a branch taken is not taken.
  CHECK(converted_arg(macro_module("#if 1\n#define G 1\n#elif defined(X)\n#define G 2\n#else\n"
                                   "#define G 4\n#endif")) == "1");
  CHECK(converted_arg(macro_module("#if 0\n#define G 1\n#elif 1\n#define G 2\n#else\n"
                                   "#define G 4\n#endif")) == "2");
  CHECK(converted_arg(macro_module("#ifdef X\n#define G 1\n#else\n#define G 4\n#endif")) == "4");
  // After a branch kernrl cannot decide, neither is the rest: the macro is refused.
  check_refused(macro_module("#if 0\n#define G 1\n#elif defined(X)\n#define G 2\n#else\n"
                             "#define G 4\n#endif"),
                "is defined or #undef'd under #if/#ifdef/#ifndef");
  // #undef: the name is no longer defined.
  CHECK(converted_arg(macro_module("#define V 1\n#undef V\n#ifdef V\n#define G 4\n#else\n"
                                   "#define G 1\n#endif")) == "1");
  CHECK(converted_arg(macro_module("#define V 1\n#ifdef V\n#define G 4\n#else\n"
                                   "#define G 1\n#endif")) == "4");
  // -D flags: extra_cuda_cflags for the CUDA sources; extra_cflags are the C++ sources' only.
  const std::string ifdef = "#ifdef V\n#define G 4\n#else\n#define G 1\n#endif";
  CHECK(converted_arg(macro_module(ifdef, ", extra_cuda_cflags=['-DV']")) == "4");
  CHECK(converted_arg(macro_module(ifdef, ", extra_cflags=['-DV']")) == "1");
  // Another load_inline module's #define is not seen by this one's #ifndef.
  const std::string other =
      "src1 = \"\"\"\n#include <torch/extension.h>\n#define CHUNK 4\n"
      "torch::Tensor g(torch::Tensor x) { return x; }\n\"\"\"\n"
      "base = load_inline(name=\"base\", cpp_sources=\"\", cuda_sources=src1, functions=[\"g\"])\n";
  std::string two = wrapper("#ifndef CHUNK\n#define G 1\n#else\n#define G 8\n#endif", "", "G");
  two.insert(std::string(kHead).size(), other);
  CHECK(converted_arg(two) == "1");
}

TEST_CASE("import_kernelbench: arithmetic of two 32-bit integers is computed in 32 bits") {
  const std::string ints = "int n = x.size(0), d = x.size(1);\n  ";
  // 2^32 at the bench sizes: an `int` product overflows before it is widened.
  check_refused(wrapper("", ints + "long long t = n * d * 64;", "t"),
                "is 4294967296 at some size set, beyond the range of `int`, the type C++ "
                "computes it in");
  check_refused(wrapper("static long long g(int a, int b) { return a * b * 64; }", ints, "g(n, d)"),
                "the type C++ computes it in");
  check_refused(wrapper("", "long long t = 2147483647 + 1;", "t"),
                "is 2147483648, beyond the range");
  // An unsigned constant wraps around, as in C++.
  CHECK(converted_arg(wrapper("", "unsigned u = 4000000000u;\n  long long t = u + 500000000u;",
                              "t")) == "205032704");
  // Near misses: one 64-bit operand makes the product 64-bit.
  CHECK(converted_arg(wrapper("", ints + "long long t = (long long)n * d * 64;", "t")) ==
        "(batch_size * dim) * 64");
  CHECK(converted_arg(wrapper("", ints + "long long t = x.size(0) * d * 64;", "t")) ==
        "(batch_size * dim) * 64");
  CHECK(converted_arg(wrapper("", ints + "long long t = n * d * 64LL;", "t")) ==
        "(batch_size * dim) * 64");
  CHECK(converted_arg(wrapper(
            "", ints + "long long s[2] = {n, d};\n  long long t = s[0] * s[1] * 64;", "t")) ==
        "(batch_size * dim) * 64");
  CHECK(converted_arg(wrapper("", ints + "long long m = n;\n  m = d;\n  long long t = m * n * 64;",
                              "t")) == "(dim * batch_size) * 64");
  CHECK(converted_arg(wrapper("", ints + "int t = n * d;", "t")) == "batch_size * dim");
}

TEST_CASE("import_kernelbench: sizeof of a variable is its declared type's size") {
  CHECK(converted_arg(wrapper("", "short s = 1;\n  int i = 1;\n  float f = 1;",
                              "sizeof(s) * 100 + sizeof(i) * 10 + sizeof(f)")) == "244");
  // A variable whose type kernrl does not hold: refused, not guessed.
  for (const char* decl : {"long long v = 1;", "double v = 1;", "auto v = x.size(0);"})
    check_refused(wrapper("", decl, "sizeof(v)"), "sizeof(v)");
}
