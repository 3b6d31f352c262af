#include <doctest/doctest.h>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "parse/launch_block.h"

using namespace kernrl;

static const char* kKernel = R"(// softmax
/* kernrl
problem: L1_23_Softmax
launches:
  - kernel: softmax_rows
    grid: [batch_size]
    block: [256]
    args: [x, out, dim]
*/
extern "C" __global__ void softmax_rows(const float* x, float* out, int dim) {}
)";

TEST_CASE("a .cu file is taken whole") {
  auto s = extract_kernel(kKernel, "a.cu");
  CHECK(s.code == kKernel);
  CHECK(s.first_line == 1);
  CHECK_FALSE(s.from_markdown);
}

TEST_CASE("markdown: the last fenced block with a launch block, with its line") {
  std::string md =
      std::string("Here is a first try:\n```cuda\n/* kernrl\nlaunches: []\n*/\n```\n") +
      "Better:\n\n```cuda\n" + kKernel + "```\nAnd a note:\n```\nno launch block\n```\n";
  auto s = extract_kernel(md, "answer.md");
  CHECK(s.from_markdown);
  CHECK(s.code == kKernel);
  CHECK(s.first_line == 10);
  auto plan = parse_launch_block(s);
  CHECK(plan.line == 11);  // the /* kernrl line in the markdown file
  CHECK(plan.launches.at(0).line == 14);
}

TEST_CASE("markdown without usable code is a format error") {
  CHECK_THROWS_WITH_AS(extract_kernel("I cannot do that.", "a.md"),
                       doctest::Contains("no fenced code block"), FormatError);
  CHECK_THROWS_WITH_AS(extract_kernel("```\nint x;\n```\n", "a.md"),
                       doctest::Contains("contains a /* kernrl"), FormatError);
  std::string big(kMaxSourceBytes + 1, 'a');
  CHECK_THROWS_WITH_AS(extract_kernel(big, "a.cu"), doctest::Contains("limit"), FormatError);
}

TEST_CASE("launch block parsing") {
  auto plan = parse_launch_block({kKernel, 1, false});
  CHECK(plan.problem == "L1_23_Softmax");
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel == "softmax_rows");
  CHECK(plan.launches[0].grid == std::vector<std::string>{"batch_size"});
  CHECK(plan.launches[0].args.size() == 3);
  CHECK(plan.kernel_names() == std::vector<std::string>{"softmax_rows"});
  auto j = plan.to_json();
  CHECK(LaunchPlan::from_json(j).to_json() == j);
}

TEST_CASE("launch block errors carry the file line") {
  auto err_line = [](const std::string& code) {
    try {
      parse_launch_block({code, 1, false});
    } catch (const FormatError& e) {
      return e.line;
    }
    return -1;
  };
  CHECK(err_line("x\n/* kernrl\nlaunches:\n  - kernel: k\n    grid: [1]\n*/") ==
        4);  // missing block
  CHECK(
      err_line(
          "/* kernrl\nlaunches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n    bogus: 1\n*/") ==
      6);
  CHECK(err_line("/* kernrl\nlaunches: [\n*/") > 0);
  CHECK_THROWS_WITH_AS(parse_launch_block({"int x;", 1, false}), doctest::Contains("no /* kernrl"),
                       FormatError);
  CHECK_THROWS_WITH_AS(parse_launch_block({"/* kernrl\nlaunches: []\n", 1, false}),
                       doctest::Contains("never closed"), FormatError);
  CHECK_THROWS_WITH_AS(parse_launch_block({"/* kernrl\nlaunches: []\n*/", 1, false}),
                       doctest::Contains("non-empty"), FormatError);
}

TEST_CASE("check_plan classifies arguments and rejects unknown names and bad expressions") {
  ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_23_Softmax"));
  auto plan = parse_launch_block({std::string(kKernel), 1, false});
  check_plan(plan, p, 132);
  CHECK(plan.launches[0].args[0].kind == ArgKind::Tensor);
  CHECK(plan.launches[0].args[2].kind == ArgKind::IntExpr);

  std::string bad = std::string(kKernel);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = kKernel;
    s.replace(s.find(from), from.size(), to);
    auto pl = parse_launch_block({s, 1, false});
    check_plan(pl, p, 132);
    return pl;
  };
  CHECK_THROWS_WITH_AS(with("args: [x, out, dim]", "args: [x, y, dim]"),
                       doctest::Contains("unknown name 'y'"), FormatError);
  CHECK_THROWS_WITH_AS(with("grid: [batch_size]", "grid: [batch_size / 0]"),
                       doctest::Contains("division by zero"), FormatError);
  CHECK_THROWS_WITH_AS(with("grid: [batch_size]", "grid: [dim * dim * dim * dim * dim]"),
                       doctest::Contains("overflow"), FormatError);
  auto lit = with("args: [x, out, dim]", "args: [x, out, 0.5, cdiv(dim, 4)]");
  CHECK(lit.launches[0].args[2].kind == ArgKind::FloatLiteral);
  CHECK(lit.launches[0].args[3].kind == ArgKind::IntExpr);
  try {
    with("args: [x, out, dim]", "args: [x, out, nope]");
  } catch (const FormatError& e) {
    CHECK(e.line == 5);  // the launch entry
  }
}
