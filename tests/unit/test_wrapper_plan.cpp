// Launch plans derived from a host wrapper, on the CPU: which files get one, the helper's request,
// the merge of its per-size-set launches into one launch block (traced expressions, constants,
// values picked by size set, scratch buffers, problem scalars), and the refusals that name a line.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "parse/launch_block.h"
#include "triton_compile/wrapper_plan.h"

using namespace kernrl;
using nlohmann::json;

namespace {

const ProblemSpec& gelu() {
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_26_GELU_"));
  return p;
}

const ProblemSpec& layernorm() {
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_40_LayerNorm"));
  return p;
}

std::vector<Vars> all_sets(const ProblemSpec& p) {
  std::vector<Vars> s = p.tests;
  s.push_back(p.bench);
  return s;
}

ExtractedSource triton_src(const std::string& code) {
  ExtractedSource s;
  s.code = code;
  s.language = "triton";
  return s;
}

const char* kWrapper = R"PY(import torch
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass

class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        k[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
)PY";

// The helper's answer for the GELU problem: one launch per size set, as wrapper_plan.py writes it.
json gelu_answer(const std::function<json(const Vars&)>& grid0) {
  json sets = json::array();
  for (const auto& s : all_sets(gelu())) {
    int64_t n = s.at("batch_size") * s.at("dim");
    sets.push_back(
        {{"sizes", s},
         {"launches",
          {{{"kernel", "k"},
            {"line", 12},
            {"grid", {grid0(s)}},
            {"args",
             {{{"tensor", "x"}}, {{"tensor", "out"}}, {{"int", n}, {"expr", "batch_size * dim"}}}},
            {"constexprs", {{"BLOCK", {{"int", 1024}, {"expr", "1024"}}}}},
            {"options", json::object()}}}},
         {"scratch", json::array()},
         {"notes", json::array()}});
  }
  return {{"ok", true}, {"class", "ModelNew"}, {"forward_line", 10}, {"sets", sets}};
}

}  // namespace

TEST_CASE("wrapper plan: a Triton file with a forward that launches and no launch block") {
  CHECK(wants_wrapper_plan(triton_src(kWrapper)));
  CHECK_FALSE(wants_wrapper_plan(
      triton_src(std::string("\"\"\"kernrl\nlaunches: []\n\"\"\"\n") + kWrapper)));
  CHECK_FALSE(wants_wrapper_plan(triton_src("import triton\n@triton.jit\ndef k(x):\n  pass\n")));
  ExtractedSource cuda = triton_src(kWrapper);
  cuda.language = "cuda";
  CHECK_FALSE(wants_wrapper_plan(cuda));
}

TEST_CASE("wrapper plan: the request carries the problem, every size set and file lines") {
  ExtractedSource src = triton_src(kWrapper);
  src.first_line = 4;  // a markdown answer's block
  json r = wrapper_plan_request(src, "a.md", layernorm(), all_sets(layernorm()), 132);
  CHECK(r["mode"] == "wrapper_plan");
  CHECK(r["source"].get<std::string>().rfind("\n\n\nimport torch", 0) == 0);
  CHECK(r["size_sets"].size() == layernorm().tests.size() + 1);
  CHECK(r["size_sets"][0]["shapes"]["weight"] == json({4, 8, 8}));
  CHECK(r["problem"]["scalars"][0] == json({{"name", "eps"}, {"value", 1e-5}, {"integer", false}}));
  CHECK(r["problem"]["inputs"][0]["shape"] == json({"batch_size", "features", "dim1", "dim2"}));
}

TEST_CASE("wrapper plan: values become expressions") {
  std::vector<Vars> vars = {{{"n", 10}, {"m", 3}}, {{"n", 100}, {"m", 3}}};
  // A traced expression that gives every value is kept.
  CHECK(value_expression({1, 1}, {"cdiv(n, 1024)", "cdiv(n, 1024)"}, vars, "grid", 1) ==
        "cdiv(n, 1024)");
  // One that is wrong at a set is not; a value the same everywhere is the value.
  CHECK(value_expression({7, 7}, {"n", "n"}, vars, "grid", 1) == "7");
  // Values the sizes decide with no traced expression: picked by size set, and checked.
  std::string e = value_expression({16, 128}, {"16", "128"}, vars, "BLOCK", 1);
  CHECK(eval_expr(e, vars[0]) == 16);
  CHECK(eval_expr(e, vars[1]) == 128);
  CHECK(e.find("max(m") == std::string::npos);  // only the sizes that differ decide
}

TEST_CASE("wrapper plan: the per-size-set launches merge into one launch block") {
  json answer = gelu_answer([](const Vars& s) {
    int64_t n = s.at("batch_size") * s.at("dim");
    return json{{"int", (n + 1023) / 1024}, {"expr", "cdiv(batch_size * dim, 1024)"}};
  });
  WrapperPlan w = merge_wrapper_plan(answer, gelu(), all_sets(gelu()), 132);
  CHECK(w.cls == "ModelNew");
  CHECK(w.launch_block.find("grid: [\"cdiv(batch_size * dim, 1024)\"]") != std::string::npos);
  CHECK(w.launch_block.find("args: [x, out, \"batch_size * dim\"]") != std::string::npos);
  REQUIRE(w.plan.launches.size() == 1);
  CHECK(w.plan.language == "triton");
  CHECK(w.plan.launches[0].line == 12);  // the kernel[grid](...) call
  CHECK(w.plan.line == 10);
  CHECK(w.plan.launches[0].constexprs[0].second == "1024");
  LaunchPlan p = w.plan;
  check_plan(p, gelu(), 132);  // the same checks as a written block
}

TEST_CASE("wrapper plan: scratch buffers, problem scalars and size-picked values") {
  const ProblemSpec& p = layernorm();
  json sets = json::array();
  for (const auto& s : all_sets(p)) {
    int64_t n = s.at("features") * s.at("dim1") * s.at("dim2");
    int64_t parts = std::min<int64_t>(256, (n + 4095) / 4096);
    json pj = {{"int", parts}, {"expr", parts == 256 ? "256" : "cdiv(n, 4096)"}};
    sets.push_back({{"sizes", s},
                    {"launches",
                     {{{"kernel", "ln_apply"},
                       {"line", 73},
                       {"grid", {pj, {{"int", s.at("batch_size")}, {"expr", "batch_size"}}}},
                       {"args",
                        {{{"tensor", "x"}},
                         {{"tensor", "weight"}},
                         {{"tensor", "scratch_l69"}},
                         {{"tensor", "out"}},
                         {{"float", 1e-5}},
                         {{"float", 0.5}}}},
                       {"constexprs", {{"EVEN", {{"bool", true}}}}},
                       {"options", {{"num_warps", {{"int", 4}, {"expr", "4"}}}}}}}},
                    {"scratch",
                     {{{"name", "scratch_l69"},
                       {"dtype", "float64"},
                       {"line", 69},
                       {"count", s.at("batch_size") * 256},
                       {"expr", "batch_size * 256"}}}},
                    {"notes", {"a note"}}});
  }
  json answer = {{"ok", true}, {"class", "ModelNew"}, {"forward_line", 65}, {"sets", sets}};
  WrapperPlan w = merge_wrapper_plan(answer, p, all_sets(p), 132);
  CHECK(w.launch_block.find("scratch_l69: {dtype: float64, count: \"batch_size * 256\"}") !=
        std::string::npos);
  CHECK(w.launch_block.find(", eps, 0.5]") != std::string::npos);  // the scalar by its name
  CHECK(w.launch_block.find("constexprs: {EVEN: true}") != std::string::npos);
  CHECK(w.notes == std::vector<std::string>{"a note"});
  REQUIRE(w.plan.scratch.size() == 1);
  CHECK(w.plan.scratch[0].line == 69);
  // `parts` is 256 at the bench and cdiv(n, 4096) at the tests: the grid picks it by size set.
  LaunchPlan plan = w.plan;
  check_plan(plan, p, 132);
  for (const auto& s : all_sets(p)) {
    int64_t n = s.at("features") * s.at("dim1") * s.at("dim2");
    CHECK(eval_expr(plan.launches[0].grid[0], plan_vars(p, s, 132)) ==
          std::min<int64_t>(256, (n + 4095) / 4096));
  }
}

TEST_CASE("wrapper plan: what one launch block cannot say is a format_error with the line") {
  // The helper refused the wrapper: its reason and line.
  json refused = {
      {"ok", false}, {"refused", true}, {"error", "forward computes with torch"}, {"line", 40}};
  CHECK_THROWS_WITH_AS(merge_wrapper_plan(refused, gelu(), all_sets(gelu()), 132),
                       doctest::Contains("forward computes with torch"), FormatError);
  try {
    merge_wrapper_plan(refused, gelu(), all_sets(gelu()), 132);
  } catch (const FormatError& e) {
    CHECK(e.line == 40);
  }
  // Other kernels at other sizes.
  json answer = gelu_answer([](const Vars&) { return json{{"int", 1}, {"expr", "1"}}; });
  answer["sets"][1]["launches"][0]["kernel"] = "other";
  CHECK_THROWS_WITH_AS(merge_wrapper_plan(answer, gelu(), all_sets(gelu()), 132),
                       doctest::Contains("other kernels at other sizes"), FormatError);
  // A float that differs between size sets.
  answer = gelu_answer([](const Vars&) { return json{{"int", 1}, {"expr", "1"}}; });
  for (size_t i = 0; i < answer["sets"].size(); ++i)
    answer["sets"][i]["launches"][0]["args"][2] = {{"float", 1.0 / double(i + 1)}};
  CHECK_THROWS_WITH_AS(merge_wrapper_plan(answer, gelu(), all_sets(gelu()), 132),
                       doctest::Contains("differs between size sets"), FormatError);
  // A tensor at one size set, an integer at another.
  answer = gelu_answer([](const Vars&) { return json{{"int", 1}, {"expr", "1"}}; });
  answer["sets"][0]["launches"][0]["args"][2] = {{"tensor", "x"}};
  CHECK_THROWS_WITH_AS(merge_wrapper_plan(answer, gelu(), all_sets(gelu()), 132),
                       doctest::Contains("not the same kind of value"), FormatError);
}
