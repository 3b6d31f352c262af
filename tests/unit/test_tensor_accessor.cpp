// PyTorch's packed tensor accessors as kernel arguments (docs/kernel-format.md, "Arguments"):
// `accessor32(x, N)` / `accessor64(x, N)` read and packed (protocol/tensor_accessor.h), checked
// in launch blocks, and made by the KernelBench importer from x.packed_accessor32<T, N, ...>().
#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "headers/builtin_headers.h"
#include "import/kernelbench_import.h"
#include "parse/launch_block.h"
#include "plan_checks.h"
#include "protocol/tensor_accessor.h"

using namespace kernrl;
using kernrl::test::checked;
using kernrl::test::plan_error;

namespace {

const ProblemSpec& sum_dim1() {  // x [batch_size, dim1, dim2] -> out [batch_size, 1, dim2]
  static ProblemSpec p =
      load_problem(find_problem_dir(problems_dir(), "L1_47_Sum_reduction_over_a_dimension"));
  return p;
}

const ProblemSpec& gelu() {  // x, out [batch_size, dim]
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_26"));
  return p;
}

template <typename T>
T read_at(const std::vector<unsigned char>& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// A module whose CUDA source is `cuda` (after #include <torch/extension.h>), host function `fn`,
// forward(self, x) returning ext.fn(x).
std::string module(const std::string& cuda, const std::string& fn) {
  return "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
         "src = \"\"\"\n#include <torch/extension.h>\n" +
         cuda + "\"\"\"\next = load_inline(name=\"ext\", cpp_sources=\"\", cuda_sources=src, " +
         "functions=[\"" + fn +
         "\"])\n\nclass ModelNew(nn.Module):\n    def __init__(self, *args):\n"
         "        super().__init__()\n\n    def forward(self, x):\n        return ext." +
         fn + "(x)\n";
}

std::vector<std::string> arg_texts(const LaunchSpec& l) {
  std::vector<std::string> v;
  for (const auto& a : l.args) v.push_back(a.text);
  return v;
}

}  // namespace

TEST_CASE("accessor arguments: how they are written") {
  auto a = parse_accessor_arg("accessor32(x, 3)");
  REQUIRE(a);
  CHECK(a->buffer == "x");
  CHECK(a->rank == 3);
  CHECK(a->bits == 32);
  a = parse_accessor_arg(" accessor64( network.0.weight ,2 ) ");
  REQUIRE(a);
  CHECK(a->buffer == "network.0.weight");
  CHECK(a->rank == 2);
  CHECK(a->bits == 64);
  CHECK(looks_like_accessor_arg("accessor32 (x, 1)"));
  CHECK_FALSE(looks_like_accessor_arg("accessor32"));
  CHECK_FALSE(looks_like_accessor_arg("accessor16(x, 2)"));
  CHECK_FALSE(looks_like_accessor_arg("x"));
  for (const char* bad : {"accessor32(x)", "accessor32(x, 0)", "accessor32(x, 17)",
                          "accessor32(1x, 2)", "accessor32(x, 2, 3)", "accessor32(x, n)",
                          "accessor32(x, -1)", "accessor32(x + 1, 2)", "accessor32(x, 2"}) {
    std::string why;
    CHECK_MESSAGE(!parse_accessor_arg(bad, &why), bad);
    CHECK_MESSAGE(why.find("accessor") != std::string::npos, bad);
  }
}

TEST_CASE("accessor arguments: the parameter's bytes are PyTorch's layout") {
  // The pointer, N sizes, N strides; a struct aligned to 8 bytes.
  CHECK(accessor_param_bytes(1, 32) == 16);
  CHECK(accessor_param_bytes(3, 32) == 32);
  CHECK(accessor_param_bytes(3, 64) == 56);
  CHECK(accessor_param_bytes(16, 64) == 8 + 16 * 16);
  const uint64_t ptr = 0x1122334455667788ull;
  auto b = pack_accessor(ptr, {2, 3, 4}, 32);
  REQUIRE(b.size() == 32);
  CHECK(read_at<uint64_t>(b, 0) == ptr);
  const int32_t want32[] = {2, 3, 4, 12, 4, 1};
  for (size_t i = 0; i < 6; ++i) CHECK(read_at<int32_t>(b, 8 + 4 * i) == want32[i]);
  b = pack_accessor(ptr, {5, 1, 7}, 64);  // a size-1 dimension: PyTorch's contiguous strides
  REQUIRE(b.size() == 56);
  CHECK(read_at<uint64_t>(b, 0) == ptr);
  const int64_t want64[] = {5, 1, 7, 7, 7, 1};
  for (size_t i = 0; i < 6; ++i) CHECK(read_at<int64_t>(b, 8 + 8 * i) == want64[i]);
  CHECK(contiguous_strides({4, 0, 3}) == std::vector<int64_t>{3, 3, 1});
}

TEST_CASE("accessor arguments: a 32-bit accessor holds at most INT32_MAX elements and strides") {
  CHECK(accessor_shape_problem({46340, 46340}, 32).empty());
  std::string why = accessor_shape_problem({65536, 65536}, 32);
  CHECK(why.find("4294967296 elements") != std::string::npos);
  CHECK(why.find("accessor64") != std::string::npos);
  CHECK(accessor_shape_problem({65536, 65536}, 64).empty());
  // No elements, but a stride past INT32_MAX.
  CHECK(accessor_shape_problem({0, 65536, 65536}, 32).find("stride") != std::string::npos);
  CHECK(accessor_shape_problem({3, -1}, 64).find("negative") != std::string::npos);
  CHECK_THROWS_AS(pack_accessor(0, {65536, 65536}, 32), std::invalid_argument);
  CHECK(pack_accessor(0, {65536, 65536}, 64).size() == 40);
}

TEST_CASE("accessor arguments: the buffer's shape at a size set") {
  LaunchPlan plan;
  plan.scratch.push_back({"flat", *dtype_from_name("float32"), "batch_size * 2", {}, 1});
  plan.scratch.push_back(
      {"grid", *dtype_from_name("float32"), "batch_size * dim2", {"batch_size", "dim2"}, 2});
  Vars v = {{"batch_size", 3}, {"dim1", 5}, {"dim2", 7}};
  CHECK(*buffer_shape("x", plan, sum_dim1(), v) == std::vector<int64_t>{3, 5, 7});
  CHECK(*buffer_shape("out", plan, sum_dim1(), v) == std::vector<int64_t>{3, 1, 7});
  CHECK(*buffer_shape("flat", plan, sum_dim1(), v) == std::vector<int64_t>{6});
  CHECK(*buffer_shape("grid", plan, sum_dim1(), v) == std::vector<int64_t>{3, 7});
  CHECK_FALSE(buffer_shape("nothing", plan, sum_dim1(), v));
}

TEST_CASE("accessor arguments in a launch block: checked against the buffers") {
  const std::string head = "launches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n";
  LaunchPlan plan = checked(head +
                                "    args: [accessor32(x, 3), accessor64(out, 3), dim2]\n"
                                "    repeat: {count: 2}\n",
                            sum_dim1());
  const auto& args = plan.launches.at(0).args;
  CHECK(args.at(0).kind == ArgKind::Accessor);
  CHECK(args.at(0).text == "accessor32(x, 3)");
  CHECK(args.at(1).kind == ArgKind::Accessor);
  CHECK(args.at(2).kind == ArgKind::IntExpr);
  // The kind travels to the worker as its number.
  LaunchPlan back = LaunchPlan::from_json(plan.to_json());
  CHECK(back.launches.at(0).args.at(1).kind == ArgKind::Accessor);
  CHECK(back.launches.at(0).args.at(1).text == "accessor64(out, 3)");
  // Written without brackets, and as a YAML block list.
  checked(head + "    args: accessor32(x, 3), accessor32(out, 3)\n", sum_dim1());
  checked(head + "    args:\n      - accessor32(x, 3)\n      - accessor32(out, 3)\n", sum_dim1());

  bool config = true;
  std::string e = plan_error(head + "    args: [accessor32(x, 2), out]\n", sum_dim1(), &config);
  CHECK_FALSE(config);
  CHECK(e.find("'x' has 3 dimensions, not 2") != std::string::npos);
  e = plan_error(head + "    args: [accessor32(y, 3)]\n", sum_dim1());
  CHECK(e.find("'y' is not a tensor or scratch buffer") != std::string::npos);
  e = plan_error(head + "    args: [accessor32(x)]\n", sum_dim1());
  CHECK(e.find("accessor32(NAME, RANK)") != std::string::npos);
  e = plan_error(head + "    args: [accessor32(dim2, 1)]\n", sum_dim1());
  CHECK(e.find("'dim2' is not a tensor or scratch buffer") != std::string::npos);

  // Scratch buffers: their shape, or one dimension of `count`.
  const std::string scratch =
      "scratch:\n  part: {dtype: float32, shape: [batch_size, dim2]}\n"
      "  flat: {dtype: float32, count: batch_size * dim2}\n";
  checked(head + "    args: [accessor32(part, 2), accessor64(flat, 1)]\n" + scratch, sum_dim1());
  e = plan_error(head + "    args: [accessor32(flat, 2)]\n" + scratch, sum_dim1());
  CHECK(e.find("'flat' has 1 dimension, not 2") != std::string::npos);
}

TEST_CASE("accessor arguments: a 32-bit accessor of a tensor past INT32_MAX cannot run") {
  ProblemSpec big = gelu();
  big.bench = {{"batch_size", 65536}, {"dim", 65536}};
  const std::string head = "launches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n";
  bool config = false;
  std::string e = plan_error(head + "    args: [accessor32(x, 2), out]\n", big, &config);
  CHECK(config);  // a launch_error, before anything runs
  CHECK(e.find("launch 1 (k): accessor32(x, 2) at batch_size=65536 dim=65536") !=
        std::string::npos);
  CHECK(e.find("4294967296 elements") != std::string::npos);
  checked(head + "    args: [accessor64(x, 2), out]\n", big);
  // A launch that does not run at that size set is not checked there.
  checked(head + "    args: [accessor32(x, 2), out]\n    repeat: {count: max(0, 100 - dim)}\n",
          big);
}

TEST_CASE("accessor arguments are for CUDA kernels: not for torch steps or Triton launches") {
  LaunchPlan plan;
  plan.language = "triton";
  LaunchSpec l;
  l.kernel = "k";
  l.grid = {"1"};
  l.args = {{"accessor32(x, 2)", ArgKind::IntExpr}, {"out", ArgKind::IntExpr}};
  plan.launches.push_back(l);
  try {
    check_plan(plan, gelu(), 132);
    FAIL("a Triton launch took an accessor");
  } catch (const FormatError& e) {
    CHECK(std::string(e.what()).find("a Triton kernel takes the tensor's name") !=
          std::string::npos);
  }
  ProblemSpec suite = gelu();
  suite.torchscript = "torchscript";  // a suite problem: torch steps allowed
  std::string e = plan_error(
      "launches:\n  - {torch: relu, args: [accessor32(x, 2)], out: y}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [y, out]}\n"
      "scratch:\n  y: {dtype: float32, shape: [batch_size, dim]}\n",
      suite);
  CHECK(e.find("a tensor accessor is an argument of CUDA kernels") != std::string::npos);
}

TEST_CASE("kernrl/tensor_accessor.h is served to the compiler and spells at:: and torch::") {
  const BuiltinHeader* h = nullptr;
  for (const auto& b : builtin_headers())
    if (b.name == "kernrl/tensor_accessor.h") h = &b;
  REQUIRE(h);
  for (const char* name :
       {"namespace at", "namespace torch", "class GenericPackedTensorAccessor ",
        "using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>",
        "using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>",
        "struct RestrictPtrTraits", "struct DefaultPtrTraits",
        "PtrType data_;\n  index_t sizes_[N];"
        "\n  index_t strides_[N];"})
    CHECK_MESSAGE(h->text.find(name) != std::string::npos, name);
  // Self-contained: nothing included (the prelude's int32_t, int64_t and size_t suffice).
  CHECK(h->text.find("#include") == std::string::npos);
}

namespace {

const char* kSumDim1 = R"(
template <typename scalar_t>
__global__ void sum_dim1_kernel(const torch::PackedTensorAccessor32<scalar_t, 3, torch::RestrictPtrTraits> x,
                                torch::PackedTensorAccessor32<scalar_t, 3, torch::RestrictPtrTraits> out) {
  int b = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= x.size(2)) return;
  scalar_t acc = 0;
  for (int r = 0; r < x.size(1); ++r) acc += x[b][r][j];
  out[b][0][j] = acc;
}
torch::Tensor sum_dim1(torch::Tensor x) {
  auto out = torch::empty({x.size(0), 1, x.size(2)}, x.options());
  dim3 grid((x.size(2) + 255) / 256, x.size(0));
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "sum_dim1", ([&] {
    sum_dim1_kernel<scalar_t><<<grid, 256>>>(
        x.packed_accessor32<scalar_t, 3, torch::RestrictPtrTraits>(),
        out.packed_accessor32<scalar_t, 3, torch::RestrictPtrTraits>());
  }));
  return out;
}
)";

// L1_26's x -> out through kernel `k`, whose parameters are `params`, launched with `args` (x and
// y, the output, in the wrapper).
std::string gelu_module(const std::string& params, const std::string& args,
                        const std::string& before = "") {
  return module("__global__ void k(" + params + ") {}\ntorch::Tensor f(torch::Tensor x) {\n" +
                    "  auto y = torch::empty_like(x);\n" + before + "  k<<<x.size(0), 256>>>(" +
                    args + ");\n  return y;\n}\n",
                "f");
}

}  // namespace

TEST_CASE("import_kernelbench: packed_accessor32 arguments become accessor32 arguments") {
  auto r = import_kernelbench(module(kSumDim1, "sum_dim1"), sum_dim1(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.kernel_file.find("#include <kernrl/tensor_accessor.h>") != std::string::npos);
  CHECK(r.kernel_file.find("torch/extension.h") == std::string::npos);
  CHECK(r.kernel_file.find("torch::PackedTensorAccessor32<scalar_t, 3, torch::RestrictPtrTraits> "
                           "out") != std::string::npos);
  LaunchPlan plan = parse_launch_block(extract_kernel(r.kernel_file, "converted.cu"));
  check_plan(plan, sum_dim1(), 132);
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel == "sum_dim1_kernel<float>");
  CHECK(arg_texts(plan.launches[0]) ==
        std::vector<std::string>{"accessor32(x, 3)", "accessor32(out, 3)"});
  CHECK(plan.launches[0].args[0].kind == ArgKind::Accessor);
}

TEST_CASE("import_kernelbench: at:: spellings, packed_accessor64, default traits, deduction") {
  const char* cuda = R"(
template <typename T>
__global__ void k(at::PackedTensorAccessor64<T, 2> x, at::PackedTensorAccessor64<T, 2, at::DefaultPtrTraits> y) {}
torch::Tensor f(torch::Tensor x) {
  auto y = torch::empty_like(x);
  auto xa = x.packed_accessor64<float, 2>();
  k<<<x.size(0), 256>>>(xa, y.packed_accessor64<float, 2, torch::DefaultPtrTraits>());
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f"), gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  LaunchPlan plan = parse_launch_block(extract_kernel(r.kernel_file, "converted.cu"));
  check_plan(plan, gelu(), 132);
  CHECK(plan.launches.at(0).kernel == "k<float>");
  CHECK(arg_texts(plan.launches.at(0)) ==
        std::vector<std::string>{"accessor64(x, 2)", "accessor64(out, 2)"});
  // The deprecated packed_accessor<T, N, Traits, index_t>, with a 32-bit index.
  r = import_kernelbench(
      gelu_module("torch::PackedTensorAccessor<float, 2, torch::RestrictPtrTraits, int32_t> x, "
                  "torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> y",
                  "x.packed_accessor<float, 2, torch::RestrictPtrTraits, int32_t>(), "
                  "y.packed_accessor32<float, 2, torch::RestrictPtrTraits>()"),
      gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.kernel_file.find("args: [accessor32(x, 2), accessor32(out, 2)]") != std::string::npos);
}

TEST_CASE("import_kernelbench: an accessor of an intermediate buffer is a shaped scratch buffer") {
  const char* cuda = R"(
__global__ void k1(const float* x, torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> t) {}
__global__ void k2(const torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits> t, float* y) {}
torch::Tensor f(torch::Tensor x) {
  auto tmp = torch::empty({x.size(0), x.size(1)}, x.options());
  auto y = torch::empty_like(x);
  k1<<<x.size(0), 256>>>(x.data_ptr<float>(), tmp.packed_accessor32<float, 2, torch::RestrictPtrTraits>());
  k2<<<x.size(0), 256>>>(tmp.packed_accessor32<float, 2, torch::RestrictPtrTraits>(), y.data_ptr<float>());
  return y;
}
)";
  auto r = import_kernelbench(module(cuda, "f"), gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.kernel_file.find("tmp: {dtype: float32, shape: [batch_size, dim]}") != std::string::npos);
  LaunchPlan plan = parse_launch_block(extract_kernel(r.kernel_file, "converted.cu"));
  check_plan(plan, gelu(), 132);
  CHECK(arg_texts(plan.launches.at(1)) == std::vector<std::string>{"accessor32(tmp, 2)", "out"});
}

TEST_CASE("import_kernelbench: accessors kernrl cannot give as PyTorch would are refused") {
  const std::string acc = "torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits>";
  const std::string params = acc + " x, " + acc + " y";
  const std::string y = "y.packed_accessor32<float, 2, torch::RestrictPtrTraits>()";
  struct Case {
    std::string module, category, reason;
  };
  const std::vector<Case> cases = {
      // A view made in the wrapper: its shape is not the buffer's.
      {gelu_module(params,
                   "x.view({x.size(1), x.size(0)}).packed_accessor32<float, 2, "
                   "torch::RestrictPtrTraits>(), " +
                       y),
       "unsupported_cuda", "accessor of a view"},
      {gelu_module(params,
                   "x.reshape({-1, 2}).packed_accessor32<float, 2, "
                   "torch::RestrictPtrTraits>(), " +
                       y),
       "unsupported_cuda", "accessor of a view"},
      // N that is not the tensor's rank, T that is not its dtype: PyTorch refuses both.
      {gelu_module(params, "x.packed_accessor32<float, 3, torch::RestrictPtrTraits>(), " + y),
       "mismatch", "3-dimensional accessor of `x`, which has 2 dimensions"},
      {gelu_module(params, "x.packed_accessor32<double, 2, torch::RestrictPtrTraits>(), " + y),
       "mismatch", "as double"},
      // The kernel's type and the accessor's differ (PyTorch would not compile it).
      {gelu_module(params, "x.packed_accessor32<float, 2, torch::DefaultPtrTraits>(), " + y),
       "mismatch", "PackedTensorAccessor32<float, 2, DefaultPtrTraits>"},
      {gelu_module(params, "x.packed_accessor64<float, 2, torch::RestrictPtrTraits>(), " + y),
       "mismatch", "PackedTensorAccessor64"},
      // A pointer where the kernel takes an accessor, and the other way round.
      {gelu_module(params, "x.data_ptr<float>(), " + y), "unsupported_cuda",
       "something other than a tensor's packed accessor"},
      {gelu_module("const float* x, " + acc + " y",
                   "x.packed_accessor32<float, 2, torch::RestrictPtrTraits>(), " + y),
       "unsupported_cuda", "passes a packed accessor to `const float*"},
      // A host accessor, a reference, an accessor of an unknown kind.
      {gelu_module(params, "x.accessor<float, 2>(), " + y), "unsupported_cuda",
       "host TensorAccessor"},
      {gelu_module("const " + acc + "& x, " + acc + " y",
                   "x.packed_accessor32<float, 2, torch::RestrictPtrTraits>(), " + y),
       "unsupported_cuda", "by value"},
      {gelu_module("torch::TensorAccessor<float, 2> x, " + acc + " y", "x, " + y),
       "unsupported_cuda", "by value"},
  };
  for (const auto& c : cases) {
    auto r = import_kernelbench(c.module, gelu(), "gen.py");
    CHECK_MESSAGE(!r.converted, c.module);
    CHECK_MESSAGE(r.category == c.category, r.reason);
    CHECK_MESSAGE(r.reason.find(c.reason) != std::string::npos, r.reason);
  }
  // The output allocated flat ({B, D}) where the problem's is [batch_size, 1, dim2]: the kernel
  // would be given a 3-dimensional buffer.
  std::string flat = kSumDim1;
  auto swap = [&](const std::string& from, const std::string& to) {
    size_t at = flat.find(from);
    REQUIRE(at != std::string::npos);
    flat.replace(at, from.size(), to);
  };
  swap("{x.size(0), 1, x.size(2)}", "{x.size(0), x.size(2)}");
  swap("out.packed_accessor32<scalar_t, 3", "out.packed_accessor32<scalar_t, 2");
  swap("PackedTensorAccessor32<scalar_t, 3, torch::RestrictPtrTraits> out",
       "PackedTensorAccessor32<scalar_t, 2, torch::RestrictPtrTraits> out");
  auto r = import_kernelbench(module(flat, "sum_dim1"), sum_dim1(), "gen.py");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("kernrl's buffer has 3") != std::string::npos, r.reason);
}

TEST_CASE(
    "import_kernelbench: an accessor of a view of forward has its buffer's shape or is refused") {
  const std::string acc = "torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits>";
  std::string m = gelu_module(acc + " x, " + acc + " y",
                              "x.packed_accessor32<float, 2, torch::RestrictPtrTraits>(), "
                              "y.packed_accessor32<float, 2, torch::RestrictPtrTraits>()");
  auto r = import_kernelbench(m, gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  // The same shape: the buffer itself.
  std::string same = m;
  same.replace(same.find("return ext.f(x)"), 15, "return ext.f(x.view(x.shape[0], -1))");
  r = import_kernelbench(same, gelu(), "gen.py");
  REQUIRE_MESSAGE(r.converted, r.reason);
  CHECK(r.kernel_file.find("args: [accessor32(x, 2), accessor32(out, 2)]") != std::string::npos);
  // Another shape: the kernel would be given the buffer's.
  std::string other = m;
  other.replace(other.find("return ext.f(x)"), 15, "return ext.f(x.view(x.shape[1], x.shape[0]))");
  r = import_kernelbench(other, gelu(), "gen.py");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("where kernrl's buffer `x` has") != std::string::npos, r.reason);
  // Accessor names through `using namespace torch;`: the kernel file's header spells them in
  // at:: and torch:: only.
  r = import_kernelbench(
      gelu_module("PackedTensorAccessor32<float, 2, RestrictPtrTraits> x, " + acc + " y",
                  "x.packed_accessor32<float, 2, torch::RestrictPtrTraits>(), "
                  "y.packed_accessor32<float, 2, torch::RestrictPtrTraits>()",
                  ""),
      gelu(), "gen.py");
  CHECK_FALSE(r.converted);
  CHECK_MESSAGE(r.reason.find("uses PyTorch's `PackedTensorAccessor32`") != std::string::npos,
                r.reason);
}
