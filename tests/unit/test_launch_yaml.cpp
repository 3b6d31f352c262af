// Launch blocks as models write them: unquoted expressions everywhere, tabs, CRLF, comments; YAML
// that cannot be read named by line; hostile YAML refused before anything is built; launch
// configurations that cannot run named before anything launches.
#include <doctest/doctest.h>

#include <chrono>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "parse/launch_block.h"
#include "parse/yaml_prepass.h"

using namespace kernrl;

namespace {

LaunchPlan parse(const std::string& yaml) {
  return parse_launch_block({"/* kernrl\n" + yaml + "*/\n", 1, false});
}

std::string parse_error(const std::string& yaml, int* line = nullptr) {
  try {
    parse(yaml);
  } catch (const FormatError& e) {
    if (line) *line = e.line;
    return e.what();
  }
  return "no error";
}

const ProblemSpec& softmax() {
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_23_Softmax"));
  return p;
}

// check_plan's error for a Softmax launch block with these grid/block/extra lines.
std::string plan_error(const std::string& launch, bool* config_error = nullptr) {
  auto plan = parse("launches:\n  - kernel: k\n" + launch + "    args: [x, out, dim]\n");
  try {
    check_plan(plan, softmax(), 132);
  } catch (const LaunchConfigError& e) {
    if (config_error) *config_error = true;
    return e.what();
  } catch (const FormatError& e) {
    if (config_error) *config_error = false;
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the pre-pass quotes flow scalars with parentheses and keeps everything else") {
  CHECK(prepare_launch_yaml("grid: [cdiv(n, 256), 1]\n", 4) == "grid: [\"cdiv(n, 256)\", 1]\n");
  CHECK(prepare_launch_yaml("b: {dtype: float32, count: 2 * cdiv(n, 256)}\n", 4) ==
        "b: {dtype: float32, count: \"2 * cdiv(n, 256)\"}\n");
  CHECK(prepare_launch_yaml("- {kernel: gemm<128, 64>, grid: [max(a, min(b, c))]}\n", 4) ==
        "- {kernel: \"gemm<128, 64>\", grid: [\"max(a, min(b, c))\"]}\n");
  // Block context needs nothing; quoted values, comments and block scalars are left alone.
  const char* same[] = {
      "count: cdiv(n, 256)\n",
      "grid: ['cdiv(n, 256)', \"min(a, b)\"]\n",
      "grid: [n]  # cdiv(n, 256), 1\n",
      "# [cdiv(a, b)]\nx: 1\n",
      "text: |\n  [cdiv(a, b)]\n  {x: f(1, 2)}\nnext: 1\n",
      "k: 'it''s (a, b)'\n",
  };
  for (const char* s : same) {
    INFO(s);
    CHECK(prepare_launch_yaml(s, 4) == s);
  }
  // Tabs become spaces to the next tab stop; CRLF and lone CR end lines; the line count stays.
  CHECK(prepare_launch_yaml("a:\n\t- b\n", 4) == "a:\n    - b\n");
  CHECK(prepare_launch_yaml("a:\n\t- b\n", 2) == "a:\n  - b\n");
  CHECK(prepare_launch_yaml("a: [f(1,\r\n 2)]\r\nb: 1\rc: 2", 4) ==
        "a: [\"f(1,\n 2)\"]\nb: 1\nc: 2");
  // Quotes and backslashes inside a quoted expression are escaped.
  CHECK(prepare_launch_yaml("[f(\"x\\\")]", 4) == "[\"f(\\\"x\\\\\\\")\"]");
}

TEST_CASE("unquoted expressions in flow lists, flow mappings and block mappings") {
  auto plan = parse(
      "launches:\n"
      "  - {kernel: k, grid: [cdiv(batch_size * dim, 256), min(4, dim)], block: [256], args: [x, "
      "out, max(dim, 1)]}\n"
      "  - kernel: gemm<128, 64>\n"
      "    grid: cdiv(batch_size, 2), 3\n"
      "    block: [32, 8]\n"
      "    shared_bytes: 2 * cdiv(dim, 256) * 4\n"
      "    args: x, out, cdiv(dim, 4)\n"
      "    repeat: {count: cdiv(dim, 1024), var: pass}\n"
      "  - {kernel: \"ns::k<float, 4>\", grid: [1], block: [1], args: []}\n"
      "scratch:\n"
      "  buf: {dtype: float32, count: cdiv(batch_size, 256)}\n"
      "  buf2: {dtype: int32, count: 2 * cdiv(dim, 256)}\n"
      "  buf3:\n"
      "    dtype: float32\n"
      "    count: max(dim, batch_size)\n");
  REQUIRE(plan.launches.size() == 3);
  CHECK(plan.launches[0].grid ==
        std::vector<std::string>{"cdiv(batch_size * dim, 256)", "min(4, dim)"});
  CHECK(plan.launches[0].args.at(2).text == "max(dim, 1)");
  CHECK(plan.launches[1].kernel == "gemm<128, 64>");
  CHECK(plan.launches[1].grid == std::vector<std::string>{"cdiv(batch_size, 2)", "3"});
  CHECK(plan.launches[1].shared_bytes == "2 * cdiv(dim, 256) * 4");
  CHECK(plan.launches[1].args.size() == 3);
  CHECK(plan.launches[1].repeat_count == "cdiv(dim, 1024)");
  CHECK(plan.launches[2].kernel == "ns::k<float, 4>");
  REQUIRE(plan.scratch.size() == 3);
  CHECK(plan.scratch[0].count == "cdiv(batch_size, 256)");
  CHECK(plan.scratch[1].count == "2 * cdiv(dim, 256)");
  CHECK(plan.scratch[2].count == "max(dim, batch_size)");
  CHECK(plan.kernel_names() == std::vector<std::string>{"k", "gemm<128, 64>", "ns::k<float, 4>"});
  // The flow mapping of a launch inside a block kernel: an unquoted template name.
  auto t = parse("launches:\n  - {kernel: gemm<128, 64>, grid: [1], block: [1]}\n");
  CHECK(t.launches[0].kernel == "gemm<128, 64>");
}

TEST_CASE("tabs, CRLF and comments are fine") {
  const std::string yaml =
      "problem: L1_23_Softmax   # the problem\n"
      "launches:  # one launch\n"
      "\t- kernel: softmax_rows\t# a comment with cdiv(a, b), [x]\n"
      "\t  grid: [batch_size]\n"
      "\t  block: [256]\t\n"
      "\t  args: [x, out, dim]  # x, y\n";
  auto plan = parse(yaml);
  CHECK(plan.launches.at(0).kernel == "softmax_rows");
  CHECK(plan.launches[0].args.size() == 3);
  CHECK(plan.launches[0].line == 4);
  // One tab per level, read at tab width 2.
  auto two = parse("launches:\n\t- kernel: k\n\t\tgrid: [1]\n\t\tblock: [1]\n");
  CHECK(two.launches.at(0).grid == std::vector<std::string>{"1"});
  // CRLF straight into the parser.
  std::string crlf;
  for (char c : yaml) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  CHECK(parse(crlf).launches.at(0).line == 4);
}

TEST_CASE("YAML that cannot be read names the file line and the fix") {
  int line = 0;
  std::string m = parse_error("launches:\n  - kernel: k\n    grid: [1\n    block: [1]\n", &line);
  CHECK(m.find("not valid YAML at line") != std::string::npos);
  CHECK(m.find("bracket") != std::string::npos);
  CHECK(line >= 3);
  m = parse_error("launches:\n  - kernel: k\n     grid: [1]\n    block: [1]\n", &line);
  CHECK(m.find("line " + std::to_string(line)) != std::string::npos);
  CHECK(line >= 3);
  CHECK(line <= 5);
  m = parse_error("launches:\n  - kernel: \"k\n    grid: [1]\n", &line);
  CHECK(m.find("never closed") != std::string::npos);
}

TEST_CASE("anchors, aliases, deep nesting and huge documents are refused before YAML is built") {
  // A billion-laughs document of about 64 KB.
  std::string bomb =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'z'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += (i ? ",*" : "*") + prev;
    bomb += "]\n";
  }
  while (bomb.size() < 64 * 1024)
    bomb += "# padding padding padding padding padding padding padding padding\n";
  auto t0 = std::chrono::steady_clock::now();
  std::string m = parse_error(bomb + "launches: [*z]\n");
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(m.find("anchors") != std::string::npos);
  CHECK(ms < 500);
  CHECK(parse_error("launches:\n  - kernel: *k\n").find("aliases") != std::string::npos);
  // 20,000 nested flow lists: an error, not a stack overflow.
  std::string deep = "launches: " + std::string(20000, '[') + std::string(20000, ']') + "\n";
  CHECK(parse_error(deep).find("nested more than") != std::string::npos);
  std::string deep_block = "launches:\n";
  for (int i = 0; i < 5000; ++i) deep_block += "- ";
  CHECK(parse_error(deep_block + "x\n").find("nested more than") != std::string::npos);
  std::string many = "launches: [";
  for (int i = 0; i < 20000; ++i) many += "1,";
  CHECK(parse_error(many + "1]\n").find("nodes") != std::string::npos);
}

TEST_CASE("kernel names are C++ names: no newline or quote ever reaches the compiler") {
  const char* good[] = {"k",           "gemm<128, 64>", "ns::k<float, 4>", "::k", "k<float*, int&>",
                        "k<(64 * 2)>", "k<-1>"};
  for (const char* k : good) {
    INFO(k);
    CHECK(kernel_name_problem(k).empty());
  }
  const char* bad[] = {"k\n#include \"/etc/passwd\"",
                       "k\"",
                       "k;",
                       "k//",
                       "k/*",
                       "k\\",
                       "k#",
                       "1k",
                       "k\tx",
                       "k\x7f",
                       "k\xc3\xa9",
                       "k{}",
                       "k[0]",
                       "<k>"};
  for (const char* k : bad) {
    INFO(k);
    CHECK_FALSE(kernel_name_problem(k).empty());
  }
  CHECK_FALSE(kernel_name_problem(std::string(30000, 'k')).empty());
  // Through YAML: a newline written as an escape in a double-quoted name.
  int line = 0;
  std::string m = parse_error(
      "launches:\n  - kernel: \"k\\n#include </etc/passwd>\"\n    grid: [1]\n    block: [1]\n",
      &line);
  CHECK(m.find("control") != std::string::npos);
  CHECK(m.find('\n') == std::string::npos);  // the message shows it escaped
  CHECK(line == 3);
  CHECK(parse_error("launches:\n  - kernel: " + std::string(30000, 'k') +
                    "\n    grid: [1]\n    block: [1]\n")
            .find("limit") != std::string::npos);
}

TEST_CASE("float literals are checked where they are parsed") {
  CHECK(is_float_literal("0.5"));
  CHECK(is_float_literal("1e-5"));
  CHECK(is_float_literal("-2.f"));
  CHECK(is_float_literal(".25"));
  CHECK(is_float_literal("1E+3F"));
  CHECK_FALSE(is_float_literal("e5"));  // a name
  CHECK_FALSE(is_float_literal("1e"));
  CHECK_FALSE(is_float_literal("12"));
  CHECK_FALSE(is_float_literal("1.2.3"));
  CHECK_FALSE(is_float_literal("."));
  auto args = [](const std::string& a) {
    return parse_error("launches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n    args: [x, " +
                       a + "]\n");
  };
  CHECK(args("1e999").find("not a finite number") != std::string::npos);
  CHECK(args("-1e999").find("not a finite number") != std::string::npos);
  CHECK(args("1e-999").find("too small") != std::string::npos);
  CHECK(args("nan").find("not a finite number") != std::string::npos);
  CHECK(args("-INF").find("not a finite number") != std::string::npos);
  CHECK(args(".nan").find("not a finite number") != std::string::npos);
  CHECK(args("0.5") == "no error");
  CHECK(args("1e-5") == "no error");
}

TEST_CASE(
    "launch configurations that cannot run are launch errors naming launch, dimension, value and "
    "sizes") {
  bool config = false;
  std::string m = plan_error("    grid: [batch_size / 4]\n    block: [256]\n", &config);
  CHECK(config);
  CHECK(m.find("launch 1 (k)") != std::string::npos);
  CHECK(m.find("grid.x = batch_size / 4 is 0") != std::string::npos);
  CHECK(m.find("batch_size=3 dim=4099") != std::string::npos);
  m = plan_error("    grid: [1, batch_size * 100]\n    block: [256]\n", &config);
  CHECK(config);
  CHECK(m.find("grid.y") != std::string::npos);
  CHECK(m.find("409600") != std::string::npos);
  CHECK(m.find("65535") != std::string::npos);
  m = plan_error("    grid: [1, 1, 0 - 1]\n    block: [256]\n", &config);
  CHECK(m.find("grid.z = 0 - 1 is -1") != std::string::npos);
  m = plan_error("    grid: [1]\n    block: [2048]\n", &config);
  CHECK(m.find("block.x") != std::string::npos);
  m = plan_error("    grid: [1]\n    block: [32, 32, 2]\n", &config);
  CHECK(config);
  CHECK(m.find("2048 threads") != std::string::npos);
  m = plan_error("    grid: [1]\n    block: [1, 1, 65]\n", &config);
  CHECK(m.find("block.z") != std::string::npos);
  m = plan_error("    grid: [3]\n    block: [32]\n    cluster: [2]\n", &config);
  CHECK(config);
  CHECK(m.find("not a multiple of cluster.x") != std::string::npos);
  m = plan_error("    grid: [16]\n    block: [32]\n    cluster: [16]\n", &config);
  CHECK(m.find("cluster.x") != std::string::npos);
  m = plan_error("    grid: [1]\n    block: [32]\n    shared_bytes: 262144\n", &config);
  CHECK(config);
  CHECK(m.find("shared_bytes") != std::string::npos);
  m = plan_error("    grid: [1]\n    block: [32]\n    shared_bytes: dim - 5000\n", &config);
  CHECK(m.find("is -4744") != std::string::npos);
  // The repeat variable is part of the size set named.
  m = plan_error("    grid: [4 - pass]\n    block: [32]\n    repeat: {count: 5, var: pass}\n",
                 &config);
  CHECK(config);
  CHECK(m.find("pass=4") != std::string::npos);
  // Fine configurations; a launch repeated 0 times at some size set is not checked there.
  CHECK(
      plan_error("    grid: [cdiv(batch_size * dim, 256), 65535, 65535]\n    block: [32, 32]\n") ==
      "no error");
  CHECK(
      plan_error(
          "    grid: [batch_size / 4]\n    block: [256]\n    repeat: {count: batch_size / 4}\n") ==
      "no error");
  CHECK(
      plan_error(
          "    grid: [16]\n    block: [32]\n    cluster: [2, 1, 1]\n    shared_bytes: 232448\n") ==
      "no error");
  // Expression errors stay format errors.
  plan_error("    grid: [batch_size / 0]\n    block: [256]\n", &config);
  CHECK_FALSE(config);
}

namespace {

// L2_40 (x, weight, bias -> out) as a suite problem would be: torch steps are allowed where the
// reference is TorchScript.
ProblemSpec linear_problem(bool suite) {
  ProblemSpec p =
      load_problem(find_problem_dir(problems_dir(), "L2_40_Matmul_Scaling_ResidualAdd"));
  if (suite) p.torchscript = "torchscript";
  return p;
}

std::string torch_plan_error(const std::string& block, bool suite = true) {
  try {
    LaunchPlan plan = parse(block);
    check_plan(plan, linear_problem(suite), 132);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "no error";
}

#define CHECK_CONTAINS(text, part) CHECK_MESSAGE((text).find(part) != std::string::npos, text)

const char* kLinearThenScale =
    "launches:\n"
    "  - torch: linear\n"
    "    args: [x, weight, bias]\n"
    "    out: y\n"
    "  - kernel: scale_add\n"
    "    grid: [cdiv(batch_size * out_features, 256)]\n"
    "    block: [256]\n"
    "    args: [y, out, batch_size * out_features]\n"
    "scratch:\n"
    "  y: {dtype: float32, shape: [batch_size, out_features]}\n";

}  // namespace

TEST_CASE("torch steps: an ATen operator of the list, its arguments and out buffer") {
  LaunchPlan plan = parse(kLinearThenScale);
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].torch == "linear");
  CHECK(plan.launches[0].out == "y");
  CHECK(plan.launches[0].kernel.empty());
  CHECK(plan.kernel_names() == std::vector<std::string>{"scale_add"});
  CHECK(plan.has_torch_steps());
  REQUIRE(plan.scratch.size() == 1);
  CHECK(plan.scratch[0].shape == std::vector<std::string>{"batch_size", "out_features"});
  CHECK(plan.scratch[0].count == "(batch_size) * (out_features)");
  check_plan(plan, linear_problem(true), 132);
  CHECK(plan.launches[0].args[0].kind == ArgKind::Tensor);
  CHECK(plan.launches[1].args[0].kind == ArgKind::Scratch);
  // The plan travels to the worker as JSON and comes back the same.
  LaunchPlan back = LaunchPlan::from_json(plan.to_json());
  CHECK(back.launches[0].torch == "linear");
  CHECK(back.launches[0].out == "y");
  CHECK(back.scratch[0].shape == plan.scratch[0].shape);
  CHECK(back.to_json() == plan.to_json());

  // Lists of integers, none and booleans as arguments.
  LaunchPlan conv = parse(
      "launches:\n"
      "  - {torch: conv2d, args: [x, weight, none, [1, cdiv(in_features, 64)], 0], out: y}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [y]}\n"
      "scratch:\n  y: {dtype: float32, count: 4}\n");
  const auto& a = conv.launches[0].args;
  REQUIRE(a.size() == 5);
  CHECK(a[2].kind == ArgKind::None);
  CHECK(a[3].kind == ArgKind::IntList);
  CHECK(a[3].text == "1, cdiv(in_features, 64)");
}

TEST_CASE("torch steps are refused where they cannot be graded as meant") {
  // kernrl's own problems: the kernels do all of the work.
  CHECK_CONTAINS(torch_plan_error(kLinearThenScale, false), "suites built from KernelBench");
  // An operator outside the list, an input as out, an unknown out, unknown keys, torch steps only.
  std::string block = kLinearThenScale;
  CHECK_CONTAINS(torch_plan_error(std::string(block).replace(block.find("linear"), 6, "from_file")),
                 "not an operator a torch step may call");
  CHECK_CONTAINS(torch_plan_error(std::string(block).replace(block.find("out: y"), 6, "out: x")),
                 "inputs must stay unchanged");
  CHECK_CONTAINS(torch_plan_error(std::string(block).replace(block.find("out: y"), 6, "out: z")),
                 "not an output or scratch buffer");
  CHECK_CONTAINS(torch_plan_error("launches:\n  - {torch: linear, args: [x, weight], out: "
                                  "out, grid: [1]}\n"),
                 "unknown key 'grid' of a torch step");
  CHECK_CONTAINS(
      torch_plan_error("launches:\n  - {torch: linear, args: [x, weight, bias], out: out}\n"),
      "torch steps only");
  CHECK_CONTAINS(torch_plan_error("launches:\n  - {torch: linear, args: [x, weight, "
                                  "nope], out: out}\n  - {kernel: k, grid: [1], block: [1]}\n"),
                 "unknown name 'nope'");
  // Each dimension of a scratch shape is checked, not only their product.
  CHECK_CONTAINS(torch_plan_error("launches:\n  - {torch: linear, args: [x, weight], out: y}\n"
                                  "  - {kernel: k, grid: [1], block: [1], args: [y]}\nscratch:\n"
                                  "  y: {dtype: float32, shape: [0 - batch_size, 0 - 1]}\n"),
                 "has dimension 0 - batch_size");
}

TEST_CASE("torch steps take repeat as launches do: a count of 0 skips the step there") {
  // A fallback taken where in_features is not 64 (three of L2_40's size sets) and a kernel where it
  // is (the bench set and the first test set).
  const std::string cond = "min(max((in_features) - (64), (64) - (in_features)), 1)";
  LaunchPlan plan = parse(
      "launches:\n"
      "  - torch: linear\n"
      "    args: [x, weight, bias]\n"
      "    out: out\n"
      "    repeat: {count: " +
      cond +
      "}\n"
      "  - kernel: fused\n"
      "    grid: [batch_size]\n"
      "    block: [128]\n"
      "    args: [x, weight, bias, out]\n"
      "    repeat: {count: 1 - " +
      cond + "}\n");
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].repeat_count == cond);
  CHECK(plan.launches[0].repeat_var.empty());
  check_plan(plan, linear_problem(true), 132);
  LaunchPlan back = LaunchPlan::from_json(plan.to_json());
  CHECK(back.launches[0].repeat_count == cond);
  CHECK(back.to_json() == plan.to_json());
  // A repeat variable, usable in the step's arguments (a narrow per pass).
  LaunchPlan passes = parse(
      "launches:\n"
      "  - {torch: narrow, args: [weight, 0, part, 1], out: row, repeat: {count: 2, var: part}}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [row]}\n"
      "scratch:\n  row: {dtype: float32, shape: [1, in_features]}\n");
  check_plan(passes, linear_problem(true), 132);
  CHECK(passes.launches[0].repeat_var == "part");
  CHECK(passes.launches[0].repeat_count == "2");
  // The count is checked as a launch's: in range and evaluating at every size set; the repeat
  // variable may not shadow a name of the problem; the arguments evaluate with it.
  const std::string step = "launches:\n  - {torch: linear, args: [x, weight], out: y, repeat: ";
  const std::string rest =
      "}\n  - {kernel: k, grid: [1], block: [1], args: [y]}\nscratch:\n"
      "  y: {dtype: float32, shape: [batch_size, out_features]}\n";
  CHECK_CONTAINS(torch_plan_error(step + "{count: 0 - batch_size}" + rest),
                 "repeat.count of torch step linear is -3 (0..100000)");
  CHECK_CONTAINS(torch_plan_error(step + "{count: batch_size / (in_features - 64)}" + rest),
                 "repeat.count of torch step linear");
  CHECK_CONTAINS(torch_plan_error(step + "{count: 2, var: batch_size}" + rest),
                 "repeat var 'batch_size' shadows a name of the problem");
  CHECK_CONTAINS(torch_plan_error(step + "{count: 2, var: i, extra: 1}" + rest),
                 "'repeat' takes only count and var");
  CHECK_CONTAINS(
      torch_plan_error("launches:\n  - {torch: narrow, args: [weight, 0, 4 / (part - 1), 1], "
                       "out: row, repeat: {count: 2, var: part}}\n"
                       "  - {kernel: k, grid: [1], block: [1], args: [row]}\nscratch:\n"
                       "  row: {dtype: float32, shape: [1, in_features]}\n"),
      "argument '4 / (part - 1)' of torch step narrow");
}

TEST_CASE("real expressions as float arguments: checked at every size set, sent to the worker") {
  auto plan = parse(
      "launches:\n  - kernel: k\n    grid: [batch_size]\n    block: [256]\n"
      "    args: [x, out, dim, 1.0 / dim, 1.0f / (batch_size * dim), 0.5]\n");
  check_plan(plan, softmax(), 132);
  const auto& a = plan.launches[0].args;
  REQUIRE(a.size() == 6);
  CHECK(a[2].kind == ArgKind::IntExpr);
  CHECK(a[3].kind == ArgKind::FloatExpr);
  CHECK(a[4].kind == ArgKind::FloatExpr);
  CHECK(a[5].kind == ArgKind::FloatLiteral);
  LaunchPlan back = LaunchPlan::from_json(plan.to_json());
  CHECK(back.launches[0].args[3].kind == ArgKind::FloatExpr);
  CHECK(back.to_json() == plan.to_json());
  // A name that is not the problem's, or a division by zero at some size set, is a format error.
  auto error = [](const std::string& arg) {
    auto p = parse("launches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n    args: [x, out, " +
                   arg + "]\n");
    try {
      check_plan(p, softmax(), 132);
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_CONTAINS(error("1.0 / rows"), "unknown name 'rows'");
  CHECK_CONTAINS(error("1.0 / (batch_size - 3)"), "division by zero");
  CHECK_CONTAINS(error("dim % 2.0"), "two integers");
  CHECK(error("dim * 0.5") == "no error");
  // A kind number the plan's reader does not know is refused, not cast.
  auto j = plan.to_json();
  j["launches"][0]["args"][0]["kind"] = 42;
  CHECK_THROWS(LaunchPlan::from_json(j));
}

TEST_CASE("torch steps mul and div: a tensor by a number, a real expression evaluated per set") {
  // The number of `mul` / `div` (ATen's mul.Scalar, div.Scalar) may be a real expression of the
  // sizes, a scalar of the problem or an integer expression, each classified as for a kernel.
  LaunchPlan plan = parse(
      "launches:\n"
      "  - {torch: linear, args: [x, weight, bias], out: y}\n"
      "  - {torch: mul, args: [y, 1.0 / (batch_size * out_features)], out: z}\n"
      "  - {torch: div, args: [z, scaling_factor], out: y}\n"
      "  - {torch: mul, args: [y, in_features - 1], out: z}\n"
      "  - {torch: div, args: [z, 0.25], out: y}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [y, out]}\n"
      "scratch:\n"
      "  y: {dtype: float32, shape: [batch_size, out_features]}\n"
      "  z: {dtype: float32, shape: [batch_size, out_features]}\n");
  check_plan(plan, linear_problem(true), 132);
  REQUIRE(plan.launches.size() == 6);
  CHECK(plan.launches[1].torch == "mul");
  CHECK(plan.launches[1].args[0].kind == ArgKind::Scratch);
  CHECK(plan.launches[1].args[1].kind == ArgKind::FloatExpr);
  CHECK(plan.launches[2].torch == "div");
  CHECK(plan.launches[2].args[1].kind == ArgKind::Scalar);
  CHECK(plan.launches[3].args[1].kind == ArgKind::IntExpr);
  CHECK(plan.launches[4].args[1].kind == ArgKind::FloatLiteral);
  LaunchPlan back = LaunchPlan::from_json(plan.to_json());
  CHECK(back.launches[1].args[1].kind == ArgKind::FloatExpr);
  CHECK(back.to_json() == plan.to_json());
  // The real expression is checked at every size set as a kernel's is: a division by zero at one
  // of them (in_features is 64 at two of L2_40's sets) or an unknown name is a format error naming
  // the step's argument.
  auto step = [](const std::string& arg) {
    return "launches:\n  - {torch: mul, args: [x, " + arg +
           "], out: y}\n  - {kernel: k, grid: [1], block: [1], args: [y]}\nscratch:\n"
           "  y: {dtype: float32, shape: [batch_size, in_features]}\n";
  };
  CHECK(torch_plan_error(step("1.0 / in_features")) == "no error");
  const std::string zero = torch_plan_error(step("1.0 / (in_features - 64)"));
  CHECK_CONTAINS(zero, "argument '1.0 / (in_features - 64)' of torch step mul");
  CHECK_CONTAINS(zero, "division by zero");
  CHECK_CONTAINS(torch_plan_error(step("1.0 / depth")), "unknown name 'depth'");
  // `mul` and `div` are names of the list only on a suite built from KernelBench.
  CHECK_CONTAINS(torch_plan_error(step("0.5"), false), "suites built from KernelBench");
  CHECK(torch_step_op_problem("mul").empty());
  CHECK(torch_step_op_problem("div").empty());
  CHECK_CONTAINS(torch_step_op_problem("floor_divide"), "not an operator a torch step may call");
}

TEST_CASE("torch steps select and unfold: view operators, their integers checked per set") {
  // x.unfold(1, 4, 2) then the windows' last element (x[..., -1]), as ATen's unfold and
  // select.int take them: a tensor and integer expressions.
  LaunchPlan plan = parse(
      "launches:\n"
      "  - {torch: unfold, args: [x, 1, 4, 2], out: w}\n"
      "  - {torch: select, args: [w, -1, in_features / in_features - 2], out: y}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [y, out]}\n"
      "scratch:\n"
      "  w: {dtype: float32, shape: [batch_size, (in_features - 4) / 2 + 1, 4]}\n"
      "  y: {dtype: float32, shape: [batch_size, (in_features - 4) / 2 + 1]}\n");
  check_plan(plan, linear_problem(true), 132);
  REQUIRE(plan.launches.size() == 3);
  CHECK(plan.launches[0].torch == "unfold");
  CHECK(plan.launches[1].torch == "select");
  CHECK(plan.launches[1].args[0].kind == ArgKind::Scratch);
  CHECK(plan.launches[1].args[2].kind == ArgKind::IntExpr);
  CHECK(LaunchPlan::from_json(plan.to_json()).to_json() == plan.to_json());
  CHECK(torch_step_op_problem("select").empty());
  CHECK(torch_step_op_problem("unfold").empty());
  // Names of the list only on a suite built from KernelBench.
  CHECK_CONTAINS(torch_plan_error("launches:\n  - {torch: select, args: [x, 0, 0], out: y}\n"
                                  "  - {kernel: k, grid: [1], block: [1], args: [y]}\n"
                                  "scratch:\n  y: {dtype: float32, shape: [in_features]}\n",
                                  false),
                 "suites built from KernelBench");
}

TEST_CASE("null kernel arguments: a null pointer for an optional tensor, in every spelling") {
  for (const std::string word : {"null", "nullptr", "none", "~"}) {
    auto plan = parse(
        "launches:\n  - kernel: k\n    grid: [batch_size]\n    block: [256]\n"
        "    args: [x, " +
        word + ", out, dim]\n");
    check_plan(plan, softmax(), 132);
    const auto& a = plan.launches[0].args;
    REQUIRE(a.size() == 4);
    CHECK(a[0].kind == ArgKind::Tensor);
    CHECK(a[1].kind == ArgKind::None);
    CHECK(a[2].kind == ArgKind::Tensor);
    LaunchPlan back = LaunchPlan::from_json(plan.to_json());
    CHECK(back.launches[0].args[1].kind == ArgKind::None);
  }
}

TEST_CASE("torch step cat: a list of tensor names, kept apart from lists of integers") {
  LaunchPlan plan = parse(
      "launches:\n"
      "  - {torch: cat, args: [[weight, weight], 0], out: w2}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [w2]}\n"
      "scratch:\n  w2: {dtype: float32, shape: [2 * out_features, in_features]}\n");
  check_plan(plan, linear_problem(true), 132);
  REQUIRE(plan.launches[0].args.size() == 2);
  CHECK(plan.launches[0].args[0].kind == ArgKind::TensorList);
  CHECK(plan.launches[0].args[0].text == "weight, weight");
  CHECK(LaunchPlan::from_json(plan.to_json()).launches[0].args[0].kind == ArgKind::TensorList);
  LaunchPlan mixed = parse(
      "launches:\n"
      "  - {torch: cat, args: [[weight, 2], 0], out: w2}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [w2]}\n"
      "scratch:\n  w2: {dtype: float32, count: 4}\n");
  try {
    check_plan(mixed, linear_problem(true), 132);
    FAIL("a list of a tensor and an integer was accepted");
  } catch (const FormatError& e) {
    CHECK_CONTAINS(std::string(e.what()), "of tensors or of integers");
  }
  // cat's out buffer may not be one of the tensors it reads.
  LaunchPlan self = parse(
      "launches:\n"
      "  - {torch: cat, args: [[weight, w2], 0], out: w2}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [w2]}\n"
      "scratch:\n  w2: {dtype: float32, shape: [2 * out_features, in_features]}\n");
  try {
    check_plan(self, linear_problem(true), 132);
    FAIL("cat into one of its own tensors was accepted");
  } catch (const FormatError& e) {
    CHECK_CONTAINS(std::string(e.what()), "is also one of its tensors");
  }
}

TEST_CASE("torch steps lstm and gru: `result` picks which of the operator's results goes to out") {
  const std::string steps =
      "launches:\n"
      "  - {torch: lstm, args: [x, [y, y], [weight, weight, bias, bias], true, 1, 0.0, true, "
      "false, false], out: h, result: RESULT}\n"
      "  - {torch: gru, args: [x, y, [weight, weight], false, 1, 0.0, true, false, false], out: "
      "g}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [h, g]}\n"
      "scratch:\n  y: {dtype: float32, count: 4}\n  h: {dtype: float32, count: 4}\n"
      "  g: {dtype: float32, count: 4}\n";
  auto with = [&](const std::string& result) {
    std::string b = steps;
    return b.replace(b.find("RESULT"), 6, result);
  };
  LaunchPlan plan = parse(with("2"));
  check_plan(plan, linear_problem(true), 132);
  REQUIRE(plan.launches.size() == 3);
  CHECK(plan.launches[0].torch == "lstm");
  CHECK(plan.launches[0].result == 2);
  CHECK(plan.launches[1].result == 0);  // the default
  CHECK(plan.launches[0].args[1].kind == ArgKind::TensorList);
  CHECK(plan.launches[0].args[2].kind == ArgKind::TensorList);
  CHECK(plan.launches[0].args[5].kind == ArgKind::FloatLiteral);
  CHECK(plan.launches[1].args[1].kind == ArgKind::Scratch);
  // Sent to the worker: `result` where it is not 0; a plan without it reads as before.
  nlohmann::json j = plan.to_json();
  CHECK(j["launches"][0]["result"] == 2);
  CHECK_FALSE(j["launches"][1].contains("result"));
  CHECK_FALSE(j["launches"][2].contains("result"));
  LaunchPlan back = LaunchPlan::from_json(j);
  CHECK(back.launches[0].result == 2);
  CHECK(back.launches[1].result == 0);
  CHECK(back.to_json() == j);
  LaunchPlan linear = parse(kLinearThenScale);
  check_plan(linear, linear_problem(true), 132);
  CHECK_FALSE(linear.to_json()["launches"][0].contains("result"));
  CHECK(LaunchPlan::from_json(linear.to_json()).launches[0].result == 0);

  // A result the operator does not return, or not written as a non-negative integer.
  CHECK_CONTAINS(torch_plan_error(with("3")),
                 "torch step lstm: result 3 is not one of its results: aten::lstm has 3, results "
                 "0 to 2");
  CHECK_CONTAINS(torch_plan_error(with("0")), "no error");
  for (const char* bad : {"-1", "1.5", "h_n", "1000"})
    CHECK_CONTAINS(torch_plan_error(with(bad)), "of a torch step must be a non-negative integer");
  std::string one = kLinearThenScale;
  CHECK_CONTAINS(
      torch_plan_error(one.replace(one.find("    out: y"), 10, "    out: y\n    result: 1")),
      "torch step linear: result 1 is not its result: aten::linear has one result, "
      "result 0 (the default)");
}

TEST_CASE("NAME + EXPR: a kernel's pointer into a buffer, checked at every size set") {
  // Classified, kept and sent to the worker as an offset.
  auto plan = parse(
      "launches:\n  - kernel: k\n    grid: [batch_size]\n    block: [256]\n"
      "    args: [x + dim, out+(batch_size - 1) * dim, buf + 2, x + batch_size * dim, dim]\n"
      "scratch:\n  buf: {dtype: float16, count: 2 * dim}\n");
  check_plan(plan, softmax(), 132);
  const auto& a = plan.launches[0].args;
  REQUIRE(a.size() == 5);
  CHECK(a[0].kind == ArgKind::Offset);
  CHECK(a[1].kind == ArgKind::Offset);
  CHECK(a[2].kind == ArgKind::Offset);
  CHECK(a[3].kind == ArgKind::Offset);  // the end of the buffer: a pointer to nothing left
  CHECK(a[4].kind == ArgKind::IntExpr);
  CHECK(LaunchPlan::from_json(plan.to_json()).launches[0].args[1].kind == ArgKind::Offset);

  auto split = split_offset_arg("linear.weight+ 2 * (n + 1)");
  REQUIRE(split);
  CHECK(split->buffer == "linear.weight");
  CHECK(split->offset == "2 * (n + 1)");
  CHECK_FALSE(split_offset_arg("(x + 1)"));
  CHECK_FALSE(split_offset_arg("+x"));
  CHECK_FALSE(split_offset_arg("x + "));

  // Past the end (or before the start) at some size set: a launch error naming the launch, the
  // argument, its expression, its value and the size set; a small test set catches it.
  auto error = [](const std::string& launch, bool* config) {
    auto p = parse("launches:\n  - kernel: k\n    grid: [1]\n    block: [32]\n" + launch +
                   "scratch:\n  buf: {dtype: float32, count: 8}\n");
    try {
      check_plan(p, softmax(), 132);
    } catch (const LaunchConfigError& e) {
      *config = true;
      return std::string(e.what());
    } catch (const FormatError& e) {
      *config = false;
      return std::string(e.what());
    }
    return std::string("no error");
  };
  bool config = false;
  std::string m = error("    args: [x + 2000, out]\n", &config);
  CHECK(config);
  CHECK_CONTAINS(m,
                 "launch 1 (k): argument 1 = x + 2000 offsets x by 2000 elements at "
                 "batch_size=4 dim=256; an offset into x must be 0 to its 1024 elements");
  m = error("    args: [out, buf + 9]\n", &config);
  CHECK(config);
  CHECK_CONTAINS(m, "argument 2 = buf + 9 offsets buf by 9 elements");
  m = error("    args: [x + (0 - 1)]\n", &config);
  CHECK_CONTAINS(m, "by -1 elements");
  // A repeat variable: each pass is checked, and named.
  m = error("    args: [x + pass * dim]\n    repeat: {count: batch_size + 2, var: pass}\n",
            &config);
  CHECK(config);
  CHECK_CONTAINS(m, "pass=5");
  CHECK(error("    args: [x + pass * dim]\n    repeat: {count: batch_size + 1, var: pass}\n",
              &config) == "no error");
  // A launch that does not run at a size set (count 0) is not checked there.
  CHECK(error("    args: [x + 2000]\n    repeat: {count: min(max(dim - 300, 0), 1)}\n", &config) ==
        "no error");
  // An offset that does not evaluate, or names something else, is a format error.
  m = error("    args: [x + rows]\n", &config);
  CHECK_FALSE(config);
  CHECK_CONTAINS(m, "unknown name 'rows' in its offset");
  m = error("    args: [x + dim / 0]\n", &config);
  CHECK_FALSE(config);
  CHECK_CONTAINS(m, "division by zero");
  m = error("    args: [x + 0.5]\n", &config);
  CHECK_FALSE(config);
  CHECK_CONTAINS(m, "argument 'x + 0.5'");

  // CUDA kernels only: Triton launches and torch steps take whole tensors.
  auto triton = parse(
      "launches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n"
      "    args: [x + dim, out]\n");
  triton.language = "triton";
  try {
    check_plan(triton, softmax(), 132);
    FAIL("a Triton launch took a pointer into a buffer");
  } catch (const LaunchConfigError&) {
    FAIL("a Triton launch's offset is a format error");
  } catch (const FormatError& e) {
    CHECK_CONTAINS(std::string(e.what()), "a Triton kernel takes whole tensors");
  }
  CHECK_CONTAINS(torch_plan_error("launches:\n  - {torch: linear, args: [x + 4, weight], out: y}\n"
                                  "  - {kernel: k, grid: [1], block: [1], args: [y]}\nscratch:\n"
                                  "  y: {dtype: float32, shape: [batch_size, out_features]}\n"),
                 "a torch step takes whole tensors");
}
