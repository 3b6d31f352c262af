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

namespace {

// macro_module with `#ifndef G / #define G 2 / #endif`, load_inline given `flags`, and `pre`
// before the module's source.
std::string flag_module(const std::string& flags, const std::string& pre = "") {
  std::string m = macro_module("#ifndef G\n#define G 2\n#endif", flags);
  m.insert(std::string(kHead).size(), pre);
  return m;
}

}  // namespace

TEST_CASE("import_kernelbench: -D and -U flags as the compile reads them") {
  // A literal list, a name bound once to a list, `-D NAME` as two items, one item of several
  // flags (torch joins the flags into one shell command line), --define-macro.
  for (const char* f :
       {", extra_cuda_cflags=['-O3', '-DG=4']", ", extra_cuda_cflags=flags",
        ", extra_cuda_cflags=['-O3', '-D', 'G=4']", ", extra_cuda_cflags=['-O3 -DG=4']",
        ", extra_cuda_cflags=base + ['-DG=4']", ", extra_cuda_cflags=('--define-macro=G=4',)"}) {
    const std::string src =
        flag_module(f, "flags = ['-O3', '-DG=4']\nbase = ['-O3', '--use_fast_math']\n");
    CHECK_MESSAGE(converted_arg(src) == "4", f);
    // The kernel file defines it as the CUDA compile did.
    auto r = import_kernelbench(src, gelu(), "gen.py");
    CHECK(r.kernel_file.find("#define G 4\n") != std::string::npos);
  }
  // extra_cflags are the C++ sources' flags only; -U of a name no flag defines changes nothing.
  CHECK(converted_arg(flag_module(", extra_cflags=['-DG=4']")) == "2");
  CHECK(converted_arg(flag_module(", extra_cuda_cflags=['-UG']")) == "2");
  CHECK(converted_arg(flag_module(", extra_cuda_cflags=['-DH']")) == "2");
  // Near misses: flags kernrl cannot read are refused, not taken as none.
  check_refused(flag_module(", extra_cuda_cflags=get_flags()"), "kernrl reads a list of strings");
  check_refused(
      flag_module(", extra_cuda_cflags=flags", "flags = ['-O3']\nflags.append('-DG=4')\n"),
      "which line 5 may change");
  check_refused(flag_module(", extra_cuda_cflags=flags", "import os\nflags = os.environ['F']\n"),
                "kernrl reads a list of strings");
  check_refused(flag_module(", extra_cuda_cflags=[\"'-DG=4'\"]"),
                "hold characters the shell reads");
  check_refused(flag_module(", extra_cuda_cflags=['-DG=4', '-UG']"),
                "both define and undefine `G`");
  check_refused(flag_module(", extra_cuda_cflags=['-DG=4', '-DG=8']"), "define `G` twice");
  check_refused(flag_module(", extra_cuda_cflags=['-DG=4,H=1']"),
                "nvcc reads the commas of -D as separating macros");
  check_refused(flag_module(", extra_cuda_cflags=['-DM_PI=3']"), "the headers may define too");
  check_refused(flag_module(", extra_cuda_cflags=['-Xcompiler', '-DG=4']"),
                "pass `-DG=4` on with `-Xcompiler`");
  check_refused(flag_module(", extra_cuda_cflags=['-O3', '-D']"), "no macro after it");
  check_refused(flag_module(", **opts", "opts = dict(extra_cuda_cflags=['-DG=4'])\n"),
                "is built with `*` or `**` arguments");
  // Two modules used whose CUDA sources have different -D flags: one file cannot hold both.
  std::string two = flag_module(", extra_cuda_cflags=['-DG=4']");
  two.insert(std::string(kHead).size(),
             "src1 = \"\"\"\n#include <torch/extension.h>\n__global__ void k2(float* y) {}\n"
             "torch::Tensor g(torch::Tensor x) {\n  k2<<<1, 1>>>(x.data_ptr<float>());\n"
             "  return x;\n}\n\"\"\"\n"
             "base = load_inline(name=\"base\", cpp_sources=\"\", cuda_sources=src1, "
             "functions=[\"g\"], extra_cuda_cflags=['-DG=8'])\n");
  two.replace(two.find("return ext.f(x)"), 15, "return ext.f(base.g(x))");
  check_refused(two, "compile their CUDA sources with different -D flags");
}

TEST_CASE("import_kernelbench: each translation unit sees its own -D flags") {
  // The wrapper f is a C++ source's: extra_cflags define its G, extra_cuda_cflags do not.
  auto module = [](const std::string& flags) {
    return std::string(kHead) +
           "src = \"\"\"\n#include <torch/extension.h>\n__global__ void k(long long v, float* y) "
           "{}\ntorch::Tensor f_cuda(torch::Tensor x, long long v) {\n  auto y = "
           "torch::empty_like(x);\n  k<<<1, 1>>>(v, y.data_ptr<float>());\n  return y;\n}\n"
           "\"\"\"\ncpp = \"\"\"\ntorch::Tensor f_cuda(torch::Tensor x, long long v);\n"
           "torch::Tensor f(torch::Tensor x) { return f_cuda(x, G); }\n\"\"\"\n"
           "ext = load_inline(name=\"ext\", cpp_sources=cpp, cuda_sources=src, "
           "functions=[\"f\"]" +
           flags +
           ")\n\nclass ModelNew(nn.Module):\n    def __init__(self, *args):\n"
           "        super().__init__()\n\n    def forward(self, x):\n        return ext.f(x)\n";
  };
  CHECK(converted_arg(module(", extra_cflags=['-DG=4']")) == "4");
  CHECK(converted_arg(module(", extra_cflags=['-DG=4'], extra_cuda_cflags=['-DG=8']")) == "4");
  // Near miss: G only in the CUDA compile's flags is no macro of the C++ source.
  check_refused(module(", extra_cuda_cflags=['-DG=8']"), "needs an integer kernrl can compute");
}

TEST_CASE("import_kernelbench: #ifndef of a name the headers define") {
  // torch/extension.h includes <cmath>: M_PI is its value, not the source's fallback.
  CHECK(converted_arg(wrapper("#ifndef M_PI\n#define M_PI 3.14f\n#endif", "", "(float)M_PI",
                              "float")) == "3.14159265358979323846");
  CHECK(converted_arg(macro_module("#ifndef INT_MAX\n#define G 1\n#else\n#define G 2\n#endif")) ==
        "2");
  // A name torch or CUDA may define, with a value kernrl does not know: refused where used.
  for (const char* n : {"CUDA_VERSION", "C10_WARP_SIZE", "FLT_MAX", "M_E", "INFINITY"})
    check_refused(macro_module(std::string("#ifndef ") + n + "\n#define G 1\n#else\n#define G 2\n" +
                               "#endif"),
                  "is defined or #undef'd under #if/#ifdef/#ifndef");
  // Names no header defines: a default and an include guard still convert.
  CHECK(converted_arg(macro_module("#ifndef BLOCK_SIZE\n#define BLOCK_SIZE 256\n#endif\n"
                                   "#define G BLOCK_SIZE")) == "256");
  CHECK(converted_arg(
            macro_module("#ifndef M_TILE\n#define M_TILE 64\n#endif\n#define G M_TILE")) == "64");
  // An include path is no macro flag.
  CHECK(converted_arg(flag_module(", extra_cflags=['-I/usr/local/include'], "
                                  "extra_cuda_cflags=['-Xptxas=-v', '-Xcompiler', '-fPIC']")) ==
        "2");
  CHECK(converted_arg(macro_module("#ifndef MY_KERNELS_H\n#define MY_KERNELS_H\n#define G 3\n"
                                   "#endif")) == "3");
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
