// PyTorch's packed tensor accessors as kernel arguments (docs/kernel-format.md, "Arguments"):
// `accessor32(x, N)` / `accessor64(x, N)` read and packed (protocol/tensor_accessor.h), and
// checked in launch blocks.
#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "headers/builtin_headers.h"
#include "parse/launch_block.h"
#include "protocol/tensor_accessor.h"

using namespace kernrl;

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

LaunchPlan checked(const std::string& yaml, const ProblemSpec& p) {
  LaunchPlan plan = parse_launch_block({"/* kernrl\n" + yaml + "*/\n", 1, false});
  check_plan(plan, p, 132);
  return plan;
}

std::string plan_error(const std::string& yaml, const ProblemSpec& p, bool* config = nullptr) {
  try {
    checked(yaml, p);
  } catch (const LaunchConfigError& e) {
    if (config) *config = true;
    return e.what();
  } catch (const FormatError& e) {
    if (config) *config = false;
    return e.what();
  }
  return "no error";
}

template <typename T>
T read_at(const std::vector<unsigned char>& b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
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
