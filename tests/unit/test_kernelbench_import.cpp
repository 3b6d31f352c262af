// import_kernelbench: KernelBench load_inline modules -> kernel files, or a reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "core/config.h"
#include "core/expr.h"
#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "grading/prepare.h"
#include "import/kernelbench_import.h"
#include "import/python_reader.h"
#include "parse/launch_block.h"
#include "suite_problems.h"

using namespace kernrl;
using kernrl::test::suite_linear;

namespace {

ProblemSpec problem(const std::string& id) {
  return load_problem(find_problem_dir(problems_dir(), id));
}

// A module with `cuda` as the CUDA source, `fn` its host function, forward(self, `params`)
// returning `call`.
std::string module(const std::string& cuda, const std::string& fn, const std::string& params,
                   const std::string& call, const std::string& init = "") {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         cuda +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, functions=[\"" +
         fn +
         "\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self" +
         (init.empty() ? "" : ", " + init.substr(0, init.find(':'))) +
         "):\n        super().__init__()\n" +
         (init.empty()
              ? ""
              : "        " + init.substr(init.find_first_not_of(' ', init.find(':') + 1)) + "\n") +
         "\n    def forward(self, " + params + "):\n        return " + call + "\n";
}

const char* kGelu = R"(
__global__ void gelu_kernel(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
}
torch::Tensor gelu(torch::Tensor x) {
  auto out = torch::empty_like(x);
  int n = x.numel();
  const int threads = 256;
  gelu_kernel<<<(n + threads - 1) / threads, threads>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
  return out;
}
)";

// The converted file parses and checks against the problem at every size set.
LaunchPlan checked_plan(const KernelBenchImport& r, const ProblemSpec& p) {
  ExtractedSource src = extract_kernel(r.kernel_file, "converted.cu");
  LaunchPlan plan = parse_launch_block(src);
  check_plan(plan, p, 132);
  return plan;
}

std::vector<std::string> arg_texts(const LaunchSpec& l) {
  std::vector<std::string> v;
  for (const auto& a : l.args) v.push_back(a.text);
  return v;
}

}  // namespace

TEST_CASE("import_kernelbench: an elementwise module becomes a kernel file with a launch block") {
  ProblemSpec p = problem("L1_26");
  auto r = import_kernelbench(module(kGelu, "gelu", "x", "ext.gelu(x)"), p, "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.category.empty());
  CHECK(r.kernel_file.find("torch/extension.h") == std::string::npos);
  CHECK(r.kernel_file.find("torch::Tensor gelu") == std::string::npos);  // the host wrapper is gone
  CHECK(r.kernel_file.find("__global__ void gelu_kernel") != std::string::npos);
  CHECK(r.kernel_file.find("from gen.py") != std::string::npos);
  LaunchPlan plan = checked_plan(r, p);
  CHECK(plan.problem == p.id);
  REQUIRE(plan.launches.size() == 1);
  const LaunchSpec& l = plan.launches[0];
  CHECK(l.kernel == "gelu_kernel");
  CHECK(l.block == std::vector<std::string>{"256"});
  CHECK(l.grid == std::vector<std::string>{"(batch_size * dim + 256 - 1) / 256"});
  CHECK(arg_texts(l) == std::vector<std::string>{"x", "out", "batch_size * dim"});
}

TEST_CASE("import_kernelbench: AT_DISPATCH and templates become name expressions") {
  ProblemSpec p = problem("L1_2");
  const char* cuda = R"(
template <typename scalar_t, int TILE>
__global__ void mm(const scalar_t* a, const scalar_t* b, scalar_t* c, int M, int K, int N) {}
torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  constexpr int T = 16;
  dim3 block(T, T);
  dim3 grid((b.size(1) + T - 1) / T, (a.size(0) + T - 1) / T);
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "mm", ([&] {
    mm<scalar_t, T><<<grid, block, 2 * T * T * sizeof(scalar_t)>>>(
        a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), c.data_ptr<scalar_t>(), a.size(0), a.size(1), b.size(1));
  }));
  return c;
}
)";
  auto r = import_kernelbench(module(cuda, "matmul", "A, B", "ext.matmul(A, B)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel == "mm<float, 16>");
  CHECK(plan.launches[0].grid ==
        std::vector<std::string>{"(N + 16 - 1) / 16", "(M + 16 - 1) / 16"});
  CHECK(plan.launches[0].block == std::vector<std::string>{"16", "16"});
  CHECK(plan.launches[0].shared_bytes == "2048");
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"A", "B", "out", "M", "K", "N"});
}

TEST_CASE("import_kernelbench: ceil of a float division is cdiv") {
  ProblemSpec p = problem("L1_26");
  std::string cuda = R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  dim3 grid(ceil(n / 256.0), std::ceil((float)x.size(0) / 4));
  k<<<grid, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchSpec l = checked_plan(r, p).launches.at(0);
  CHECK(l.grid == std::vector<std::string>{"cdiv(batch_size * dim, 256)", "cdiv(batch_size, 4)"});
}

TEST_CASE("import_kernelbench: a template kernel without explicit arguments is deduced") {
  ProblemSpec p = problem("L1_26");
  std::string cuda = R"(
template <typename T>
__global__ void k(const T* x, T* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  k<<<x.numel() / 256 + 1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches.at(0).kernel == "k<float>");
}

TEST_CASE("import_kernelbench: scalars, parameters, zero-filled outputs and scratch buffers") {
  ProblemSpec p = problem("L2_86");
  const char* cuda = R"(
__global__ void lin(const float* x, const float* w, const float* b, float* y, int M, int K, int N) {}
__global__ void act(const float* y, float* out, float d, int n) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b, float divisor) {
  auto tmp = torch::empty({x.size(0), w.size(0)}, x.options());
  auto out = torch::zeros_like(tmp);
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                          tmp.data_ptr<float>(), x.size(0), x.size(1), w.size(0));
  act<<<tmp.numel() / 128 + 1, 128>>>(tmp.data_ptr<float>(), out.data_ptr<float>(), divisor, tmp.numel());
  return out;
}
)";
  std::string py =
      module(cuda, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias, self.divisor)",
             "input_size, output_size, divisor: self.linear = nn.Linear(input_size, "
             "output_size)\n        self.divisor = divisor");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 3);
  CHECK(plan.launches[0].kernel == "kernrl_import_fill_float32");  // outputs are poisoned
  CHECK(arg_texts(plan.launches[0]).at(2) == "0.0");
  CHECK(arg_texts(plan.launches[1]) == std::vector<std::string>{"x", "weight", "bias", "tmp",
                                                                "batch_size", "input_size",
                                                                "output_size"});
  CHECK(arg_texts(plan.launches[2]).at(2) == "divisor");
  REQUIRE(plan.scratch.size() == 1);
  CHECK(plan.scratch[0].name == "tmp");
  CHECK(plan.scratch[0].count == "batch_size * output_size");
  CHECK(r.kernel_file.find("__global__ void kernrl_import_fill_float32") != std::string::npos);
}

TEST_CASE("import_kernelbench: a launch loop whose length depends on the sizes becomes a repeat") {
  ProblemSpec p = problem("L1_4");
  const char* cuda = R"(
__global__ void chunk(const float* A, const float* x, float* y, int M, int K, int c) {}
torch::Tensor mv(torch::Tensor A, torch::Tensor x) {
  auto y = torch::empty({A.size(0), 1}, A.options());
  int chunks = (A.size(1) + 1023) / 1024;
  for (int c = 0; c < chunks; ++c)
    chunk<<<A.size(0), 256>>>(A.data_ptr<float>(), x.data_ptr<float>(), y.data_ptr<float>(), A.size(0), A.size(1), c);
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "mv", "A, B", "ext.mv(A, B)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].repeat_var == "c");
  CHECK(plan.launches[0].repeat_count == "max((K + 1023) / 1024, 0)");
  CHECK(arg_texts(plan.launches[0]).back() == "c");
  // A return inside it would end the loop: a repeat cannot.
  std::string early = cuda;
  early.replace(early.find("A.size(1), c);"), 14, "A.size(1), c); return y;");
  early.replace(early.find("for (int c = 0; c < chunks; ++c)"), 32,
                "for (int c = 0; c < chunks; ++c) {");
  early.replace(early.find("return y;\n  return y;"), 21, "return y;\n  }\n  return y;");
  r = import_kernelbench(module(early, "mv", "A, B", "ext.mv(A, B)"), p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("returns from inside it") != std::string::npos, r.reason);
}

TEST_CASE(
    "import_kernelbench: conditions on sizes are decided only when they agree at every size set") {
  ProblemSpec p = problem("L1_23");  // dim: 16384 (bench), 256, 1000, 4099
  auto cuda = [](const std::string& cond) {
    return "__global__ void a(const float* x, float* y, int n) {}\n"
           "__global__ void b(const float* x, float* y, int n) {}\n"
           "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n  int d = "
           "x.size(1);\n"
           "  if (" +
           cond +
           ") a<<<x.size(0), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), d);\n"
           "  else b<<<x.size(0), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), d);\n  return "
           "y;\n}\n";
  };
  // One that differs between them: each branch's launch runs 1 or 0 times.
  auto mixed = import_kernelbench(module(cuda("d <= 1024"), "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(mixed.converted, mixed.reason);
  LaunchPlan both = checked_plan(mixed, p);
  REQUIRE(both.launches.size() == 2);
  for (const auto& sizes : std::vector<Vars>{p.bench, p.tests[0], p.tests[1], p.tests[2]}) {
    int64_t a = eval_expr(both.launches[0].repeat_count, plan_vars(p, sizes, 132));
    int64_t b = eval_expr(both.launches[1].repeat_count, plan_vars(p, sizes, 132));
    CHECK(a == (sizes.at("dim") <= 1024 ? 1 : 0));
    CHECK(a + b == 1);
  }
  // A buffer allocated in a branch is a scratch buffer with rows only where the branch runs.
  auto scratch = import_kernelbench(
      module(
          "__global__ void a(const float* x, float* y, int n) {}\n"
          "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n  int d = "
          "x.size(1);\n  if (d > 1024) {\n    auto t = torch::empty({x.size(0), 2}, "
          "x.options());\n    a<<<1, 256>>>(x.data_ptr<float>(), t.data_ptr<float>(), d);\n"
          "    a<<<1, 256>>>(t.data_ptr<float>(), y.data_ptr<float>(), d);\n  } else {\n"
          "    a<<<2, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), d);\n  }\n  return y;\n}\n",
          "f", "x", "ext.f(x)"),
      p);
  REQUIRE_MESSAGE(scratch.converted, scratch.reason);
  LaunchPlan split = checked_plan(scratch, p);
  REQUIRE(split.launches.size() == 3);
  REQUIRE(split.scratch.size() == 1);
  for (const auto& sizes : std::vector<Vars>{p.bench, p.tests[0], p.tests[1], p.tests[2]}) {
    const int64_t big = sizes.at("dim") > 1024 ? 1 : 0;
    CHECK(eval_expr(split.launches[0].repeat_count, plan_vars(p, sizes, 132)) == big);
    CHECK(eval_expr(split.launches[2].repeat_count, plan_vars(p, sizes, 132)) == 1 - big);
    CHECK(eval_expr(split.scratch[0].count, plan_vars(p, sizes, 132)) ==
          big * sizes.at("batch_size") * 2);
  }
  // Branches that return different tensors cannot be, where torch steps cannot copy one into
  // the other (kernrl's own problems); nor can a branch that sets something other than an
  // integer.
  auto early = import_kernelbench(
      module("__global__ void a(const float* x, float* y, int n) {}\n"
             "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n  int d = "
             "x.size(1);\n  if (d <= 1024) { a<<<1, 256>>>(x.data_ptr<float>(), "
             "y.data_ptr<float>(), d); return y; }\n  auto z = torch::empty_like(x);\n  "
             "a<<<2, 256>>>(x.data_ptr<float>(), z.data_ptr<float>(), d);\n  return z;\n}\n",
             "f", "x", "ext.f(x)"),
      p);
  CHECK_FALSE(early.converted);
  CHECK(early.reason.find("if (d <= 1024)") != std::string::npos);
  // A value the branch computes that does not evaluate where the branch does not run (a division
  // by zero at dim = 256): the launch block could not hold it, so the file is not converted.
  auto div = import_kernelbench(
      module("__global__ void a(const float* x, float* y, int n) {}\n"
             "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n  int d = "
             "x.size(1);\n  int per = 1;\n  if (d > 256) per = d / (d - 256);\n  "
             "a<<<per, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), d);\n  return y;\n}\n",
             "f", "x", "ext.f(x)"),
      p);
  CHECK_FALSE(div.converted);
  CHECK(div.reason.find("if (d > 256)") != std::string::npos);
  auto uniform = import_kernelbench(module(cuda("d > 0"), "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(uniform.converted, uniform.reason);
  CHECK(checked_plan(uniform, p).launches.at(0).kernel == "a");
  REQUIRE(uniform.notes.size() == 1);
  CHECK(uniform.notes[0].find("every size set") != std::string::npos);
  CHECK(uniform.kernel_file.find("// Note: ") != std::string::npos);
}

TEST_CASE(
    "import_kernelbench: long host integers become named values where expressions outgrow the "
    "limit") {
  ProblemSpec p = problem("L1_23");  // dim: 16384 (bench), 256, 1000, 4099
  // m doubles ten times (written out, its expression over the sizes is 1024 copies of d, past the
  // 4096 characters an expression may have); the `if` differs between size sets. Converted again
  // with named values: each long value of m is a value of the launch block.
  auto source = [](const std::string& step) {
    return module(
        "__global__ void a(const float* x, float* y, int n, long long m) {}\n"
        "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n"
        "  int d = x.size(1);\n  long long m = d;\n"
        "  for (int i = 0; i < 10; ++i) m = " +
            step +
            ";\n"
            "  if (m < 16384LL * 1024) m = 1;\n"
            "  a<<<1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), d, m);\n"
            "  return y;\n}\n",
        "f", "x", "ext.f(x)");
  };
  auto r = import_kernelbench(source("m + m"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.kernel_file.find("\nvalues:\n  m: ") != std::string::npos);
  CHECK(r.kernel_file.size() < 8000);
  LaunchPlan plan = checked_plan(r, p);
  CHECK(!plan.values.empty());
  const std::string& arg = plan.launches.at(0).args.at(3).text;
  CHECK(arg.size() < 300);
  for (const Vars& sizes : {p.bench, p.tests.at(0), p.tests.at(1), p.tests.at(2)}) {
    const int64_t d = sizes.at("dim"), m = d * 1024;
    CHECK(eval_expr(arg, plan_vars(plan, p, sizes, 132)) == (m < 16384LL * 1024 ? 1 : m));
  }
  // A host integer that does not evaluate at every size set (64-bit overflow where dim is 16384)
  // is not named: the branch's value still has no expression the launch block can hold.
  r = import_kernelbench(source("m * d + m"), p);
  REQUIRE_FALSE(r.converted);
  CHECK(r.category == "host_logic");
  CHECK_MESSAGE(r.reason.find("the value of `m` after it, chosen by the condition, has no "
                              "expression the launch block can evaluate") != std::string::npos,
                r.reason);
}

TEST_CASE("import_kernelbench: num_sms from the device properties") {
  ProblemSpec p = problem("L9_2");
  const char* cuda = R"(
__global__ void part(const float* x, float* partial, long long n) {}
__global__ void fin(const float* partial, float* out, int m) {}
torch::Tensor sum(torch::Tensor x) {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  int blocks = prop.multiProcessorCount * 2;
  auto partial = torch::empty({blocks}, x.options());
  auto out = torch::empty({}, x.options());
  part<<<blocks, 256>>>(x.data_ptr<float>(), partial.data_ptr<float>(), x.numel());
  fin<<<1, 256>>>(partial.data_ptr<float>(), out.data_ptr<float>(), blocks);
  return out;
}
)";
  auto r = import_kernelbench(module(cuda, "sum", "x", "ext.sum(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  CHECK(plan.launches.at(0).grid == std::vector<std::string>{"num_sms * 2"});
  REQUIRE(plan.scratch.size() == 1);
  CHECK(plan.scratch[0].count == "(num_sms * 2)");
}

TEST_CASE("import_kernelbench: what cannot be converted says why") {
  struct Case {
    const char* name;
    std::string problem, python, category, reason;
  };
  std::vector<Case> cases = {
      {"torch op in forward", "L1_26", module(kGelu, "gelu", "x", "ext.gelu(F.conv2d(x, x))"),
       "torch_op_in_forward", "PyTorch op `torch.nn.functional.conv2d` left in forward"},
      {"operator on tensors", "L1_26", module(kGelu, "gelu", "x", "ext.gelu(x) * 2"),
       "torch_op_in_forward", "PyTorch op `*`"},
      {"cuBLAS", "L1_26",
       module(
           "torch::Tensor f(torch::Tensor x) { cublasHandle_t h; cublasCreate(&h); return x; }\n",
           "f", "x", "ext.f(x)"),
       "library_call", "cublasCreate"},
      {"a struct with a field not set before the launch", "L1_26",
       module("struct Args { const float* p; int n; };\n__global__ void k(Args a, float* y) {}\n"
              "torch::Tensor f(torch::Tensor x) { auto y = torch::empty_like(x); Args a; "
              "a.p = x.data_ptr<float>(); k<<<1, 1>>>(a, "
              "y.data_ptr<float>()); return y; }\n",
              "f", "x", "ext.f(x)"),
       "host_logic", "passes a `Args` whose field `n` kernrl cannot compute before the launch"},
      {"a typedef'd struct filled on the host", "L1_26",
       module("typedef struct { const float* p; int n; } Args;\n"
              "__global__ void k(Args a, float* y) {}\n"
              "torch::Tensor f(torch::Tensor x) { auto y = torch::empty_like(x); struct Args a; "
              "a.p = x.data_ptr<float>(); a.n = x.numel(); k<<<1, 1>>>(a, "
              "y.data_ptr<float>()); return y; }\n",
              "f", "x", "ext.f(x)"),
       "host_logic", "a struct of the source"},
      {"torch op in the wrapper", "L1_26",
       module("torch::Tensor f(torch::Tensor x) { return torch::relu(x); }\n", "f", "x",
              "ext.f(x)"),
       "library_call", "torch::relu"},
      {"item", "L1_26",
       module("__global__ void k(float* y) {}\ntorch::Tensor f(torch::Tensor x) { auto y = "
              "torch::empty_like(x); float m = x.max().item<float>(); return y; }\n",
              "f", "x", "ext.f(x)"),
       "library_call", "Tensor::max"},
      {"in place", "L1_26",
       module("__global__ void k(float* x, int n) {}\ntorch::Tensor f(torch::Tensor x) { "
              "k<<<1, 1>>>(x.data_ptr<float>(), x.numel()); return x; }\n",
              "f", "x", "ext.f(x)"),
       "in_place", "in place"},
      {"no ModelNew", "L1_26", "import torch\nx = 1\n", "not_kernelbench", "no class ModelNew"},
      {"PyTorch only", "L1_26",
       "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return "
       "torch.relu(x)\n",
       "not_kernelbench", "PyTorch-only"},
      {"unclosed string", "L1_26", "src = \"\"\"\nabc\nclass ModelNew:\n  pass\n", "python_syntax",
       "never closed"},
      {"wrong input count", "L1_26", module(kGelu, "gelu", "x, y", "ext.gelu(x)"), "mismatch",
       "takes 2 inputs"},
      {"output of the wrong size", "L1_26",
       module("__global__ void k(float* y) {}\ntorch::Tensor f(torch::Tensor x) { auto y = "
              "torch::empty({x.size(0)}, x.options()); k<<<1, 1>>>(y.data_ptr<float>()); return y; "
              "}\n",
              "f", "x", "ext.f(x)"),
       "mismatch", "elements at"},
      {"pointer offset in bytes", "L1_26",
       module("__global__ void k(const float* x, float* y) {}\ntorch::Tensor f(torch::Tensor x) { "
              "auto y = torch::empty_like(x); k<<<1, 1>>>((float*)((char*)x.data_ptr<float>() + "
              "4), y.data_ptr<float>()); "
              "return y; }\n",
              "f", "x", "ext.f(x)"),
       "unsupported_cuda", "offsets a `char*` pointer"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto r = import_kernelbench(c.python, problem(c.problem));
    CHECK_FALSE(r.converted);
    CHECK(r.kernel_file.empty());
    CHECK(r.category == c.category);
    CHECK_MESSAGE(r.reason.find(c.reason) != std::string::npos, r.reason);
  }
}

TEST_CASE("import_kernelbench: never throws, whatever the text") {
  ProblemSpec p = problem("L1_26");
  std::string base = module(kGelu, "gelu", "x", "ext.gelu(x)");
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string t = base;
    // Cut, duplicate or corrupt a random span.
    size_t a = rng() % t.size(), b = std::min(t.size(), a + rng() % 40);
    switch (i % 3) {
      case 0:
        t.erase(a, b - a);
        break;
      case 1:
        t.insert(a, t.substr(a, b - a));
        break;
      default:
        for (size_t k = a; k < b; ++k) t[k] = static_cast<char>(rng() % 128);
    }
    KernelBenchImport r;
    CHECK_NOTHROW(r = import_kernelbench(t, p));
    CHECK((r.converted ? !r.kernel_file.empty() : !r.reason.empty()));
  }
}

TEST_CASE("import_kernelbench: an import line that ends early is read to its end") {
  // `import torch as` (no name) once made the module scan loop for ever.
  for (const char* head : {"import torch as\n", "import torch.nn as nn as\n", "import a b c\n"}) {
    auto r =
        import_kernelbench(std::string(head) + "class ModelNew:\n    pass\n", problem("L1_23"));
    CHECK_FALSE(r.converted);
  }
}

TEST_CASE("python reader: strings decode as Python decodes them") {
  auto lines =
      kbimport::py_lines("a = 'x\\ty'\nb = r'x\\ty'\nc = \"\"\"l1\nl2\\\n\"\"\"\nd = b'\\x41'\n");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].toks.at(2).text == "x\ty");
  CHECK(lines[1].toks.at(2).text == "x\\ty");
  CHECK(lines[2].toks.at(2).text == "l1\nl2");
  CHECK(lines[3].toks.at(2).text == "A");
  CHECK(looks_like_kernelbench("class ModelNew: ... load_inline("));
  CHECK_FALSE(looks_like_kernelbench("class Model: ..."));
}

TEST_CASE("the conversion stage: a .py is converted only with the converter the options name") {
  Config cfg = load_config("");
  GradeOptions opt;
  opt.problem = "L1_26";
  opt.compile_only = true;
  std::string py = module(kGelu, "gelu", "x", "ext.gelu(x)");
  Prepared without = prepare_source(py, "gen.py", opt, cfg, "sm_90a", 132);
  CHECK_FALSE(without.record.converted.has_value());
  CHECK(without.record.status_is(Status::FormatError));

  opt.converters = {kernelbench_converter()};
  Prepared with = prepare_source(py, "gen.py", opt, cfg, "sm_90a", 132);
  REQUIRE(with.record.converted.has_value());
  CHECK(with.record.converted->from.value_or("") == "kernelbench");
  CHECK_FALSE(with.record.status_is(Status::FormatError));
  // A file it does not read is left to extraction.
  CHECK(kernelbench_converter()->reads("a/b/level_1_problem_26_sample_0_kernel.PY"));
  CHECK_FALSE(kernelbench_converter()->reads("answer.cu"));
  CHECK(converter_for(opt.converters, "answer.md") == nullptr);
}

TEST_CASE("import_kernelbench: a suite's parameters named by module path (self.linear.weight)") {
  // A problem as `kernrl suite add kernelbench` writes it: parameters named linear.weight, ...
  ProblemSpec p = suite_linear();
  const char* cuda = R"(
__global__ void lin(const float* x, const float* w, const float* b, float* y, int M, int K, int N) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                          out.data_ptr<float>(), x.size(0), x.size(1), w.size(0));
  return out;
}
)";
  std::string py = module(cuda, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias)",
                          "input_size, output_size: self.linear = nn.Linear(input_size, "
                          "output_size)");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(!plan.launches.empty());
  CHECK(arg_texts(plan.launches.back()) ==
        std::vector<std::string>{"x", "linear.weight", "linear.bias", "out", "batch_size",
                                 "input_size", "output_size"});
}

TEST_CASE("import_kernelbench: nested module paths (Sequential, ModuleList, submodules)") {
  // Parameters as a suite names them from named_parameters(): features.0.weight, block.fc.bias.
  ProblemSpec p = parse_problem_yaml(R"(id: L3_1_MLP
level: 3
name: MLP
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
  - {name: features.0.weight, dtype: float32, shape: [output_size, input_size], init: custom}
  - {name: layers.1.0.bias, dtype: float32, shape: [output_size], init: custom}
  - {name: block.fc.bias, dtype: float32, shape: [output_size], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, output_size]}
flops: "0"
bytes: auto
torch: "class Model: pass"
)",
                                     "suite.yaml");
  const char* cuda = R"(
__global__ void lin(const float* x, const float* w, const float* b, const float* c, float* y,
                    int M, int K, int N) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor c) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                          c.data_ptr<float>(), out.data_ptr<float>(), x.size(0), x.size(1),
                          w.size(0));
  return out;
}
)";
  std::string init =
      "input_size, output_size: self.features = nn.Sequential(nn.Linear(input_size, "
      "output_size))\n        self.layers = nn.ModuleList([nn.ReLU(), "
      "nn.Sequential(nn.Linear(input_size, output_size))])\n        self.block = "
      "nn.Module()";
  std::string py = module(
      cuda, "run", "x",
      "ext.run(x, self.features[0].weight, self.layers[1][0].bias, self.block.fc.bias)", init);
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(!plan.launches.empty());
  CHECK(arg_texts(plan.launches.back()) ==
        std::vector<std::string>{"x", "features.0.weight", "layers.1.0.bias", "block.fc.bias",
                                 "out", "batch_size", "input_size", "output_size"});

  // A path the problem lacks names what it has.
  std::string wrong = module(cuda, "run", "x",
                             "ext.run(x, self.features[1].weight, self.layers[1][0].bias, "
                             "self.block.fc.bias)",
                             init);
  auto w = import_kernelbench(wrong, p);
  CHECK_FALSE(w.converted);
  CHECK(w.reason.find("self.features.1.weight") != std::string::npos);
  CHECK(w.reason.find("features.0.weight") != std::string::npos);
}

TEST_CASE(
    "import_kernelbench: an alignment check on buffer addresses is decided (16-byte buffers)") {
  ProblemSpec p = problem("L1_26");
  std::string cuda = R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  if ((((uintptr_t)xp | (uintptr_t)yp) & 15) == 0 && (uintptr_t)xp % 8 == 0) {
    k<<<(n + 255) / 256, 256>>>(xp, yp, n);
  } else {
    k<<<1, 1>>>(xp, yp, n);
  }
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].block == std::vector<std::string>{"256"});
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.find("16-byte aligned") != std::string::npos;
  CHECK(noted);
  // Any other use of an address is host logic kernrl cannot compute.
  std::string other = R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = (int)((uintptr_t)x.data_ptr<float>() % 64);
  k<<<1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  auto bad = import_kernelbench(module(other, "f", "x", "ext.f(x)"), p);
  CHECK_FALSE(bad.converted);
  CHECK(bad.category == "host_logic");
  CHECK(bad.reason.find("buffer's address") != std::string::npos);
}

TEST_CASE("import_kernelbench: a tensor registered with register_buffer is the problem's tensor") {
  ProblemSpec p = problem("L2_73");
  std::string cuda = R"(
__global__ void k(const float* x, const float* m, const float* v, float* y, int n) {}
torch::Tensor f(torch::Tensor x, torch::Tensor w, torch::Tensor m, torch::Tensor v) {
  auto y = torch::empty({x.size(0), w.size(0), x.size(2) - w.size(2) + 1, x.size(3) - w.size(3) + 1},
                        x.options());
  int n = y.numel();
  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(),
                              y.data_ptr<float>(), n);
  return y;
}
)";
  std::string init =
      "in_channels, out_channels, kernel_size, eps, scaling_factor:"
      "self.conv_weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size, "
      "kernel_size))\n        self.register_buffer(\"bn_running_mean\", torch.zeros(out_channels))"
      "\n        self.register_buffer('bn_running_var', torch.ones(out_channels), persistent=True)";
  auto r = import_kernelbench(
      module(cuda, "f", "x",
             "ext.f(x, self.conv_weight, self.bn_running_mean, self.bn_running_var)", init),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  std::vector<std::string> args = arg_texts(plan.launches[0]);
  REQUIRE(args.size() == 5);
  CHECK(std::vector<std::string>(args.begin(), args.begin() + 4) ==
        std::vector<std::string>{"x", "bn_running_mean", "bn_running_var", "out"});
}

TEST_CASE(
    "import_kernelbench: a list built by its type, the empty shape of a 0-dimensional output") {
  ProblemSpec p = problem("L1_95");
  std::string cuda = R"(
__global__ void k(const float* p, const int64_t* t, float* out, int n, int c) {}
torch::Tensor f(torch::Tensor p, torch::Tensor t) {
  auto out = torch::empty(std::vector<int64_t>{}, p.options());
  k<<<1, 256>>>(p.data_ptr<float>(), t.data_ptr<int64_t>(), out.data_ptr<float>(), p.size(0),
                p.size(1));
  return out;
}
)";
  auto r = import_kernelbench(
      module(cuda, "f", "predictions, targets", "ext.f(predictions, targets)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(arg_texts(plan.launches[0]).at(2) == "out");
}

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

// The __init__ body of suite_linear's ModelNew: its linear layer and divisor.
const char* kLinearInit =
    "        self.linear = nn.Linear(input_size, output_size)\n        self.divisor = divisor";

std::string suite_module(const std::string& forward, const std::string& init) {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         std::string(kScaleGelu) +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"epilogue\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, input_size, output_size, divisor):\n"
         "        super().__init__()\n" +
         init + "\n    def forward(self, x):\n" + forward + "\n";
}

}  // namespace

TEST_CASE("import_kernelbench: PyTorch operators kept in forward become torch steps") {
  ProblemSpec p = suite_linear();
  const std::string init =
      "        self.linear = nn.Linear(input_size, output_size)\n"
      "        self.divisor = divisor";
  // The same product written four ways: each is aten::linear on the suite's parameters.
  for (const char* product : {"torch.mm(x, self.linear.weight.t()) + 0", "self.linear(x)",
                              "F.linear(x, self.linear.weight, self.linear.bias)",
                              "torch.addmm(self.linear.bias, x, self.linear.weight.t())"}) {
    std::string expr = product;
    if (expr.size() > 4 && expr.substr(expr.size() - 4) == " + 0") {
      // torch.mm then the bias in the kernel file's own terms is not this test's point: no bias.
      expr = expr.substr(0, expr.size() - 4);
    }
    std::string py = suite_module(
        "        y = " + expr + "\n        return ext.epilogue(y, float(self.divisor))", init);
    auto r = import_kernelbench(py, p);
    REQUIRE_MESSAGE(r.converted, product, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    const LaunchSpec& step = plan.launches[0];
    CHECK(step.torch == "linear");
    CHECK(step.args[0].text == "x");
    CHECK(step.args[1].text == "linear.weight");
    CHECK(step.args.size() == (std::string(product).find("torch.mm") == 0 ? 2u : 3u));
    // Its result is a scratch buffer with the shape the epilogue kernel reads.
    REQUIRE(plan.scratch.size() == 1);
    CHECK(step.out == plan.scratch[0].name);
    CHECK(plan.scratch[0].shape == std::vector<std::string>{"batch_size", "output_size"});
    // The divisor is the reference's constant 10.0, passed as KernelBench passes it.
    const LaunchSpec& k = plan.launches[1];
    CHECK(k.kernel == "scale_gelu");
    CHECK(k.args[2].text == "0.1");
  }
  // kernrl's own problems keep their rule: the kernels do all of the work.
  ProblemSpec own = problem("L2_86_Matmul_Divide_GELU");
  auto r = import_kernelbench(
      suite_module("        return ext.epilogue(torch.mm(x, self.weight.t()), 1.0)",
                   "        self.weight = nn.Parameter(torch.empty(output_size, input_size))"),
      own);
  if (r.converted) {
    ExtractedSource src = extract_kernel(r.kernel_file, "converted.cu");
    LaunchPlan plan = parse_launch_block(src);
    CHECK_THROWS_WITH_AS(check_plan(plan, own, 132),
                         doctest::Contains("suites built from KernelBench"), FormatError);
  }
}

TEST_CASE("import_kernelbench: ModelNew's own weights are a suite's parameters by place") {
  // A Linear without bias, as a suite records it (modules).
  std::string yaml = R"(id: L1_900_Linear_no_bias
level: 1
name: Linear_no_bias
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
          self.linear = torch.nn.Linear(input_size, output_size, bias=False)
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
  ProblemSpec p = parse_problem_yaml(yaml, "suite.yaml");
  const std::string forward =
      "        return ext.epilogue(F.linear(x, self.weight), float(self.divisor))";
  auto own = [](const std::string& shape, const std::string& init) {
    return "        self.weight = nn.Parameter(torch.empty(" + shape + "))\n" + init +
           "        self.divisor = divisor";
  };
  const std::string kaiming = "        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))\n";
  auto r = import_kernelbench(
      "import math\n" + suite_module(forward, own("output_size, input_size", kaiming)), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].torch == "linear");
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "linear.weight"});
  bool noted = false;
  for (const auto& n : r.notes)
    noted = noted || n.find("`self.weight` is the problem's `linear.weight`") != std::string::npos;
  CHECK(noted);
  r = import_kernelbench(
      suite_module(forward,
                   own("(output_size, input_size)",
                       "        torch.nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)\n")),
      p);
  CHECK_MESSAGE(r.converted, r.reason);
  // Not the reference's values under KernelBench's seeding, or not its shape: refused by name.
  for (const auto& init :
       {own("output_size, input_size", ""),  // uninitialised
        own("output_size, input_size", "        nn.init.kaiming_uniform_(self.weight, a=1.0)\n"),
        own("output_size, input_size", "        nn.init.xavier_uniform_(self.weight)\n"),
        own("output_size, input_size", "        torch.manual_seed(0)\n" + kaiming),
        own("input_size, output_size", kaiming),  // transposed
        std::string("        self.weight = nn.Parameter(torch.randn(output_size, input_size))\n"
                    "        self.divisor = divisor")}) {
    r = import_kernelbench("import math\n" + suite_module(forward, init), p);
    CHECK_FALSE_MESSAGE(r.converted, init);
    CHECK_MESSAGE(r.reason.find("`self.weight`, which is not among the problem's parameters") !=
                      std::string::npos,
                  init, ": ", r.reason);
  }
  // A base class of the file's own could draw before the weight: no mapping by place.
  {
    std::string py =
        "import math\n" + suite_module(forward, own("output_size, input_size", kaiming));
    const std::string header = "class ModelNew(nn.Module):";
    py.replace(py.find(header), header.size(),
               "class Base(nn.Module):\n    pass\n\nclass ModelNew(Base):");
    r = import_kernelbench(py, p);
    CHECK_FALSE(r.converted);
  }
  // A layer with a bias draws the bias between the weights: no mapping by place.
  r = import_kernelbench(
      suite_module("        return ext.epilogue(F.linear(x, self.weight, self.bias), 1.0)",
                   "        self.weight = nn.Parameter(torch.empty(output_size, input_size))\n" +
                       kaiming + "        self.bias = nn.Parameter(torch.empty(output_size))"),
      suite_linear());
  CHECK_FALSE(r.converted);
  // kernrl's own problems keep their names (its parameters here: weight, bias).
  ProblemSpec mine = problem("L2_86_Matmul_Divide_GELU");
  r = import_kernelbench(
      suite_module(
          "        return ext.epilogue(self.w, 1.0)",
          "        self.w = nn.Parameter(torch.empty(output_size, input_size))\n" + kaiming),
      mine);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("`self.w`, which is not among the problem's parameters") !=
        std::string::npos);
}

TEST_CASE("import_kernelbench: an own parameter by name is created as the reference's") {
  // The reference: a Linear, then a bias of zeros and one drawn after the Linear's draws.
  std::string yaml = R"(id: L2_901_Linear_Bias
level: 2
name: Linear_Bias
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
  - {name: shift, dtype: float32, shape: [output_size], init: custom}
  - {name: bias, dtype: float32, shape: [output_size], init: custom}
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
          self.shift = torch.nn.Parameter(torch.zeros(output_size))
          self.bias = torch.nn.Parameter(torch.randn(output_size))
          self.divisor = divisor
      def forward(self, x):
          return torch.nn.functional.gelu((self.linear(x) + self.shift + self.bias) / self.divisor)
  batch_size = 128
  input_size = 512
  output_size = 1024
  divisor = 10.0
  def get_inputs():
      return [torch.rand(batch_size, input_size)]
  def get_init_inputs():
      return [input_size, output_size, divisor]
)";
  ProblemSpec p = parse_problem_yaml(yaml, "suite.yaml");
  const std::string forward =
      "        y = F.linear(x, self.linear.weight, self.bias)\n"
      "        s = ext.epilogue(self.shift, 1.0)\n"
      "        return ext.epilogue(y, float(self.divisor))";
  const std::string linear = "        self.linear = nn.Linear(input_size, output_size)\n";
  const std::string shift = "        self.shift = nn.Parameter(torch.zeros(output_size))\n";
  const std::string bias = "        self.bias = nn.Parameter(torch.randn(output_size))\n";
  const std::string divisor = "        self.divisor = divisor";
  auto convert = [&](const std::string& init) {
    return import_kernelbench(suite_module(forward, init), p);
  };
  // Created as the reference creates them: the problem's tensors by name.
  for (const auto& init :
       {linear + shift + bias + divisor,
        // Another shape expression of the same shape; another order of a tensor of zeros, which
        // draws nothing; attributes set without a call in between.
        linear + "        self.shift = nn.Parameter(torch.zeros((output_size,)))\n" +
            "        self.n = output_size\n" +
            "        self.bias = nn.Parameter(torch.randn(self.n * 1), requires_grad=True)\n" +
            divisor,
        shift + linear + bias + divisor, linear + bias + shift + divisor}) {
    auto r = convert(init);
    REQUIRE_MESSAGE(r.converted, init, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    bool noted = false;
    for (const auto& n : r.notes)
      noted = noted || n.find(
                           "`self.bias` is the problem's `bias`: created as the reference "
                           "creates it") != std::string::npos;
    CHECK_MESSAGE(noted, init);
  }
  // Not the reference's values under KernelBench's seeding: refused, naming the attribute.
  const std::pair<std::string, std::string> refused[] = {
      {linear + shift + "        self.bias = nn.Parameter(torch.zeros(output_size))\n" + divisor,
       "ModelNew creates `self.bias` with torch.zeros, the reference with torch.randn"},
      {linear + shift + "        self.bias = nn.Parameter(torch.rand(output_size))\n" + divisor,
       "with torch.rand, the reference with torch.randn"},
      {linear + "        self.shift = nn.Parameter(torch.ones(output_size))\n" + bias + divisor,
       "ModelNew creates `self.shift` with torch.ones, the reference with torch.zeros"},
      {linear + shift + "        self.bias = nn.Parameter(torch.randn(output_size) * 0.1)\n" +
           divisor,
       "ModelNew creates `self.bias` otherwise than as nn.Parameter"},
      {linear + shift + "        self.bias = nn.Parameter(torch.randn(input_size))\n" + divisor,
       "`self.bias` of another shape"},
      // An extra draw before the drawn bias: a layer, a random tensor.
      {linear + "        self.extra = nn.Linear(input_size, 4)\n" + shift + bias + divisor,
       "a random draw before `self.bias`"},
      {linear + "        self.noise = torch.randn(3)\n" + shift + bias + divisor,
       "a random draw before `self.bias`"},
      {"        torch.manual_seed(0)\n" + linear + shift + bias + divisor,
       "a random draw before `self.bias`"},
      // A layer of another size, from an attribute set otherwise than in the reference.
      {"        self.n = input_size + 1\n"
       "        self.linear = nn.Linear(self.n, output_size)\n" +
           shift + bias + divisor,
       "a random draw before `self.bias`"},
      // The drawn bias moved before the Linear's draws.
      {bias + linear + shift + divisor, "a random draw before `self.bias`"},
      // Changed after it is created (refused before its creation is compared).
      {linear + shift + bias + "        nn.init.zeros_(self.bias)\n" + divisor, ""},
      {linear + shift + bias + "        self.bias.data.zero_()\n" + divisor, ""},
  };
  for (const auto& [init, why] : refused) {
    auto r = convert(init);
    CHECK_FALSE_MESSAGE(r.converted, init);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, init, ": ", r.reason);
  }
  // A tensor of a constructor argument, written as the reference writes it: the same values.
  std::string with_tensor = yaml;
  const std::string zeros_line = "self.shift = torch.nn.Parameter(torch.zeros(output_size))";
  with_tensor.replace(with_tensor.find(zeros_line), zeros_line.size(),
                      "self.shift = torch.nn.Parameter(torch.tensor(divisor))");
  const std::string shift_shape = "{name: shift, dtype: float32, shape: [output_size]";
  with_tensor.replace(with_tensor.find(shift_shape), shift_shape.size(),
                      "{name: shift, dtype: float32, shape: []");
  ProblemSpec q = parse_problem_yaml(with_tensor, "suite.yaml");
  auto r = import_kernelbench(
      suite_module(forward, linear + "        self.shift = nn.Parameter(torch.tensor(divisor))\n" +
                                bias + divisor),
      q);
  CHECK_MESSAGE(r.converted, r.reason);
  for (std::string other : {"torch.tensor(divisor * 2)", "torch.tensor(1.0)"}) {
    r = import_kernelbench(
        suite_module(forward, linear + bias + "        self.shift = nn.Parameter(" + other + ")\n" +
                                  divisor),
        q);
    CHECK_FALSE_MESSAGE(r.converted, other);
    CHECK_MESSAGE(r.reason.find("ModelNew creates `self.shift` otherwise than the reference") !=
                      std::string::npos,
                  other, ": ", r.reason);
  }
}

TEST_CASE("import_kernelbench: view operators in forward become torch steps that copy") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; input_size 512, 33, 64
  const std::string init = kLinearInit;
  auto plan_of = [&](const std::string& y) {
    auto r = import_kernelbench(
        suite_module("        y = " + y + "\n        return ext.epilogue(self.linear(y), 1.0)",
                     init),
        p);
    REQUIRE_MESSAGE(r.converted, y, ": ", r.reason);
    return checked_plan(r, p);
  };
  LaunchPlan plan = plan_of("x.permute(1, 0).permute([1, 0])");
  REQUIRE(plan.launches.size() == 4);
  CHECK(plan.launches[0].torch == "permute");
  auto joined = [](const LaunchSpec& l) {
    std::string j;
    for (const auto& a : arg_texts(l)) j += a + ";";
    return j;
  };
  CHECK(joined(plan.launches[0]) == "x;1, 0;");  // a list argument, as the parser keeps it
  CHECK(plan.launches[1].torch == "permute");
  CHECK(plan.launches[2].torch == "linear");
  REQUIRE(plan.scratch.size() == 3);
  CHECK(plan.scratch[0].shape == std::vector<std::string>{"input_size", "batch_size"});
  plan = plan_of("torch.narrow(x, -1, 0, x.size(1))");
  CHECK(plan.launches[0].torch == "narrow");
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "1", "0", "input_size"});
  // A view passed to a torch step is copied into a buffer of its shape first.
  plan = plan_of("x.unsqueeze(0)");
  REQUIRE(plan.launches.size() == 3);
  CHECK(plan.launches[0].torch == "reshape");
  CHECK(joined(plan.launches[0]) == "x;1, batch_size, input_size;");
  CHECK(plan.launches[1].torch == "linear");
  // Two pieces along a dimension that is odd at a test size: refused, saying why.
  auto r = import_kernelbench(
      suite_module("        a, b = x.chunk(2, dim=1)\n        return ext.epilogue(a, 1.0)", init),
      p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("pieces of unequal size") != std::string::npos);
  // A number of pieces that differs between size sets: refused.
  r = import_kernelbench(
      suite_module("        a = x.split(8, dim=0)\n        return ext.epilogue(a[0], 1.0)", init),
      p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("number of pieces") != std::string::npos);
  // On kernrl's own problems the kernels do all of the work.
  r = import_kernelbench(suite_module("        return ext.epilogue(x.permute(1, 0), 1.0)", init),
                         problem("L2_86_Matmul_Divide_GELU"));
  CHECK_FALSE(r.converted);
  CHECK(r.category == "torch_op_in_forward");
}

TEST_CASE("import_kernelbench: views keep PyTorch's memory semantics") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; input_size 512, 33, 64
  const std::string init = kLinearInit;
  auto import_forward = [&](const std::string& forward) {
    return import_kernelbench(suite_module(forward, init), p);
  };
  // A view is never a kernel's argument: in PyTorch its pointer is into x's memory.
  for (const char* forward :
       {"        return ext.epilogue(self.linear(x).transpose(0, 1), 1.0)",
        "        y = self.linear(x)\n        return ext.epilogue(y.narrow(1, 0, 4), 1.0)",
        "        y = self.linear(x)\n        (a, b) = torch.cat([y, y], dim=1).chunk(2, dim=1)\n"
        "        return ext.epilogue(a, 1.0)"}) {
    auto r = import_forward(forward);
    CHECK_FALSE_MESSAGE(r.converted, forward);
    CHECK_MESSAGE((r.reason.find("forward passes a view") != std::string::npos ||
                   r.reason.find("laid out as a view (permute, transpose)") != std::string::npos),
                  forward, ": ", r.reason);
  }
  // A piece of a split that is contiguous (rows) is its tensor's memory from an offset, as in
  // PyTorch: given as the tensor (here the whole of it), and empty_like of it is dense.
  auto r = import_forward(
      "        (a,) = self.linear(x).split(x.size(0), dim=0)\n        return ext.epilogue(a, 1.0)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches[1])[0] == checked_plan(r, p).launches[0].out);
  // .contiguous() of a view that is not contiguous copies it (PyTorch does too): a buffer.
  r = import_forward(
      "        y = self.linear(x).transpose(0, 1).contiguous()\n"
      "        return ext.epilogue(y, 1.0)");
  REQUIRE_MESSAGE(r.converted, r.reason);  // (an output of the same element count)
  CHECK(checked_plan(r, p).launches[1].torch == "transpose");
  // A view of a narrowed view PyTorch cannot make is refused; reshape copies.
  r = import_forward(
      "        y = self.linear(x).transpose(0, 1).view(-1)\n"
      "        return ext.epilogue(torch.relu(y), 1.0)");
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("PyTorch cannot view this tensor") != std::string::npos);
  // A view is copied where it is read: after a kernel wrote its storage, the copy is made again.
  r = import_forward(
      "        y = self.linear(x)\n        t = y.transpose(0, 1)\n"
      "        z = torch.relu(t)\n        w = torch.sigmoid(t)\n        ext.epilogue(y, 1.0)\n"
      "        v = torch.tanh(t)\n        return ext.epilogue(self.linear(x), 1.0)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  {
    LaunchPlan plan = checked_plan(r, p);
    int transposes = 0;
    for (const auto& l : plan.launches) transposes += l.torch == "transpose";
    CHECK(transposes == 2);  // t once for relu and sigmoid, again after a kernel was given y
  }
  // .contiguous() of a view copies it anew each time (each copy is the caller's, not a cache).
  r = import_forward(
      "        v = self.linear(x).narrow(1, 0, 4)\n        a = v.contiguous()\n"
      "        b = v.contiguous()\n        return ext.epilogue(self.linear(x), 1.0)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  {
    int narrows = 0;
    for (const auto& l : checked_plan(r, p).launches) narrows += l.torch == "narrow";
    CHECK(narrows == 2);
  }
  // A view in a keyword argument or in a list reaches no kernel either.
  for (const char* forward :
       {"        return ext.epilogue(y=self.linear(x).narrow(1, 4, 4), divisor=1.0)",
        "        return ext.epilogue([self.linear(x).narrow(1, 4, 4)][0], 1.0)"}) {
    r = import_forward(forward);
    CHECK_FALSE_MESSAGE(r.converted, forward);
  }
  // A view returned is copied into the output.
  r = import_forward("        return ext.epilogue(self.linear(x), 1.0).narrow(0, 0, x.size(0))");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches.back().torch == "narrow");
  // An operator's result on a permuted view is laid out as it: no kernel argument, no view.
  r = import_forward(
      "        a = torch.relu(self.linear(x).transpose(0, 1))\n        return ext.epilogue(a, "
      "1.0)");
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("laid out as one") != std::string::npos);
  r = import_forward(
      "        a = torch.relu(self.linear(x).transpose(0, 1)).view(-1)\n"
      "        return ext.epilogue(self.linear(x), 1.0)");
  CHECK_FALSE(r.converted);
  // .contiguous() copies it into a buffer that is a kernel's argument.
  r = import_forward(
      "        a = torch.relu(self.linear(x).transpose(0, 1)).contiguous()\n"
      "        return ext.epilogue(a, 1.0)");
  CHECK_MESSAGE(r.converted, r.reason);
  // Layouts as PyTorch keeps them: clone() of a transposed view is laid out as it (no kernel
  // argument), an operator's result on a narrowed view (not dense) is contiguous, a transposed
  // result transposed back is read by operators.
  r = import_forward(
      "        a = self.linear(x).transpose(0, 1).clone()\n        return ext.epilogue(a, 1.0)");
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("laid out as one") != std::string::npos);
  r = import_forward(
      "        g = torch.relu(self.linear(x).narrow(1, 0, 4))\n        return ext.epilogue(g, "
      "1.0)");
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("laid out as one") == std::string::npos);  // (its size is not the output's)
  r = import_forward(
      "        g = F.gelu(self.linear(x).transpose(0, 1)).transpose(0, 1)\n"
      "        return ext.epilogue(torch.relu(g), 1.0)");
  CHECK_MESSAGE(r.converted, r.reason);
  // clone() of a view made by view(): a copy of its own, not the viewed buffer.
  r = import_forward(
      "        z = self.linear(x).view(-1).clone()\n        return ext.epilogue(self.linear(x), "
      "1.0)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[1].torch == "reshape");
  // clone() of a buffer is a copy of its own on a suite.
  r = import_forward(
      "        y = self.linear(x)\n        z = y.clone()\n        return ext.epilogue(z, 1.0)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[1].torch == "reshape");
  // split with sizes that do not add up: PyTorch raises.
  r = import_forward(
      "        a, b = x.split([1, 1], dim=0)\n        return ext.epilogue(self.linear(a), 1.0)");
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("do not add up") != std::string::npos);
}

TEST_CASE("import_kernelbench: a zero fill after a kernel wrote the buffer is kept") {
  ProblemSpec p = problem("L1_23");
  const char* cuda = R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto t = torch::empty_like(x);
  auto y = torch::empty_like(x);
  int n = x.numel();
  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), t.data_ptr<float>(), n);
  t.zero_();
  k<<<(n + 255) / 256, 256>>>(t.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 3);  // the fill between the kernels runs where it was
  CHECK(plan.launches[1].kernel.rfind("kernrl_import_fill_", 0) == 0);
  // A buffer filled with ones, used, then zeroed: the ones are kept too.
  const char* ones = R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto t = torch::ones_like(x);
  auto y = torch::empty_like(x);
  int n = x.numel();
  k<<<(n + 255) / 256, 256>>>(t.data_ptr<float>(), y.data_ptr<float>(), n);
  t.zero_();
  k<<<(n + 255) / 256, 256>>>(t.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  r = import_kernelbench(module(ones, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  int fills = 0;
  for (const auto& l : checked_plan(r, p).launches)
    fills += l.kernel.rfind("kernrl_import_fill_", 0) == 0;
  CHECK(fills == 2);
}

TEST_CASE("import_kernelbench: training mode, math of sizes, float arithmetic in forward") {
  ProblemSpec p = suite_linear();
  const std::string init = kLinearInit;
  auto r = import_kernelbench(
      "import math\n" +
          suite_module("        s = 2.0 if self.training and self.divisor > 1.5 else 3.0\n"
                       "        return ext.epilogue(self.linear(x), s / math.sqrt(4))",
                       init),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[1].args[2].text == "1.0");  // 1 / (2.0 / 2.0)
  // `if not self.training:` reads the flag (its `:` is no annotation).
  r = import_kernelbench(suite_module("        s = 2.0\n"
                                      "        if not self.training:\n"
                                      "            s = 3.0\n"
                                      "        return ext.epilogue(self.linear(x), s)",
                                      init),
                         p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[1].args[2].text ==
        "0.5");  // 1 / 2.0: s stays 2.0 in training mode
  // A file that changes a module's mode: self.training is not followed.
  r = import_kernelbench(suite_module("        s = 2.0 if self.training else 3.0\n"
                                      "        return ext.epilogue(self.linear(x), s)",
                                      init + "\n        self.eval()"),
                         p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("changes a module's mode") != std::string::npos, r.reason);
  r = import_kernelbench(suite_module("        s = 2.0 if self.training else 3.0\n"
                                      "        return ext.epilogue(self.linear(x), s)",
                                      init + "\n        setattr(self, 'training', False)"),
                         p);
  CHECK_FALSE(r.converted);
  // Set in __init__ as an attribute: followed as any attribute (False: the else branch).
  r = import_kernelbench(suite_module("        s = 2.0 if self.training else 3.0\n"
                                      "        return ext.epilogue(self.linear(x), s)",
                                      init + "\n        self.training: bool = False"),
                         p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[1].args[2].text.rfind("0.333", 0) == 0);
  // math.sqrt of a size that differs between size sets; a float divided by zero.
  r = import_kernelbench(
      "import math\n" + suite_module("        return ext.epilogue(self.linear(x), "
                                     "math.sqrt(x.size(1)))",
                                     init),
      p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("differs between size sets") != std::string::npos);
  r = import_kernelbench(
      suite_module("        return ext.epilogue(self.linear(x), 1.0 / 0.0)", init), p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("divides by zero") != std::string::npos);
}

TEST_CASE("import_kernelbench: a branch on the sizes becomes arithmetic on its condition") {
  ProblemSpec p = suite_linear();
  std::string py = suite_module("        return ext.epilogue(self.linear(x), 2.0)",
                                "        self.linear = nn.Linear(input_size, output_size)");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  // `if (blocks > 16) blocks = 16;` holds at the bench size (512 blocks) and not at the test sizes
  // (1 and 2 blocks): at every size set the grid is what the wrapper computes.
  const LaunchSpec& k = plan.launches[1];
  for (const auto& sizes : std::vector<Vars>{p.bench, p.tests[0], p.tests[1]}) {
    int64_t n = sizes.at("batch_size") * sizes.at("output_size");
    CHECK(eval_expr(k.grid[0], plan_vars(p, sizes, 132)) == std::min<int64_t>((n + 255) / 256, 16));
  }
}

TEST_CASE("import_kernelbench: shape lists built on the host, bool parameters") {
  // The reduced dimension is a constant of the problem (the same at every size set), so a loop
  // over the dimensions unrolls; the output's shape is built with push_back, or copied from the
  // input's and edited; a bool parameter is passed as one byte.
  ProblemSpec p = problem("L1_47");
  const char* pushed = R"(
__global__ void k(const float* x, float* y, long long outer, long long r, long long inner, bool keep) {}
torch::Tensor f(torch::Tensor x) {
  int nd = x.dim();
  long long outer = 1, inner = 1;
  std::vector<int64_t> out_shape;
  for (int d = 0; d < nd; ++d) {
    if (d < 1) outer *= x.size(d);
    if (d > 1) inner *= x.size(d);
    out_shape.push_back(d == 1 ? 1 : x.size(d));
  }
  auto y = torch::empty(out_shape, x.options());
  k<<<(outer * inner + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer, x.size(1), inner, true);
  return y;
}
)";
  const char* copied = R"(
__global__ void k(const float* x, float* y, long long outer, long long r, long long inner, bool keep) {}
torch::Tensor f(torch::Tensor x) {
  std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
  out_shape[1] = 1;
  auto y = torch::empty(out_shape, x.options());
  k<<<x.size(0) * x.size(2) / 256 + 1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(0), x.size(1), x.size(2), false);
  return y;
}
)";
  for (const char* cuda : {pushed, copied}) {
    auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 1);
    CHECK((arg_texts(plan.launches[0]).back() == "1" || arg_texts(plan.launches[0]).back() == "0"));
  }
}

TEST_CASE("import_kernelbench: a view in forward gives the wrapper the view's shape") {
  // As LeNet's x.view(-1, 16 * 5 * 5) before a linear kernel: the wrapper's x.size(i) are the
  // view's, and the kernel reads the buffer the view is of.
  ProblemSpec p = problem("L1_23");  // x: [batch_size, dim]
  const char* cuda = R"(
__global__ void k(const float* x, float* y, int rows, int cols) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty({x.size(0) * x.size(1)}, x.options());
  k<<<1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(0), x.size(1));
  return y;
}
)";
  for (const char* fwd :
       {"ext.f(x.view(-1, 1)).view_as(x)", "ext.f(x.reshape(x.numel(), 1))",
        "ext.f(x.unsqueeze(2).flatten(0, 1).view(-1, 1))", "ext.f(x.flatten().unsqueeze(1))"}) {
    auto r = import_kernelbench(module(cuda, "f", "x", fwd), p);
    REQUIRE_MESSAGE(r.converted, fwd, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 1);
    auto args = arg_texts(plan.launches[0]);
    CHECK(args[0] == "x");
    CHECK(args[1] == "out");
    for (const auto& sizes : std::vector<Vars>{p.bench, p.tests[0], p.tests[2]}) {
      CHECK(eval_expr(args[2], plan_vars(p, sizes, 132)) ==
            sizes.at("batch_size") * sizes.at("dim"));
      CHECK(eval_expr(args[3], plan_vars(p, sizes, 132)) == 1);
    }
  }
  // A view to a shape kernrl cannot compute is refused, not guessed.
  auto bad = import_kernelbench(module(cuda, "f", "x", "ext.f(x.view(-1, -1))"), p);
  CHECK_FALSE(bad.converted);
  CHECK(bad.reason.find("a shape kernrl cannot compute") != std::string::npos);
}

TEST_CASE("import_kernelbench: torch::matmul in the wrapper is a torch step on a suite") {
  ProblemSpec p = suite_linear();
  const char* cuda = R"(
__global__ void bias_gelu(const float* y, const float* b, float* out, long long n, int cols) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  auto y = torch::matmul(x, w.t());
  auto out = torch::empty_like(y);
  bias_gelu<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(),
                                             out.data_ptr<float>(), y.numel(), y.size(1));
  return out;
}
)";
  std::string py = module(cuda, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias)",
                          "input_size, output_size, divisor: self.linear = nn.Linear(input_size, "
                          "output_size)");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].torch == "linear");
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "linear.weight"});
  CHECK(arg_texts(plan.launches[1]).at(4) == "output_size");
  // The transposed weight's own memory never reaches a kernel.
  const char* misuse = R"(
__global__ void k(const float* w, float* out) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  k<<<1, 1>>>(w.t().data_ptr<float>(), out.data_ptr<float>());
  return out;
}
)";
  auto bad = import_kernelbench(
      module(misuse, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias)",
             "input_size, output_size, divisor: self.linear = nn.Linear(input_size, output_size)"),
      p);
  CHECK_FALSE(bad.converted);
  CHECK(bad.reason.find("transposed tensor") != std::string::npos);
  // A view made in the wrapper has the view's shape, as in PyTorch: an operator reads a copy in
  // that shape (a reshape step), and its sizes are the view's (y is [batch, 1, output]).
  const char* viewed = R"(
__global__ void bias_gelu(const float* y, const float* b, float* out, long long n, int cols) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  auto y = torch::matmul(x.view({x.size(0), 1, x.size(1)}), w.t());
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  bias_gelu<<<(out.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(),
                                               out.data_ptr<float>(), out.numel(), y.size(1));
  return out;
}
)";
  auto view = import_kernelbench(
      module(viewed, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias)",
             "input_size, output_size, divisor: self.linear = nn.Linear(input_size, output_size)"),
      p);
  REQUIRE_MESSAGE(view.converted, view.reason);
  plan = checked_plan(view, p);
  REQUIRE(plan.launches.size() == 3);
  CHECK(plan.launches[0].torch == "reshape");
  CHECK(arg_texts(plan.launches[0]).at(1) == "batch_size, 1, input_size");
  CHECK(plan.launches[1].torch == "linear");
  CHECK(arg_texts(plan.launches[2]).at(4) == "1");
  // A view in a shape of another element count: PyTorch raises.
  std::string wrong = viewed;
  wrong.replace(wrong.find("x.size(0), 1,"), 13, "x.size(0), 2,");
  bad = import_kernelbench(
      module(wrong, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias)",
             "input_size, output_size, divisor: self.linear = nn.Linear(input_size, output_size)"),
      p);
  CHECK_FALSE(bad.converted);
  CHECK(bad.reason.find("another element count") != std::string::npos);
}

TEST_CASE("import_kernelbench: a size-dependent fallback to PyTorch becomes counted torch steps") {
  ProblemSpec p = suite_linear();  // input_size: 512 (bench), 33, 64
  auto convert = [&](const std::string& fallback) {
    std::string cuda = R"(
__global__ void fused(const float* x, const float* w, const float* b, float* out, int k, int n) {}
__global__ void bias_gelu(float* y, const float* b, long long n, int cols) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  const int K = x.size(1), N = w.size(0);
  if (K % 32 == 0) {
    fused<<<x.size(0), 256>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                              out.data_ptr<float>(), K, N);
    return out;
  }
)" + fallback + "}\n";
    return import_kernelbench(
        module(cuda, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias)",
               "input_size, output_size, divisor: self.linear = nn.Linear(input_size, "
               "output_size)"),
        p);
  };
  const std::vector<Vars> sets = {p.bench, p.tests[0], p.tests[1]};
  auto count = [&](const LaunchSpec& l, const Vars& sizes) {
    return eval_expr(l.repeat_count, plan_vars(p, sizes, 132));
  };
  // The fallback's product is a torch step into a buffer of its own, then a kernel; each runs
  // where the fast kernel does not, and the buffer has rows only there.
  auto r = convert(R"(
  auto y = torch::matmul(x, w.t());
  bias_gelu<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(), y.numel(), N);
  return y;
)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 4);
  CHECK(plan.launches[0].kernel == "fused");
  CHECK(plan.launches[1].torch == "linear");
  CHECK(plan.launches[2].kernel == "bias_gelu");
  // y is returned where the fallback runs: copied into out there (the fast branch's buffer).
  CHECK(plan.launches[3].torch == "reshape");
  CHECK(plan.launches[3].out == "out");
  CHECK(arg_texts(plan.launches[3]) == std::vector<std::string>{"y", "batch_size, output_size"});
  for (const Vars& sizes : sets) {
    const int64_t fast = sizes.at("input_size") % 32 == 0 ? 1 : 0;
    CHECK(count(plan.launches[0], sizes) == fast);
    for (size_t l = 1; l < 4; ++l) CHECK(count(plan.launches[l], sizes) == 1 - fast);
    REQUIRE(plan.scratch.size() == 1);
    CHECK(plan.scratch[0].name == "y");
    CHECK(eval_expr(plan.scratch[0].shape.at(0), plan_vars(p, sizes, 132)) ==
          (fast ? 0 : sizes.at("batch_size")));
  }
  CHECK(r.kernel_file.find("returns different tensors depending on the sizes") !=
        std::string::npos);
  // Written into out by the kernel after the product: the same tensor returned, no copy.
  r = convert(R"(
  auto y = torch::matmul(x, w.t());
  bias_gelu<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(), y.numel(), N);
  fused<<<1, 1>>>(y.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), K, N);
  return out;
)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 4);
  CHECK(plan.launches[3].kernel == "fused");
  CHECK(count(plan.launches[3], p.tests[0]) == 1);
  CHECK(count(plan.launches[3], p.bench) == 0);
  // A matrix times a batch of matrices (w times x viewed as [batch, input, 1]), a view returned.
  r = convert(R"(
  auto y = torch::matmul(w, x.view({x.size(0), K, 1}));
  return y.view({x.size(0), N});
)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 4);
  CHECK(plan.launches[1].torch == "reshape");
  CHECK(arg_texts(plan.launches[1]) == std::vector<std::string>{"x", "batch_size, input_size, 1"});
  CHECK(plan.launches[2].torch == "matmul");
  CHECK(plan.launches[3].torch == "reshape");
  CHECK(plan.launches[3].out == "out");
  CHECK(count(plan.launches[3], p.tests[0]) == 1);
  CHECK(count(plan.launches[3], p.tests[1]) == 0);

  // Refused: the fallback returns a tensor of another shape (what forward sees would differ);
  auto bad = convert(R"(
  auto y = torch::matmul(x, w.t());
  return y.view({-1});
)");
  CHECK_FALSE(bad.converted);
  CHECK(bad.reason.find("if (K % 32 == 0)") != std::string::npos);
  // a buffer of a branch whose size is negative where the branch does not run;
  bad = convert(R"(
  auto t = torch::empty({K - 40}, x.options());
  bias_gelu<<<1, 256>>>(t.data_ptr<float>(), b.data_ptr<float>(), t.numel(), N);
  return out;
)");
  CHECK_FALSE(bad.converted);
  // a tensor the function did not allocate as one of the results (forward sees it apart from
  // what the function returns: a copy of it would not be it);
  const char* given = R"(
__global__ void fused(const float* x, const float* w, float* out, int k, int n) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor out) {
  const int K = x.size(1), N = w.size(0);
  if (K % 32 == 0) {
    fused<<<x.size(0), 256>>>(x.data_ptr<float>(), w.data_ptr<float>(), out.data_ptr<float>(), K, N);
    return out;
  }
  return torch::matmul(x, w.t());
}
)";
  bad = import_kernelbench(
      module(given, "run", "x",
             "ext.run(x, self.linear.weight, x.new_empty(x.shape[0], self.linear.weight.shape[0]))",
             "input_size, output_size, divisor: self.linear = nn.Linear(input_size, output_size)"),
      p);
  CHECK_FALSE(bad.converted);
  CHECK(bad.reason.find("if (K % 32 == 0)") != std::string::npos);
  // a fallback that returns while the fast branch goes on (its block is not the function's).
  bad = convert(R"(
  { if (K % 32 != 0) { auto y = torch::matmul(x, w.t()); return y; } }
  return out;
)");
  CHECK_FALSE(bad.converted);
}

TEST_CASE("import_kernelbench: what a size-dependent branch or a transposed weight cannot become") {
  ProblemSpec p = problem("L1_23");  // dim: 16384 (bench), 256, 1000, 4099
  auto wrapper = [](const std::string& body) {
    return "__global__ void a(const float* x, float* y, int n) {}\n"
           "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n  int d = "
           "x.size(1);\n" +
           body + "\n  return y;\n}\n";
  };
  // A branch inside an AT_DISPATCH lambda that sets a variable of the enclosing function.
  auto lambda = import_kernelbench(
      module(wrapper("  int threads = 256;\n  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), \"f\", "
                     "[&] {\n    if (d > 1024) threads = 512;\n    a<<<1, threads>>>("
                     "x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), d);\n  });"),
             "f", "x", "ext.f(x)"),
      p);
  if (lambda.converted) {  // then the block size must be the branch's at every size set
    LaunchPlan plan = checked_plan(lambda, p);
    for (const auto& sizes : std::vector<Vars>{p.bench, p.tests[0], p.tests[1], p.tests[2]})
      CHECK(eval_expr(plan.launches[0].block[0], plan_vars(p, sizes, 132)) ==
            (sizes.at("dim") > 1024 ? 512 : 256));
  } else {
    CHECK(lambda.reason.find("if (d > 1024)") != std::string::npos);
  }
  // std::vector<int64_t>(n, value), and a float compared with a size as a whole number.
  auto vec = import_kernelbench(
      module(wrapper("  std::vector<int64_t> s(2, 1);\n  s[1] = d;\n  if (d > 0.0) a<<<s[0], "
                     "256>>>(x.data_ptr<float>(), y.data_ptr<float>(), s[1]);"),
             "f", "x", "ext.f(x)"),
      p);
  REQUIRE_MESSAGE(vec.converted, vec.reason);
  CHECK(arg_texts(checked_plan(vec, p).launches[0]).back() == "dim");
  // A float that depends on the sizes is not compared as a truncated integer.
  auto frac = import_kernelbench(
      module(wrapper("  if ((float)d / 512 > 1.5) a<<<1, 256>>>(x.data_ptr<float>(), "
                     "y.data_ptr<float>(), d);"),
             "f", "x", "ext.f(x)"),
      p);
  CHECK_FALSE(frac.converted);
  CHECK(frac.reason.find("(float)d / 512 > 1.5") != std::string::npos);

  // A transposed weight only as the weight of x @ W.t(): not as F.linear's weight, not returned.
  ProblemSpec s = suite_linear();
  const std::string init = "        self.linear = nn.Linear(input_size, output_size)";
  for (const char* forward :
       {"        return ext.epilogue(F.linear(x, self.linear.weight.t()), 1.0)",
        "        return self.linear.weight.t()",
        "        return ext.epilogue(torch.mm(self.linear.weight.t(), x), 1.0)"}) {
    auto r = import_kernelbench(suite_module(forward, init), s);
    CHECK_FALSE_MESSAGE(r.converted, forward);
    CHECK_MESSAGE(r.reason.find("transposed") != std::string::npos, forward, ": ", r.reason);
  }
}

TEST_CASE("import_kernelbench: BatchNorm running statistics updated under no_grad are skipped") {
  ProblemSpec p = suite_linear();
  const std::string init =
      "        self.linear = nn.Linear(input_size, output_size)\n"
      "        self.bn = nn.BatchNorm1d(output_size)";
  auto forward = [](const std::string& after) {
    return "        y = self.linear(x)\n"
           "        bn = self.bn\n"
           "        if bn.training and bn.track_running_stats:\n"
           "            with torch.no_grad():\n"
           "                bn.num_batches_tracked.add_(1)\n"
           "                m = 0.1 if bn.momentum is None else bn.momentum\n"
           "                bn.running_mean.mul_(1 - m).add_(y.mean(0), alpha=m)\n" +
           after;
  };
  auto r =
      import_kernelbench(suite_module(forward("        return ext.epilogue(y, 2.0)"), init), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("running statistics") != std::string::npos;
  CHECK(noted);
  CHECK(checked_plan(r, p).launches.size() == 2);
  // Read again after the update: refused, as is a name the block assigns read after it.
  r = import_kernelbench(
      suite_module(forward("        z = bn.running_mean\n        return ext.epilogue(y, 2.0)"),
                   init),
      p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("after updating it in place") != std::string::npos);
  r = import_kernelbench(suite_module(forward("        return ext.epilogue(y, m)"), init), p);
  CHECK_FALSE(r.converted);
  // A block that does anything else is not skipped.
  r = import_kernelbench(suite_module("        y = self.linear(x)\n"
                                      "        with torch.no_grad():\n"
                                      "            self.bn.running_mean.zero_()\n"
                                      "            y.mul_(2)\n"
                                      "        return ext.epilogue(y, 2.0)",
                                      init),
                         p);
  CHECK_FALSE(r.converted);
}

namespace {

// A suite problem of two linear layers with a ReLU between them (nn.Sequential), with the module
// tree a suite built from KernelBench records (`modules`), or without it (`with_modules` false).
ProblemSpec suite_mlp(bool with_modules, const std::string& modules = "") {
  std::string yaml = R"(id: L3_1_MLP
level: 3
name: MLP
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 128, input_size: 512, hidden: 256, output_size: 64}
  test:
    - {batch_size: 3, input_size: 33, hidden: 17, output_size: 5}
    - {batch_size: 7, input_size: 64, hidden: 40, output_size: 9}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, input_size], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: net.0.weight, dtype: float32, shape: [hidden, input_size], init: custom}
  - {name: net.0.bias, dtype: float32, shape: [hidden], init: custom}
  - {name: net.2.weight, dtype: float32, shape: [output_size, hidden], init: custom}
  - {name: net.2.bias, dtype: float32, shape: [output_size], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, output_size]}
)";
  // Either form: a class, or the class and its torch.nn bases.
  if (with_modules)
    yaml += modules.empty() ? "modules: {\"net\": \"Sequential\", \"net.0\": [\"Linear\"], "
                              "\"net.1\": [\"ReLU\"], \"net.2\": \"Linear\"}\n"
                            : "modules: " + modules + "\n";
  yaml +=
      "flops: \"0\"\nbytes: auto\ntorch: |\n"
      "  import torch\n  import torch.nn as nn\n"
      "  class Model(nn.Module):\n"
      "      def __init__(self, input_size, hidden, output_size):\n"
      "          super(Model, self).__init__()\n"
      "          self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
      "                                   nn.Linear(hidden, output_size))\n"
      "      def forward(self, x):\n"
      "          return self.net(x)\n";
  return parse_problem_yaml(yaml, "suite.yaml");
}

// ModelNew of that MLP: `forward` (its body, indented 8) calls ext.bias_act(y, bias, relu).
std::string mlp_module(const std::string& forward, const std::string& init_extra = "") {
  return "import torch\nimport torch.nn as nn\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n"
         "__global__ void bias_act_kernel(float* y, const float* b, int n, int cols, bool relu) "
         "{}\n"
         "torch::Tensor bias_act(torch::Tensor y, torch::Tensor b, bool relu) {\n"
         "  int n = y.numel();\n"
         "  bias_act_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), b.data_ptr<float>(), "
         "n, y.size(1), relu);\n"
         "  return y;\n}\n\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"bias_act\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, input_size, hidden, output_size):\n"
         "        super().__init__()\n"
         "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
         "                                 nn.Linear(hidden, output_size))\n" +
         init_extra + "\n    def forward(self, x):\n" + forward + "\n";
}

// The kernel launches' relu flags and the torch steps' weights of a converted MLP.
void check_mlp_plan(const KernelBenchImport& r, const ProblemSpec& p) {
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  std::vector<std::string> steps;
  for (const auto& l : plan.launches)
    steps.push_back(l.torch.empty() ? l.kernel + ":" + l.args.back().text
                                    : l.torch + ":" + l.args[1].text);
  CHECK(steps == std::vector<std::string>{"linear:net.0.weight", "bias_act_kernel:1",
                                          "linear:net.2.weight", "bias_act_kernel:0"});
}

}  // namespace

TEST_CASE("import_kernelbench: loops over a Sequential's layers are unrolled (suite modules)") {
  ProblemSpec p = suite_mlp(true);
  // A comprehension with isinstance, enumerate and a flag from the index.
  check_mlp_plan(
      import_kernelbench(
          mlp_module("        linears = [m for m in self.net if isinstance(m, nn.Linear)]\n"
                     "        last = len(linears) - 1\n"
                     "        for i, lin in enumerate(linears):\n"
                     "            y = torch.mm(x, lin.weight.t())\n"
                     "            x = ext.bias_act(y, lin.bias, i < last)\n"
                     "        return x"),
          p),
      p);
  // The list built in __init__, and the relu flag from the next layer's class.
  check_mlp_plan(
      import_kernelbench(
          mlp_module("        mods = list(self.net)\n"
                     "        i = 0\n"
                     "        while i < len(mods):\n"
                     "            relu = (i + 1 < len(mods)) and isinstance(mods[i + 1], nn.ReLU)\n"
                     "            x = ext.bias_act(torch.mm(x, mods[i].weight.t()), mods[i].bias, "
                     "relu)\n"
                     "            i += 2 if relu else 1\n"
                     "        return x"),
          p),
      p);
  // Calling the layers themselves, continue and break, range over a constant.
  check_mlp_plan(
      import_kernelbench(mlp_module("        for k in range(len(self.net)):\n"
                                    "            layer = self.net[k]\n"
                                    "            if not isinstance(layer, nn.Linear):\n"
                                    "                continue\n"
                                    "            x = ext.bias_act(layer(x), layer.bias, k == 0)\n"
                                    "            if k == len(self.net) - 1:\n"
                                    "                break\n"
                                    "        return x"),
                         p),
      p);
}

TEST_CASE("import_kernelbench: what a loop in forward cannot become") {
  const std::string loop =
      "        for lin in self.net:\n"
      "            if isinstance(lin, nn.Linear):\n"
      "                x = ext.bias_act(torch.mm(x, lin.weight.t()), lin.bias, True)\n"
      "        return x";
  // Without the suite's module tree: the layers' classes are unknown.
  auto r = import_kernelbench(mlp_module(loop), suite_mlp(false));
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("suites built from KernelBench") != std::string::npos);
  ProblemSpec p = suite_mlp(true);
  // A loop whose length depends on the sizes.
  r = import_kernelbench(mlp_module("        for i in range(x.size(0)):\n"
                                    "            pass\n"
                                    "        return ext.bias_act(x, self.net[0].bias, True)"),
                         p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("same bounds at every size set") != std::string::npos);
  // A while loop that never ends is cut.
  r = import_kernelbench(mlp_module("        i = 0\n"
                                    "        while i >= 0:\n"
                                    "            i += 1\n"
                                    "        return x"),
                         p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("iterations") != std::string::npos);
  // isinstance of a value kernrl does not know the type of.
  r = import_kernelbench(mlp_module("        if isinstance(self.mystery, nn.Linear):\n"
                                    "            pass\n"
                                    "        return x",
                                    "        self.mystery = make_layer()"),
                         p);
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: `and` and `or` give one of their operands, as in Python") {
  ProblemSpec p = suite_linear();
  for (const auto& [expr, want] :
       std::vector<std::pair<std::string, std::string>>{{"0.0 or 4.0", "0.25"},
                                                        {"2.0 or 4.0", "0.5"},
                                                        {"(1 > 2) or 8.0", "0.125"},
                                                        {"True and 5.0", "0.2"}}) {
    auto r =
        import_kernelbench(suite_module("        return ext.epilogue(self.linear(x), " + expr + ")",
                                        "        self.linear = nn.Linear(input_size, output_size)"),
                           p);
    REQUIRE_MESSAGE(r.converted, expr, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    CHECK_MESSAGE(plan.launches.back().args[2].text == want, expr);
  }
}

TEST_CASE("import_kernelbench: loops follow Python's break, continue and else, or are refused") {
  ProblemSpec p = suite_mlp(true);
  // One-line continue and break are statements, not names.
  check_mlp_plan(import_kernelbench(
                     mlp_module("        for i, m in enumerate(self.net):\n"
                                "            if not isinstance(m, nn.Linear): continue\n"
                                "            x = ext.bias_act(torch.mm(x, m.weight.t()), m.bias, "
                                "i == 0)\n"
                                "            if i == 2: break\n"
                                "        return x"),
                     p),
                 p);
  // for ... else: a continue in the else clause is the outer loop's.
  auto r = import_kernelbench(mlp_module("        for k in range(2):\n"
                                         "            for j in range(1): pass\n"
                                         "            else:\n"
                                         "                continue\n"
                                         "            x = ext.bias_act(x, self.net[0].bias, True)\n"
                                         "        y = torch.mm(x, self.net[0].weight.t())\n"
                                         "        y = ext.bias_act(y, self.net[0].bias, True)\n"
                                         "        z = torch.mm(y, self.net[2].weight.t())\n"
                                         "        return ext.bias_act(z, self.net[2].bias, False)"),
                              p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches.size() == 4);  // no bias_act from the loop
  // A container ModelNew builds and the reference has not: its layers are not known.
  r = import_kernelbench(mlp_module("        for a in self.acts:\n"
                                    "            x = ext.bias_act(x, self.net[0].bias, True)\n"
                                    "        return x",
                                    "        self.acts = nn.ModuleList([nn.ReLU()])"),
                         p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(
      r.reason.find("builds its layers otherwise than the reference's") != std::string::npos,
      r.reason);
  // A layer ModelNew builds as another class than the reference's.
  r = import_kernelbench(
      mlp_module(
          "        return ext.bias_act(x, self.net[0].bias, isinstance(self.net, nn.Sequential))",
          "        self.net = nn.ModuleList([])"),
      p);
  CHECK_FALSE(r.converted);
  // (Set twice: the reference's `self.net = nn.Sequential(...)`, then this.)
  CHECK_MESSAGE(r.reason.find("`self.net`, which ModelNew's __init__ sets more than once") !=
                    std::string::npos,
                r.reason);
  // `or` on a tensor is Tensor.__bool__.
  r = import_kernelbench(mlp_module("        return ext.bias_act(x or x, self.net[0].bias, True)"),
                         p);
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: isinstance knows torch.nn base classes, not look-alike names") {
  // net.1 is a ReLU6 (a Hardtanh); net.0 a user class named Linear (not torch's).
  ProblemSpec p = suite_mlp(true,
                            "{\"net\": [\"Sequential\"], \"net.0\": [\"model:Linear\"], "
                            "\"net.1\": [\"ReLU6\", \"Hardtanh\"], \"net.2\": [\"Linear\"]}");
  auto flags = [&](const std::string& test) {
    auto r = import_kernelbench(
        mlp_module(
            "        y = ext.bias_act(torch.mm(x, self.net[0].weight.t()), self.net[0].bias, " +
            test +
            ")\n"
            "        return ext.bias_act(torch.mm(y, self.net[2].weight.t()), "
            "self.net[2].bias, False)"),
        p);
    REQUIRE_MESSAGE(r.converted, test, ": ", r.reason);
    return checked_plan(r, p).launches[1].args.back().text;
  };
  CHECK(flags("isinstance(self.net[1], nn.Hardtanh)") == "1");
  CHECK(flags("isinstance(self.net[1], (nn.ReLU, nn.ReLU6))") == "1");
  CHECK(flags("isinstance(self.net[1], nn.ReLU)") == "0");
  CHECK(flags("isinstance(self.net[0], nn.Linear)") == "0");
  CHECK(flags("isinstance(self.net[0], nn.Module)") == "1");
  // Calling the look-alike as nn.Linear is refused.
  auto r = import_kernelbench(
      mlp_module("        return ext.bias_act(self.net[0](x), self.net[0].bias, True)"), p);
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: running statistics kernrl cannot skip safely") {
  ProblemSpec p = suite_linear();
  const std::string init =
      "        self.linear = nn.Linear(input_size, output_size)\n"
      "        self.bn = nn.BatchNorm1d(output_size)";
  auto refused = [&](const std::string& forward) {
    return !import_kernelbench(suite_module(forward, init), p).converted;
  };
  // An alias taken before the update, read after it.
  CHECK(
      refused("        rm = self.bn.running_mean\n"
              "        y = self.linear(x)\n"
              "        with torch.no_grad():\n"
              "            self.bn.running_mean.mul_(0.9)\n"
              "        return ext.epilogue(y, 2.0)"));
  // Another tensor changed in place inside the chain's arguments.
  CHECK(
      refused("        y = self.linear(x)\n"
              "        with torch.no_grad():\n"
              "            self.bn.running_mean.mul_(0.9).add_(y.mul_(2).mean(0), alpha=0.1)\n"
              "        return ext.epilogue(y, 2.0)"));
  // A name the block assigns, read elsewhere in forward.
  CHECK(
      refused("        y = self.linear(x)\n"
              "        m = 0.5\n"
              "        with torch.no_grad():\n"
              "            m = 0.1\n"
              "            self.bn.running_mean.mul_(1 - m)\n"
              "        return ext.epilogue(y, 2.0)"));
  // An extension call inside the block (it may write its arguments), an inplace=True.
  CHECK(
      refused("        y = self.linear(x)\n"
              "        with torch.no_grad():\n"
              "            tmp = ext.epilogue(y, 2.0)\n"
              "            self.bn.running_mean.mul_(0.9)\n"
              "        return ext.epilogue(y, 2.0)"));
  CHECK(
      refused("        y = self.linear(x)\n"
              "        with torch.no_grad():\n"
              "            tmp = F.relu(y, inplace=True)\n"
              "            self.bn.running_mean.mul_(0.9)\n"
              "        return ext.epilogue(y, 2.0)"));
  // Aliases through a list or an attribute of ModelNew.
  CHECK(
      refused("        stats = [self.bn.running_mean]\n"
              "        y = self.linear(x)\n"
              "        with torch.no_grad():\n"
              "            self.bn.running_mean.mul_(0.9)\n"
              "        return ext.epilogue(y, 2.0)"));
  CHECK(
      refused("        self.rm = self.bn.running_mean\n"
              "        y = self.linear(x)\n"
              "        with torch.no_grad():\n"
              "            self.bn.running_mean.mul_(0.9)\n"
              "        return ext.epilogue(y, 2.0)"));
  // A tensor's truth (Python refuses it for more than one element), list() of a tensor.
  CHECK(
      refused("        y = self.linear(x)\n"
              "        return ext.epilogue(y, 2.0) if y else y"));
  CHECK(
      refused("        y = self.linear(x)\n"
              "        return ext.epilogue(list(y), 2.0)"));
  // Calls through an expression, a one-letter name, keyword unpacking, set_ in the chain.
  for (const char* line :
       {"            t = (ext.epilogue)(y, 0.0)\n", "            t = _(y, 0.0)\n",
        "            t = torch.abs(y, **{'out': y})\n", "            t = ext.mean(y)\n",
        "            self.bn.running_var.set_(y)\n"})
    CHECK_MESSAGE(refused(std::string("        y = self.linear(x)\n"
                                      "        with torch.no_grad():\n") +
                          line +
                          "            self.bn.running_mean.mul_(0.9)\n"
                          "        return ext.epilogue(y, 2.0)"),
                  line);
  // Statistics of something kernrl does not know as a BatchNorm layer (ModelNew's own buffer).
  CHECK(
      refused("        y = self.linear(x)\n"
              "        with torch.no_grad():\n"
              "            self.running_mean.mul_(0.9)\n"
              "        return ext.epilogue(y, 2.0)"));
}

TEST_CASE("import_kernelbench: the reference's layers are known only if ModelNew builds them so") {
  ProblemSpec p = suite_mlp(true);
  const std::string loop =
      "        for i, m in enumerate(self.net):\n"
      "            if isinstance(m, nn.Linear):\n"
      "                x = ext.bias_act(torch.mm(x, m.weight.t()), m.bias, i == 0)\n"
      "        return x";
  auto with_init = [&](const std::string& init) {
    std::string py = mlp_module(loop);
    const std::string ref_init =
        "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
        "                                 nn.Linear(hidden, output_size))\n";
    py.replace(py.find(ref_init), ref_init.size(), init);
    return import_kernelbench(py, p);
  };
  // Other layers than the reference's: an Identity for the ReLU, no bias, a layer added.
  for (const char* init :
       {"        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.Identity(),\n"
        "                                 nn.Linear(hidden, output_size))\n",
        "        self.net = nn.Sequential(nn.Linear(input_size, hidden, bias=False), nn.ReLU(),\n"
        "                                 nn.Linear(hidden, output_size))\n",
        "        layers = [nn.Linear(input_size, hidden), nn.ReLU(), nn.Linear(hidden, "
        "output_size)]\n"
        "        self.net = nn.Sequential(*layers)\n",
        "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
        "                                 nn.Linear(hidden, output_size))\n"
        "        self.net.append(nn.ReLU())\n"}) {
    auto r = with_init(init);
    CHECK_FALSE_MESSAGE(r.converted, init);
    CHECK_MESSAGE(r.reason.find("from the reference's module only") != std::string::npos, r.reason);
  }
  // The reference's statements and an attribute of ModelNew's own: known.
  auto r = with_init(
      "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
      "                                 nn.Linear(hidden, output_size))\n"
      "        self.linears = [m for m in self.net if isinstance(m, nn.Linear)]\n");
  CHECK_MESSAGE(r.converted, r.reason);
}

TEST_CASE("import_kernelbench: what would change the reference's layers behind kernrl's back") {
  ProblemSpec p = suite_mlp(true);
  const std::string loop =
      "        for i, m in enumerate(self.net):\n"
      "            if isinstance(m, nn.Linear):\n"
      "                x = ext.bias_act(torch.mm(x, m.weight.t()), m.bias, i == 0)\n"
      "        return x";
  auto refused = [&](const std::string& py) {
    auto r = import_kernelbench(py, p);
    return !r.converted;
  };
  // del of anything but a name in forward.
  CHECK(refused(mlp_module("        del self.net[1]\n" + loop)));
  CHECK(refused(mlp_module("        mods = list(self.net)\n        del mods[1]\n" + loop)));
  // An own attribute computed by a call kernrl does not know, or reaching a private attribute.
  CHECK(refused(mlp_module(loop, "        self.z = delattr(self.net, '1')")));
  CHECK(refused(mlp_module(loop, "        self.z = self.net._modules.popitem()")));
  CHECK(refused(mlp_module(loop, "        self.z = self.fix()")));
  // nn rebound at the module's top level, a decorated or second __init__, another base class.
  std::string py = mlp_module(loop);
  CHECK(refused("import types\n" + py + "\nnn = types.SimpleNamespace()\n"));
  std::string twice = py;
  twice.replace(twice.find("    def forward"), 0,
                "    def __init__(self, input_size, hidden, output_size):\n"
                "        super().__init__()\n\n");
  CHECK(refused(twice));
  std::string based = py;
  based.replace(based.find("class ModelNew(nn.Module)"), 25, "class ModelNew(Base)");
  CHECK(refused(based));
  // Copies written a little differently are still the reference's.
  // torch.nn.X for nn.X, and an attribute counted with sum().
  std::string spelled = py;
  spelled.replace(spelled.find("nn.Sequential(nn.Linear(input_size, hidden)"), 43,
                  "torch.nn.Sequential(torch.nn.Linear(input_size, hidden)");
  auto s1 = import_kernelbench(spelled, p);
  CHECK_MESSAGE(s1.converted, s1.reason);
  auto s2 = import_kernelbench(
      mlp_module(loop, "        self.n = sum([1 for m in self.net if isinstance(m, nn.Linear)])"),
      p);
  CHECK_MESSAGE(s2.converted, s2.reason);
  std::string comma = py;
  comma.replace(comma.find("nn.Linear(hidden, output_size))"), 31,
                "nn.Linear(hidden, output_size),)");
  auto r = import_kernelbench(comma, p);
  CHECK_MESSAGE(r.converted, r.reason);
}

TEST_CASE("import_kernelbench: floor division and keyword arguments of builtins, as Python") {
  ProblemSpec p = suite_mlp(true);
  auto flag = [&](const std::string& loop_flag) {
    auto r = import_kernelbench(
        mlp_module("        linears = [m for m in self.net if isinstance(m, nn.Linear)]\n"
                   "        n = len(linears)\n"
                   "        for i, lin in enumerate(linears" +
                   std::string(loop_flag.find("start") != std::string::npos ? ", start=1" : "") +
                   "):\n"
                   "            x = ext.bias_act(torch.mm(x, lin.weight.t()), lin.bias, " +
                   loop_flag.substr(0, loop_flag.find('|')) +
                   ")\n"
                   "        return x"),
        p);
    REQUIRE_MESSAGE(r.converted, loop_flag, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    return plan.launches[1].args.back().text + plan.launches[3].args.back().text;
  };
  // (i - 2) // 2 is -1 for i = 0 and 1 (floored), 0 for i = 2.
  CHECK(flag("(i - 2) // 2 < 0") == "11");
  CHECK(flag("(i - n) % n == n - 1") == "01");
  CHECK(flag("i < n|start") == "10");  // start=1: the indices are 1 and 2
  // A keyword argument kernrl does not follow.
  auto r = import_kernelbench(mlp_module("        for k in range(2, step=1):\n"
                                         "            pass\n"
                                         "        return x"),
                              p);
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: floats computed from the sizes on the host are real expressions") {
  ProblemSpec p = problem("L1_26");
  std::string cuda = R"(
__global__ void k(const float* x, float* y, int n, float inv_n, double half_inv, float neg, float mix) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  float inv_n = 1.0f / (float)n;
  double half_inv = 0.5 / (double)(n / 2);
  float mix = inv_n * 3.0f + (float)x.size(0);
  k<<<1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n, inv_n, half_inv, -inv_n, mix);
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchSpec l = checked_plan(r, p).launches.at(0);
  REQUIRE(l.args.size() == 7);
  for (size_t i = 3; i < 7; ++i)
    CHECK_MESSAGE(l.args[i].kind == ArgKind::FloatExpr, l.args[i].text);
  // Each evaluates at a size set to what the host code computes there (C's promotions).
  for (const auto& sizes : p.tests) {
    Vars v = plan_vars(p, sizes, 132);
    double n = static_cast<double>(sizes.at("batch_size") * sizes.at("dim"));
    int64_t ni = sizes.at("batch_size") * sizes.at("dim");
    CHECK(eval_real_expr(l.args[3].text, v, {}) == doctest::Approx(1.0 / n));
    CHECK(eval_real_expr(l.args[4].text, v, {}) ==
          doctest::Approx(0.5 / static_cast<double>(ni / 2)));
    CHECK(eval_real_expr(l.args[5].text, v, {}) == doctest::Approx(-1.0 / n));
    CHECK(eval_real_expr(l.args[6].text, v, {}) ==
          doctest::Approx(3.0 / n + static_cast<double>(sizes.at("batch_size"))));
  }
  // A comparison of such a value still cannot be decided on the host.
  std::string branch = R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  float inv_n = 1.0f / (float)n;
  if (inv_n > 0.001f) k<<<1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  auto b = import_kernelbench(module(branch, "f", "x", "ext.f(x)"), p);
  CHECK_FALSE(b.converted);
  CHECK_MESSAGE(b.reason.find("compares a floating-point value that depends on the sizes") !=
                    std::string::npos,
                b.reason);
}

TEST_CASE("import_kernelbench: slices of shapes, lists and a Sequential's layers, as Python's") {
  ProblemSpec p = suite_mlp(true);
  // The layers but the last through a slice, then the last by a negative index.
  check_mlp_plan(
      import_kernelbench(mlp_module("        for lin in self.net[:-1:2]:\n"
                                    "            x = ext.bias_act(lin(x), lin.bias, True)\n"
                                    "        last = self.net[-1]\n"
                                    "        return ext.bias_act(last(x), last.bias, False)"),
                         p),
      p);
  // A shape's tail compared with another's: decided at every size set; reversed by a step.
  check_mlp_plan(import_kernelbench(
                     mlp_module("        if tuple(x.shape[1:]) != tuple(x.shape[x.dim() - 1:]) or "
                                "len(x.shape[::-1]) != 2 or x.shape[5:] != x.shape[7:]:\n"
                                "            raise ValueError('x must be 2-D')\n"
                                "        dims = x.shape[::-1]\n"
                                "        assert dims[1] == x.shape[0]\n"
                                "        for i, lin in enumerate([self.net[0], self.net[2]]):\n"
                                "            x = ext.bias_act(lin(x), lin.bias, i == 0)\n"
                                "        return x"),
                     p),
                 p);
  // Bounds that depend on the sizes, a zero step, a slice of a tensor: refused with the reason.
  auto bounds =
      import_kernelbench(mlp_module("        for lin in self.net[:x.size(0)]:\n"
                                    "            x = ext.bias_act(lin(x), lin.bias, True)\n"
                                    "        return x"),
                         p);
  CHECK_FALSE(bounds.converted);
  CHECK_MESSAGE(bounds.reason.find("not the same at every size set") != std::string::npos,
                bounds.reason);
  auto zero = import_kernelbench(mlp_module("        s = x.shape[::0]\n        return x"), p);
  CHECK_FALSE(zero.converted);
  CHECK_MESSAGE(zero.reason.find("step of zero") != std::string::npos, zero.reason);
  auto tensor = import_kernelbench(
      mlp_module("        return ext.bias_act(x[:, :4], self.net[0].bias, True)"), p);
  CHECK_FALSE(tensor.converted);
  CHECK_MESSAGE(tensor.reason.find("forward passes a view") != std::string::npos, tensor.reason);
}

TEST_CASE("import_kernelbench: a float variable holding a size stays a float when assigned") {
  ProblemSpec p = problem("L1_26");
  auto arg_of = [&](const std::string& body) {
    std::string cuda =
        "__global__ void k(const float* x, float* y, float s) {}\n"
        "torch::Tensor f(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n" +
        body +
        "  k<<<1, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), s);\n"
        "  return y;\n}\n";
    auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    return checked_plan(r, p).launches.at(0).args.at(2).text;
  };
  // dim = 1000 at the second test size set: C gives 500.5 for s / 2 with s a float.
  Vars v = plan_vars(p, p.tests.at(1), 132);
  double dim = static_cast<double>(v.at("dim")), batch = static_cast<double>(v.at("batch_size"));
  CHECK(eval_real_expr(arg_of("  float s = x.size(1);\n  s = s / 2;\n"), v, {}) == dim / 2);
  CHECK(eval_real_expr(arg_of("  float s = (float)x.size(1);\n  s /= 2;\n"), v, {}) == dim / 2);
  CHECK(eval_real_expr(arg_of("  float s = x.size(1);\n  s = x.size(0);\n  s = s / 2;\n"), v, {}) ==
        batch / 2);
  // The same variable rounded up for a grid: still cdiv.
  std::string cuda = R"(
__global__ void k(const float* x, float* y) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  float s = x.size(1);
  s = s / 256;
  int blocks = (int)ceilf(s);
  k<<<blocks, 256>>>(x.data_ptr<float>(), y.data_ptr<float>());
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches.at(0).grid == std::vector<std::string>{"cdiv(dim, 256)"});
}

namespace {

// The relu flag the MLP's first bias kernel gets when forward sets it to the Python `cond`.
std::string first_relu_flag(const ProblemSpec& p, const std::string& cond) {
  auto r = import_kernelbench(
      mlp_module("        flag = " + cond +
                 "\n        x = ext.bias_act(self.net[0](x), self.net[0].bias, flag)\n"
                 "        return ext.bias_act(self.net[2](x), self.net[2].bias, False)"),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  return checked_plan(r, p).launches.at(1).args.back().text;
}

// The MLP generation with `init` for its __init__'s layers, `header` (if given) for its __init__
// line and `top` (if given) before the class.
std::string mlp_with_init(const std::string& init, const std::string& header = "",
                          const std::string& top = "") {
  const std::string literal =
      "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
      "                                 nn.Linear(hidden, output_size))\n";
  std::string m = mlp_module(
      "        for i, lin in enumerate([self.net[0], self.net[2]]):\n"
      "            x = ext.bias_act(lin(x), lin.bias, i == 0)\n"
      "        return x");
  REQUIRE(m.find(literal) != std::string::npos);
  m.replace(m.find(literal), literal.size(), init);
  if (!header.empty()) {
    const std::string h = "def __init__(self, input_size, hidden, output_size):";
    m.replace(m.find(h), h.size(), header);
  }
  if (!top.empty()) m.insert(m.find("class ModelNew"), top);
  return m;
}

}  // namespace

TEST_CASE("import_kernelbench: == of sequences as Python: a list never equals a tuple") {
  ProblemSpec p = suite_mlp(true);
  auto taken = [&](const std::string& cond) { return first_relu_flag(p, cond); };
  CHECK(taken("[1, 2] == (1, 2)") == "0");
  CHECK(taken("list(x.shape) == (x.shape[0], x.shape[1])") == "0");
  CHECK(taken("x.shape[0:1] == (x.shape[0],)") == "1");
  CHECK(taken("x.shape[0:1] != [x.shape[0]]") == "1");
  CHECK(taken("tuple(x.shape[::-1][::-1]) == tuple(x.size())") == "1");
  CHECK(taken("len(x.shape[1::9223372036854775807]) == 1") == "1");
  // A sequence whose kind kernrl does not know is not compared.
  auto r = import_kernelbench(
      mlp_module("        flag = list(range(2)) == range(2)\n"
                 "        return ext.bias_act(self.net[0](x), self.net[0].bias, flag)"),
      p);
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: chained comparisons and zip, as Python reads them") {
  ProblemSpec p = suite_mlp(true);
  auto flag = [&](const std::string& cond) { return first_relu_flag(p, cond); };
  // `0 < 2 < 1` is `0 < 2 and 2 < 1` (False), not `(0 < 2) < 1` (True < 1: False) -- and
  // `3 > 2 > 1` is True, where `(3 > 2) > 1` would be False.
  CHECK(flag("0 < 2 < 1") == "0");
  CHECK(flag("3 > 2 > 1") == "1");
  CHECK(flag("1 <= len(x.shape) == 2 < 5") == "1");
  // zip pairs the i-th items, as many as the shortest has.
  check_mlp_plan(
      import_kernelbench(mlp_module("        lins = [self.net[0], self.net[2]]\n"
                                    "        for lin, relu in zip(lins, [True, False, True]):\n"
                                    "            x = ext.bias_act(lin(x), lin.bias, relu)\n"
                                    "        return x"),
                         p),
      p);
  auto strict = import_kernelbench(
      mlp_module("        for lin, relu in zip([self.net[0]], [True], strict=True):\n"
                 "            x = ext.bias_act(lin(x), lin.bias, relu)\n"
                 "        return x"),
      p);
  CHECK_FALSE(strict.converted);
}

TEST_CASE("import_kernelbench: a chained comparison that would call a layer twice is refused") {
  ProblemSpec p = suite_mlp(true);
  auto r = import_kernelbench(
      mlp_module("        if 0 < self.net[0](x).shape[1] < 1000:\n"
                 "            pass\n"
                 "        return ext.bias_act(self.net[2](x), self.net[2].bias, False)"),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("chained comparison") != std::string::npos, r.reason);
}

TEST_CASE("import_kernelbench: ModelNew may rename the reference's local names one to one") {
  ProblemSpec p = suite_mlp(true);
  p.torch =
      "import torch\nimport torch.nn as nn\n"
      "class Model(nn.Module):\n"
      "    def __init__(self, input_size, hidden, output_size):\n"
      "        super(Model, self).__init__()\n"
      "        layers = []\n"
      "        cur = input_size\n"
      "        for h in [hidden]:\n"
      "            layers.append(nn.Linear(cur, h))\n"
      "            layers.append(nn.ReLU())\n"
      "            cur = h\n"
      "        layers.append(nn.Linear(cur, output_size))\n"
      "        self.net = nn.Sequential(*layers)\n"
      "    def forward(self, x):\n"
      "        return self.net(x)\n";
  auto with_init = [](const std::string& init) { return mlp_with_init(init); };
  // The reference's statements with layers, cur and h renamed mods, c and k.
  check_mlp_plan(import_kernelbench(with_init("        mods = []\n"
                                              "        c = input_size\n"
                                              "        for k in [hidden]:\n"
                                              "            mods.append(nn.Linear(c, k))\n"
                                              "            mods.append(nn.ReLU())\n"
                                              "            c = k\n"
                                              "        mods.append(nn.Linear(c, output_size))\n"
                                              "        self.net = nn.Sequential(*mods)\n"),
                                    p),
                 p);
  // Two of the reference's names folded into one, or a name renamed differently in two places:
  // not the reference's statements.
  auto folded = import_kernelbench(with_init("        mods = []\n"
                                             "        mods = input_size\n"
                                             "        for k in [hidden]:\n"
                                             "            mods.append(nn.Linear(mods, k))\n"
                                             "            mods.append(nn.ReLU())\n"
                                             "            mods = k\n"
                                             "        mods.append(nn.Linear(mods, output_size))\n"
                                             "        self.net = nn.Sequential(*mods)\n"),
                                   p);
  CHECK_FALSE(folded.converted);
  bool why = folded.reason.find("otherwise than the reference") != std::string::npos ||
             folded.reason.find("does not build all") != std::string::npos;
  CHECK_MESSAGE(why, folded.reason);
  auto twice = import_kernelbench(with_init("        mods = []\n"
                                            "        c = input_size\n"
                                            "        for k in [hidden]:\n"
                                            "            mods.append(nn.Linear(c, k))\n"
                                            "            mods.append(nn.ReLU())\n"
                                            "            c = output_size\n"
                                            "        mods.append(nn.Linear(c, output_size))\n"
                                            "        self.net = nn.Sequential(*mods)\n"),
                                  p);
  CHECK_FALSE(twice.converted);
}

TEST_CASE("import_kernelbench: what renaming may not do: parameters, keywords, shadowed names") {
  ProblemSpec p = suite_mlp(true);
  // A reference that reassigns its parameters and names its keyword arguments.
  p.torch =
      "import torch\nimport torch.nn as nn\n"
      "class Model(nn.Module):\n"
      "    def __init__(self, input_size, hidden, output_size):\n"
      "        super(Model, self).__init__()\n"
      "        input_size = int(input_size)\n"
      "        output_size = int(output_size)\n"
      "        layers = []\n"
      "        for in_features, out_features in zip([input_size], [hidden]):\n"
      "            layers.append(nn.Linear(in_features=in_features, out_features=out_features))\n"
      "            layers.append(nn.ReLU())\n"
      "        layers.append(nn.Linear(hidden, output_size))\n"
      "        self.net = nn.Sequential(*layers)\n"
      "    def forward(self, x):\n"
      "        return self.net(x)\n";
  auto with_init = [&](const std::string& init, const std::string& header = "",
                       const std::string& top = "") {
    return import_kernelbench(mlp_with_init(init, header, top), p);
  };
  const std::string same =
      "        input_size = int(input_size)\n"
      "        output_size = int(output_size)\n"
      "        mods = []\n"
      "        for a, b in zip([input_size], [hidden]):\n"
      "            mods.append(nn.Linear(in_features=a, out_features=b))\n"
      "            mods.append(nn.ReLU())\n"
      "        mods.append(nn.Linear(hidden, output_size))\n"
      "        self.net = nn.Sequential(*mods)\n";
  check_mlp_plan(with_init(same), p);
  // Parameters swapped where the body reassigns them: not a renaming.
  auto swapped = with_init(
      "        output_size = int(output_size)\n"
      "        input_size = int(input_size)\n"
      "        mods = []\n"
      "        for a, b in zip([output_size], [hidden]):\n"
      "            mods.append(nn.Linear(in_features=a, out_features=b))\n"
      "            mods.append(nn.ReLU())\n"
      "        mods.append(nn.Linear(hidden, input_size))\n"
      "        self.net = nn.Sequential(*mods)\n");
  CHECK_FALSE(swapped.converted);
  // Loop variables swapped together with the keyword names: the keywords are not renamed.
  auto keywords = with_init(
      "        input_size = int(input_size)\n"
      "        output_size = int(output_size)\n"
      "        mods = []\n"
      "        for out_features, in_features in zip([input_size], [hidden]):\n"
      "            mods.append(nn.Linear(out_features=out_features, in_features=in_features))\n"
      "            mods.append(nn.ReLU())\n"
      "        mods.append(nn.Linear(hidden, output_size))\n"
      "        self.net = nn.Sequential(*mods)\n");
  CHECK_FALSE(keywords.converted);
  // The parameters in another order: KernelBench binds them by position.
  check_mlp_plan(with_init(same, "def __init__(self, input_size: int, hidden: int, output_size,):"),
                 p);  // annotations and a trailing comma change nothing
  auto header = with_init(same, "def __init__(self, output_size, hidden, input_size):");
  CHECK_FALSE(header.converted);
  CHECK_MESSAGE(header.reason.find("other parameters") != std::string::npos, header.reason);
  // A top-level `zip` of the generation's own.
  auto shadow = with_init(same, "", "def zip(a, b):\n    return [(y, x) for x, y in []]\n\n");
  CHECK_FALSE(shadow.converted);
  CHECK_MESSAGE(shadow.reason.find("binds `zip`") != std::string::npos, shadow.reason);
}

TEST_CASE("import_kernelbench: names __init__ binds itself shadow its arguments and constants") {
  ProblemSpec p = suite_linear();
  const char* cuda = R"(
__global__ void lin(const float* x, const float* w, const float* b, float* y, float d, int M, int K, int N) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b, double d) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                          out.data_ptr<float>(), (float)d, x.size(0), x.size(1), w.size(0));
  return out;
}
)";
  auto gen = [&](const std::string& body) {
    return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
           "load_inline\n\nsrc = \"\"\"\n#include <torch/extension.h>\n" +
           std::string(cuda) +
           "\"\"\"\n\next = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
           "functions=[\"run\"])\n\nclass ModelNew(nn.Module):\n    def __init__(self, "
           "input_size, output_size, divisor):\n        super().__init__()\n        self.linear "
           "= nn.Linear(input_size, output_size)\n" +
           body +
           "\n    def forward(self, x):\n        return ext.run(x, self.linear.weight, "
           "self.linear.bias, self.divisor)\n";
  };
  // Bound once at the top of __init__: followed.
  auto r = import_kernelbench(gen("        d = divisor\n        self.divisor = d\n"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches.back()).at(4) == "10.0");
  // An argument rebound (its value is no longer the one KernelBench passes), a name bound twice
  // or in a block, an augmented assignment: refused, naming it.
  for (const char* body :
       {"        divisor = divisor * 2\n        self.divisor = divisor\n",
        "        d = divisor\n        d = 2 * d\n        self.divisor = d\n",
        "        d = divisor\n        d += 1\n        self.divisor = d\n",
        "        if divisor > 1:\n            d = 1.0\n        self.divisor = d\n",
        "        for d in (1.0, 2.0):\n            pass\n        self.divisor = d\n"}) {
    CAPTURE(body);
    auto bad = import_kernelbench(gen(body), p);
    CHECK_FALSE(bad.converted);
    CHECK(bad.reason.find("binds itself") != std::string::npos);
  }
}

TEST_CASE("import_kernelbench: a switch on a size, the same case at every set or not") {
  ProblemSpec p = problem("L1_26");  // x: [batch_size, dim]; dim 16384, 256, 1001
  auto gen = [&](const std::string& sw) {
    std::string cuda = R"(
template <int V> __global__ void k(const float* x, float* y, int n) {}
__global__ void g(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  int rows = x.size(0);
)" + sw + R"(
  return y;
}
)";
    return module(cuda, "f", "x", "ext.f(x)");
  };
  // rows differs between sets but every set takes the default: decided.
  auto r = import_kernelbench(gen(R"(  switch (rows) {
    case 1: k<1><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); break;
    case 2:
    case 3: k<3><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); break;
    default: g<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  })"),
                              p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel == "g");
  // dim is 256 at one test set only: each case's launches run where its value matches.
  r = import_kernelbench(gen(R"(  int d = x.size(1);
  switch (d) {
    case 256: k<256><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); break;
    case 16384: { int t = 4; k<4><<<t, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); break; }
    default: g<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); break;
  })"),
                         p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 3);
  std::vector<Vars> sets = p.tests;
  sets.insert(sets.begin(), p.bench);
  for (const Vars& s : sets) {
    Vars v = plan_vars(p, s, 132);
    int64_t runs[3];
    for (int l = 0; l < 3; ++l) runs[l] = eval_expr(plan.launches[l].repeat_count, v);
    CHECK(runs[0] == (s.at("dim") == 256 ? 1 : 0));
    CHECK(runs[1] == (s.at("dim") == 16384 ? 1 : 0));
    CHECK(runs[2] == (s.at("dim") != 256 && s.at("dim") != 16384 ? 1 : 0));
  }
  // Falling through into another case where the sets differ: refused, saying so.
  r = import_kernelbench(gen(R"(  int d = x.size(1);
  switch (d) {
    case 256: k<256><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    default: g<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  })"),
                         p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("falls through") != std::string::npos);
}

TEST_CASE("import_kernelbench: ModelNew's own methods and the module's functions run as forward") {
  ProblemSpec p = problem("L1_26");
  std::string py = module(kGelu, "gelu", "x", "self._run(x)") +
                   "\n    def _run(self, x, scale=1):\n        if self._ok(x) and scale == 1:\n"
                   "            return helper(x)\n        raise RuntimeError('no')\n"
                   "\n    @staticmethod\n    def _ok(x):\n        return x.is_cuda and "
                   "x.dtype == torch.float32\n\n\ndef helper(t):\n    return ext.gelu(t)\n";
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches.at(0).kernel == "gelu_kernel");
  // A decorated function other than a staticmethod, and recursion, are refused by name.
  std::string deco = module(kGelu, "gelu", "x", "self._run(x)") +
                     "\n    @property\n    def _run(self, x):\n        return ext.gelu(x)\n";
  r = import_kernelbench(deco, p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("decorated") != std::string::npos);
  std::string rec = module(kGelu, "gelu", "x", "self._run(x)") +
                    "\n    def _run(self, x):\n        return self._run(x)\n";
  r = import_kernelbench(rec, p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("recursion") != std::string::npos);
}

TEST_CASE(
    "import_kernelbench: ConvTranspose layers as torch steps, their settings as torch keeps them") {
  ProblemSpec p = test::suite_conv_transpose();
  const char* cuda = R"(
__global__ void tanh_k(float* y, int n, int s) {}
torch::Tensor act(torch::Tensor y, int64_t s) {
  int n = y.numel();
  tanh_k<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), n, (int)s);
  return y;
}
)";
  std::string py =
      module(cuda, "act", "x",
             "ext.act(self.conv_transpose(x), self.conv_transpose.stride[0] if "
             "isinstance(self.conv_transpose.stride, tuple) and self.conv_transpose.padding_mode "
             "== 'zeros' else 0)",
             "in_channels, out_channels: self.conv_transpose = nn.ConvTranspose2d(in_channels, "
             "out_channels, 4, stride=2, padding=1, output_padding=1)");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);  // the step's result shape fits `out` at every set
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].torch == "conv_transpose2d");
  // Lists are kept as their items' text.
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "conv_transpose.weight",
                                                                "conv_transpose.bias", "2, 2",
                                                                "1, 1", "1, 1", "1", "1, 1"});
  CHECK(arg_texts(plan.launches[1]).back() == "2");
}

TEST_CASE("import_kernelbench: unpacked module constants, pooling settings, masks of sizes") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; input_size 512, 33, 64
  const char* cuda = R"(
__global__ void k(const float* x, float* y, int a, int b, int c, int d) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, int64_t act, int64_t ks, int64_t st) {
  auto y = torch::empty({x.size(0), w.size(0)}, x.options());
  const long long n = x.size(1);
  k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)act, (int)((n + 3) & ~3LL),
               (int)(n & 7), (int)(ks * 10 + st));
  return y;
}
)";
  const std::string init =
      "input_size, output_size, divisor: self.linear = nn.Linear(input_size, output_size)\n"
      "        self.pool = nn.MaxPool2d(3)";
  std::string py = module(cuda, "run", "x",
                          "ext.run(x, self.linear.weight, ACT_B, self.pool.kernel_size, "
                          "self.pool.stride)",
                          init);
  py.insert(py.find("class ModelNew"), "ACT_A, ACT_B, ACT_C = 0, 1, 2\n\n");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  auto args = arg_texts(plan.launches[0]);
  REQUIRE(args.size() == 6);
  CHECK(args[2] == "1");   // ACT_B
  CHECK(args[5] == "33");  // kernel_size 3, stride None: the kernel size
  for (int64_t n : {512, 33, 64}) {
    Vars v = {{"input_size", n}, {"batch_size", 1}, {"output_size", 1}};
    CAPTURE(n);
    CHECK(eval_expr(args[3], v) == ((n + 3) & ~int64_t{3}));
    CHECK(eval_expr(args[4], v) == (n & 7));
  }
  // Names unpacked from something kernrl cannot read are not known (not their earlier value).
  std::string rebound = py;
  rebound.insert(rebound.find("class ModelNew"), "ACT_B, ACT_C = make_acts()\n\n");
  r = import_kernelbench(rebound, p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("ACT_B") != std::string::npos, r.reason);
}

TEST_CASE("import_kernelbench: adaptive pooling's output size, as its constructor was given it") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]
  const char* cuda = R"(
__global__ void k(const float* x, float* y, int a) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, int64_t a) {
  auto y = torch::empty({x.size(0), w.size(0)}, x.options());
  k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)a);
  return y;
}
)";
  auto run = [&](const std::string& pool, const std::string& value) {
    return import_kernelbench(
        module(cuda, "run", "x", "ext.run(x, self.linear.weight, " + value + ")",
               "input_size, output_size, divisor: self.linear = nn.Linear(input_size, "
               "output_size)\n        self.pool = " +
                   pool),
        p);
  };
  // L3_20's test: a tuple as given, an int as given.
  const std::string square =
      "int(tuple(self.pool.output_size if isinstance(self.pool.output_size, (tuple, list)) "
      "else (self.pool.output_size, self.pool.output_size)) == (1, 1))";
  for (const auto& [pool, value, want] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"nn.AdaptiveAvgPool2d((1, 1))", square, "1"},
           {"nn.AdaptiveAvgPool2d(1)", square, "1"},
           {"nn.AdaptiveAvgPool2d(output_size=(1, 2))", square, "0"},
           {"nn.AdaptiveAvgPool2d((1, 1))", "int(isinstance(self.pool.output_size, tuple))", "1"},
           {"nn.AdaptiveAvgPool2d(7)", "int(isinstance(self.pool.output_size, tuple))", "0"},
           {"nn.AdaptiveAvgPool1d(5)", "self.pool.output_size", "5"},
           {"nn.AdaptiveAvgPool3d([2, 3, 4])",
            "self.pool.output_size[2] + len(self.pool.output_size)", "7"},
           {"nn.AdaptiveMaxPool2d((3, 3))", "int(self.pool.return_indices) + 10", "10"},
           {"nn.AdaptiveMaxPool1d(3, True)", "int(self.pool.return_indices)", "1"}}) {
    CAPTURE(pool);
    CAPTURE(value);
    auto r = run(pool, value);
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(arg_texts(checked_plan(r, p).launches.at(0)).back() == want);
  }
  // A setting adaptive pooling does not have, or of a pooling whose constructor kernrl does not
  // read: not followed.
  CHECK_FALSE(run("nn.AdaptiveAvgPool2d((1, 1))", "self.pool.return_indices").converted);
  CHECK_FALSE(run("nn.AdaptiveAvgPool2d((1, 1))", "self.pool.kernel_size").converted);
  CHECK_FALSE(run("make_pool()", "self.pool.output_size").converted);
  // Unpacked arguments: which parameter gets what is not read (not the defaults).
  for (const char* pool : {"nn.AdaptiveMaxPool1d(*[3, True])", "nn.AdaptiveMaxPool1d(3, *[True])",
                           "nn.AdaptiveMaxPool1d(3, **{'return_indices': True})"}) {
    auto r = run(pool, "int(self.pool.return_indices)");
    CHECK_FALSE_MESSAGE(r.converted, pool);
  }
}

TEST_CASE("import_kernelbench: __init__ values computed from its arguments") {
  ProblemSpec p = suite_linear();  // Model(input_size, output_size, divisor), divisor 10.0
  const char* cuda = R"(
__global__ void lin(const float* x, const float* w, const float* b, float* y, float d, int k, int M, int K, int N) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b, double d, int64_t k) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  std::vector<int64_t> shape(out.sizes().begin(), out.sizes().end());
  shape.back() = w.size(0);
  lin<<<std::min<int64_t>(x.size(0), INT32_MAX), 128>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                          out.data_ptr<float>(), (float)d, (int)k, x.size(0), x.size(1), shape.back());
  return out;
}
)";
  std::string py =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
      "\nsrc = \"\"\"\n#include <torch/extension.h>\n" +
      std::string(cuda) +
      "\"\"\"\n\next = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
      "functions=[\"run\"])\n\nclass ModelNew(nn.Module):\n    def __init__(self, input_size, "
      "output_size, divisor, scale=None):\n        super().__init__()\n        self.linear = "
      "nn.Linear(input_size, output_size)\n        self.d = divisor * 2 if scale is None else "
      "scale\n        self.k = (3 - 1) // 2 + int(bool(divisor))\n\n    def forward(self, x):\n"
      "        return ext.run(x, self.linear.weight, self.linear.bias, self.d, self.k)\n";
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  std::vector<std::string> args = arg_texts(checked_plan(r, p).launches.back());
  CHECK(args.at(4) == "20.0");
  CHECK(args.at(5) == "2");
  CHECK(args.at(8) == "output_size");
  CHECK(checked_plan(r, p).launches.back().grid ==
        std::vector<std::string>{"min(batch_size, 2147483647)"});
}

TEST_CASE("import_kernelbench: explicit specializations of device templates are device code") {
  ProblemSpec p = problem("L1_26");
  const char* cuda = R"(
template <typename T>
__device__ __forceinline__ T act(T v);
template <>
__device__ __forceinline__ float act<float>(float v) { return tanhf(v); }
template <>
__device__ __forceinline__ double act<double>(double v) { return tanh(v); }
template <typename T>
__global__ void k(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = act<T>(x[i]);
}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  k<float><<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.kernel_file.find("float act<float>(float v) { return tanhf(v); }") != std::string::npos);
  CHECK(r.kernel_file.find("double act<double>(double v)") != std::string::npos);
}

TEST_CASE("import_kernelbench: BatchNorm bookkeeping in forward: statistics given as copies") {
  ProblemSpec p = parse_problem_yaml(R"(id: L1_33_BatchNorm
level: 1
name: BatchNorm
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 16, features: 64, dim: 256}
  test:
    - {batch_size: 3, features: 5, dim: 7}
    - {batch_size: 2, features: 8, dim: 9}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, features, dim], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: bn.weight, dtype: float32, shape: [features], init: custom}
  - {name: bn.bias, dtype: float32, shape: [features], init: custom}
  - {name: bn.running_mean, dtype: float32, shape: [features], init: custom}
  - {name: bn.running_var, dtype: float32, shape: [features], init: custom}
  - {name: bn.num_batches_tracked, dtype: int64, shape: [], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, features, dim]}
modules: {"bn": ["BatchNorm1d"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, num_features):
          super().__init__()
          self.bn = nn.BatchNorm1d(num_features=num_features)
      def forward(self, x):
          return self.bn(x)
  batch_size = 16
  features = 64
  dim = 256
  def get_inputs():
      return [torch.rand(batch_size, features, dim)]
  def get_init_inputs():
      return [features]
)",
                                     "suite.yaml");
  const char* cuda = R"(
__global__ void bn_k(const float* x, float* y, const float* w, const float* b, float* rm, float* rv,
                     int n, int c, int l, float m, float cnt) {}
torch::Tensor bn(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor rm,
                 torch::Tensor rv, double m) {
  auto y = torch::empty_like(x);
  bn_k<<<x.size(1), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), w.data_ptr<float>(),
                           b.data_ptr<float>(), rm.data_ptr<float>(), rv.data_ptr<float>(),
                           x.size(0), x.size(1), x.size(2), (float)m, (float)(x.size(0) * x.size(2)));
  return y;
}
)";
  auto gen = [&](const std::string& fwd) {
    return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
           "load_inline\n\nsrc = \"\"\"\n#include <torch/extension.h>\n" +
           std::string(cuda) +
           "\"\"\"\n\next = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
           "functions=[\"bn\"])\n\nclass ModelNew(nn.Module):\n    def __init__(self, "
           "num_features):\n        super().__init__()\n        self.bn = "
           "nn.BatchNorm1d(num_features=num_features)\n\n    def forward(self, x):\n" +
           fwd;
  };
  auto r = import_kernelbench(
      gen("        bn = self.bn\n        if bn.training and bn.track_running_stats:\n"
          "            bn.num_batches_tracked.add_(1)\n"
          "        return ext.bn(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, "
          "bn.momentum)\n"),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 3);
  CHECK(plan.launches[0].torch == "reshape");  // copies of the statistics, made first
  CHECK(arg_texts(plan.launches[0]).at(0) == "bn.running_mean");
  CHECK(arg_texts(plan.launches[1]).at(0) == "bn.running_var");
  std::vector<std::string> args = arg_texts(plan.launches[2]);
  CHECK(args.at(4) == plan.launches[0].out);
  CHECK(args.at(5) == plan.launches[1].out);
  CHECK(args.at(9) == "0.1");
  CHECK(args.at(10) == "1.0 * (batch_size * dim)");
  // The same statistic to two calls, or one read again after its update: refused.
  r = import_kernelbench(
      gen("        y = ext.bn(x, self.bn.weight, self.bn.bias, self.bn.running_mean, "
          "self.bn.running_var, 0.1)\n        return ext.bn(y, self.bn.weight, self.bn.bias, "
          "self.bn.running_mean, self.bn.running_var, 0.1)\n"),
      p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("twice") != std::string::npos);
  r = import_kernelbench(
      gen("        self.bn.running_mean.mul_(0.9)\n        return ext.bn(x, self.bn.weight, "
          "self.bn.bias, self.bn.running_mean, self.bn.running_var, 0.1)\n"),
      p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("after updating it in place") != std::string::npos);
}

TEST_CASE("import_kernelbench: an early exit under a size-dependent condition is not a check") {
  ProblemSpec p = problem("L1_26");
  std::string cuda = R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  if (x.size(1) > 1000) return y;
  k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
)";
  // Followed as a branch, not skipped as a check: the kernel runs only where the function does
  // not return first (dim 256), as in the module (elsewhere y is returned as allocated).
  auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  for (const auto& sizes : std::vector<Vars>{p.bench, p.tests[0], p.tests[1]})
    CHECK(eval_expr(plan.launches[0].repeat_count, plan_vars(p, sizes, 132)) ==
          (sizes.at("dim") > 1000 ? 0 : 1));
  // An early exit from a nested block, after which the function goes on: not followed.
  std::string nested = cuda;
  nested.replace(nested.find("if (x.size(1) > 1000) return y;"), 31,
                 "{ if (x.size(1) > 1000) return y; }");
  r = import_kernelbench(module(nested, "f", "x", "ext.f(x)"), p);
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("is not the same at every size set") != std::string::npos);
  // Absurdly deep expressions are refused, never a crash.
  std::string deep = "(" + std::string(3000, '(') + "1" + std::string(3000, ')') + ")";
  r = import_kernelbench(module(kGelu, "gelu", "x", "ext.gelu(x) if " + deep + " else x"), p);
  CHECK_FALSE(r.converted);
  std::string minus(5000, '-');
  r = import_kernelbench(module(kGelu, "gelu", "x", "ext.gelu(x) if " + minus + "1 else x"), p);
  CHECK_FALSE(r.converted);
}

TEST_CASE(
    "import_kernelbench: attributes __init__ changes other than by one assignment are refused") {
  ProblemSpec p = suite_linear();
  const char* cuda = R"(
__global__ void lin(const float* x, float* y, int e, int M) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, int64_t e) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), out.data_ptr<float>(), (int)e, x.size(0));
  return out;
}
)";
  auto gen = [&](const std::string& body, const std::string& use, const std::string& more = "") {
    return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
           "load_inline\n\nsrc = \"\"\"\n#include <torch/extension.h>\n" +
           std::string(cuda) +
           "\"\"\"\n\next = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
           "functions=[\"run\"])\n\nclass ModelNew(nn.Module):\n    def __init__(self, "
           "input_size, output_size, divisor):\n        super().__init__()\n" +
           "        self.linear = nn.Linear(input_size, output_size)\n" + body +
           "\n    def forward(self, x):\n        return ext.run(x, self.linear.weight, " + use +
           ")\n" + more;
  };
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"        self.sizes = []\n        for i in range(3):\n            self.sizes.append(i)\n",
       "len(self.sizes)"},
      {"        self.e = 2\n        setattr(self, 'e', 9)\n", "self.e"},
      {"        self.e = 2\n        self._setup()\n", "self.e"},
      // (A condition true at some size sets only: not decided.)
      {"        self.e = 2\n        if input_size > 40:\n            self.e: int = 9\n", "self.e"},
      {"        a = [1, 2]\n        b = a\n        b[0] = 100\n        self.e = a\n", "self.e[0]"},
  };
  for (const auto& [body, use] : refused) {
    CAPTURE(body);
    auto r = import_kernelbench(gen(body, use, "\n    def _setup(self):\n        self.e = 9\n"), p);
    CHECK_FALSE(r.converted);
  }
  auto r = import_kernelbench(gen("        self.e = 2\n", "self.e"), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches.back()).at(2) == "2");
}

TEST_CASE("import_kernelbench: a host function defined more than once is not chosen between") {
  ProblemSpec p = problem("L1_26");
  for (const char* defs :
       {"template <typename T> void launch(const T* x, T* y, int n) { ka<<<1, 32>>>(x, y, n); }\n"
        "template <> void launch<float>(const float* x, float* y, int n) { kb<<<2, 32>>>(x, y, "
        "n); }\n",
        "void launch(const float* x, float* y, int n) { ka<<<1, 32>>>(x, y, n); }\n"
        "void launch(const float* x, float* y, float n) { kb<<<2, 32>>>(x, y, (int)n); }\n"}) {
    std::string cuda = std::string(R"(
__global__ void ka(const float* x, float* y, int n) {}
__global__ void kb(const float* x, float* y, int n) {}
)") + defs + R"(
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  launch<float>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}
)";
    CAPTURE(defs);
    auto r = import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
    CHECK_FALSE(r.converted);
    CHECK(r.reason.find("defines more than once") != std::string::npos);
  }
}

TEST_CASE("import_kernelbench: a null pointer argument (an optional tensor) becomes null") {
  ProblemSpec p = suite_linear();
  const char* cuda = R"(
__global__ void lin(const float* x, const float* w, const float* b, float* y, int M) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, torch::Tensor b, bool use_bias) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  const float* bias_ptr = nullptr;
  if (use_bias) bias_ptr = b.data_ptr<float>();
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), w.data_ptr<float>(), bias_ptr,
                          out.data_ptr<float>(), x.size(0));
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), w.data_ptr<float>(), NULL,
                          out.data_ptr<float>(), x.size(0));
  return out;
}
)";
  std::string py =
      module(cuda, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias, False)",
             "input_size, output_size: self.linear = nn.Linear(input_size, output_size)");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  for (const auto& l : plan.launches) {
    CHECK(arg_texts(l) ==
          std::vector<std::string>{"x", "linear.weight", "null", "out", "batch_size"});
    CHECK(l.args[2].kind == ArgKind::None);
  }
}

TEST_CASE("import_kernelbench: c10::optional tensors, and && / || evaluated as C++ does") {
  ProblemSpec p = suite_linear();
  const char* cuda = R"(
__global__ void lin(const float* x, const float* w, const float* b, float* y, int M) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> b) {
  auto out = torch::empty({x.size(0), w.size(0)}, x.options());
  const float* bias_ptr = nullptr;
  if (b.has_value() && b.value().defined()) bias_ptr = b.value().data_ptr<float>();
  const float* w_ptr = (!b.has_value() || b->defined()) ? w.data_ptr<float>() : nullptr;
  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), w_ptr, bias_ptr, out.data_ptr<float>(),
                          x.size(0));
  return out;
}
)";
  const char* init = "input_size, output_size: self.linear = nn.Linear(input_size, output_size)";
  SUBCASE("None: has_value() is false, and the right of && is not evaluated") {
    auto r = import_kernelbench(
        module(cuda, "run", "x", "ext.run(x, self.linear.weight, None)", init), p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 1);
    CHECK(arg_texts(plan.launches[0]) ==
          std::vector<std::string>{"x", "linear.weight", "null", "out", "batch_size"});
  }
  SUBCASE("a tensor: has_value() and value()") {
    auto r = import_kernelbench(
        module(cuda, "run", "x", "ext.run(x, self.linear.weight, self.linear.bias)", init), p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 1);
    CHECK(arg_texts(plan.launches[0]) ==
          std::vector<std::string>{"x", "linear.weight", "linear.bias", "out", "batch_size"});
  }
  SUBCASE("value() of None throws in PyTorch: refused") {
    std::string bad = cuda;
    bad.replace(bad.find("b.has_value() && b.value()"), 26, "b.value().defined() && b.value()");
    auto r = import_kernelbench(
        module(bad, "run", "x", "ext.run(x, self.linear.weight, None)", init), p);
    CHECK_FALSE(r.converted);
    CAPTURE(r.reason);
    CHECK(r.reason.find("empty optional") != std::string::npos);
  }
}

TEST_CASE("import_kernelbench: conditions that launch, and operands that are skipped") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; input_size 512, 33, 64
  const std::string init =
      "input_size, output_size, divisor: self.linear = nn.Linear(input_size, output_size)";
  auto run = [&](const std::string& body) {
    std::string cuda = R"(
__global__ void fast_k(const float* x, float* y, int n) {}
__global__ void slow_k(const float* x, float* y, int n) {}
template <int A, int B> static bool okt(int64_t n) { return n > A + B; }
static int launch_fast(torch::Tensor x, torch::Tensor y, int n) {
  if (x.size(1) % 4 != 0) return 0;
  fast_k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return 1;
}
torch::Tensor f(torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> b) {
  auto y = torch::empty({x.size(0), w.size(0)}, x.options());
  int n = y.numel();
)" + body + R"(
  return y;
}
)";
    return import_kernelbench(module(cuda, "f", "x", "ext.f(x, self.linear.weight, None)", init),
                              p);
  };
  SUBCASE("a condition calling a launching helper runs it once") {
    auto r =
        run("  if (launch_fast(x, y, n) == 0) slow_k<<<1, 32>>>(x.data_ptr<float>(), "
            "y.data_ptr<float>(), n);");
    REQUIRE_MESSAGE(r.converted, r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CHECK(plan.launches[0].kernel == "fast_k");
    CHECK(plan.launches[1].kernel == "slow_k");
  }
  SUBCASE("a skipped operand with template arguments") {
    auto r =
        run("  const float* p = (b.has_value() && okt<1, 4000>(n)) ? x.data_ptr<float>() : "
            "nullptr;\n  fast_k<<<1, 32>>>(p, y.data_ptr<float>(), n);");
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(arg_texts(checked_plan(r, p).launches[0])[0] == "null");
  }
  SUBCASE("an operand that launches where the other side does not decide: refused") {
    auto r =
        run("  bool ok = (x.size(1) % 4 == 0) && launch_fast(x, y, n);\n"
            "  if (!ok) slow_k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);");
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find("runs the right side of &&") != std::string::npos, r.reason);
  }
  SUBCASE("a < b ? a : b on a value of the GPU is min(a, b)") {
    auto r =
        run("  const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;\n"
            "  long long b = (n + 255) / 256;\n  const long long cap = (long long)sms * 4;\n"
            "  fast_k<<<(int)(b < cap ? b : cap), 256>>>(x.data_ptr<float>(), "
            "y.data_ptr<float>(), n);\n"
            "  slow_k<<<(int)((cap > b) ? cap : b), 256>>>(x.data_ptr<float>(), "
            "y.data_ptr<float>(), n);");
    REQUIRE_MESSAGE(r.converted, r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CAPTURE(plan.launches[0].grid[0]);
    CAPTURE(plan.launches[1].grid[0]);
    for (int64_t sms : {1, 132}) {
      Vars v = {{"batch_size", 7}, {"input_size", 64}, {"output_size", 40}, {"num_sms", sms}};
      const int64_t b = (7 * 40 + 255) / 256;
      CHECK(eval_expr(plan.launches[0].grid[0], v) == std::min<int64_t>(b, sms * 4));
      CHECK(eval_expr(plan.launches[1].grid[0], v) == std::max<int64_t>(b, sms * 4));
    }
  }
  SUBCASE("has_value() of a plain tensor does not compile: refused") {
    auto r =
        run("  const float* p = w.has_value() ? w.data_ptr<float>() : nullptr;\n"
            "  fast_k<<<1, 32>>>(p, y.data_ptr<float>(), n);");
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find("has_value") != std::string::npos, r.reason);
  }
  SUBCASE("a view of another dtype: refused") {
    auto r =
        run("  auto v = x.view(torch::kFloat64);\n"
            "  fast_k<<<1, 32>>>((const float*)v.data_ptr(), y.data_ptr<float>(), n);");
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find("as another dtype") != std::string::npos, r.reason);
  }
}

TEST_CASE("import_kernelbench: a module-level name bound more than once is not known") {
  ProblemSpec p = suite_linear();
  const char* cuda = R"(
__global__ void k(const float* x, float* y, int a) {}
torch::Tensor run(torch::Tensor x, torch::Tensor w, int64_t a) {
  auto y = torch::empty({x.size(0), w.size(0)}, x.options());
  k<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), (int)a);
  return y;
}
)";
  const std::string init =
      "input_size, output_size, divisor: self.linear = nn.Linear(input_size, output_size)";
  std::string py = module(cuda, "run", "x", "ext.run(x, self.linear.weight, KS)", init);
  py.insert(py.find("class ModelNew"), "KS = 3\n\n");
  auto r = import_kernelbench(py, p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches[0])[2] == "3");
  for (const char* again :
       {"KS = 5", "KS += 4", "[KS, ST] = 5, 2", "(KS, ST) = 5, 2", "KS, *R = 5, 2", "KS: int = 5",
        "KS = ST = 9", "if True:\n    KS = 5", "def g():\n    global KS\n    KS = 5"}) {
    std::string bad = py;
    bad.insert(bad.find("class ModelNew"), std::string(again) + "\n\n");
    CAPTURE(again);
    r = import_kernelbench(bad, p);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find("KS") != std::string::npos, r.reason);
  }
}

TEST_CASE("import_kernelbench: basic slices of a tensor in forward are narrow views") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; input_size 512, 33, 64
  const std::string init = kLinearInit;
  auto import_y = [&](const std::string& y) {
    return import_kernelbench(
        suite_module("        y = " + y + "\n        return ext.epilogue(self.linear(y), 1.0)",
                     init),
        p);
  };
  auto r = import_y("x[:, :]");  // the whole tensor: no step
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[0].torch == "linear");
  // Slices with bounds: one narrow each, within the dimension.
  r = import_y("x[0:]");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() >= 2);
  CHECK(plan.launches[0].torch == "narrow");
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "0", "0", "batch_size"});
  r = import_y("x[:, 0:x.size(1)]");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  CHECK(plan.launches[0].torch == "narrow");
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "1", "0", "input_size"});
  // A slice that changes the shape is followed: the output no longer matches the problem's.
  r = import_y("x[1:]");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("elements") != std::string::npos, r.reason);
  // `...` stands for the dimensions the other parts leave.
  r = import_y("x[..., 0:x.size(1)]");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "1", "0", "input_size"});
  // What PyTorch would clamp, a step, advanced indexing (None, a list, a bool), two `...`:
  // refused, saying why.
  for (const auto& [y, why] :
       std::vector<std::pair<std::string, std::string>>{{"x[:, :40]", "beyond the dimension"},
                                                        {"x[2:1]", "is empty"},
                                                        {"x[:, ::-1]", "a step"},
                                                        {"x[::2]", "a step"},
                                                        {"x[None]", "Tensor.__getitem__"},
                                                        {"x[[0, 1]]", "Tensor.__getitem__"},
                                                        {"x[True]", "Tensor.__getitem__"},
                                                        {"x[..., ...]", "Tensor.__getitem__"},
                                                        {"x[:, :, :]", "more dimensions"},
                                                        {"x[..., :, :, :]", "more dimensions"}}) {
    r = import_y(y);
    CHECK_FALSE_MESSAGE(r.converted, y);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, y, ": ", r.reason);
  }
  // On kernrl's own problems the kernels do all of the work.
  r = import_kernelbench(suite_module("        return ext.epilogue(self.linear(x[1:]), 1.0)", init),
                         problem("L2_86_Matmul_Divide_GELU"));
  CHECK_FALSE(r.converted);
  CHECK(r.category == "torch_op_in_forward");
}

TEST_CASE("import_kernelbench: an integer index in forward is a select view") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; batch_size 128, 3, 7
  const std::string init = kLinearInit;
  // xx: [batch_size, 2, input_size]; xx[:, i] is strided (not contiguous): a `select` step copies
  // it where the linear layer reads it.
  auto import_y = [&](const std::string& y) {
    return import_kernelbench(suite_module("        xx = torch.stack([x, x], 1)\n        y = " + y +
                                               "\n        return ext.epilogue(self.linear(y), 1.0)",
                                           init),
                              p);
  };
  auto select_of = [](const LaunchPlan& plan) -> const LaunchSpec* {
    for (const auto& l : plan.launches)
      if (l.torch == "select") return &l;
    return nullptr;
  };
  for (const auto& [y, index] : std::vector<std::pair<std::string, std::string>>{
           {"xx[:, 1]", "1"},
           {"xx[:, -1]", "1"},  // counted from the end, as PyTorch does
           {"xx[..., 0, :]", "0"},
           {"xx.select(1, 1)", "1"},
           {"torch.select(xx, -2, 0)", "0"},
           {"xx[:, x.shape[0] % 2]", "batch_size % 2"}}) {  // 0, 1, 1: an index of the sizes
    auto r = import_y(y);
    REQUIRE_MESSAGE(r.converted, y, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    const LaunchSpec* sel = select_of(plan);
    REQUIRE_MESSAGE(sel, y);
    CHECK_MESSAGE(arg_texts(*sel).at(1) == "1", y);
    CHECK_MESSAGE(arg_texts(*sel).at(2) == index, y);
    bool found = false;
    for (const auto& s : plan.scratch)
      if (s.name == sel->out) {
        found = true;
        CHECK(s.shape == std::vector<std::string>{"batch_size", "input_size"});
      }
    CHECK(found);
    // The linear step reads the select's copy.
    CHECK(plan.launches[plan.launches.size() - 2].torch == "linear");
    CHECK(arg_texts(plan.launches[plan.launches.size() - 2]).at(0) == sel->out);
  }
  // Refused: an index kernrl does not know at every size set, one out of range at some size set
  // (PyTorch raises), one negative at some size sets only, a float, a 0-dimensional result.
  for (const auto& [y, why] : std::vector<std::pair<std::string, std::string>>{
           {"xx[:, 2]", "out of range for dimension 1 of size 2"},
           {"xx[:, -3]", "out of range"},
           {"xx[:, :, 40]", "out of range for dimension 2 of size 33"},
           {"xx[:, 0, x.shape[1] - 40]", "negative at some size sets only"},
           {"xx[:, len(self.missing)]", "missing"},
           {"xx[:, 1.0]", "Tensor.__getitem__"},
           {"x[0][0]", "0-dimensional"}}) {
    auto r = import_y(y);
    CHECK_FALSE_MESSAGE(r.converted, y);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, y, ": ", r.reason);
  }
  CHECK(import_y("xx[:, 2]").category == "mismatch");
  // On kernrl's own problems the kernels do all of the work.
  auto r =
      import_kernelbench(suite_module("        return ext.epilogue(self.linear(x[0]), 1.0)", init),
                         problem("L2_86_Matmul_Divide_GELU"));
  CHECK_FALSE(r.converted);
  CHECK(r.category == "torch_op_in_forward");
}

TEST_CASE("import_kernelbench: a contiguous select given to the extension points into its tensor") {
  // As a contiguous narrow: x[i] of a buffer is its memory from row i (PyTorch's data pointer);
  // a select that is not contiguous (x[:, i]) is refused as any view is.
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]
  const std::string cuda = R"(
__global__ void k(const float* row, const float* y, float* out, int n) {}
torch::Tensor f(torch::Tensor row, torch::Tensor y) {
  row = row.contiguous();
  auto out = torch::empty_like(y);
  k<<<1, 256>>>(row.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), row.numel());
  return out;
}
)";
  auto run = [&](const std::string& forward) {
    std::string py =
        "import torch\nimport torch.nn as nn\n"
        "from torch.utils.cpp_extension import load_inline\n\nsrc = \"\"\"\n"
        "#include <torch/extension.h>\n" +
        cuda +
        "\"\"\"\n\next = load_inline(name=\"ext\", cpp_sources=\"\", "
        "cuda_sources=src, functions=[\"f\"])\n\nclass ModelNew(nn.Module):\n"
        "    def __init__(self, input_size, output_size, divisor):\n"
        "        super().__init__()\n" +
        std::string(kLinearInit) + "\n\n    def forward(self, x):\n" + forward + "\n";
    return import_kernelbench(py, p);
  };
  for (const auto& [part, offset] : std::vector<std::pair<std::string, std::string>>{
           {"x[2]", "x + 2 * input_size"}, {"x[-1]", "x + (batch_size - 1) * input_size"}}) {
    auto r = run("        return ext.f(" + part + ", self.linear(x))");
    REQUIRE_MESSAGE(r.converted, part, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CHECK(plan.launches[1].args[0].kind == ArgKind::Offset);
    CHECK_MESSAGE(arg_texts(plan.launches[1])[0] == offset, arg_texts(plan.launches[1])[0]);
    CHECK(arg_texts(plan.launches[1])[3] == "input_size");
  }
  auto r = run("        return ext.f(x[0], self.linear(x))");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches[1])[0] == "x");
  // Strided, or a select of a view: refused.
  for (const char* part : {"x[:, 1]", "x[..., 0]", "x[1:3][0]"}) {
    r = run(std::string("        return ext.f(") + part + ", self.linear(x))");
    CHECK_FALSE_MESSAGE(r.converted, part);
    CHECK_MESSAGE(r.reason.find("forward passes a view") != std::string::npos, part, ": ",
                  r.reason);
  }
  r = run("        return ext.f(x.t()[0], self.linear(x))");
  CHECK_FALSE(r.converted);
  // An elementwise operator's result on a strided select is laid out contiguously by PyTorch
  // (the view's strides decrease): a buffer the kernel may be given.
  r = run("        return ext.f(torch.relu(torch.stack([x, x], 1)[:, 1]), self.linear(x))");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan relu_plan = checked_plan(r, p);
  std::string relu_out;
  for (const auto& l : relu_plan.launches)
    if (l.torch == "relu") relu_out = l.out;
  CHECK(arg_texts(relu_plan.launches.back())[0] == relu_out);
  // A row beyond the tensor at some size set (batch_size 3): refused.
  r = run("        return ext.f(x[5], self.linear(x))");
  CHECK_FALSE(r.converted);
  CHECK(r.category == "mismatch");
}

namespace {

// A vision transformer's patch embedding: img [batch_size, channels, image_size, image_size]
// cut into patch_size x patch_size patches, each a row of patch_dim (channels * patch_size^2)
// values, embedded by a linear layer: out [batch_size, num_patches, dim].
ProblemSpec suite_patches() {
  return parse_problem_yaml(R"(id: L3_928_Patches
level: 3
name: Patches
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 2, channels: 3, image_size: 32, patch_size: 8, num_patches: 16, patch_dim: 192, dim: 64}
  test:
    - {batch_size: 1, channels: 3, image_size: 8, patch_size: 4, num_patches: 4, patch_dim: 48, dim: 16}
    - {batch_size: 3, channels: 1, image_size: 12, patch_size: 4, num_patches: 9, patch_dim: 16, dim: 8}
inputs:
  - {name: img, dtype: float32, shape: [batch_size, channels, image_size, image_size], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: patch_to_embedding.weight, dtype: float32, shape: [dim, patch_dim], init: custom}
  - {name: patch_to_embedding.bias, dtype: float32, shape: [dim], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, num_patches, dim]}
flops: "0"
bytes: auto
torch: |
  import torch
  class Model(torch.nn.Module):
      def __init__(self, channels, patch_size, patch_dim, dim):
          super().__init__()
          self.patch_size = patch_size
          self.patch_to_embedding = torch.nn.Linear(patch_dim, dim)
      def forward(self, img):
          p = self.patch_size
          x = img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, p * p * img.shape[1])
          return self.patch_to_embedding(x)
  batch_size = 2
  channels = 3
  image_size = 32
  patch_size = 8
  patch_dim = 192
  dim = 64
  def get_inputs():
      return [torch.rand(batch_size, channels, image_size, image_size)]
  def get_init_inputs():
      return [channels, patch_size, patch_dim, dim]
)",
                            "suite.yaml");
}

std::string patches_module(const std::string& forward, const std::string& init_extra = "") {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         std::string(kScaleGelu) +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"epilogue\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, channels, patch_size, patch_dim, dim):\n"
         "        super().__init__()\n"
         "        self.patch_size = patch_size\n"
         "        self.patch_to_embedding = nn.Linear(patch_dim, dim)\n" +
         init_extra + "\n    def forward(self, img):\n" + forward + "\n";
}

}  // namespace

TEST_CASE("import_kernelbench: Tensor.unfold is a view, copied by unfold steps where it is read") {
  ProblemSpec p = suite_patches();
  // img.unfold(2, p, p).unfold(3, p, p) is not viewable as [B, -1, p * p * C]: PyTorch's reshape
  // copies it in row-major order; kernrl copies each unfold into a contiguous buffer (the same
  // values in the same order) and reshapes the last.
  auto r = import_kernelbench(
      patches_module("        p = self.patch_size\n"
                     "        x = img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, "
                     "p * p * img.shape[1])\n"
                     "        return ext.epilogue(self.patch_to_embedding(x), 1.0)"),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 5);
  CHECK(plan.launches[0].torch == "unfold");
  CHECK(arg_texts(plan.launches[0]) ==
        std::vector<std::string>{"img", "2", "patch_size", "patch_size"});
  CHECK(plan.launches[1].torch == "unfold");
  CHECK(arg_texts(plan.launches[1]) ==
        std::vector<std::string>{plan.launches[0].out, "3", "patch_size", "patch_size"});
  CHECK(plan.launches[2].torch == "reshape");
  CHECK(arg_texts(plan.launches[2])[0] == plan.launches[1].out);
  CHECK(plan.launches[3].torch == "linear");
  for (const auto& s : plan.scratch)
    if (s.name == plan.launches[1].out)
      CHECK(s.shape == std::vector<std::string>{"batch_size", "channels",
                                                "(image_size - patch_size) / patch_size + 1",
                                                "(image_size - patch_size) / patch_size + 1",
                                                "patch_size", "patch_size"});
  // By keyword; a window of the whole dimension is one window.
  r = import_kernelbench(
      patches_module("        x = img.unfold(dimension=2, size=self.patch_size, "
                     "step=self.patch_size).unfold(3, self.patch_size, self.patch_size)\n"
                     "        x = x.reshape(img.shape[0], -1, img.shape[1] * self.patch_size * "
                     "self.patch_size)\n"
                     "        return ext.epilogue(self.patch_to_embedding(x), 1.0)"),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  // A window larger than the dimension (PyTorch raises), a step below 1, a size kernrl cannot
  // compute, the window as a float: refused.
  for (const auto& [u, why] : std::vector<std::pair<std::string, std::string>>{
           {"img.unfold(2, img.shape[2] + 1, 1)", "a window size outside 1 to the dimension"},
           {"img.unfold(2, 4, 0)", "a step below 1"},
           {"img.unfold(2, 9, 9)", "a window size outside"},  // image_size 8 at a size set
           {"img.unfold(4, 2, 2)", "dimension 4 of a tensor of rank 4"},
           {"img.unfold(2, 2.0, 2)", "kernrl cannot compute"},
           {"img.unfold(2, 2, 2, 2)", "unfold takes a dimension, a size and a step"},
           {"img.unfold(2, 2, step=2, size=2)", "twice"}}) {
    r = import_kernelbench(
        patches_module("        x = " + u + "\n        return ext.epilogue(x, 1.0)"), p);
    CHECK_FALSE_MESSAGE(r.converted, u);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, u, ": ", r.reason);
  }
  // Never given to a kernel as it is: its memory is laid out by its strides (windows overlap).
  r = import_kernelbench(patches_module("        return ext.epilogue(img.unfold(3, 2, 1), 1.0)"),
                         p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("forward passes a view") != std::string::npos, r.reason);
  // An elementwise operator's result on it: PyTorch lays it out in the order of the view's
  // strides (the window dimension's stride below the unfolded one's), which kernrl does not
  // model where the view has gaps (image_size 32 in windows of 3) or overlaps: it reaches no
  // kernel.
  for (const char* u : {"img.unfold(2, 3, 3)", "img.unfold(3, 2, 1)"}) {
    r = import_kernelbench(
        patches_module(std::string("        return ext.epilogue(torch.relu(") + u + "), 1.0)"), p);
    CHECK_FALSE_MESSAGE(r.converted, u);
    CHECK_MESSAGE(r.reason.find("an operator's result laid out as one") != std::string::npos, u,
                  ": ", r.reason);
  }
}

TEST_CASE("import_kernelbench: calling an nn.Identity returns its argument itself") {
  ProblemSpec p = suite_patches();
  const std::string forward =
      "        p = self.patch_size\n"
      "        x = img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, p * p * "
      "img.shape[1])\n";
  // nn.Identity(*args, **kwargs) ignores its arguments; its forward returns its input, the same
  // object: the view stays a view (copied once, where the linear layer reads it).
  for (const char* call : {"self.same(x)", "self.same(input=x)", "self.same(self.same(x))"}) {
    auto r = import_kernelbench(
        patches_module(forward + "        x = " + call +
                           "\n        return ext.epilogue(self.patch_to_embedding(x), 1.0)",
                       "        self.same = nn.Identity(54, unused='yes')\n"),
        p);
    REQUIRE_MESSAGE(r.converted, call, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    CHECK(plan.launches.size() == 5);
  }
  // Python raises calling it with other than one argument.
  for (const char* call : {"self.same(x, x)", "self.same()", "self.same(x=x)"}) {
    auto r = import_kernelbench(
        patches_module(forward + "        x = " + call +
                           "\n        return ext.epilogue(self.patch_to_embedding(x), 1.0)",
                       "        self.same = nn.Identity()\n"),
        p);
    CHECK_FALSE_MESSAGE(r.converted, call);
    CHECK_MESSAGE(r.reason.find("takes one argument") != std::string::npos, call, ": ", r.reason);
  }
}

TEST_CASE("import_kernelbench: any() and all() of a generator expression, decided per size set") {
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; input_size 512, 33, 64
  const std::string init = kLinearInit;
  auto r = import_kernelbench(
      suite_module("        if any(d != 1 for d in (1, 1)) or not all(s > 0 for s in x.shape):\n"
                   "            return x\n"
                   "        return ext.epilogue(self.linear(x), 1.0)",
                   init),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[0].torch == "linear");
  // An item whose truth differs between size sets: refused.
  r = import_kernelbench(
      suite_module("        if any(s > 40 for s in x.shape):\n            return x\n"
                   "        return ext.epilogue(self.linear(x), 1.0)",
                   init),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("not the same at every size set") != std::string::npos, r.reason);
  // A generator anywhere else is lazy and single-use (torch.cat even refuses one): refused.
  r = import_kernelbench(suite_module("        y = torch.cat(t for t in (x, x))\n"
                                      "        return ext.epilogue(self.linear(x), 1.0)",
                                      init),
                         p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("other than as the argument of any()") != std::string::npos,
                r.reason);
}

TEST_CASE("import_kernelbench: a weight permuted in the C++ wrapper is copied by a torch step") {
  ProblemSpec p = suite_linear();
  auto convert = [&](const std::string& relayout) {
    const std::string cuda =
        "__global__ void lin(const float* x, const float* wt, float* y, int M) {}\n"
        "torch::Tensor run(torch::Tensor x, torch::Tensor w) {\n"
        "  auto out = torch::empty({x.size(0), w.size(0)}, x.options());\n"
        "  auto wt = " +
        relayout +
        ";\n"
        "  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), wt.data_ptr<float>(), "
        "out.data_ptr<float>(), x.size(0));\n"
        "  return out;\n}\n";
    return import_kernelbench(
        module(cuda, "run", "x", "ext.run(x, self.linear.weight)",
               "input_size, output_size: self.linear = nn.Linear(input_size, output_size)"),
        p);
  };
  for (const char* relayout : {"w.transpose(0, 1).contiguous()", "w.permute({1, 0}).contiguous()",
                               "w.permute({-1, 0}).contiguous()"}) {
    auto r = convert(relayout);
    REQUIRE_MESSAGE(r.converted, relayout, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CHECK((plan.launches[0].torch == "permute" || plan.launches[0].torch == "transpose"));
    REQUIRE(plan.scratch.size() == 1);
    CHECK(plan.scratch[0].shape == std::vector<std::string>{"input_size", "output_size"});
    CHECK(arg_texts(plan.launches[1]) ==
          std::vector<std::string>{"x", plan.scratch[0].name, "out", "batch_size"});
  }
  // The view's pointer is the weight's memory, as in PyTorch (the kernel reads it in the
  // weight's own order); its strides are PyTorch's, expressions of the sizes.
  auto r = convert("w.permute({1, 0})");
  REQUIRE_MESSAGE(r.converted, r.reason);
  {
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 1);
    CHECK(arg_texts(plan.launches[0]) ==
          std::vector<std::string>{"x", "linear.weight", "out", "batch_size"});
  }
  r = convert(
      "w.permute({1, 0});\n  int s0 = wt.stride(0), s1 = wt.stride(1);\n"
      "  lin<<<s0, s1>>>(x.data_ptr<float>(), wt.data_ptr<float>(), "
      "out.data_ptr<float>(), (int)wt.is_contiguous())");
  REQUIRE_MESSAGE(r.converted, r.reason);
  {
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CHECK(plan.launches[0].grid == std::vector<std::string>{"1"});
    CHECK(plan.launches[0].block == std::vector<std::string>{"input_size"});
    CHECK(arg_texts(plan.launches[0]).back() == "0");  // not contiguous at any size set
  }
  // clone() keeps the view's strides, and contiguous() of a view already contiguous is the view.
  r = convert("w.permute({1, 0}).clone()");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find(".clone() keeps them") != std::string::npos, r.reason);
  // contiguous() of a view already contiguous is the view: the weight's memory.
  r = convert("w.permute({0, 1}).contiguous()");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches[0]) ==
        std::vector<std::string>{"x", "linear.weight", "out", "batch_size"});
  r = convert("w.permute({1, 1}).contiguous()");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("a dimension twice") != std::string::npos, r.reason);
  // On kernrl's own problems a permute in the wrapper stays a library call.
  r = import_kernelbench(
      module("__global__ void lin(const float* x, const float* wt, float* y, int M) {}\n"
             "torch::Tensor run(torch::Tensor x, torch::Tensor w) {\n"
             "  auto out = torch::empty({x.size(0), w.size(0)}, x.options());\n"
             "  auto wt = w.permute({1, 0}).contiguous();\n"
             "  lin<<<1, 1>>>(x.data_ptr<float>(), wt.data_ptr<float>(), out.data_ptr<float>(), "
             "1);\n  return out;\n}\n",
             "run", "x", "ext.run(x, self.weight)",
             "input_size, output_size: self.weight = nn.Parameter(torch.randn(output_size, "
             "input_size))"),
      problem("L2_86_Matmul_Divide_GELU"));
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: torch.cat of tensors in forward is a torch step") {
  ProblemSpec p = suite_linear();  // linear.weight: [output_size, input_size]; 1024, 17, 40 rows
  const std::string init = kLinearInit;
  auto import_w = [&](const std::string& w) {
    return import_kernelbench(
        suite_module("        w = " + w +
                         "\n        return ext.epilogue(F.linear(x, w, self.linear.bias), 1.0)",
                     init),
        p);
  };
  auto r = import_w("torch.cat([self.linear.weight[:2], self.linear.weight[2:]], dim=0)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 5);
  CHECK(plan.launches[0].torch == "narrow");
  CHECK(plan.launches[1].torch == "narrow");
  CHECK(plan.launches[2].torch == "cat");
  CHECK(plan.launches[2].args[0].kind == ArgKind::TensorList);
  CHECK(plan.launches[2].args[1].text == "0");
  CHECK(plan.launches[3].torch == "linear");
  // Other dimensions that differ, and a dimension out of range: refused, saying why.
  r = import_w("torch.cat([self.linear.weight, x], dim=1)");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("other dimensions differ") != std::string::npos, r.reason);
  r = import_w("torch.cat([self.linear.weight], dim=2)");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("a dimension kernrl cannot compute") != std::string::npos, r.reason);
}

namespace {

// suite_linear's ModelNew whose __init__ body (after the linear layer) is `body` and whose
// forward passes `use` to a kernel's int parameter `e`; `more`: further methods.
std::string int_attr_module(const std::string& body, const std::string& use,
                            const std::string& more = "") {
  return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
         "load_inline\n\nsrc = \"\"\"\n#include <torch/extension.h>\n"
         "__global__ void lin(const float* x, float* y, int e, int M) {}\n"
         "torch::Tensor run(torch::Tensor x, torch::Tensor w, int64_t e) {\n"
         "  auto out = torch::empty({x.size(0), w.size(0)}, x.options());\n"
         "  lin<<<x.size(0), 128>>>(x.data_ptr<float>(), out.data_ptr<float>(), (int)e, "
         "x.size(0));\n  return out;\n}\n"
         "\"\"\"\n\next = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"run\"])\n\nclass ModelNew(nn.Module):\n    def __init__(self, "
         "input_size, output_size, divisor):\n        super().__init__()\n"
         "        self.linear = nn.Linear(input_size, output_size)\n" +
         body + "\n    def forward(self, x):\n        return ext.run(x, self.linear.weight, " +
         use + ")\n" + more;
}

}  // namespace

TEST_CASE("import_kernelbench: an `if` of __init__ decided by the constructor's arguments") {
  ProblemSpec p = suite_linear();  // Model(input_size, output_size, divisor): divisor 10.0;
                                   // input_size 512, 33, 64; output_size 1024, 17, 40
  auto e_of = [&](const std::string& body) {
    auto r = import_kernelbench(int_attr_module(body, "self.e"), p);
    REQUIRE_MESSAGE(r.converted, body, ": ", r.reason);
    return arg_texts(checked_plan(r, p).launches.back()).at(2);
  };
  // The branch taken is read as statements of __init__'s top, the others not at all.
  CHECK(e_of("        if divisor > 100:\n            self.e = 9\n        else:\n"
             "            self.e = 2\n") == "2");
  // A condition of sizes false at every size set, through an attribute set before; elif.
  CHECK(e_of("        self.same = input_size == output_size\n        if self.same:\n"
             "            self.e = 1\n        elif divisor < 20:\n            self.e = 3\n"
             "        else:\n            self.e = 5\n") == "3");
  // A one-line branch, an `if` nested in a branch taken, a local of __init__'s top.
  CHECK(e_of("        if divisor > 1: self.e = 4\n") == "4");
  CHECK(e_of("        k = 2\n        if k == 2:\n            if input_size > 0:\n"
             "                self.e = 6\n            else:\n                self.e = 7\n") == "6");
  // No branch taken: the attribute is set once, before.
  CHECK(e_of("        self.e = 8\n        if divisor < 0:\n            self.e = 9\n") == "8");
  // A branch not taken creates no parameter of ModelNew's and draws nothing.
  CHECK(e_of("        if divisor < 0:\n            self.w = nn.Parameter(torch.randn(3))\n"
             "            nn.init.normal_(self.w)\n        self.e = 1\n") == "1");

  // Conditions kernrl cannot decide: what their branches set is refused, saying why.
  auto refused = [&](const std::string& body, const std::string& more = "") {
    auto r = import_kernelbench(int_attr_module(body, "self.e", more), p);
    CHECK_FALSE_MESSAGE(r.converted, body);
    return r.reason;
  };
  std::string why = refused(
      "        if input_size > 40:\n            self.e = 9\n        else:\n            self.e = "
      "2\n");
  CHECK_MESSAGE(why.find("sets under `if input_size > 40:` (line") != std::string::npos, why);
  CHECK_MESSAGE(
      why.find("true at some size sets of the problem and false at others") != std::string::npos,
      why);
  why = refused("        if torch.cuda.is_available():\n            self.e = 9\n");
  CHECK_MESSAGE(why.find("cannot decide from the constructor's arguments") != std::string::npos,
                why);
  // An elif after a condition that cannot be decided is not decided either.
  why = refused(
      "        if input_size > 40:\n            self.e = 9\n        elif divisor > 1:\n"
      "            self.e = 2\n");
  CHECK_MESSAGE(why.find("`if input_size > 40:`") != std::string::npos, why);
  // A condition on `self` after __init__ called a method that could set it.
  why = refused(
      "        self.k = 1\n        self._setup()\n        if self.k > 0:\n"
      "            self.e = 2\n",
      "\n    def _setup(self):\n        self.k = 0\n");
  CHECK_MESSAGE(why.find("after __init__ calls `self._setup`") != std::string::npos, why);
  // A branch taken at every size set that returns ends __init__ there, one that raises fails
  // the constructor: refused, whatever forward reads.
  why = refused(
      "        if divisor > 1:\n            self.e = 2\n            return\n"
      "        self.k = 3\n");
  CHECK_MESSAGE(why.find("`if divisor > 1:` (line") != std::string::npos, why);
  CHECK_MESSAGE(why.find("returns or raises in the branch") != std::string::npos, why);
  why = refused("        if divisor > 1:\n            raise ValueError('no')\n");
  CHECK_MESSAGE(why.find("returns or raises in the branch") != std::string::npos, why);
}

TEST_CASE("import_kernelbench: a layer built in place in a container ModelNew sets once") {
  ProblemSpec p = suite_mlp(true);
  // ModelNew's __init__ differs from the reference's (a local of its own), so the reference's
  // layers are not known; a layer it builds itself in place in its container still is, when
  // its class is the reference's at that path.
  const std::string forward =
      "        y = torch.mm(torch.mm(x, self.net[0].weight.t()), self.net[2].weight.t())\n"
      "        return ext.bias_act(y, self.net[2].bias, True)";
  auto with_net = [&](const std::string& net) {
    std::string py = mlp_module(forward);
    const std::string ref_init =
        "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
        "                                 nn.Linear(hidden, output_size))\n";
    py.replace(py.find(ref_init), ref_init.size(), "        h = hidden\n" + net);
    return import_kernelbench(py, p);
  };
  auto r = with_net(
      "        self.net = nn.Sequential(nn.Linear(input_size, h), nn.ReLU(),\n"
      "                                 nn.Linear(h, output_size))\n");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches.back()).at(1) == "net.2.bias");
  // Built from a list, changed after, or of another class: refused.
  for (const char* net :
       {"        layers = [nn.Linear(input_size, h), nn.ReLU(), nn.Linear(h, output_size)]\n"
        "        self.net = nn.Sequential(*layers)\n",
        "        self.net = nn.Sequential(nn.Linear(input_size, h), nn.ReLU(),\n"
        "                                 nn.Linear(h, output_size))\n"
        "        self.net.insert(2, nn.ReLU())\n",
        "        self.net = nn.Sequential(nn.Linear(input_size, h), nn.ReLU(),\n"
        "                                 nn.Bilinear(h, h, output_size))\n"}) {
    r = with_net(net);
    CHECK_FALSE_MESSAGE(r.converted, net);
    CHECK_MESSAGE(r.reason.find("from the reference's module only") != std::string::npos, r.reason);
  }
}

namespace {

// A suite problem of a convolution (kernel 3, padding 1) then ReLU: 2-d on square images
// (`side`), or 1-d (`length`).
ProblemSpec suite_conv(int dims = 2) {
  std::string yaml = R"(id: L2_@ID@_Conv@D@D_ReLU
level: 2
name: Conv@D@D_ReLU
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 8, in_channels: 16, out_channels: 32, @N@: @BENCH@}
  test:
    - {batch_size: 2, in_channels: 3, out_channels: 5, @N@: 7}
    - {batch_size: 3, in_channels: 4, out_channels: 6, @N@: 9}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, in_channels, @SPATIAL@], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: conv.weight, dtype: float32, shape: [out_channels, in_channels, @K@], init: custom}
  - {name: conv.bias, dtype: float32, shape: [out_channels], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, out_channels, @SPATIAL@]}
modules: {"conv": ["Conv@D@d"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, in_channels, out_channels):
          super().__init__()
          self.conv = nn.Conv@D@d(in_channels, out_channels, 3, padding=1)
      def forward(self, x):
          return torch.relu(self.conv(x))
  batch_size = 8
  in_channels = 16
  out_channels = 32
  @N@ = @BENCH@
  def get_inputs():
      return [torch.rand(batch_size, in_channels, @SPATIAL@)]
  def get_init_inputs():
      return [in_channels, out_channels]
)";
  const bool two = dims == 2;
  const std::string n = two ? "side" : "length";
  const std::vector<std::pair<std::string, std::string>> fill = {
      {"@ID@", two ? "1" : "2"},
      {"@D@", two ? "2" : "1"},
      {"@N@", n},
      {"@BENCH@", two ? "32" : "64"},
      {"@SPATIAL@", two ? n + ", " + n : n},
      {"@K@", two ? "3, 3" : "3"}};
  for (const auto& [key, value] : fill)
    for (size_t at = yaml.find(key); at != std::string::npos; at = yaml.find(key, at))
      yaml.replace(at, key.size(), value);
  return parse_problem_yaml(yaml, "suite.yaml");
}

// ModelNew of that problem: `forward` (its body, indented 8) gives ext.relu a tensor.
std::string conv_module(const std::string& forward, int dims = 2) {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n"
         "__global__ void relu_kernel(const float* y, float* out, int n) {}\n"
         "torch::Tensor relu(torch::Tensor y) {\n"
         "  auto out = torch::empty_like(y);\n  int n = y.numel();\n"
         "  relu_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), out.data_ptr<float>(), "
         "n);\n  return out;\n}\n\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"relu\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, in_channels, out_channels):\n"
         "        super().__init__()\n"
         "        self.conv = nn.Conv" +
         std::to_string(dims) +
         "d(in_channels, out_channels, 3, padding=1)\n\n"
         "    def forward(self, x):\n" +
         forward + "\n";
}

}  // namespace

TEST_CASE("import_kernelbench: a 1-d convolution's result is contiguous where PyTorch's is") {
  ProblemSpec p = suite_conv(1);
  auto module = [](const std::string& forward) { return conv_module(forward, 1); };
  // An input that is not contiguous is copied densely by the convolution: a contiguous result.
  for (const char* view : {"x", "x.transpose(1, 2).contiguous().transpose(1, 2)"}) {
    auto r = import_kernelbench(
        module(std::string("        v = ") + view + "\n        return ext.relu(self.conv(v))"), p);
    REQUIRE_MESSAGE(r.converted, view, ": ", r.reason);
    CHECK(checked_plan(r, p).launches.back().kernel == "relu_kernel");
  }
  // One that PyTorch calls contiguous but whose size-1 dimension's stride is not the dense one
  // is viewed as 4-dimensional as it is: the result may be channels-last, and is not given to a
  // kernel.
  auto r = import_kernelbench(
      module("        v = x[:, :1, :].transpose(1, 2).contiguous().transpose(1, 2)\n"
             "        w = self.conv.weight[:, :1, :]\n"
             "        return ext.relu(F.conv1d(v, w.contiguous(), padding=1))"),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("laid out as one") != std::string::npos, r.reason);
}

TEST_CASE("import_kernelbench: a convolution of a view gives a contiguous tensor, as PyTorch") {
  ProblemSpec p = suite_conv();
  // A channel slice (a narrow with gaps) and a transposed view (square images): neither is
  // channels-last, so the convolution's result is a new contiguous tensor a kernel may take.
  for (const char* view : {"torch.cat([x, x], dim=1)[:, x.size(1):]", "x.transpose(2, 3)",
                           "x.narrow(1, 0, x.size(1))"}) {
    auto r = import_kernelbench(
        conv_module(std::string("        v = ") + view + "\n        return ext.relu(self.conv(v))"),
        p);
    REQUIRE_MESSAGE(r.converted, view, ": ", r.reason);
    LaunchPlan plan = checked_plan(r, p);
    CHECK(plan.launches.at(plan.launches.size() - 2).torch == "conv2d");
    CHECK(plan.launches.back().kernel == "relu_kernel");
  }
  auto r = import_kernelbench(
      conv_module("        return ext.relu(F.conv2d(x.transpose(2, 3), self.conv.weight, "
                  "self.conv.bias, 1, 1))"),
      p);
  CHECK_MESSAGE(r.converted, r.reason);
  // A channels-last input (NHWC memory seen as NCHW), or a channels-last weight: PyTorch's
  // result is channels-last too, which kernrl does not follow: no kernel takes it.
  for (const char* forward :
       {"        v = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)\n"
        "        return ext.relu(self.conv(v))",
        "        w = self.conv.weight.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)\n"
        "        return ext.relu(F.conv2d(x, w, self.conv.bias, 1, 1))"}) {
    r = import_kernelbench(conv_module(forward), p);
    CHECK_FALSE_MESSAGE(r.converted, forward);
    CHECK_MESSAGE(r.reason.find("laid out as one") != std::string::npos, r.reason);
  }
}

TEST_CASE("import_kernelbench: __init__ changing a layer's tensors or settings after building it") {
  ProblemSpec p = suite_conv();
  const std::string forward = "        return ext.relu(self.conv(x))";
  // ModelNew with `extra` after `self.conv = ...` (and `before` ahead of the class).
  auto with_init = [&](const std::string& extra, const std::string& before = "") {
    std::string py = conv_module(forward);
    const std::string ctor = "padding=1)\n";
    py.insert(py.find(ctor) + ctor.size(), extra);
    py.insert(py.find("class ModelNew"), before);
    return py;
  };
  auto r = import_kernelbench(with_init(""), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  struct Case {
    std::string extra, why, before = "";
  };
  const std::string tensors = "whose tensors ModelNew's __init__ changes in place";
  const std::string settings = "which ModelNew's __init__ changes after building it";
  const std::vector<Case> refused = {
      // In-place methods and nn.init on the layer's tensors (also under torch.no_grad()).
      {"        with torch.no_grad():\n            self.conv.weight.mul_(2.0)\n"
       "            self.conv.bias.mul_(2.0)\n",
       tensors + " after building it, by `self.conv.weight.mul_(2.0)` (line 24)"},
      {"        with torch.no_grad(): self.conv.weight.mul_(2.0)\n", tensors},
      {"        self.conv.weight.data.mul_(2)\n", "by `self.conv.weight.data.mul_(2)`"},
      {"        self.conv.bias.data.zero_()\n", "by `self.conv.bias.data.zero_()`"},
      {"        self.conv.weight.detach().fill_(1.0)\n", "by `self.conv.weight.detach().fill_("},
      {"        nn.init.zeros_(self.conv.bias)\n", "by `nn.init.zeros_(self.conv.bias)`"},
      {"        torch.nn.init.constant_(self.conv.bias, 1.0)\n", tensors},
      {"        for m in self.modules():\n            if isinstance(m, nn.Conv2d):\n"
       "                nn.init.zeros_(m.bias)\n",
       "by `nn.init.zeros_(m.bias)`"},
      {"        w = self.conv.weight.detach()\n        w.mul_(2)\n", "by `w.mul_(2)`"},
      {"        self._init()\n\n    def _init(self):\n        for m in self.modules():\n"
       "            nn.init.ones_(m.weight)\n",
       "by `nn.init.ones_(m.weight)`"},
      // Augmented assignments, assignments through another name or a loop, registrations.
      {"        self.conv.weight.data *= 2.0\n",
       settings + ", by `self.conv.weight.data *= 2.0` (line 23)"},
      {"        c = self.conv\n        c.bias = None\n", "by `c.bias = None`"},
      {"        w = self.conv.weight\n        w += 1.0\n", "by `w += 1.0`"},
      {"        self.conv.register_parameter('bias', None)\n",
       "by `self.conv.register_parameter('bias', None)`"},
      {"        for m in self.modules():\n            if isinstance(m, nn.Conv2d):\n"
       "                m.padding_mode = 'circular'\n",
       "by `m.padding_mode = 'circular'`"},
      {"        for m in self.children():\n            m.stride = (2, 2)\n",
       "by `m.stride = (2, 2)`"},
      {"        layers = [self.conv]\n        for l in layers:\n            l.padding = (0, 0)\n",
       "by `l.padding = (0, 0)`"},
      {"        self.apply(lambda m: None)\n", "by `self.apply(lambda m: None)`"},
      {"        fix(self.conv)\n", "by `fix(self.conv)`", "def fix(m):\n    m.bias = None\n\n"},
      {"        fix(self)\n", "by `fix(self)`", "def fix(m):\n    m.conv.bias = None\n\n"},
      {"        torch.nn.utils.weight_norm(self.conv)\n", settings},
      {"        self.conv.half()\n", "by `self.conv.half()`"},
  };
  for (const auto& c : refused) {
    CAPTURE(c.extra);
    r = import_kernelbench(with_init(c.extra, c.before), p);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find(c.why) != std::string::npos, r.reason);
  }
  // What reads the layer without changing it converts.
  for (const char* extra : {
           "        w = self.conv.weight\n        n = w.shape[0]\n",
           "        c = self.conv\n        k = c.kernel_size\n",
           "        for m in self.modules():\n            if isinstance(m, nn.Conv2d):\n"
           "                print(m.padding)\n",
           "        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.conv.weight)\n",
           "        with torch.no_grad():\n            t = torch.zeros(3)\n            "
           "t.add_(1.0)\n",
           "        self.w = self.conv.weight.detach().clone()\n",
           "        self.w = self.conv.weight.to(torch.float16)\n",
       }) {
    CAPTURE(extra);
    r = import_kernelbench(with_init(extra), p);
    CHECK_MESSAGE(r.converted, r.reason);
  }
  // An in-place change the reference's __init__ makes too: the suite's tensors are its values.
  // (A change of settings is refused all the same: kernrl reads them from the constructor.)
  for (const auto& [extra, converts] : std::vector<std::pair<std::string, bool>>{
           {"        nn.init.zeros_(self.conv.bias)\n", true},
           {"        self.conv.weight.data.mul_(2.0)\n", true},
           {"        self.conv.weight.data *= 2.0\n", false}}) {
    CAPTURE(extra);
    ProblemSpec same = p;
    const std::string ref_ctor = "padding=1)\n";
    same.torch.insert(same.torch.find(ref_ctor) + ref_ctor.size(), extra);
    r = import_kernelbench(with_init(extra), same);
    CHECK_MESSAGE(r.converted == converts, r.reason);
    // The same change without it in the reference: refused.
    r = import_kernelbench(with_init(extra), p);
    CHECK_FALSE(r.converted);
  }
}

TEST_CASE("import_kernelbench: __init__ changing a dropout's p through another name") {
  auto run = [](const std::string& init_extra) {
    ProblemSpec p = suite_mlp(true,
                              "{\"net\": [\"Sequential\"], \"net.0\": [\"Linear\"], "
                              "\"net.1\": [\"Dropout\"], \"net.2\": [\"Linear\"]}");
    const std::string ctor =
        "nn.Sequential(nn.Linear(input_size, hidden), nn.Dropout(0.0),\n"
        "                                 nn.Linear(hidden, output_size))";
    const std::string ref_ctor =
        "nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
        "                                 nn.Linear(hidden, output_size))";
    std::string ref = p.torch;
    ref.replace(ref.find(ref_ctor), ref_ctor.size(), ctor);
    p.torch = ref;
    std::string py = mlp_module(
        "        y = self.net[1](self.net[0](x))\n"
        "        return ext.bias_act(self.net[2](y), self.net[2].bias, False)",
        init_extra);
    py.replace(py.find(ref_ctor), ref_ctor.size(), ctor);
    return import_kernelbench(py, p);
  };
  auto r = run("");
  REQUIRE_MESSAGE(r.converted, r.reason);
  for (const auto& [extra, why] : std::vector<std::pair<std::string, std::string>>{
           {"        for m in self.modules():\n            if isinstance(m, nn.Dropout):\n"
            "                m.p = 0.5\n",
            "by `m.p = 0.5`"},
           {"        d = self.net[1]\n        d.p = 0.5\n", "by `d.p = 0.5`"},
           {"        for m in self.net:\n            m.p = 0.5\n", "by `m.p = 0.5`"},
           {"        d = [m for m in self.modules() if isinstance(m, nn.Dropout)][0]\n"
            "        d.p = 0.5\n",
            "by `d.p = 0.5`"}}) {
    CAPTURE(extra);
    r = run(extra);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(
        r.reason.find("`self.net`, which ModelNew's __init__ changes after building it, " + why) !=
            std::string::npos,
        r.reason);
  }
  // Reads of it convert.
  for (const char* extra :
       {"        for m in self.modules():\n            if isinstance(m, nn.Dropout):\n"
        "                print(m.p)\n",
        "        d = self.net[1]\n        q = d.p\n"}) {
    CAPTURE(extra);
    r = run(extra);
    CHECK_MESSAGE(r.converted, r.reason);
  }
}

TEST_CASE("import_kernelbench: __init__ changing ModelNew's own parameter in place") {
  // kernrl's own problem, its `bias` given the output's shape (the epilogue's input).
  ProblemSpec p = problem("L2_86_Matmul_Divide_GELU");
  for (auto& t : p.parameters)
    if (t.name == "bias") t.shape = p.outputs.at(0).shape;
  const std::string forward = "        return ext.epilogue(self.bias, float(self.divisor))";
  const std::string init =
      "        self.weight = nn.Parameter(torch.empty(output_size, input_size))\n"
      "        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))\n"
      "        self.bias = nn.Parameter(torch.zeros(8, output_size))\n"
      "        self.divisor = divisor\n";
  auto r = import_kernelbench("import math\n" + suite_module(forward, init), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  for (const char* extra : {"        with torch.no_grad():\n            self.bias.mul_(2.0)\n",
                            "        self.bias.data += 1.0\n", "        nn.init.ones_(self.bias)\n",
                            "        b = self.bias\n        b.data.fill_(1.0)\n"}) {
    CAPTURE(extra);
    r = import_kernelbench("import math\n" + suite_module(forward, init + extra), p);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find("`self.bias`, ") != std::string::npos, r.reason);
  }
}

namespace {

// An L1_26 module (x: [batch_size, dim] -> out of its shape) whose wrapper allocates y, names
// x's and y's pointers xp and yp and runs `body` with kernel k(const float*, float*, long).
std::string offsets_module(const std::string& body) {
  return module(
      "__global__ void k(const float* x, float* y, long n) {}\n"
      "torch::Tensor f(torch::Tensor x) {\n"
      "  auto y = torch::empty_like(x);\n"
      "  long n = x.numel();\n  long half = n / 2;\n"
      "  float* xp = x.data_ptr<float>();\n  float* yp = y.data_ptr<float>();\n" +
          body + "\n  return y;\n}\n",
      "f", "x", "ext.f(x)");
}

}  // namespace

TEST_CASE("import_kernelbench: pointers into a tensor become NAME + EXPR arguments") {
  ProblemSpec p = problem("L1_26");
  auto converted = [&](const std::string& body) {
    auto r = import_kernelbench(offsets_module(body), p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    return checked_plan(r, p);
  };
  // `p + e`, `e + p` and `&p[e]`, of data_ptr or of a pointer variable, in element units.
  LaunchPlan plan = converted(
      "  k<<<1, 256>>>(xp, yp, half);\n"
      "  k<<<1, 256>>>(xp + half, &yp[half], n - half);\n"
      "  k<<<1, 256>>>(&x.data_ptr<float>()[half], half + y.data_ptr<float>(), 0);\n"
      "  k<<<1, 256>>>(x.data_ptr<float>() + 0, &yp[0], 0);");
  REQUIRE(plan.launches.size() == 4);
  CHECK(arg_texts(plan.launches[0]) ==
        std::vector<std::string>{"x", "out", "(batch_size * dim) / 2"});
  for (size_t l : {1, 2}) {
    CAPTURE(l);
    CHECK(arg_texts(plan.launches[l])[0] == "x + (batch_size * dim) / 2");
    CHECK(arg_texts(plan.launches[l])[1] == "out + (batch_size * dim) / 2");
    CHECK(plan.launches[l].args[0].kind == ArgKind::Offset);
    CHECK(plan.launches[l].args[1].kind == ArgKind::Offset);
  }
  CHECK(arg_texts(plan.launches[3]) == std::vector<std::string>{"x", "out", "0"});
  // A host loop unrolled, a loop over the sizes as a repeat, a pointer advanced in place, and a
  // pointer of a wider type (float4 over float32: 4 elements a step).
  plan = converted(
      "  for (int i = 0; i < 2; ++i)\n"
      "    k<<<1, 256>>>(x.data_ptr<float>() + i * x.size(1), yp + i * x.size(1), x.size(1));\n"
      "  for (int r = 0; r < x.size(0); ++r)\n"
      "    k<<<1, 256>>>(xp + r * x.size(1), yp + r * x.size(1), x.size(1));\n"
      "  float* q = yp;\n  q += 2;\n  q++;\n"
      "  const float4* x4 = reinterpret_cast<const float4*>(xp) + 3;\n"
      "  k<<<1, 256>>>((const float*)x4, q, 1);");
  REQUIRE(plan.launches.size() == 4);
  CHECK(arg_texts(plan.launches[0])[0] == "x + 0 * dim");
  CHECK(arg_texts(plan.launches[1])[0] == "x + dim");
  CHECK(arg_texts(plan.launches[1])[1] == "out + dim");
  CHECK(plan.launches[2].repeat_var == "r");
  CHECK(arg_texts(plan.launches[2])[0] == "x + r * dim");
  CHECK(arg_texts(plan.launches[3]) == std::vector<std::string>{"x + 12", "out + 3", "1"});

  // What cannot be a pointer into a buffer at whole elements, or is not a launch's argument.
  struct Case {
    std::string body, category, reason;
  };
  const std::vector<Case> cases = {
      {"  k<<<1, 1>>>((float*)((char*)xp + 2), yp, 0);", "unsupported_cuda",
       "offsets a `char*` pointer into the float32 tensor"},
      {"  void* v = x.data_ptr();\n  k<<<1, 1>>>((float*)((char*)v + 4), yp, 0);",
       "unsupported_cuda", "`char*` pointer"},
      {"  float* z = nullptr;\n  k<<<1, 1>>>(z + 1, yp, 0);", "unsupported_cuda",
       "offsets a null pointer"},
      {"  k<<<1, 1>>>(xp, yp, (yp + 4) - yp);", "unsupported_cuda", "computes with two pointers"},
      {"  cudaMemset(yp + 4, 0, n * sizeof(float));\n  k<<<1, 1>>>(xp, yp, n);", "host_logic",
       "clears part of"},
      {"  k<<<1, 1>>>(xp, yp, (long)xp[3]);", "data_dependent_host", "reads tensor data"},
      {"  if (xp + half == xp) return y;\n  k<<<1, 1>>>(xp, yp, n);", "host_logic",
       "compares pointers into a tensor at offsets that depend on the sizes"},
      // The address of x + n/2 is 16-byte aligned at some size sets only (n = 7 * 1001).
      {"  if (((uintptr_t)(xp + half)) % 16 == 0) k<<<1, 1>>>(xp, yp, n);", "host_logic",
       "can decide only whether it is aligned to a divisor of 16 bytes"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body);
    auto r = import_kernelbench(offsets_module(c.body), p);
    CHECK_FALSE(r.converted);
    CHECK(r.category == c.category);
    CHECK_MESSAGE(r.reason.find(c.reason) != std::string::npos, r.reason);
  }
  // An alignment check at a constant offset is decided as for the buffer's start.
  auto r = import_kernelbench(
      offsets_module("  if (((uintptr_t)(xp + 4)) % 16 == 0) k<<<1, 1>>>(xp, yp, n);\n"
                     "  if (((uintptr_t)(xp + 1)) % 4 == 0) k<<<1, 1>>>(xp, yp, n);"),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches.size() == 2);
}

TEST_CASE("import_kernelbench: two streams over the halves of a tensor (pointer offsets)") {
  ProblemSpec p = problem("L1_26");
  std::ifstream in(std::string(KERNRL_TEST_DIR) +
                   "/import/generations/level_1_problem_26_sample_6_kernel.py");
  std::stringstream text;
  text << in.rdbuf();
  auto r = import_kernelbench(text.str(), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  CHECK(arg_texts(plan.launches[0])[0] == "x");
  CHECK(arg_texts(plan.launches[1])[0] == "x + (batch_size * dim) / 2");
  CHECK(arg_texts(plan.launches[1])[1] == "out + (batch_size * dim) / 2");
  CHECK(std::find(r.notes.begin(), r.notes.end(),
                  "launches on the streams the wrapper creates run in order on one stream") !=
        r.notes.end());
}

TEST_CASE("import_kernelbench: preprocessor conditions, nested macros and writes in ?:") {
  ProblemSpec p = problem("L1_26");  // x: [batch_size, dim]
  auto run = [&](const std::string& defs, const std::string& body) {
    std::string cuda = defs + R"(
__global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int n = x.numel();
)" + body + R"(
  return y;
}
)";
    return import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  };
  const std::string launch =
      "  k<<<(n + BS - 1) / BS, BS>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);";
  // The host pass of the compile: #if 1 taken, __CUDA_ARCH__ not defined.
  for (const char* defs :
       {"#if 1\n#define BS 256\n#else\n#define BS 128\n#endif\n",
        "#define BS 256\n#ifdef __CUDA_ARCH__\n#undef BS\n#define BS 128\n#endif\n",
        "#ifndef BS\n#define BS 256\n#endif\n"}) {
    auto r = run(defs, launch);
    CAPTURE(defs);
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(checked_plan(r, p).launches[0].block[0] == "256");
  }
  // A condition kernrl does not evaluate: the macro's uses are refused.
  auto r =
      run("#if defined(USE_WIDE) && USE_WIDE > 1\n#define BS 512\n#else\n#define BS 256\n#endif\n",
          launch);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("under #if") != std::string::npos, r.reason);
  // A macro with operators at the edge of another macro's expansion: cpp splices it there.
  r = run("#define ID(v) v\n#define BS 128 + 128\n",
          "  k<<<(n + 255) / ID(BS), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("bind with the code around its use") != std::string::npos, r.reason);
  // Both branches of an undecided ?: would be evaluated: a write in one is refused.
  r = run("",
          "  int g = n / 64;\n  int m = g++ < 100 ? g++ : 100;\n"
          "  k<<<m, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("launch, allocate or assign") != std::string::npos, r.reason);
  // Unsigned integers: C++ compares a negative signed value with one as unsigned, and unsigned
  // arithmetic wraps below zero; kernrl, which follows integers as signed, refuses both.
  r = run("",
          "  unsigned u = n / 64;\n  int m = 3 - n / 64;\n  int g = u < m ? 1 : 2;\n"
          "  k<<<g, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("compares an unsigned integer") != std::string::npos, r.reason);
  r = run("",
          "  size_t u = n / 64;\n  size_t w = u - 100000;\n"
          "  k<<<(int)(w / 1000000000), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("wraps around") != std::string::npos, r.reason);
  // Where nothing is negative, unsigned values are followed as any other.
  r = run("",
          "  unsigned u = n;\n  const unsigned blocks = (u + 255u) / 256u;\n"
          "  k<<<blocks < 65535u ? blocks : 65535u, 256>>>(x.data_ptr<float>(), "
          "y.data_ptr<float>(), n);");
  REQUIRE_MESSAGE(r.converted, r.reason);
}

TEST_CASE("import_kernelbench: a function-like macro expands as the preprocessor expands it") {
  ProblemSpec p = problem("L1_26");  // x: [batch_size, dim]
  auto run = [&](const std::string& body) {
    std::string cuda = R"(
template <int A, bool V> __global__ void k(const float* x, float* y, int n) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int n = x.numel();
  const int act = 2;
)" + body + R"(
  return y;
}
)";
    CAPTURE(body);
    return import_kernelbench(module(cuda, "f", "x", "ext.f(x)"), p);
  };
  // Statements: an `if`/`else` of launches, used without a semicolon in braces; #undef after.
  auto r = run(R"(  const bool vec = true;
#define LAUNCH(A) \
  if (vec) k<A, true><<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); \
  else k<A, false><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  if (act == 1) { LAUNCH(1) } else if (act == 2) { LAUNCH(2) } else { LAUNCH(0) }
#undef LAUNCH)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel == "k<2, true>");
  CHECK(plan.launches[0].block == std::vector<std::string>{"256"});

  // The macro's `if` on the sizes, which differs between size sets: both launches, each where
  // its branch runs.
  r = run(R"(  const bool vec = (n % 4 == 0);
#define LAUNCH(A) \
  if (vec) k<A, true><<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); \
  else k<A, false><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  if (act == 1) { LAUNCH(1) } else if (act == 2) { LAUNCH(2) } else { LAUNCH(0) })");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].kernel == "k<2, true>");
  CHECK(plan.launches[1].kernel == "k<2, false>");
  CHECK_FALSE(plan.launches[0].repeat_count.empty());
  CHECK_FALSE(plan.launches[1].repeat_count.empty());

  // Without braces the expansion is the statement C++ sees: `if (act == 1) LAUNCH(1) else ...`
  // is an `if` whose body is the macro's `if`/`else`, and the second `else` is the outer one's.
  r = run(R"(  const bool vec = false;
#define LAUNCH(A) \
  if (vec) k<A, true><<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); \
  else k<A, false><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  if (act == 1) LAUNCH(1) else LAUNCH(2))");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel == "k<2, false>");
  // Two statements where C++ takes one: the second is not under the `if`.
  r = run(R"(#define TWO(A) \
  k<A, true><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); \
  k<A, false><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  if (act == 1) TWO(1);)");
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("more than one statement") != std::string::npos);
  // In a block they run in order.
  r = run(R"(#define TWO(A) \
  k<A, true><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n); \
  k<A, false><<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  if (act == 2) { TWO(2) })");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].kernel == "k<2, true>");
  CHECK(plan.launches[1].kernel == "k<2, false>");

  // The parameters are replaced by the arguments' tokens, not by their values: HALF(n + 2) is
  // n + 2 / 2. An expansion alone between delimiters is its value.
  r = run(R"(#define HALF(v) v / 2
  int b = HALF(n + 2);
  k<0, true><<<b, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].grid == std::vector<std::string>{"batch_size * dim + 1"});

  // The definition that applies is the last one before the use.
  r = run(R"(#define THREADS(v) 32
  int a = THREADS(0);
#undef THREADS
#define THREADS(v) (v * 2)
  k<0, true><<<a, THREADS(64)>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].grid == std::vector<std::string>{"32"});
  CHECK(plan.launches[0].block == std::vector<std::string>{"128"});

  // After #undef the name is no macro.
  r = run(R"(#define THREADS(v) 32
#undef THREADS
  k<0, true><<<1, THREADS(0)>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);)");
  CHECK_FALSE(r.converted);
  CHECK(r.reason.find("`THREADS`") != std::string::npos);
  CHECK(r.reason.find("does not define") != std::string::npos);

  // An expansion whose operators would bind with the code around it; a list in an expression;
  // stringising and pasting; variadic macros: refused.
  for (const char* bad : {"#define TWICE(v) v + v\n  int b = TWICE(n) * 2;\n"
                          "  k<0, true><<<b, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);",
                          "#define PAIR(v) v, 32\n  int b = (PAIR(1));\n"
                          "  k<0, true><<<b, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);",
                          "#define CAT(a, b) a##b\n  int k1 = 1;\n  int b = CAT(k, 1);\n"
                          "  k<0, true><<<b, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);",
                          "#define GO(...) k<0, true><<<1, 32>>>(__VA_ARGS__);\n"
                          "  GO(x.data_ptr<float>(), y.data_ptr<float>(), n)"}) {
    r = run(bad);
    CAPTURE(r.reason);
    CHECK_FALSE(r.converted);
    CHECK(r.category == "unsupported_cuda");
    CHECK(r.reason.find("macro") != std::string::npos);
  }
  CHECK(run("#define TWICE(v) v + v\n  int b = TWICE(n) * 2;\n"
            "  k<0, true><<<b, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);")
            .reason.find("bind with the code around its use") != std::string::npos);
}

TEST_CASE("import_kernelbench: __init__ values computed by a function of the module") {
  ProblemSpec p = suite_linear();  // ModelNew(input_size, output_size, divisor); divisor 10.0
  auto run = [&](const std::string& def, const std::string& attr_value) {
    std::string py = suite_module("        return ext.epilogue(self.linear(x), self.d)",
                                  std::string(kLinearInit) + "\n        self.d = " + attr_value);
    py.insert(py.find("class ModelNew"), def + "\n\n");
    CAPTURE(def);
    return import_kernelbench(py, p);
  };
  const std::string as_float =
      "def _as_float(d):\n"
      "    if isinstance(d, (tuple, list)):\n"
      "        assert all(v == d[0] for v in d), \"one value\"\n"
      "        return float(d[0])\n"
      "    assert d > 0, \"positive\"\n"
      "    return float(d)\n";
  auto r = run(as_float, "_as_float(divisor)");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[1].args[2].text == "0.1");
  // A function the module binds again (Python calls the last binding): not followed.
  for (const char* again : {"_as_float = lambda d: d * 3",
                            "if True:\n    def _as_float(d):\n"
                            "        return d * 3",
                            "globals()['_as_float'] = lambda d: d * 3"}) {
    r = run(as_float + again + "\n", "_as_float(divisor)");
    CHECK_FALSE_MESSAGE(r.converted, again);
  }
  // Through a tuple and another function.
  r = run(as_float + "\ndef _twice(d):\n    return 2 * _as_float(d)\n",
          "_twice((divisor, divisor)) / 2");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(checked_plan(r, p).launches[1].args[2].text == "0.1");

  // An assert that fails: PyTorch raises building ModelNew.
  r = run(as_float, "_as_float((divisor, 2.0))");
  CHECK_FALSE(r.converted);
  CHECK(r.category == "mismatch");
  CHECK(r.reason.find("fails for this problem") != std::string::npos);
  // One kernrl cannot decide.
  r = run("def _f(d):\n    assert d.is_integer()\n    return d\n", "_f(divisor)");
  CHECK_FALSE(r.converted);
  // A function that computes with PyTorch is not a value.
  r = run("def _f(d):\n    t = torch.ones(3)\n    return d\n", "_f(divisor)");
  CHECK_FALSE(r.converted);
  // A name __init__ binds itself shadows the module's function.
  r = run(as_float, "_as_float(divisor)\n        _as_float = 3");
  CHECK_FALSE(r.converted);
}

namespace {

// A suite problem whose reference holds its linear layer in a submodule of its own class:
// Model(input_size, output_size, divisor).block = Block(input_size, output_size, divisor), or in
// an nn.Sequential of Blocks (`blocks.0`). Parameters by module path.
ProblemSpec suite_submodule(bool in_sequential) {
  const std::string at = in_sequential ? "blocks.0" : "block";
  const std::string model_init = in_sequential
                                     ? "self.blocks = torch.nn.Sequential(Block(input_size, "
                                       "output_size, divisor))"
                                     : "self.block = Block(input_size, output_size, divisor)";
  std::string yaml =
      R"(id: L3_99_Blocks
level: 3
name: Blocks
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
  - {name: )" +
      at + R"(.linear.weight, dtype: float32, shape: [output_size, input_size], init: custom}
  - {name: )" +
      at + R"(.linear.bias, dtype: float32, shape: [output_size], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, output_size]}
modules: {)" +
      (in_sequential ? std::string("\"blocks\": [\"Sequential\"], ") : "") + "\"" + at +
      "\": [\"kernelbench_problem:Block\"], \"" + at +
      R"(.linear": ["Linear"]}
flops: "0"
bytes: auto
torch: |
  import torch
  class Block(torch.nn.Module):
      def __init__(self, i, o, scale):
          super().__init__()
          self.linear = torch.nn.Linear(i, o)
          self.scale = scale
      def forward(self, x):
          return torch.nn.functional.gelu(self.linear(x) / self.scale)
  class Model(torch.nn.Module):
      def __init__(self, input_size, output_size, divisor):
          super().__init__()
          )" +
      model_init + R"(
      def forward(self, x):
          return )" +
      (in_sequential ? "self.blocks(x)" : "self.block(x)") + R"(
  batch_size = 128
  input_size = 512
  output_size = 1024
  divisor = 10.0
  def get_inputs():
      return [torch.rand(batch_size, input_size)]
  def get_init_inputs():
      return [input_size, output_size, divisor]
)";
  return parse_problem_yaml(yaml, "suite.yaml");
}

// A generation whose ModelNew builds `model_init` and runs `model_forward`, with the file's class
// Block (its __init__ header `block_params`, body `block_init`, forward body `block_forward`).
std::string submodule_module(const std::string& block_params, const std::string& block_init,
                             const std::string& block_forward, const std::string& model_init,
                             const std::string& model_forward) {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         std::string(kScaleGelu) +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"epilogue\"])\n\n"
         "class Block(nn.Module):\n"
         "    def __init__(self, " +
         block_params + "):\n        super().__init__()\n" + block_init +
         "\n    def forward(self, x):\n" + block_forward +
         "\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, input_size, output_size, divisor):\n"
         "        super().__init__()\n" +
         model_init + "\n    def forward(self, x):\n" + model_forward + "\n";
}

}  // namespace

TEST_CASE("import_kernelbench: a submodule of the file's own class runs its forward") {
  const std::string block_init =
      "        self.linear = nn.Linear(i, o, bias=use_bias)\n        self.scale = scale";
  const std::string block_forward =
      "        return ext.epilogue(self.linear(x), float(self.scale))";
  // `self.block(x)`: Block's forward with `self` the submodule; its layer's parameters are the
  // suite's by module path, its attributes what its __init__ sets from the constructor's
  // arguments (by position, keyword and default).
  {
    ProblemSpec p = suite_submodule(false);
    std::string py =
        submodule_module("i, o, scale=2.0, use_bias=True", block_init, block_forward,
                         "        self.block = Block(input_size, o=output_size, scale=divisor)",
                         "        return self.block(x)");
    auto r = import_kernelbench(py, p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CHECK(plan.launches[0].torch == "linear");
    CHECK(arg_texts(plan.launches[0]) ==
          std::vector<std::string>{"x", "block.linear.weight", "block.linear.bias"});
    CHECK(plan.launches[1].kernel == "scale_gelu");
    CHECK(plan.launches[1].args[2].text == "0.1");  // 1 / divisor, the constructor's argument
    // The default where the argument is not given.
    py = submodule_module("i, o, scale=2.0, use_bias=True", block_init, block_forward,
                          "        self.block = Block(input_size, output_size)",
                          "        return self.block(x)");
    r = import_kernelbench(py, p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CHECK(plan.launches[1].args[2].text == "0.5");
    // bias=False in the submodule's own __init__: the step has no bias.
    py = submodule_module("i, o, scale=2.0, use_bias=True", block_init, block_forward,
                          "        self.block = Block(input_size, output_size, divisor, False)",
                          "        return self.block(x)");
    r = import_kernelbench(py, p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    plan = checked_plan(r, p);
    CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x", "block.linear.weight"});
  }
  // A child of an nn.Sequential, iterated over and indexed: `blocks.0.linear.weight`.
  {
    ProblemSpec p = suite_submodule(true);
    for (const char* fwd : {"        for m in self.blocks:\n            x = m(x)\n        return x",
                            "        return self.blocks[0](x)"}) {
      std::string py = submodule_module(
          "i, o, scale, use_bias=True", block_init, block_forward,
          "        self.blocks = nn.Sequential(Block(input_size, output_size, divisor))", fwd);
      auto r = import_kernelbench(py, p);
      REQUIRE_MESSAGE(r.converted, fwd, ": ", r.reason);
      LaunchPlan plan = checked_plan(r, p);
      REQUIRE(plan.launches.size() == 2);
      CHECK(arg_texts(plan.launches[0]) ==
            std::vector<std::string>{"x", "blocks.0.linear.weight", "blocks.0.linear.bias"});
      CHECK(plan.launches[1].args[2].text == "0.1");
    }
  }
  // A submodule of a submodule, in a ModuleList indexed: Outer's `self.linear` is a
  // Block, whose `self.linear` is the nn.Linear (`block.0.linear.linear.weight`); each `self` its
  // own, each __init__ bound to the arguments its parent gives.
  {
    ProblemSpec p = suite_submodule(false);
    for (auto& t : p.parameters) t.name = "block.0.linear." + t.name.substr(6);
    p.modules = {{"block", {"ModuleList"}},
                 {"block.0", {"kernelbench_problem:Outer"}},
                 {"block.0.linear", {"kernelbench_problem:Block"}},
                 {"block.0.linear.linear", {"Linear"}}};
    std::string py = submodule_module(
        "i, o, scale, use_bias=True", block_init, block_forward,
        "        self.block = nn.ModuleList([Outer(input_size, output_size, divisor)])",
        "        k = 0\n        return self.block[k](x)");
    py.insert(py.find("class ModelNew"),
              "class Outer(nn.Module):\n    def __init__(self, a, b, c):\n"
              "        super().__init__()\n        self.linear = Block(a, b, scale=c)\n\n"
              "    def forward(self, x):\n        return self.linear(x)\n\n\n");
    auto r = import_kernelbench(py, p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    LaunchPlan plan = checked_plan(r, p);
    REQUIRE(plan.launches.size() == 2);
    CHECK(arg_texts(plan.launches[0]) == std::vector<std::string>{"x",
                                                                  "block.0.linear.linear.weight",
                                                                  "block.0.linear.linear.bias"});
    CHECK(plan.launches[1].args[2].text == "0.1");
  }
  // Refused, with the reason.
  ProblemSpec p = suite_submodule(false);
  auto refused = [&](const std::string& py, const std::string& why) {
    auto r = import_kernelbench(py, p);
    CHECK_FALSE_MESSAGE(r.converted, why);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, r.reason);
  };
  const std::string ctor = "        self.block = Block(input_size, output_size, divisor)";
  const std::string call = "        return self.block(x)";
  // A class that overrides __call__: what a call runs is not its forward.
  refused(submodule_module("i, o, scale, use_bias=True",
                           block_init + "\n    def __call__(self, x):\n        return x",
                           block_forward, ctor, call),
          "defines __call__");
  // A forward hook.
  refused(submodule_module("i, o, scale, use_bias=True", block_init, block_forward,
                           ctor + "\n        self.block.register_forward_hook(lambda m, a, o: o)",
                           call),
          "register_forward_hook");
  // forward(self, *args), here as a second `def forward` (Python keeps the last): a method the
  // class body binds twice is refused first.
  refused(submodule_module("i, o, scale, use_bias=True", block_init,
                           "        return ext.epilogue(self.linear(x), 1.0)\n"
                           "    def forward(self, *xs):\n        return xs[0]",
                           ctor, call),
          "binds its method `forward` more than once");
  // A constructor argument kernrl cannot bind, or one missing.
  refused(submodule_module("i, o, scale, use_bias=True", block_init, block_forward,
                           "        self.block = Block(input_size, output_size)", call),
          "without its argument `scale`");
  refused(
      submodule_module("i, o, scale, use_bias=True", block_init, block_forward,
                       "        self.block = Block(input_size, output_size, divisor, k=1)", call),
      "keyword argument `k`");
  // An attribute the submodule's __init__ sets twice.
  refused(submodule_module("i, o, scale, use_bias=True",
                           block_init + "\n        self.scale = 2 * scale",
                           "        return ext.epilogue(self.linear(x), self.scale)", ctor, call),
          "`self.block.scale`, which Block (`self.block`)'s __init__ sets more than once");
  // A submodule ModelNew's __init__ sets twice, or builds in a loop (kernrl cannot tell which
  // constructor call built it).
  refused(submodule_module("i, o, scale, use_bias=True", block_init, block_forward,
                           "        self.block = Block(input_size, output_size, divisor)\n"
                           "        self.block = Block(input_size, output_size, divisor)",
                           call),
          "`self.block`, which ModelNew's __init__ sets more than once");
  {
    ProblemSpec ps = suite_submodule(true);
    auto r = import_kernelbench(
        submodule_module("i, o, scale, use_bias=True", block_init, block_forward,
                         "        self.blocks = nn.Sequential()\n        for _ in range(1):\n"
                         "            self.blocks.append(Block(input_size, output_size, divisor))",
                         "        return self.blocks[0](x)"),
        ps);
    CHECK_FALSE(r.converted);
    CHECK(r.category == "host_logic");
    CHECK_MESSAGE(r.reason.find("`self.blocks.0`") != std::string::npos, r.reason);
  }
  // Recursion: a forward that calls its own module.
  refused(submodule_module("i, o, scale, use_bias=True", block_init, "        return self(x)", ctor,
                           call),
          "calls the model itself");
  // A layer of the submodule built as another class than problem.yaml's modules records there.
  refused(submodule_module("i, o, scale, use_bias=True",
                           "        self.linear = nn.LazyLinear(o)\n        self.scale = scale",
                           block_forward, ctor, call),
          "where the reference module has Linear");
  // A layer of a submodule that its forward hands back to ModelNew's, called there.
  refused(
      submodule_module("i, o, scale, use_bias=True", block_init, "        return self.linear", ctor,
                       "        lin = self.block(x)\n        return ext.epilogue(lin(x), 1.0)"),
      "a layer of `self.block`");
  // Reading a submodule's attribute from ModelNew's forward.
  refused(submodule_module("i, o, scale, use_bias=True", block_init, block_forward, ctor,
                           "        return ext.epilogue(self.block.linear(x), 1.0)"),
          "outside that class's forward");
}

TEST_CASE("import_kernelbench: an nn.Sequential forward calls runs its children in turn") {
  // Both modules build net = Sequential(Linear, <middle>, Linear); forward calls it.
  auto run = [](const std::string& middle, const std::string& forward) {
    ProblemSpec p =
        suite_mlp(true,
                  "{\"net\": [\"Sequential\"], \"net.0\": [\"Linear\"], "
                  "\"net.1\": [\"" +
                      middle.substr(3, middle.find('(') - 3) + "\"], \"net.2\": [\"Linear\"]}");
    const std::string ctor = "nn.Sequential(nn.Linear(input_size, hidden), " + middle +
                             ",\n                                 nn.Linear(hidden, output_size))";
    std::string ref = p.torch;
    const std::string ref_ctor =
        "nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
        "                                 nn.Linear(hidden, output_size))";
    REQUIRE(ref.find(ref_ctor) != std::string::npos);
    ref.replace(ref.find(ref_ctor), ref_ctor.size(), ctor);
    p.torch = ref;
    std::string py = mlp_module(forward);
    py.replace(py.find(ref_ctor), ref_ctor.size(), ctor);
    auto r = import_kernelbench(py, p);
    return std::make_pair(r, p);
  };
  auto steps_of = [](const KernelBenchImport& r, const ProblemSpec& p) {
    std::vector<std::string> steps;
    for (const auto& l : checked_plan(r, p).launches)
      steps.push_back(l.torch.empty() ? l.kernel : l.torch + ":" + l.args[1].text);
    return steps;
  };
  const std::string call = "        return ext.bias_act(self.net(x), self.net[2].bias, False)";
  for (const char* middle : {"nn.Dropout(0.0)", "nn.Dropout(p=0)", "nn.Dropout(0.0, True)"}) {
    CAPTURE(middle);
    auto [r, p] = run(middle, call);
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(steps_of(r, p) == std::vector<std::string>{"linear:net.0.weight", "linear:net.2.weight",
                                                     "bias_act_kernel"});
  }
  // The dropout called by itself: its input.
  {
    auto [r, p] = run("nn.Dropout(0.0)",
                      "        y = self.net[1](self.net[0](x))\n"
                      "        return ext.bias_act(self.net[2](y), self.net[2].bias, False)");
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(steps_of(r, p).size() == 3);
  }
  // A dropout that drops (p > 0: random in training mode), a layer kernrl does not map, two
  // arguments: refused.
  for (const auto& [middle, forward] : std::vector<std::pair<std::string, std::string>>{
           {"nn.Dropout(0.1)", call},
           {"nn.Dropout()", call},
           {"nn.ReLU()", call},
           {"nn.Dropout(0.0)",
            "        return ext.bias_act(self.net(x, x), self.net[2].bias, False)"}}) {
    CAPTURE(middle);
    auto [r, p] = run(middle, forward);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.category == "torch_op_in_forward", r.reason);
  }
}

TEST_CASE("import_kernelbench: an item of a list forward makes, replaced in place") {
  ProblemSpec p = suite_mlp(true);
  const std::string use =
      "        y = ext.bias_act(torch.mm(x, self.net[0].weight.t()), self.net[0].bias, flags[0])\n"
      "        return ext.bias_act(torch.mm(y, self.net[2].weight.t()), self.net[2].bias, "
      "flags[1])";
  // Every name that holds the list sees the change, as in Python; a negative index counts from
  // the end.
  for (const std::string& set : {std::string("        alias = flags\n        alias[1] = False\n"),
                                 std::string("        flags[-1] = 0 > 1\n"),
                                 std::string("        pair = [flags, 1]\n"
                                             "        pair[0][1] = True\n"
                                             "        flags[pair[1]] = False\n")}) {
    CAPTURE(set);
    auto r = import_kernelbench(mlp_module("        flags = [True, True]\n" + set + use), p);
    if (set.find("pair[0][1]") != std::string::npos) {
      // (An item of an item: not followed.)
      CHECK_FALSE(r.converted);
      continue;
    }
    check_mlp_plan(r, p);
  }
  // A tuple (Python raises), an index past the end, a slice, a list a loop iterates over, a list
  // not made in forward: refused.
  for (const std::string& set :
       {std::string("        flags = (True, True)\n        flags[1] = False\n"),
        std::string("        flags = [True, True]\n        flags[2] = False\n"),
        std::string("        flags = [True, True]\n        flags[1:] = [False]\n"),
        std::string("        flags = [True, True]\n        for f in flags:\n"
                    "            flags[1] = False\n"),
        std::string("        flags = self.flags\n        flags[1] = False\n"),
        std::string("        flags = [True, True]\n        flags[x.size(0) - 1] = False\n")}) {
    CAPTURE(set);
    auto r = import_kernelbench(mlp_module(set + use, "        self.flags = [True, True]\n"), p);
    CHECK_FALSE(r.converted);
  }
}

TEST_CASE("import_kernelbench: a Sequential __init__ builds through a method or a function") {
  ProblemSpec p = suite_mlp(true);
  const std::string forward =
      "        x = ext.bias_act(self.net[0](x), self.net[0].bias, True)\n"
      "        return ext.bias_act(self.net[2](x), self.net[2].bias, False)";
  const std::string in_place =
      "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
      "                                 nn.Linear(hidden, output_size))\n";
  // ModelNew whose net is `init` (indented 8), with `extra` after the class.
  auto with = [&](const std::string& init, const std::string& extra) {
    std::string py = mlp_module(forward);
    py.replace(py.find(in_place), in_place.size(), init);
    return py + extra;
  };
  const std::string call = "        self.net = self._make(input_size, hidden, o=output_size)\n";
  // A method that returns the nn.Sequential directly: the same layers as built in place.
  check_mlp_plan(import_kernelbench(with(call,
                                         "\n    def _make(self, i, h, o):\n"
                                         "        \"\"\"The MLP.\"\"\"\n"
                                         "        return nn.Sequential(nn.Linear(i, h), "
                                         "nn.ReLU(), nn.Linear(h, o))\n"),
                                    p),
                 p);
  // From a list it appends to in a loop kernrl unrolls, under conditions it decides.
  const std::string appended =
      "        layers = []\n"
      "        n = 2\n"
      "        for k in range(n):\n"
      "            if k == 0:\n"
      "                layers.append(nn.Linear(i, h))\n"
      "                layers.append(nn.ReLU())\n"
      "            else:\n"
      "                layers.append(nn.Linear(h, o))\n"
      "        return nn.Sequential(*layers)\n";
  check_mlp_plan(import_kernelbench(with(call, "\n    def _make(self, i, h, o):\n" + appended), p),
                 p);
  // A function of the module, likewise.
  check_mlp_plan(
      import_kernelbench(with("        self.net = make_mlp(input_size, hidden, output_size)\n",
                              "\n\ndef make_mlp(i, h, o):\n" + appended),
                         p),
      p);
  // A condition on a size that differs between the size sets: refused, naming it.
  auto r = import_kernelbench(
      with(call,
           "\n    def _make(self, i, h, o):\n"
           "        if h > 20:\n"
           "            return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))\n"
           "        return nn.Sequential(nn.Linear(i, h), nn.GELU(), nn.Linear(h, o))\n"),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("`h > 20`, a condition kernrl cannot decide") != std::string::npos,
                r.reason);
  // A layer the method builds twice into the list (one module in Python): refused.
  r = import_kernelbench(
      with(call,
           "\n    def _make(self, i, h, o):\n"
           "        act = nn.ReLU()\n"
           "        return nn.Sequential(nn.Linear(i, h), act, nn.Linear(h, o))\n"),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("self._make") != std::string::npos, r.reason);
  // A layer of another class than the reference's at that path: refused.
  r = import_kernelbench(with(call,
                              "\n    def _make(self, i, h, o):\n"
                              "        return nn.Sequential(nn.Linear(i, h), nn.ReLU(), "
                              "nn.Bilinear(h, h, o))\n"),
                         p);
  CHECK_FALSE(r.converted);
}

namespace {

// A suite problem with an nn.GRU's parameters by module path (`rnn.weight_ih_l0`, ...): two
// layers of two directions, each weight [n, n].
ProblemSpec suite_rnn() {
  std::string yaml = R"(id: L3_41_GRUBidirectional
level: 3
name: GRUBidirectional
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 16, n: 64}
  test:
    - {batch_size: 3, n: 5}
    - {batch_size: 4, n: 7}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, n], init: {uniform: {low: 0, high: 1}}}
parameters:
)";
  for (const char* w :
       {"weight_ih_l0", "weight_ih_l0_reverse", "weight_ih_l1", "weight_ih_l1_reverse"})
    yaml += std::string("  - {name: rnn.") + w + ", dtype: float32, shape: [n, n], init: custom}\n";
  yaml += R"(outputs:
  - {name: out, dtype: float32, shape: [batch_size, n]}
modules: {"rnn": ["GRU"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, n):
          super().__init__()
          self.rnn = nn.GRU(n, n, 2, bias=False, bidirectional=True)
      def forward(self, x):
          return x
  batch_size = 16
  n = 64
  def get_inputs():
      return [torch.rand(batch_size, n)]
  def get_init_inputs():
      return [n]
)";
  return parse_problem_yaml(yaml, "suite.yaml");
}

// ModelNew of suite_rnn: `methods` (indented 4) then forward's body `forward` (indented 8), which
// may call ext.epilogue(y, divisor) (kScaleGelu).
std::string rnn_module(const std::string& methods, const std::string& forward) {
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         std::string(kScaleGelu) +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"epilogue\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, n):\n"
         "        super().__init__()\n"
         "        self.rnn = nn.GRU(n, n, 2, bias=False, bidirectional=True)\n\n" +
         methods + "\n    def forward(self, x):\n" + forward + "\n";
}

}  // namespace

TEST_CASE("import_kernelbench: getattr with a name kernrl knows is the attribute, as obj.name") {
  ProblemSpec p = suite_rnn();
  auto linear_weights = [&](const KernelBenchImport& r) {
    REQUIRE_MESSAGE(r.converted, r.reason);
    std::vector<std::string> w;
    for (const auto& l : checked_plan(r, p).launches)
      if (l.torch == "linear") w.push_back(l.args[1].text);
    return w;
  };
  // An f-string of a loop variable, and of a method's argument with a concatenation.
  const std::string method =
      "    def _w(self, l, rev):\n"
      "        g = self.rnn\n"
      "        return getattr(g, f\"weight_ih_l{l}\" + (\"_reverse\" if rev else \"\"))\n";
  auto r = import_kernelbench(
      rnn_module(method,
                 "        for l in range(2):\n"
                 "            x = F.linear(x, getattr(self.rnn, f'weight_ih_l{l}'))\n"
                 "            x = F.linear(x, self._w(l, True))\n"
                 "        x = F.linear(x, getattr(self.rnn, 'weight_ih_l' + f'{2 - 1}'))\n"
                 "        return ext.epilogue(x, 1.0)"),
      p);
  CHECK(linear_weights(r) ==
        std::vector<std::string>{"rnn.weight_ih_l0", "rnn.weight_ih_l0_reverse", "rnn.weight_ih_l1",
                                 "rnn.weight_ih_l1_reverse", "rnn.weight_ih_l1"});
  // An f-string joined with a plain string keeps the plain part's braces as written.
  r = import_kernelbench(
      rnn_module("",
                 "        x = F.linear(x, getattr(self.rnn, 'weight_ih_l{l}' f'{0}'))\n"
                 "        return ext.epilogue(x, 1.0)"),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("not an identifier") != std::string::npos, r.reason);
  // What kernrl cannot compute, or getattr does otherwise than obj.name: refused, saying why.
  const std::pair<const char*, const char*> refused[] = {
      {"getattr(self.rnn, f'weight_ih_l{x.shape[0]}')", "a name kernrl cannot compute"},
      {"getattr(self.rnn, f'weight_ih_l{0:d}')", "a name kernrl cannot compute"},
      {"getattr(self.rnn, f'weight_ih_l{0.5}')", "a name kernrl cannot compute"},
      {"getattr(self.rnn, 'weight_ih_l0', None)", "with a default"},
      {"getattr(self.rnn, name='weight_ih_l0')", "other than two arguments"},
      {"getattr(self.rnn, 'rnn.weight_ih_l0')", "not an identifier"},
  };
  for (const auto& [call, why] : refused) {
    r = import_kernelbench(rnn_module("", std::string("        x = F.linear(x, ") + call +
                                              ")\n        return ext.epilogue(x, 1.0)"),
                           p);
    CHECK_FALSE_MESSAGE(r.converted, call);
    CHECK_MESSAGE(r.reason.find(why) != std::string::npos, call, ": ", r.reason);
  }
  // A getattr the module binds itself is not Python's.
  std::string py = rnn_module("",
                              "        x = F.linear(x, getattr(self.rnn, 'weight_ih_l0'))\n"
                              "        return ext.epilogue(x, 1.0)");
  py.insert(py.find("class ModelNew"), "getattr = lambda o, n: o\n\n");
  CHECK_FALSE(import_kernelbench(py, p).converted);
}

TEST_CASE("import_kernelbench: torch.stack is torch.cat of the tensors unsqueezed") {
  ProblemSpec p = suite_rnn();
  auto r = import_kernelbench(
      rnn_module("",
                 "        w = torch.stack([self.rnn.weight_ih_l0, self.rnn.weight_ih_l1], "
                 "dim=1)\n"
                 "        x = F.linear(x, w.reshape(2 * x.shape[1], -1)[:x.shape[1]])\n"
                 "        return ext.epilogue(x, 1.0)"),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  const LaunchSpec* cat = nullptr;
  for (const auto& l : plan.launches)
    if (l.torch == "cat") cat = &l;
  REQUIRE(cat != nullptr);
  CHECK(cat->args[0].kind == ArgKind::TensorList);
  CHECK(cat->args[1].text == "1");
  // The result is [n, 2, n]: the pieces [n, 1, n] each.
  bool found = false;
  for (const auto& s : plan.scratch)
    if (s.name == cat->out) {
      found = true;
      CHECK(s.shape == std::vector<std::string>{"n", "2", "n"});
    }
  CHECK(found);
  // Tensors of different shapes, or a dimension out of range: refused.
  for (const char* bad : {"torch.stack([self.rnn.weight_ih_l0, x], dim=0)",
                          "torch.stack([self.rnn.weight_ih_l0, self.rnn.weight_ih_l1], dim=3)"}) {
    r = import_kernelbench(
        rnn_module("", std::string("        w = ") + bad +
                           "\n        return ext.epilogue(F.linear(x, w[0]), 1.0)"),
        p);
    CHECK_FALSE_MESSAGE(r.converted, bad);
    CHECK(r.category == "torch_op_in_forward");
  }
}

TEST_CASE("import_kernelbench: self.modules() in any() and all() is the reference's modules") {
  ProblemSpec p = suite_mlp(true);  // net: Sequential(Linear, ReLU, Linear)
  const std::string body =
      "        y = ext.bias_act(torch.mm(x, self.net[0].weight.t()), self.net[0].bias, True)\n"
      "        return ext.bias_act(torch.mm(y, self.net[2].weight.t()), self.net[2].bias, False)";
  // ModelNew itself comes first (an nn.Module, no other torch.nn class), then its layers.
  for (const char* cond :
       {"not any(isinstance(m, nn.ReLU) for m in self.modules())",
        "any(isinstance(m, nn.Dropout) and m.p > 0 for m in self.modules())",
        "not all(isinstance(m, nn.Module) for m in self.modules())",
        "not any(isinstance(m, nn.Linear) for m in self.modules())",
        "not any(isinstance(m, nn.Sequential) for m in self.children())",
        "any(isinstance(m, nn.ReLU) for m in self.children())",

        "not all(isinstance(m, nn.Linear) and m.out_features > 0 for m in self.net if "
        "not isinstance(m, nn.ReLU))"}) {
    auto r = import_kernelbench(
        mlp_module(std::string("        if ") + cond + ":\n            return x\n" + body), p);
    CAPTURE(cond);
    check_mlp_plan(r, p);
  }
  // named_modules() names a module registered twice by its first name only: refused.
  auto r = import_kernelbench(
      mlp_module("        if any(n == 'net.1' for n, m in self.named_modules()):\n"
                 "            return x\n" +
                 body),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("by its first name") != std::string::npos, r.reason);
  // Anywhere else it could count a module registered under two names twice: refused.
  for (const char* use :
       {"        for m in self.modules():\n            pass\n",
        "        mods = list(self.modules())\n", "        mods = [m for m in self.children()]\n"}) {
    r = import_kernelbench(mlp_module(use + body), p);
    CHECK_FALSE_MESSAGE(r.converted, use);
    CHECK_MESSAGE(r.reason.find("other than as what a generator passed to any() or all()") !=
                      std::string::npos,
                  r.reason);
  }
  // A method of ModelNew's own of that name is that method (torch's would yield the ReLU).
  r = import_kernelbench(
      mlp_module("        if any(isinstance(m, nn.ReLU) for m in self.modules()):\n"
                 "            return x\n" +
                 body + "\n\n    def modules(self):\n        return [self.net[0]]"),
      p);
  check_mlp_plan(r, p);
  // Without the reference's modules, or with layers built otherwise: refused.
  r = import_kernelbench(
      mlp_module("        if any(isinstance(m, nn.Dropout) for m in self.modules()):\n"
                 "            return x\n" +
                 body),
      suite_mlp(false));
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("suites built from KernelBench only") != std::string::npos, r.reason);
  r = import_kernelbench(
      mlp_module("        if any(isinstance(m, nn.Dropout) for m in self.modules()):\n"
                 "            return x\n" +
                     body,
                 "        self.extra = nn.ReLU()\n"),
      p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("from the reference's module only") != std::string::npos, r.reason);
}

namespace {

// A suite problem whose reference builds `self.t = <ctor>` (an nn.TransformerEncoder of two
// nn.TransformerEncoderLayer, d_model n) then runs the statements `init` (one a line, not
// indented), with some of their parameters and all their modules.
ProblemSpec suite_transformer(const std::string& ctor, const std::string& init = "") {
  std::string init_lines;
  for (size_t at = 0; at < init.size();) {
    size_t end = init.find('\n', at);
    if (end == std::string::npos) end = init.size();
    init_lines += "\n          " + init.substr(at, end - at);
    at = end + 1;
  }
  std::string yaml = R"(id: L3_28_VisionTransformer
level: 3
name: VisionTransformer
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 16, n: 64}
  test:
    - {batch_size: 3, n: 8}
    - {batch_size: 4, n: 16}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, n], init: {uniform: {low: 0, high: 1}}}
parameters:
)";
  std::string modules = "modules: {\"t\": [\"TransformerEncoder\"], \"t.layers\": [\"ModuleList\"]";
  for (const char* l : {"0", "1"}) {
    const std::string at = std::string("t.layers.") + l;
    yaml += "  - {name: " + at +
            ".self_attn.in_proj_weight, dtype: float32, shape: [3 * n, n], init: custom}\n";
    yaml += "  - {name: " + at + ".self_attn.out_proj.weight, dtype: float32, shape: [n, n], " +
            "init: custom}\n";
    yaml += "  - {name: " + at + ".self_attn.out_proj.bias, dtype: float32, shape: [n], " +
            "init: custom}\n";
    yaml += "  - {name: " + at + ".linear1.weight, dtype: float32, shape: [n, n], init: custom}\n";
    yaml += "  - {name: " + at + ".linear1.bias, dtype: float32, shape: [n], init: custom}\n";
    modules += ", \"" + at + "\": [\"TransformerEncoderLayer\"], \"" + at +
               ".self_attn\": [\"MultiheadAttention\"], \"" + at +
               ".self_attn.out_proj\": [\"torch.nn.modules.linear:NonDynamicallyQuantizableLinear\""
               ", \"Linear\"]";
    for (const char* c : {"linear1:Linear", "dropout:Dropout", "linear2:Linear", "norm1:LayerNorm",
                          "norm2:LayerNorm", "dropout1:Dropout", "dropout2:Dropout"}) {
      const std::string cd = c;
      modules += ", \"" + at + "." + cd.substr(0, cd.find(':')) + "\": [\"" +
                 cd.substr(cd.find(':') + 1) + "\"]";
    }
  }
  yaml += "outputs:\n  - {name: out, dtype: float32, shape: [batch_size, n]}\n" + modules + "}\n" +
          R"(flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, n):
          super().__init__()
          self.t = )" +
          ctor + init_lines + R"(
      def forward(self, x):
          return x
  batch_size = 16
  n = 64
  def get_inputs():
      return [torch.rand(batch_size, n)]
  def get_init_inputs():
      return [n]
)";
  return parse_problem_yaml(yaml, "suite.yaml");
}

// ModelNew of suite_transformer: `self.t = <ctor>` (then `init`, as there), `methods`, forward's
// `body`.
std::string transformer_module(const std::string& ctor, const std::string& body,
                               const std::string& init = "", const std::string& methods = "") {
  std::string init_lines;
  for (size_t at = 0; at < init.size();) {
    size_t end = init.find('\n', at);
    if (end == std::string::npos) end = init.size();
    init_lines += "        " + init.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
         "from torch.utils.cpp_extension import load_inline\n\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         std::string(kScaleGelu) +
         "\"\"\"\n\n"
         "ext = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, "
         "functions=[\"epilogue\"])\n\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self, n):\n"
         "        super(ModelNew, self).__init__()\n"
         "        self.t = " +
         ctor + "\n" + init_lines + "\n" + methods + "\n    def forward(self, x):\n" + body + "\n";
}

// The launches' arguments of a converted file, in order.
std::vector<std::vector<std::string>> launch_args(const KernelBenchImport& r,
                                                  const ProblemSpec& p) {
  std::vector<std::vector<std::string>> out;
  for (const auto& l : checked_plan(r, p).launches) out.push_back(arg_texts(l));
  return out;
}

const char* kEncoder =
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model=n, nhead=2, dim_feedforward=n, "
    "dropout=0.0, activation=\"gelu\", layer_norm_eps=1e-6), num_layers=2)";

// The checks a generation makes before its own path (dropout inactive, post-norm, its activation).
const char* kGuards =
    "        if self.training and any(isinstance(m, nn.Dropout) and m.p > 0 for m in "
    "self.modules()):\n"
    "            return self.t(x)\n"
    "        if any(getattr(l, 'norm_first', False) or getattr(l.self_attn, 'batch_first', False)"
    " or getattr(l, 'activation', F.relu) is not F.gelu for l in self.t.layers):\n"
    "            return self.t(x)\n"
    "        if self.t.norm is not None:\n"
    "            return self.t(x)\n";

}  // namespace

TEST_CASE("import_kernelbench: settings of layers a torch.nn module builds inside itself") {
  // nn.TransformerEncoder copies its encoder layer num_layers times; nn.TransformerEncoderLayer
  // builds its attention, linears, norms and dropouts from its own arguments; nn.MultiheadAttention
  // its out_proj. Their settings are those torch gives them.
  ProblemSpec p = suite_transformer(kEncoder);
  const std::string settings =
      "        for l in self.t.layers:\n"
      "            a = l.self_attn\n"
      "            x = F.linear(x, l.linear1.weight, l.linear1.bias)\n"
      "            x = ext.epilogue(x, a.num_heads)\n"
      "            x = ext.epilogue(x, a.head_dim)\n"
      "            x = ext.epilogue(x, a.embed_dim + a.kdim + a.vdim)\n"
      "            x = ext.epilogue(x, l.norm1.eps + l.norm2.eps)\n"
      "            x = ext.epilogue(x, l.linear1.out_features + l.linear2.in_features)\n"
      "            x = ext.epilogue(x, a.out_proj.in_features + a.out_proj.out_features)\n"
      "            x = ext.epilogue(x, 1.0 + l.dropout.p + l.dropout1.p + a.dropout)\n"
      "            x = F.linear(x, a.out_proj.weight) if a.out_proj.bias is not None else x\n"
      "            x = F.linear(x, a.in_proj_weight[:x.shape[1]])\n"
      "        return x";
  const std::string literal =
      "        for l in self.t.layers:\n"
      "            a = l.self_attn\n"
      "            x = F.linear(x, l.linear1.weight, l.linear1.bias)\n"
      "            x = ext.epilogue(x, 2)\n"
      "            x = ext.epilogue(x, x.shape[1] // 2)\n"
      "            x = ext.epilogue(x, x.shape[1] + x.shape[1] + x.shape[1])\n"
      "            x = ext.epilogue(x, 1e-6 + 1e-6)\n"
      "            x = ext.epilogue(x, x.shape[1] + x.shape[1])\n"
      "            x = ext.epilogue(x, x.shape[1] + x.shape[1])\n"
      "            x = ext.epilogue(x, 1.0 + 0.0 + 0.0 + 0.0)\n"
      "            x = F.linear(x, a.out_proj.weight)\n"
      "            x = F.linear(x, a.in_proj_weight[:x.shape[1]])\n"
      "        return x";
  auto r = import_kernelbench(transformer_module(kEncoder, kGuards + settings), p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  auto want = import_kernelbench(transformer_module(kEncoder, literal), p);
  REQUIRE_MESSAGE(want.converted, want.reason);
  auto args = launch_args(r, p);
  // Each launch as the literal file's: the arguments joined, so that a difference shows.
  auto want_args = launch_args(want, p);
  CHECK(args.size() == want_args.size());
  for (size_t i = 0; i < args.size() && i < want_args.size(); ++i) {
    std::string got, wanted;
    for (const auto& a : args[i]) got += a + " | ";
    for (const auto& a : want_args[i]) wanted += a + " | ";
    CHECK(got == wanted);
  }
  // Both layers, each by its own module path.
  bool second = false;
  for (const auto& a : args)
    second = second || (a.size() > 1 && a[1] == "t.layers.1.linear1.weight");
  CHECK(second);

  // The defaults: relu, eps 1e-5, dropout 0.1 (random in training mode, which KernelBench's and
  // kernrl's references run in: the generation's own guard takes the reference path, refused).
  const std::string plain = "nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)";
  p = suite_transformer(plain);
  r = import_kernelbench(
      transformer_module(plain, std::string(kGuards) + "        return ext.epilogue(x, 1.0)"), p);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(
      r.reason.find("`self.t` (nn.TransformerEncoder) left in forward") != std::string::npos,
      r.reason);
  r = import_kernelbench(
      transformer_module(plain,
                         "        if getattr(self.t.layers[1], 'activation', F.gelu) is F.relu:\n"
                         "            return ext.epilogue(x, self.t.layers[0].norm2.eps)\n"
                         "        return self.t(x)"),
      p);
  REQUIRE_MESSAGE(r.converted, r.reason);
  want = import_kernelbench(transformer_module(plain, "        return ext.epilogue(x, 1e-05)"), p);
  REQUIRE_MESSAGE(want.converted, want.reason);
  CHECK(launch_args(r, p) == launch_args(want, p));
}

TEST_CASE("import_kernelbench: nn.MultiheadAttention's projections and out_proj") {
  auto suite = [](const std::string& ctor) {
    return parse_problem_yaml(R"(id: L3_50_Attention
level: 3
name: Attention
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 16, n: 64}
  test:
    - {batch_size: 3, n: 8}
    - {batch_size: 4, n: 16}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, n], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: t.in_proj_weight, dtype: float32, shape: [3 * n, n], init: custom}
  - {name: t.out_proj.weight, dtype: float32, shape: [n, n], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, n]}
modules: {"t": ["MultiheadAttention"], "t.out_proj": ["torch.nn.modules.linear:NonDynamicallyQuantizableLinear", "Linear"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, n):
          super().__init__()
          self.t = )" + ctor + R"(
      def forward(self, x):
          return x
  batch_size = 16
  n = 64
  def get_inputs():
      return [torch.rand(batch_size, n)]
  def get_init_inputs():
      return [n]
)",
                              "suite.yaml");
  };
  // Built without biases: in_proj_bias and out_proj.bias are None, whatever the problem holds.
  const std::string no_bias = "nn.MultiheadAttention(n, 2, bias=False)";
  auto r = import_kernelbench(
      transformer_module(
          no_bias,
          "        if self.t.in_proj_bias is None and self.t.out_proj.bias is None:\n"
          "            x = F.linear(x, self.t.out_proj.weight)\n"
          "        return ext.epilogue(x, self.t.kdim + self.t.out_proj.in_features)"),
      suite(no_bias));
  REQUIRE_MESSAGE(r.converted, r.reason);
  auto want = import_kernelbench(
      transformer_module(no_bias,
                         "        x = F.linear(x, self.t.out_proj.weight)\n"
                         "        return ext.epilogue(x, x.shape[1] + x.shape[1])"),
      suite(no_bias));
  REQUIRE_MESSAGE(want.converted, want.reason);
  CHECK(launch_args(r, suite(no_bias)) == launch_args(want, suite(no_bias)));
  // kdim given: whether the projection is packed is not decided; bias is no attribute.
  const std::string kdim = "nn.MultiheadAttention(n, 2, kdim=n // 2)";
  r = import_kernelbench(
      transformer_module(
          kdim,
          "        return ext.epilogue(F.linear(x, self.t.in_proj_weight[:x.shape[1]]), 1.0)"),
      suite(kdim));
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("packs its projections") != std::string::npos, r.reason);
  r = import_kernelbench(
      transformer_module(no_bias, "        return ext.epilogue(x, 1.0 if self.t.bias else 2.0)"),
      suite(no_bias));
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: settings inside a torch.nn module that kernrl cannot be sure of") {
  const std::string read_eps = "        return ext.epilogue(x, self.t.layers[0].norm1.eps)";
  struct Case {
    std::string ctor, init, body, why;
  };
  const std::vector<Case> refused = {
      // torch 2.1's `bias` (torch 1.13 has no such argument): its layers' settings are unknown.
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2, bias=False), 2)", "", read_eps,
       "torch 2.1 added it"},
      // A custom activation, a module as the activation, or torch.relu (not F.relu's object).
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2, activation=lambda v: v), 2)", "",
       "        if self.t.layers[0].activation is F.relu:\n"
       "            return self.t(x)\n" +
           read_eps,
       "the activation `lambda"},
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2, activation=nn.GELU()), 2)", "",
       "        if self.t.layers[0].activation is F.relu:\n"
       "            return self.t(x)\n" +
           read_eps,
       "`self.t.layers[0].activation is F.relu`"},
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2, activation=torch.relu), 2)", "",
       "        if self.t.layers[0].activation is not F.relu:\n"
       "            return self.t(x)\n" +
           read_eps,
       "the activation `torch.relu`"},
      // __init__ changes a setting inside after building the encoder.
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)",
       "self.t.layers[0].norm_first = True",
       "        if self.t.layers[0].norm_first:\n"
       "            return self.t(x)\n" +
           read_eps,
       "assigning inside it after setting it, `self.t.layers[0].norm_first = ...`"},
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)", "self._tweak()",
       "        if self.t.layers[0].norm_first:\n"
       "            return self.t(x)\n" +
           read_eps,
       "calls `self._tweak(...)`"},
      // A setting kernrl does not model, read or asked for with a default.
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)", "",
       "        return ext.epilogue(x, self.t.layers[0].activation_relu_or_gelu)",
       "does not know that setting of it"},
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)", "",
       "        return ext.epilogue(x, getattr(self.t.layers[0], 'activation_relu_or_gelu', 1))",
       "with a default"},
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)", "",
       "        return ext.epilogue(x, getattr(self.t.layers[0], 'd_model', 1))", "with a default"},
      // A norm kernrl cannot see into.
      {"nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2, norm=my_norm)", "",
       "        if self.t.norm is None:\n"
       "            return self.t(x)\n" +
           read_eps,
       "my_norm"},
  };
  for (const auto& c : refused) {
    CAPTURE(c.ctor);
    CAPTURE(c.init);
    ProblemSpec p = suite_transformer(c.ctor, c.init);
    std::string py =
        transformer_module(c.ctor, c.body, c.init, "    def _tweak(self):\n        pass\n");
    py.insert(py.find("class ModelNew"), "my_norm = nn.LayerNorm(4)\n\n");
    auto r = import_kernelbench(py, p);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find(c.why) != std::string::npos, r.reason);
  }
  // The same files without the near-miss convert (the reference's own norm_first read).
  ProblemSpec p = suite_transformer("nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)");
  auto r = import_kernelbench(
      transformer_module("nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2), 2)",
                         "        if self.t.layers[0].norm_first:\n"
                         "            return self.t(x)\n" +
                             read_eps),
      p);
  CHECK_MESSAGE(r.converted, r.reason);
  // A module that changes a mode anywhere: self.training is not decided.
  r = import_kernelbench(
      transformer_module("nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2, dropout=0.0), 2)",
                         "        if self.training and any(isinstance(m, nn.Dropout) and m.p > 0 "
                         "for m in self.modules()):\n"
                         "            return self.t(x)\n" +
                             read_eps,
                         "self.t.eval()"),
      suite_transformer("nn.TransformerEncoder(nn.TransformerEncoderLayer(n, 2, dropout=0.0), 2)",
                        "self.t.eval()"));
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: a list of a container's layers __init__ builds in a loop") {
  // The MLP's layers listed one by one.
  ProblemSpec p = suite_mlp(true);
  const std::string plan_loop =
      "        for i, m in enumerate(self._plan):\n"
      "            if isinstance(m, nn.Linear):\n"
      "                x = ext.bias_act(torch.mm(x, m.weight.t()), m.bias, i == 0)\n"
      "        return x";
  const std::string append =
      "        plan = []\n        for m in self.net:\n            plan.append(m)\n"
      "        self._plan = plan\n";
  check_mlp_plan(import_kernelbench(mlp_module(plan_loop, append), p), p);
  // Nested nn.Sequential children flattened (list(m) of each), other layers appended.
  ProblemSpec nested = parse_problem_yaml(R"(id: L3_1_MLP
level: 3
name: MLP
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 128, input_size: 512, hidden: 256, output_size: 64}
  test:
    - {batch_size: 3, input_size: 33, hidden: 17, output_size: 5}
    - {batch_size: 7, input_size: 64, hidden: 40, output_size: 9}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, input_size], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: net.0.0.weight, dtype: float32, shape: [hidden, input_size], init: custom}
  - {name: net.0.0.bias, dtype: float32, shape: [hidden], init: custom}
  - {name: net.1.weight, dtype: float32, shape: [output_size, hidden], init: custom}
  - {name: net.1.bias, dtype: float32, shape: [output_size], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, output_size]}
modules: {"net": ["Sequential"], "net.0": ["Sequential"], "net.0.0": ["Linear"], "net.0.1": ["ReLU"], "net.1": ["Linear"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, input_size, hidden, output_size):
          super(Model, self).__init__()
          self.net = nn.Sequential(nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU()),
                                   nn.Linear(hidden, output_size))
      def forward(self, x):
          return self.net(x)
)",
                                          "suite.yaml");
  auto nested_module = [&](const std::string& forward, const std::string& extra) {
    std::string py = mlp_module(forward, extra);
    const std::string flat = "nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n";
    py.replace(py.find(flat), flat.size(),
               "nn.Sequential(nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU()),\n");
    return py;
  };
  const std::string flatten =
      "        plan = []\n        for m in self.net:\n"
      "            if isinstance(m, nn.Sequential):\n                plan.extend(list(m))\n"
      "            else:\n                plan.append(m)\n        self._plan = plan\n";
  auto r = import_kernelbench(
      nested_module("        assert len(self._plan) == 3 and isinstance(self._plan[1], nn.ReLU)\n" +
                        plan_loop,
                    flatten),
      nested);
  REQUIRE_MESSAGE(r.converted, r.reason);
  std::vector<std::string> steps;
  for (const auto& l : checked_plan(r, nested).launches)
    steps.push_back(l.torch.empty() ? l.kernel + ":" + l.args.back().text
                                    : l.torch + ":" + l.args[1].text);
  CHECK(steps == std::vector<std::string>{"linear:net.0.0.weight", "bias_act_kernel:1",
                                          "linear:net.1.weight", "bias_act_kernel:0"});
  // Appending only: the nested Sequential stays one item.
  r = import_kernelbench(
      nested_module("        if len(self._plan) != 2 or not isinstance(self._plan[0], "
                    "nn.Sequential):\n            return x\n"
                    "        seq, last = self._plan\n"
                    "        y = ext.bias_act(torch.mm(x, seq[0].weight.t()), seq[0].bias, True)\n"
                    "        return ext.bias_act(torch.mm(y, last.weight.t()), last.bias, False)",
                    append),
      nested);
  REQUIRE_MESSAGE(r.converted, r.reason);
  steps.clear();
  for (const auto& l : checked_plan(r, nested).launches)
    steps.push_back(l.torch.empty() ? l.kernel + ":" + l.args.back().text
                                    : l.torch + ":" + l.args[1].text);
  CHECK(steps == std::vector<std::string>{"linear:net.0.0.weight", "bias_act_kernel:1",
                                          "linear:net.1.weight", "bias_act_kernel:0"});
  // The list changed after it is set, the block before a statement of the reference's, or
  // another loop body: not followed.
  for (const std::string& extra : std::vector<std::string>{
           flatten + "        plan.append(self.net[0])\n",
           "        plan = []\n        for m in self.net:\n            plan.append(m)\n"
           "            plan.append(m)\n        self._plan = plan\n",
           "        plan = []\n        for m in self.net:\n            plan.insert(0, m)\n"
           "        self._plan = plan\n"}) {
    r = import_kernelbench(nested_module(plan_loop, extra), nested);
    CHECK_FALSE_MESSAGE(r.converted, extra);
  }
  std::string before = nested_module(plan_loop, "");
  const std::string ctor = "        self.net = nn.Sequential(";
  before.insert(before.find(ctor), "        self.net = nn.Sequential()\n" + flatten);
  CHECK_FALSE(import_kernelbench(before, nested).converted);
}

TEST_CASE(
    "import_kernelbench: nn.Sequential(*layers) of a list __init__ builds in loops and functions") {
  // MobileNetV2's way: helper functions defined inside __init__, a table of settings unpacked in
  // a loop, the layers appended to a list, then `self.net = nn.Sequential(*net)`. Both modules
  // build them alike; the layers' settings come from the constructor calls kernrl unrolls.
  const std::string helpers =
      "        def _make_divisible(v, divisor, min_value=None):\n"
      "            \"\"\"Rounds to a multiple of divisor.\"\"\"\n"
      "            if min_value is None:\n"
      "                min_value = divisor\n"
      "            new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)\n"
      "            if new_v < 0.9 * v:\n"
      "                new_v += divisor\n"
      "            return new_v\n"
      "        def _block(inp, oup, expand):\n"
      "            layers = []\n"
      "            if expand != 1:\n"
      "                layers.append(nn.Identity())\n"
      "            layers.extend([\n"
      "                nn.Linear(inp, oup),\n"
      "                nn.ReLU(inplace=True),\n"
      "            ])\n"
      "            if expand == 1:\n"
      "                return nn.Sequential(*layers), True\n"
      "            else:\n"
      "                return nn.Sequential(*layers), False\n";
  const std::string build =
      "        setting = [[1, 10, 1]]\n"
      "        net = []\n"
      "        for t, c, n in setting:\n"
      "            width = _make_divisible(c, 8)\n"
      "            for i in range(n):\n"
      "                stride = t if i == 0 else 1\n"
      "                net.append(_block(input_size, hidden, expand=stride)[0])\n"
      "        net.append(nn.Linear(hidden, output_size))\n"
      "        net.append(nn.Softmax(dim=width // 16))\n"
      "        self.net = nn.Sequential(*net)\n";
  auto problem = [](const std::string& init) {
    std::string torch;
    size_t from = 0;
    while (from < init.size()) {
      size_t nl = init.find('\n', from);
      torch += "  " + init.substr(from, nl - from + 1);
      from = nl + 1;
    }
    return parse_problem_yaml(R"(id: L3_1_MLP
level: 3
name: MLP
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 128, input_size: 512, hidden: 256, output_size: 64}
  test:
    - {batch_size: 3, input_size: 33, hidden: 17, output_size: 5}
    - {batch_size: 7, input_size: 64, hidden: 40, output_size: 9}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, input_size], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: net.0.0.weight, dtype: float32, shape: [hidden, input_size], init: custom}
  - {name: net.0.0.bias, dtype: float32, shape: [hidden], init: custom}
  - {name: net.1.weight, dtype: float32, shape: [output_size, hidden], init: custom}
  - {name: net.1.bias, dtype: float32, shape: [output_size], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, output_size]}
modules: {"net": ["Sequential"], "net.0": ["Sequential"], "net.0.0": ["Linear"], "net.0.1": ["ReLU"], "net.1": ["Linear"], "net.2": ["Softmax"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, input_size, hidden, output_size):
          super(Model, self).__init__()
)" + torch + R"(      def forward(self, x):
          return self.net(x)
)",
                              "suite.yaml");
  };
  // The flags: the block's Linear feeds the last one, the Softmax's dim is 1 (16 // 16, where
  // _make_divisible(10, 8) is 16: 8 is below 0.9 * 10).
  const std::string forward =
      "        seq, last, soft = self.net[0], self.net[1], self.net[2]\n"
      "        y = ext.bias_act(torch.mm(x, seq[0].weight.t()), seq[0].bias,\n"
      "                         seq[0].out_features == last.in_features and soft.dim == 1)\n"
      "        return ext.bias_act(torch.mm(y, last.weight.t()), last.bias,\n"
      "                            isinstance(seq[1], nn.ReLU) and len(seq) != 2)";
  auto module = [&](const std::string& init) {
    std::string py = mlp_module(forward);
    const std::string ctor =
        "        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),\n"
        "                                 nn.Linear(hidden, output_size))\n";
    py.replace(py.find(ctor), ctor.size(), init);
    return py;
  };
  auto steps_of = [](const KernelBenchImport& r, const ProblemSpec& p) {
    std::vector<std::string> steps;
    for (const auto& l : checked_plan(r, p).launches)
      steps.push_back(l.torch.empty() ? l.kernel + ":" + l.args.back().text
                                      : l.torch + ":" + l.args[1].text);
    return steps;
  };
  {
    ProblemSpec p = problem(helpers + build);
    auto r = import_kernelbench(module(helpers + build), p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(steps_of(r, p) == std::vector<std::string>{"linear:net.0.0.weight", "bias_act_kernel:1",
                                                     "linear:net.1.weight", "bias_act_kernel:0"});
  }
  // Attributes of its own set before the list (another container copied from a list among
  // them): the same.
  {
    const std::string init = "        self.scale = 2\n" + helpers +
                             "        head = [nn.Identity()]\n"
                             "        self.head = nn.Sequential(*head)\n" +
                             build;
    ProblemSpec p = problem(init);
    auto r = import_kernelbench(module(init), p);
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(steps_of(r, p).at(1) == "bias_act_kernel:1");
  }
  // What kernrl does not follow: a layer changed after it is built, a function reading a local
  // of __init__, a layer held by a name, a loop that breaks, a call of a module function, an
  // augmented assignment of a list, a function returning something else.
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string init = helpers + build;
    size_t at = init.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    init.replace(at, from.size(), to);
    return init;
  };
  for (const std::string& init : std::vector<std::string>{
           helpers + build + "        net[1].in_features = 3\n",
           helpers + build + "        self.net[2].train(False)\n",
           replaced("                nn.Linear(inp, oup),\n",
                    "                nn.Linear(inp, width),\n"),
           replaced("        net.append(nn.Linear(hidden, output_size))\n",
                    "        last = nn.Linear(hidden, output_size)\n        net.append(last)\n"),
           replaced("                stride = t if i == 0 else 1\n",
                    "                stride = t if i == 0 else 1\n                break\n"),
           replaced("        net.append(nn.Linear(hidden, output_size))\n",
                    "        net.append(make_linear(hidden, output_size))\n"),
           replaced("        net.append(nn.Linear(hidden, output_size))\n",
                    "        net += [nn.Linear(hidden, output_size)]\n"),
           replaced("            return new_v\n", "            return [new_v]\n"),
           replaced("        net = []\n", "        net = []\n        del setting[0]\n"),
           replaced(
               "            width = _make_divisible(c, 8)\n",
               "            width = _make_divisible(c, 8)\n            _block = _make_divisible\n"),
           replaced("        net.append(nn.Softmax(dim=width // 16))\n",
                    "        net.append(nn.Softmax(dim=width // 16))\n        net.reverse()\n"),
       }) {
    CAPTURE(init);
    ProblemSpec p = problem(init);
    auto r = import_kernelbench(module(init), p);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find("(`self.net` is set from a list of layers that __init__ builds ") !=
                      std::string::npos,
                  r.reason);
  }
  // A layer changed through self.modules() or self.apply: what __init__ changes is named.
  for (const auto& [init, what] : std::vector<std::pair<std::string, std::string>>{
           {helpers + build + "        for m in self.modules():\n            m.dim = 0\n",
            "`m.dim = 0`"},
           {helpers + build + "        self.apply(_fix)\n", "`self.apply(_fix)`"}}) {
    CAPTURE(init);
    ProblemSpec p = problem(init);
    auto r = import_kernelbench(module(init), p);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(r.reason.find("`self.net`, which ModelNew's __init__ changes after building it, "
                                "by " +
                                what) != std::string::npos,
                  r.reason);
  }
  // The attribute set again (in a branch): its layers are not those of the list.
  {
    const std::string init =
        helpers + build +
        "        if input_size > 0:\n            self.net = nn.Sequential(*net)\n";
    auto r = import_kernelbench(module(init), problem(init));
    CHECK_FALSE(r.converted);
  }
}

TEST_CASE("import_kernelbench: plain tensor attributes leave __init__'s layers the reference's") {
  // torch.empty, torch.zeros and torch.ones set as plain attributes are in no state dict and draw
  // no random numbers: the layers (and KernelBench's seeded weights) stay the reference's.
  ProblemSpec p = suite_mlp(true);
  const std::string plan_loop =
      "        for i, m in enumerate(self._plan):\n"
      "            if isinstance(m, nn.Linear):\n"
      "                x = ext.bias_act(torch.mm(x, m.weight.t()), m.bias, i == 0)\n"
      "        return x";
  const std::string plan =
      "        plan = []\n        for m in self.net:\n            plan.append(m)\n"
      "        self._plan = plan\n";
  for (const std::string& attrs : {std::string("        self._empty = torch.empty(0)\n"),
                                   std::string("        self._z = torch.zeros(3, len(self.net))\n"
                                               "        self._o = torch.ones(hidden)\n")}) {
    CAPTURE(attrs);
    check_mlp_plan(import_kernelbench(mlp_module(plan_loop, plan + attrs), p), p);
    check_mlp_plan(import_kernelbench(mlp_module(plan_loop, attrs + plan), p), p);
  }
  // The tensor itself is no tensor kernrl gives a kernel.
  {
    auto r = import_kernelbench(mlp_module("        return ext.bias_act(x, self._empty, True)",
                                           "        self._empty = torch.empty(0)\n"),
                                p);
    CHECK_FALSE(r.converted);
    CHECK_MESSAGE(
        r.reason.find("forward passes `self._empty` (torch.empty(0))") != std::string::npos,
        r.reason);
  }
  // Anything that draws random numbers, registers a parameter or a buffer, or creates a module
  // may change the reference's weights under KernelBench's seeding: refused.
  for (const std::string& attr : std::vector<std::string>{
           "        self._noise = torch.randn(3)\n",
           "        self._e = torch.empty(3).normal_()\n",
           "        self._e = torch.empty(0, device='cuda')\n",
           "        self._e = torch.rand_like(torch.zeros(3))\n",
           "        self._w = nn.Parameter(torch.zeros(3))\n",
           "        self.register_buffer('_empty', torch.empty(0))\n",
           "        self._e = nn.ReLU()\n",
           "        self._e = self.torch.empty(0)\n",
           "        self._e = torch.nn.empty(0)\n",
       }) {
    auto r = import_kernelbench(mlp_module(plan_loop, plan + attr), p);
    CHECK_FALSE_MESSAGE(r.converted, attr);
    CHECK_MESSAGE(
        r.reason.find("builds its layers otherwise than the reference's") != std::string::npos,
        r.reason);
  }
  // A tensor set under the name of a buffer the reference registers replaces the buffer.
  std::string yaml = R"(id: L3_1_MLP
level: 3
name: MLP
description: A suite problem.
reference: {torchscript: torchscript}
sizes:
  bench: {batch_size: 128, input_size: 512, hidden: 256, output_size: 64}
  test:
    - {batch_size: 3, input_size: 33, hidden: 17, output_size: 5}
    - {batch_size: 7, input_size: 64, hidden: 40, output_size: 9}
inputs:
  - {name: x, dtype: float32, shape: [batch_size, input_size], init: {uniform: {low: 0, high: 1}}}
parameters:
  - {name: net.0.weight, dtype: float32, shape: [hidden, input_size], init: custom}
  - {name: net.0.bias, dtype: float32, shape: [hidden], init: custom}
  - {name: net.2.weight, dtype: float32, shape: [output_size, hidden], init: custom}
  - {name: net.2.bias, dtype: float32, shape: [output_size], init: custom}
  - {name: scale, dtype: float32, shape: [1], init: custom}
outputs:
  - {name: out, dtype: float32, shape: [batch_size, output_size]}
modules: {"net": ["Sequential"], "net.0": ["Linear"], "net.1": ["ReLU"], "net.2": ["Linear"]}
flops: "0"
bytes: auto
torch: |
  import torch
  import torch.nn as nn
  class Model(nn.Module):
      def __init__(self, input_size, hidden, output_size):
          super(Model, self).__init__()
          self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(),
                                   nn.Linear(hidden, output_size))
          self.register_buffer("scale", torch.ones(1))
      def forward(self, x):
          return self.net(x)
)";
  ProblemSpec buffered = parse_problem_yaml(yaml, "suite.yaml");
  const std::string reg = "        self.register_buffer(\"scale\", torch.ones(1))\n";
  check_mlp_plan(import_kernelbench(mlp_module(plan_loop, reg + plan), buffered), buffered);
  auto r = import_kernelbench(
      mlp_module(plan_loop, reg + plan + "        self.scale = torch.zeros(1)\n"), buffered);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("builds its layers otherwise than the reference's (`self . scale") !=
                    std::string::npos,
                r.reason);
  // Listed by the suite only (a buffer registered under a computed name): likewise.
  yaml.replace(yaml.find("self.register_buffer(\"scale\""),
               std::string("self.register_buffer(\"scale\"").size(),
               "self.register_buffer(\"sc\" + \"ale\"");
  ProblemSpec computed = parse_problem_yaml(yaml, "suite.yaml");
  r = import_kernelbench(
      mlp_module(plan_loop, "        self.register_buffer(\"sc\" + \"ale\", torch.ones(1))\n" +
                                plan + "        self.scale = torch.zeros(1)\n"),
      computed);
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("builds its layers otherwise than the reference's (`self . scale") !=
                    std::string::npos,
                r.reason);
}

TEST_CASE("import_kernelbench: tuples and lists of __init__'s arguments, repeated and joined") {
  // KernelBench passes the reference's constants as written: a tuple stays a tuple.
  const std::string triple =
      "def _triple(v):\n"
      "    if isinstance(v, (tuple, list)):\n"
      "        return tuple(int(i) for i in v)\n"
      "    return (int(v),) * 3\n\n"
      "def _kind(v):\n"
      "    return 10 if isinstance(v, tuple) else (1 if isinstance(v, list) else 0)\n\n";
  auto run = [&](const std::string& pool, const std::string& value, const std::string& use) {
    std::string py = int_attr_module("        self.pool = " + value, use);
    py.insert(py.find("class ModelNew"), triple);
    return import_kernelbench(py, suite_linear(pool));
  };
  const std::string kdhw =
      "self.pool[0] * 100 + self.pool[1] * 10 + self.pool[2] + 1000 * len(self.pool)";
  for (const auto& [pool, expect] : std::vector<std::pair<std::string, std::string>>{
           {"(2, 3, 4)", "3234"}, {"[2, 3, 4]", "3234"}, {"5", "3555"}}) {
    auto r = run(pool, "_triple(divisor)", kdhw);
    CAPTURE(pool);
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(checked_plan(r, suite_linear(pool)).launches[0].args[2].text == expect);
  }
  // isinstance tells a tuple from a list; + joins two of a kind; * repeats (none below 1).
  for (const auto& [pool, value, expect] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"(2, 3)", "_kind(divisor)", "10"},
           {"[2, 3]", "_kind(divisor)", "1"},
           {"(2, 3)", "len(divisor + (7,)) * 10 + (divisor + (7,))[2]", "37"},
           {"[2, 3]", "len(divisor * 2) * 10 + len(divisor * 0) + len(-1 * divisor)", "40"}}) {
    auto r = run(pool, value, "self.pool");
    CAPTURE(value);
    REQUIRE_MESSAGE(r.converted, r.reason);
    CHECK(checked_plan(r, suite_linear(pool)).launches[0].args[2].text == expect);
  }
  // A tuple and a list do not join (Python raises): not followed.
  auto r = run("(2, 3)", "len(divisor + [7])", "self.pool");
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: a contiguous slice given to the extension points into its tensor") {
  // PyTorch's x[a:b] (dimension 0) is x's memory from row a: its data pointer is x's advanced,
  // and .contiguous() returns it itself. kernrl passes `x + a * cols`.
  ProblemSpec p = suite_linear();  // x: [batch_size, input_size]; batch_size 128, 3, 7
  const std::string cuda = R"(
__global__ void k(const float* part, const float* y, float* out, int n) {}
torch::Tensor f(torch::Tensor part, torch::Tensor y) {
  part = part.contiguous();
  auto out = torch::empty_like(y);
  k<<<1, 256>>>(part.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(),
                part.size(0) * part.size(1));
  return out;
}
)";
  auto run = [&](const std::string& forward) {
    std::string py =
        "import torch\nimport torch.nn as nn\n"
        "from torch.utils.cpp_extension import load_inline\n\nsrc = \"\"\"\n"
        "#include <torch/extension.h>\n" +
        cuda +
        "\"\"\"\n\next = load_inline(name=\"ext\", cpp_sources=\"\", "
        "cuda_sources=src, functions=[\"f\"])\n\nclass ModelNew(nn.Module):\n"
        "    def __init__(self, input_size, output_size, divisor):\n"
        "        super().__init__()\n" +
        std::string(kLinearInit) + "\n\n    def forward(self, x):\n" + forward + "\n";
    return import_kernelbench(py, p);
  };
  auto r = run("        return ext.f(x[1:3], self.linear(x))");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = checked_plan(r, p);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[1].args[0].kind == ArgKind::Offset);
  CHECK(arg_texts(plan.launches[1])[0] == "x + input_size");
  CHECK(arg_texts(plan.launches[1])[3] == "2 * input_size");
  // A slice of the whole tensor from its start: the tensor itself.
  r = run("        return ext.f(x[0:2].contiguous(), self.linear(x))");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(arg_texts(checked_plan(r, p).launches[1])[0] == "x");
  // A slice that is not contiguous, or a slice of a slice: still refused.
  for (const char* part : {"x[:, 1:3]", "x[1:3][0:1]", "x.t()[0:2]"}) {
    r = run(std::string("        return ext.f(") + part + ", self.linear(x))");
    CHECK_FALSE_MESSAGE(r.converted, part);
  }
  // A slice reaching beyond the tensor at some size set (batch_size 3): refused.
  r = run("        return ext.f(x.narrow(0, 2, 2), self.linear(x))");
  CHECK_FALSE(r.converted);
}

TEST_CASE("import_kernelbench: a submodule's __init__ changing its layer, or ModelNew's all") {
  const std::string block_init =
      "        self.linear = nn.Linear(i, o, bias=use_bias)\n        self.scale = scale";
  const std::string block_forward =
      "        return ext.epilogue(self.linear(x), float(self.scale))";
  ProblemSpec p = suite_submodule(false);
  auto run = [&](const std::string& block_extra, const std::string& model_extra) {
    return import_kernelbench(
        submodule_module(
            "i, o, scale=2.0, use_bias=True", block_init + block_extra, block_forward,
            "        self.block = Block(input_size, o=output_size, scale=divisor)" + model_extra,
            "        return self.block(x)"),
        p);
  };
  auto r = run("", "");
  REQUIRE_MESSAGE(r.converted, r.reason);
  // Block's own __init__ scales its weight; ModelNew's changes every module's.
  r = run("\n        self.linear.weight.data.mul_(2.0)", "");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("`self.block.linear`, whose tensors Block (`self.block`)'s "
                              "__init__ changes in place after building it, by "
                              "`self.linear.weight.data.mul_(2.0)` (line 27) (kernrl gives them "
                              "the reference's values)") != std::string::npos,
                r.reason);
  r = run("",
          "\n        for m in self.modules():\n            if isinstance(m, nn.Linear):\n"
          "                nn.init.zeros_(m.bias)");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("by `nn.init.zeros_(m.bias)`") != std::string::npos, r.reason);
  r = run("", "\n        for m in self.modules():\n            m.scale = 3.0");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("which ModelNew's __init__ changes after building it, by "
                              "`m.scale = 3.0`") != std::string::npos,
                r.reason);
}
