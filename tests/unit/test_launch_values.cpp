// Named values of the launch block (`values:`, docs/kernel-format.md, "Values"): read in order,
// refused where a name shadows another or an expression does not evaluate (naming the value and
// the size set), and usable by every expression of the block as a size is, on the grader's side
// and the worker's (pack_kernel_arg, on the CPU).
#include <doctest/doctest.h>

#include <cstring>

#include "core/paths.h"
#include "core/problem.h"
#include "parse/launch_block.h"
#include "plan_checks.h"
#include "protocol/struct_arg.h"
#include "worker/launch_args.h"

using namespace kernrl;
using kernrl::test::checked;
using kernrl::test::plan_error;

namespace {

// x, out: float32 [batch_size, dim]; size sets (4096, 16384), (4, 256), (7, 1000), (3, 4099).
const ProblemSpec& softmax() {
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_23_Softmax"));
  return p;
}

// x, weight, bias -> out, the float scalar scaling_factor; a suite problem (torch steps allowed).
const ProblemSpec& linear() {
  static ProblemSpec p = [] {
    ProblemSpec q =
        load_problem(find_problem_dir(problems_dir(), "L2_40_Matmul_Scaling_ResidualAdd"));
    q.torchscript = "torchscript";
    return q;
  }();
  return p;
}

std::string parse_error(const std::string& yaml) {
  try {
    parse_launch_block({"/* kernrl\n" + yaml + "*/\n", 1, false});
  } catch (const FormatError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kLaunch =
    "launches:\n  - kernel: k\n    grid: [batch_size]\n    block: [256]\n    args: [x, out, dim]\n";

template <typename T>
T value_of(const std::vector<unsigned char>& b) {
  REQUIRE(b.size() == sizeof(T));
  T v;
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

#define CHECK_CONTAINS(text, part) CHECK_MESSAGE((text).find(part) != std::string::npos, text)

}  // namespace

TEST_CASE("values: read in order, bound at each size set, integer or real by their expression") {
  LaunchPlan plan = checked(
      "problem: L1_23_Softmax\n"
      "values:\n"
      "  rows_per_block: min(batch_size, 4)\n"
      "  blocks: cdiv(batch_size, rows_per_block)\n"
      "  inv: 1.0 / dim\n"
      "  half_inv: inv / 2\n" +
          kLaunch,
      softmax());
  REQUIRE(plan.values.size() == 4);
  CHECK(plan.values[0].name == "rows_per_block");
  CHECK(plan.values[1].expr == "cdiv(batch_size, rows_per_block)");
  CHECK(plan.values[2].line == 6);
  const Vars sizes = {{"batch_size", 7}, {"dim", 1000}};
  Vars v = plan_vars(plan, softmax(), sizes, 132);
  CHECK(v.at("rows_per_block") == 4);
  CHECK(v.at("blocks") == 2);
  CHECK(v.at("num_sms") == 132);
  CHECK_FALSE(v.count("inv"));  // real values are not integer variables
  RealVars r = plan_reals(plan, softmax(), v);
  CHECK(r.at("inv") == doctest::Approx(0.001));
  CHECK(r.at("half_inv") == doctest::Approx(0.0005));
  // Sent to the worker with the plan.
  LaunchPlan back = LaunchPlan::from_json(plan.to_json());
  REQUIRE(back.values.size() == 4);
  CHECK(back.values[3].name == "half_inv");
  CHECK(back.to_json() == plan.to_json());
  // A plan without values is sent as before (no `values` key).
  CHECK_FALSE(checked(kLaunch, softmax()).to_json().contains("values"));
  // num_sms is a value's name as any expression's.
  CHECK(plan_vars(checked("values:\n  waves: 2 * num_sms\n" + kLaunch, softmax()), softmax(), sizes,
                  100)
            .at("waves") == 200);
}

TEST_CASE("values: a value uses only the sizes, scalars, num_sms and the values before it") {
  CHECK(plan_error("values:\n  a: b + 1\n  b: dim\n" + kLaunch, softmax()) ==
        "value 'a': 'b' is a value defined after it; a value may use the sizes, the scalars, "
        "num_sms and the values before it");
  CHECK_CONTAINS(plan_error("values:\n  a: a + 1\n" + kLaunch, softmax()),
                 "value 'a': 'a' is the value itself");
  CHECK_CONTAINS(plan_error("values:\n  a: rows * 2\n" + kLaunch, softmax()),
                 "value 'a': unknown name 'rows'");
  // Tensors are no numbers.
  CHECK_CONTAINS(plan_error("values:\n  a: x + 1\n" + kLaunch, softmax()),
                 "value 'a': unknown name 'x'");
  CHECK_CONTAINS(plan_error("values:\n  a: min(dim\n" + kLaunch, softmax()), "value 'a': ");
  // A repeat variable is bound per launch, after the values.
  CHECK_CONTAINS(plan_error("values:\n  a: i * 2\nlaunches:\n  - kernel: k\n    grid: [1]\n"
                            "    block: [1]\n    repeat: {count: 2, var: i}\n",
                            softmax()),
                 "value 'a': unknown name 'i'");
}

TEST_CASE("values: names that would shadow another name are refused, naming the value") {
  CHECK(plan_error("values:\n  dim: 4\n" + kLaunch, softmax()) ==
        "value 'dim' shadows the size dim of L1_23_Softmax");
  CHECK(plan_error("values:\n  out: 4\n" + kLaunch, softmax()) ==
        "value 'out' shadows the tensor out of L1_23_Softmax");
  CHECK(
      plan_error("values:\n  scaling_factor: 4\n" + std::string("launches:\n  - kernel: k\n"
                                                                "    grid: [1]\n    block: [1]\n"),
                 linear()) ==
      "value 'scaling_factor' shadows the scalar scaling_factor of " + linear().id);
  CHECK(
      plan_error("values:\n  buf: 4\n" + kLaunch + "scratch:\n  buf: {dtype: float32, count: 4}\n",
                 softmax()) == "value 'buf' shadows the scratch buffer buf");
  CHECK(plan_error("values:\n  i: 4\nlaunches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n"
                   "    repeat: {count: 2, var: i}\n",
                   softmax()) == "value 'i' shadows the repeat variable i of k");
  for (const char* builtin : {"cdiv", "min", "max", "num_sms"})
    CHECK_CONTAINS(parse_error("values:\n  " + std::string(builtin) + ": 4\n" + kLaunch),
                   "value '" + std::string(builtin) + "' shadows the built-in " + builtin);
  for (const char* word : {"none", "None", "nullptr", "true", "false"})
    CHECK_CONTAINS(parse_error("values:\n  " + std::string(word) + ": 4\n" + kLaunch),
                   "would be read as the argument word " + std::string(word));
  CHECK_CONTAINS(parse_error("values:\n  a: 1\n  a: 2\n" + kLaunch), "value 'a' defined twice");
  CHECK_CONTAINS(parse_error("values:\n  2a: 1\n" + kLaunch), "must be an identifier");
  CHECK_CONTAINS(parse_error("values: [1, 2]\n" + kLaunch), "'values' must map names");
  CHECK_CONTAINS(parse_error("values:\n  a: [1, 2]\n" + kLaunch), "must be a single value");
  CHECK_CONTAINS(parse_error("value:\n  a: 1\n" + kLaunch),
                 "(the keys are problem, values, launches, scratch)");
}

TEST_CASE("values: an expression that does not evaluate names the value and the size set") {
  int line = 0;
  try {
    checked("values:\n  third: batch_size - 3\n  per: dim / third\n" + kLaunch, softmax());
  } catch (const FormatError& e) {
    CHECK(std::string(e.what()) ==
          "value per at batch_size=3 dim=4099: in expression \"dim / third\": division by zero");
    line = e.line;
  }
  CHECK(line == 4);
  CHECK_CONTAINS(plan_error("values:\n  big: dim * 4611686018427387904\n" + kLaunch, softmax()),
                 "value big at batch_size=4 dim=256: in expression");
  CHECK_CONTAINS(plan_error("values:\n  big: dim * 4611686018427387904\n" + kLaunch, softmax()),
                 "64-bit overflow");
  CHECK_CONTAINS(plan_error("values:\n  r: 1.0 / (batch_size - 3)\n" + kLaunch, softmax()),
                 "value r at batch_size=3 dim=4099");
  CHECK_CONTAINS(plan_error("values:\n  m: dim % 2.0\n" + kLaunch, softmax()), "two integers");
  // The limits of every expression: 4096 characters, 200 levels.
  std::string longer = "1";
  while (longer.size() <= kMaxExprChars) longer += " + 1";
  CHECK_CONTAINS(parse_error("values:\n  a: " + longer + "\n" + kLaunch), "the limit is 4096");
  std::string deep = std::string(201, '(') + "1" + std::string(201, ')');
  CHECK_CONTAINS(plan_error("values:\n  a: " + deep + "\n" + kLaunch, softmax()),
                 "nested more than 200 levels deep");
  // On the worker's side, as it evaluates the plan: the same error, an ExprError.
  LaunchPlan plan;
  plan.values.push_back({"third", "batch_size - 3", 2});
  plan.values.push_back({"per", "dim / third", 3});
  CHECK_THROWS_WITH_AS(plan_vars(plan, softmax(), {{"batch_size", 3}, {"dim", 4099}}, 132),
                       "value per at batch_size=3 dim=4099: in expression \"dim / third\": "
                       "division by zero",
                       ExprError);
  CHECK(plan_vars(plan, softmax(), {{"batch_size", 4}, {"dim", 4099}}, 132).at("per") == 4099);
}

TEST_CASE("values: usable in every expression of the launch block") {
  // grid, block, shared_bytes, repeat count, integer and real arguments, an offset, scratch
  // count and shape, a struct's fields.
  LaunchPlan plan = checked(
      "values:\n"
      "  threads: min(dim, 256)\n"
      "  blocks: cdiv(batch_size * dim, threads)\n"
      "  smem: threads * 4\n"
      "  passes: 2\n"
      "  half: batch_size * dim / 2\n"
      "  inv: 1.0 / dim\n"
      "launches:\n"
      "  - kernel: k\n"
      "    grid: [blocks]\n"
      "    block: [threads]\n"
      "    shared_bytes: smem\n"
      "    args: [x + half, out, blocks, inv, inv * 2, struct(ptr x + half, i32 threads, f32 "
      "inv)]\n"
      "    repeat: {count: passes, var: p}\n"
      "scratch:\n"
      "  partial: {dtype: float32, count: blocks}\n"
      "  grid2: {dtype: float32, shape: [passes, threads]}\n",
      softmax());
  const auto& a = plan.launches[0].args;
  REQUIRE(a.size() == 6);
  CHECK(a[0].kind == ArgKind::Offset);
  CHECK(a[2].kind == ArgKind::IntExpr);
  CHECK(a[3].kind == ArgKind::FloatExpr);  // a real value is a real expression
  CHECK(a[4].kind == ArgKind::FloatExpr);
  CHECK(a[5].kind == ArgKind::Struct);
  const Vars v = plan_vars(plan, softmax(), {{"batch_size", 4}, {"dim", 1000}}, 132);
  CHECK(eval_expr(plan.launches[0].grid[0], v) == 16);
  CHECK(eval_expr(plan.launches[0].block[0], v) == 256);
  CHECK(eval_expr(plan.launches[0].shared_bytes, v) == 1024);
  CHECK(eval_expr(plan.launches[0].repeat_count, v) == 2);
  CHECK(eval_expr(plan.scratch[0].count, v) == 16);
  CHECK(eval_expr(plan.scratch[1].count, v) == 512);
  // The worker packs them from the same variables.
  const PtrMap ptrs = {{"x", 0x10000}, {"out", 0x20000}, {"partial", 0x30000}, {"grid2", 0x40000}};
  auto pack = [&](size_t i, size_t w) {
    return pack_kernel_arg(a[i], w, plan, softmax(), v, ptrs, "argument");
  };
  CHECK(value_of<DevicePtr>(pack(0, 8)) == 0x10000 + 2000 * 4);
  CHECK(value_of<int32_t>(pack(2, 4)) == 16);
  CHECK(value_of<float>(pack(3, 4)) == doctest::Approx(0.001f));
  CHECK(value_of<double>(pack(4, 8)) == doctest::Approx(0.002));
  auto s = parse_struct_arg(a[5].text);
  REQUIRE(s);
  CHECK(struct_field_at(s->fields[1], plan, softmax(), v, "").i == 256);
  CHECK(struct_field_at(s->fields[2], plan, softmax(), v, "").f == doctest::Approx(0.001));
  // A launch configuration computed by a value is checked as any: 0 blocks at batch_size=3.
  bool config = false;
  std::string why = plan_error(
      "values:\n  quarter: batch_size / 4\nlaunches:\n  - kernel: k\n    grid: [quarter]\n"
      "    block: [1]\n    args: [x, out, dim]\n",
      softmax(), &config);
  CHECK(config);
  CHECK_CONTAINS(why, "grid.x = quarter is 0 at batch_size=3 dim=4099");
  // A real value where an integer expression goes does not evaluate there.
  CHECK_CONTAINS(plan_error("values:\n  inv: 1.0 / dim\nlaunches:\n  - kernel: k\n"
                            "    grid: [inv]\n    block: [1]\n",
                            softmax()),
                 "unknown name 'inv'");
}

TEST_CASE("values: in torch steps' arguments, integer lists and real arguments") {
  LaunchPlan plan = checked(
      "values:\n"
      "  rows: batch_size\n"
      "  scale: scaling_factor * 2\n"
      "launches:\n"
      "  - torch: linear\n"
      "    args: [x, weight, bias]\n"
      "    out: y\n"
      "  - torch: reshape\n"
      "    args: [y, [rows, out_features]]\n"
      "    out: out\n"
      "  - kernel: scale_add\n"
      "    grid: [cdiv(rows * out_features, 256)]\n"
      "    block: [256]\n"
      "    args: [y, out, rows * out_features, scale]\n"
      "scratch:\n"
      "  y: {dtype: float32, shape: [rows, out_features]}\n",
      linear());
  CHECK(plan.launches[1].args[1].kind == ArgKind::IntList);
  CHECK(plan.launches[2].args[3].kind == ArgKind::FloatExpr);
  const Vars v = plan_vars(plan, linear(), linear().bench, 132);
  CHECK(v.at("rows") == linear().bench.at("batch_size"));
  CHECK(plan_reals(plan, linear(), v).at("scale") == doctest::Approx(1.0));
  // A torch step's list item that does not evaluate is named as before.
  CHECK_CONTAINS(plan_error("values:\n  rows: batch_size\nlaunches:\n  - torch: reshape\n"
                            "    args: [x, [rows, cols]]\n    out: out\n"
                            "  - kernel: k\n    grid: [1]\n    block: [1]\n",
                            linear()),
                 "unknown name 'cols'");
}
