// Triton kernel files on the CPU: extraction (.py and ```python answers), the launch block in a
// docstring or a comment block, the plan checks, the compile request (types, specialisation, one
// kernel per specialisation), and the compiled kernels' metadata turned into the worker's plan.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "contract/contract.h"
#include "contract/prompt.h"
#include "core/paths.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "grading/prepare.h"
#include "parse/launch_block.h"
#include "parse/python_block.h"
#include "record/trace_record.h"
#include "test_dirs.h"
#include "triton_compile/child.h"
#include "triton_compile/request.h"

using namespace kernrl;
using nlohmann::json;

namespace {

const ProblemSpec& softmax() {
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_23_Softmax"));
  return p;
}

const char* kSoftmax = R"PY("""kernrl
problem: L1_23_Softmax
launches:
  - kernel: softmax_kernel
    grid: [batch_size]
    args: [x, out, dim]
    constexprs: {BLOCK: 1024, EVEN: false}
    num_warps: 8
"""
import torch
import triton
import triton.language as tl

@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pass
)PY";

LaunchPlan triton_plan(const std::string& code) {
  ExtractedSource src = extract_kernel(code, "answer.py");
  return parse_launch_block(src);
}

std::string plan_error(const std::string& code) {
  try {
    LaunchPlan p = triton_plan(code);
    check_plan(p, softmax(), 132);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<Vars> size_sets(const ProblemSpec& p) {
  std::vector<Vars> s = p.tests;
  s.push_back(p.bench);
  return s;
}

TritonKernel compiled(const std::string& key, int warps, int shared, size_t runtime, size_t hidden,
                      int64_t scratch = 0, int ctas = 1) {
  TritonKernel k;
  k.key = key;
  k.symbol = key.substr(0, key.find('#'));
  k.cubin_path = "/cache/" + key + ".cubin";
  k.metadata = {{"num_warps", warps},        {"shared", shared},
                {"num_ctas", ctas},          {"global_scratch_size", scratch},
                {"profile_scratch_size", 0}, {"launch_cooperative_grid", false}};
  k.runtime_params = runtime;
  k.ptx_params = runtime + hidden;
  return k;
}

}  // namespace

TEST_CASE("triton: a .py file with @triton.jit is a Triton kernel file") {
  ExtractedSource src = extract_kernel(kSoftmax, "answer.py");
  CHECK(src.language == "triton");
  CHECK(src.first_line == 1);
  CHECK(is_triton_source(kSoftmax));
  CHECK_FALSE(is_triton_source("__global__ void k() {}"));
  // A PyTorch-only file is still named for what it is.
  CHECK_THROWS_WITH_AS(extract_kernel("import torch\nx = torch.ones(3)\n", "a.py"),
                       doctest::Contains("PyTorch-only"), FormatError);
}

TEST_CASE("triton: a markdown answer's ```python block is taken, lines kept") {
  std::string md = std::string("Here is my kernel.\n\n```python\n") + kSoftmax + "```\nDone.\n";
  ExtractedSource src = extract_kernel(md, "answer.md");
  CHECK(src.language == "triton");
  CHECK(src.first_line == 4);
  LaunchPlan p = parse_launch_block(src);
  CHECK(p.line == 4);
  REQUIRE(p.launches.size() == 1);
  CHECK(p.launches[0].line == 7);
}

TEST_CASE("triton: the docstring launch block") {
  LaunchPlan p = triton_plan(kSoftmax);
  CHECK(p.language == "triton");
  CHECK(p.problem == "L1_23_Softmax");
  REQUIRE(p.launches.size() == 1);
  const LaunchSpec& l = p.launches[0];
  CHECK(l.kernel == "softmax_kernel");
  CHECK(l.block.empty());
  CHECK(l.num_warps == "8");
  REQUIRE(l.constexprs.size() == 2);
  CHECK(l.constexprs[0] == std::make_pair(std::string("BLOCK"), std::string("1024")));
  CHECK(l.constexprs[1].second == "false");
  check_plan(p, softmax(), 132);
  CHECK(p.launches[0].args[0].kind == ArgKind::Tensor);
  CHECK(p.launches[0].args[2].kind == ArgKind::IntExpr);
}

TEST_CASE("triton: the # kernrl comment block, with line numbers of the file") {
  std::string code =
      "import triton\n"
      "# kernrl\n"
      "# launches:\n"
      "#   - kernel: k\n"
      "#     grid: [cdiv(batch_size * dim, 1024)]\n"
      "#     args: [x, out, batch_size * dim]\n"
      "#     constexprs: {BLOCK: 1024}\n"
      "@triton.jit\n"
      "def k(x, y, n, BLOCK: tl.constexpr):\n"
      "    pass\n";
  LaunchPlan p = triton_plan(code);
  CHECK(p.line == 2);
  REQUIRE(p.launches.size() == 1);
  CHECK(p.launches[0].line == 4);
  CHECK(p.launches[0].grid[0] == "cdiv(batch_size * dim, 1024)");
  check_plan(p, softmax(), 132);
}

TEST_CASE("triton: launch block mistakes are format errors that say why") {
  CHECK_THROWS_WITH_AS(triton_plan("import triton\n@triton.jit\ndef k(x):\n  pass\n"),
                       doctest::Contains("no kernrl launch block"), FormatError);
  // A wrapper-style answer (ModelNew.forward launching kernel[grid](...)) is told what to write.
  CHECK_THROWS_WITH_AS(
      triton_plan("import triton\n@triton.jit\ndef k(x):\n  pass\nclass ModelNew:\n"
                  "  def forward(self, x):\n    k[(4,)](x)\n"),
      doctest::Contains("host wrapper"), FormatError);
  std::string two = std::string(kSoftmax) + "# kernrl\n# launches: []\n";
  CHECK_THROWS_WITH_AS(triton_plan(two), doctest::Contains("more than one"), FormatError);
  CHECK_THROWS_WITH_AS(triton_plan("\"\"\"kernrl\nlaunches:\n  - kernel: k\nimport triton\n"),
                       doctest::Contains("never closed"), FormatError);
  std::string with_block = kSoftmax;
  with_block.replace(with_block.find("    num_warps: 8"), 16, "    block: [256]");
  CHECK(plan_error(with_block).find("32 x num_warps") != std::string::npos);
  std::string odd_warps = kSoftmax;
  odd_warps.replace(odd_warps.find("num_warps: 8"), 12, "num_warps: 6");
  CHECK(plan_error(odd_warps).find("power of two") != std::string::npos);
  std::string bad_constexpr = kSoftmax;
  bad_constexpr.replace(bad_constexpr.find("BLOCK: 1024"), 11, "BLOCK: rows");
  CHECK(plan_error(bad_constexpr).find("constexpr BLOCK") != std::string::npos);
}

TEST_CASE("triton: the plan's JSON keeps the Triton fields and the variants") {
  LaunchPlan p = triton_plan(kSoftmax);
  p.launches[0].variants.push_back({{{"dim", 256}}, "softmax_kernel#2", {"128"}, {}, "512", false});
  LaunchPlan q = LaunchPlan::from_json(p.to_json());
  CHECK(q.language == "triton");
  CHECK(q.launches[0].constexprs == p.launches[0].constexprs);
  CHECK(q.launches[0].num_warps == "8");
  REQUIRE(q.launches[0].variants.size() == 1);
  CHECK(q.launches[0].variants[0].kernel == "softmax_kernel#2");
  CHECK(q.launches[0].variants[0].sizes.at("dim") == 256);
  // A CUDA plan's JSON is as before (no language, no Triton keys).
  LaunchPlan cuda;
  cuda.launches.push_back(LaunchSpec{});
  CHECK_FALSE(cuda.to_json().contains("language"));
  CHECK_FALSE(cuda.to_json()["launches"][0].contains("constexprs"));
}

TEST_CASE("triton: the request has the problem's types and Triton's specialisation") {
  LaunchPlan p = triton_plan(kSoftmax);
  check_plan(p, softmax(), 132);
  ExtractedSource src = extract_kernel(kSoftmax, "answer.py");
  TritonRequest r = triton_request(src, "answer.py", p, softmax(), size_sets(softmax()), 132, 90);
  CHECK(r.json["arch"] == 90);
  const json& ks = r.json["kernels"];
  // One request per size set (their values differ, and heuristics see values); the test sets share
  // the divisibility that holds at all of them (dim 256, 1000, 4099: not), the bench its own.
  REQUIRE(ks.size() == 4);
  CHECK(ks[0]["key"] == "softmax_kernel");
  CHECK(ks[3]["key"] == "softmax_kernel#4");
  CHECK(ks[0]["args"][0]["type"] == "*fp32");
  CHECK(ks[0]["args"][0]["divisible_by_16"] == true);
  CHECK(ks[0]["args"][2]["type"] == "i32");
  CHECK(ks[0]["args"][2]["divisible_by_16"] == false);  // dim = 256, but not at every test set
  CHECK(ks[0]["args"][2]["value"] == 256);
  CHECK(ks[1]["args"][2]["divisible_by_16"] == false);  // dim = 1000
  CHECK(ks[3]["args"][2]["divisible_by_16"] == true);   // the bench: dim = 16384
  CHECK(ks[0]["constexprs"]["BLOCK"] == 1024);
  CHECK(ks[0]["constexprs"]["EVEN"] == false);
  CHECK(ks[0]["options"]["num_warps"] == 8);
  REQUIRE(r.launch_kernels.size() == 1);
  CHECK(r.launch_kernels[0] == std::vector<size_t>{0, 1, 2, 3});
}

TEST_CASE("triton: compiled metadata becomes the worker's launch") {
  LaunchPlan p = triton_plan(kSoftmax);
  check_plan(p, softmax(), 132);
  ExtractedSource src = extract_kernel(kSoftmax, "answer.py");
  std::vector<Vars> bench_only = {softmax().bench};
  TritonRequest r = triton_request(src, "answer.py", p, softmax(), bench_only, 132, 90);
  REQUIRE(r.json["kernels"].size() == 1);
  // Two hidden parameters (global and profile scratch), 70 KiB of shared memory, scratch in use.
  TritonLaunchable l =
      triton_launch_plan(p, r, {compiled("softmax_kernel", 8, 70 * 1024, 3, 2, 256)}, softmax());
  const LaunchSpec& s = l.plan.launches[0];
  CHECK(s.block == std::vector<std::string>{"256"});
  CHECK(s.shared_bytes == "71680");
  CHECK(s.cluster.empty());
  CHECK(l.lowered.at("softmax_kernel") == "softmax_kernel");
  CHECK(l.modules.at("softmax_kernel") == "/cache/softmax_kernel.cubin");
  REQUIRE(s.args.size() == 5);
  CHECK(s.args[3].kind == ArgKind::Scratch);
  REQUIRE(l.plan.scratch.size() == 2);
  CHECK(l.plan.scratch[0].name == s.args[3].text);
  CHECK(l.plan.scratch[0].dtype.name == "uint8");
  Vars v = plan_vars(softmax(), softmax().bench, 132);
  CHECK(eval_expr(l.plan.scratch[0].count, v) == 4096 * 256);  // programs x scratch bytes
  CHECK(eval_expr(l.plan.scratch[1].count, v) == 1);           // unused: one byte
  // A kernel compiled with other parameters than the launch passes is refused.
  CHECK_THROWS_AS(triton_launch_plan(p, r, {compiled("softmax_kernel", 8, 0, 2, 2)}, softmax()),
                  FormatError);
  CHECK_THROWS_AS(triton_launch_plan(p, r, {compiled("softmax_kernel", 8, 0, 3, 3)}, softmax()),
                  FormatError);
  // num_ctas: clusters of num_ctas blocks, grid.x scaled as Triton's launcher does.
  TritonLaunchable c =
      triton_launch_plan(p, r, {compiled("softmax_kernel", 4, 0, 3, 1, 0, 2)}, softmax());
  CHECK(c.plan.launches[0].cluster == std::vector<std::string>{"2", "1", "1"});
  CHECK(eval_expr(c.plan.launches[0].grid[0], v) == 2 * 4096);
  CHECK(c.plan.launches[0].block == std::vector<std::string>{"128"});
}

TEST_CASE("triton: one variant per size set where the specialisations differ") {
  LaunchPlan p = triton_plan(kSoftmax);
  check_plan(p, softmax(), 132);
  ExtractedSource src = extract_kernel(kSoftmax, "answer.py");
  TritonRequest r = triton_request(src, "answer.py", p, softmax(), size_sets(softmax()), 132, 90);
  // The helper found the three test requests to be one kernel (same_as): they share its key.
  TritonKernel tests = compiled("softmax_kernel", 4, 0, 3, 0);
  TritonLaunchable l = triton_launch_plan(
      p, r, {tests, tests, tests, compiled("softmax_kernel#4", 8, 0, 3, 0)}, softmax());
  const LaunchSpec& s = l.plan.launches[0];
  REQUIRE(s.variants.size() == 4);
  CHECK(s.variants[0].kernel == "softmax_kernel");
  CHECK(s.variants[0].sizes.at("dim") == 256);
  CHECK(s.variants[1].kernel == "softmax_kernel");
  CHECK(s.variants[0].block == std::vector<std::string>{"128"});
  CHECK(s.variants[3].kernel == "softmax_kernel#4");
  CHECK(s.variants[3].block == std::vector<std::string>{"256"});
  CHECK(s.kernel == "softmax_kernel#4");  // the bench's
  CHECK(l.modules.size() == 2);
  // When every size set has the same kernel, the launch has no variants.
  TritonLaunchable one = triton_launch_plan(p, r, {tests, tests, tests, tests}, softmax());
  CHECK(one.plan.launches[0].variants.empty());
  CHECK(one.plan.launches[0].kernel == "softmax_kernel");
}

TEST_CASE("triton: the prompt shows every Triton launch key and the grader's limits") {
  std::string c = triton_contract_summary();
  for (const auto& k : triton_launch_keys()) CHECK_MESSAGE(c.find(k + ":") != std::string::npos, k);
  CHECK(c.find("above 48 KiB") != std::string::npos);
  CHECK(contract_summary().find("above 48 KiB") != std::string::npos);
  CHECK(contract_summary().find("integer scalars with a fixed value") != std::string::npos);
  std::string t = triton_template(softmax());
  CHECK(t.find("@triton.jit") != std::string::npos);
  // The template parses and passes the plan checks as it is.
  ExtractedSource src = extract_kernel(t, "template.py");
  LaunchPlan p = parse_launch_block(src);
  CHECK_NOTHROW(check_plan(p, softmax(), 132));
  CHECK(task_prompt(softmax(), "triton").find("```python") != std::string::npos);
}

TEST_CASE("integer scalars with a fixed value are usable in expressions") {
  ProblemSpec p = softmax();
  p.scalars.push_back({"kernel_size", "int32", 9});
  p.scalars.push_back({"eps", "float32", 1e-5});
  Vars v = plan_vars(p, p.bench, 132);
  CHECK(v.at("kernel_size") == 9);
  CHECK_FALSE(v.count("eps"));
  LaunchPlan plan = parse_launch_block(
      {"/* kernrl\nlaunches:\n  - kernel: k\n    grid: [batch_size]\n    block: [256]\n"
       "    shared_bytes: kernel_size * 4\n    args: [x, out, kernel_size * dim]\n*/\n",
       1, false});
  CHECK_NOTHROW(check_plan(plan, p, 132));
}

TEST_CASE("records carry the language") {
  TraceRecord r = TraceRecord::begin("a.py", "", std::nullopt, 0);
  r.language = "triton";
  json j = r.to_json();
  CHECK(j["language"] == "triton");
  CHECK(TraceRecord::from_json(j).language.get() != nullptr);
}

namespace {

// An @triton.autotune kernel compiled with `warps` per config (config i keyed KEY@i+1 past the
// first).
TritonKernel autotuned(const std::string& key, const std::vector<int>& warps) {
  std::vector<TritonKernel> configs;
  for (size_t c = 0; c < warps.size(); ++c) {
    TritonKernel v = compiled(key, warps[c], 1024 * static_cast<int>(c), 3, 0);
    if (c) v.key = key + "@" + std::to_string(c + 1);
    v.autotune_config = static_cast<int>(c);
    configs.push_back(v);
  }
  TritonKernel k = configs.front();
  k.configs = configs;
  return k;
}

}  // namespace

TEST_CASE("triton: an autotuned launch carries every config as a choice") {
  LaunchPlan p = triton_plan(kSoftmax);
  check_plan(p, softmax(), 132);
  ExtractedSource src = extract_kernel(kSoftmax, "answer.py");
  TritonRequest r = triton_request(src, "answer.py", p, softmax(), size_sets(softmax()), 132, 90);
  TritonKernel tests = autotuned("softmax_kernel", {4, 8});
  TritonKernel bench = autotuned("softmax_kernel#4", {4, 8});
  TritonLaunchable l = triton_launch_plan(p, r, {tests, tests, tests, bench}, softmax());
  const LaunchSpec& s = l.plan.launches[0];
  REQUIRE(s.autotune.size() == 2);
  CHECK(s.tune_group == "softmax_kernel#4");
  // The first config is in the launch's fields until the worker chooses.
  CHECK(s.kernel == "softmax_kernel#4");
  CHECK(s.block == std::vector<std::string>{"128"});
  CHECK(s.autotune[1].config == 1);
  CHECK(s.autotune[1].kernel == "softmax_kernel#4@2");
  REQUIRE(s.autotune[1].variants.size() == 4);
  CHECK(s.autotune[1].variants[0].kernel == "softmax_kernel@2");
  CHECK(s.autotune[1].variants[3].block == std::vector<std::string>{"256"});
  CHECK(l.lowered.count("softmax_kernel@2"));
  CHECK(l.modules.at("softmax_kernel#4@2") == "/cache/softmax_kernel#4.cubin");
  // The worker's choice switches the launch's fields and its variants; the plan's JSON keeps both.
  LaunchPlan q = LaunchPlan::from_json(l.plan.to_json());
  REQUIRE(q.launches[0].autotune.size() == 2);
  CHECK(q.launches[0].tune_group == "softmax_kernel#4");
  q.launches[0].choose(1);
  CHECK(q.launches[0].kernel == "softmax_kernel#4@2");
  CHECK(q.launches[0].shared_bytes == "1024");
  CHECK(q.launches[0].variants[1].kernel == "softmax_kernel@2");
  // A config compiled at the bench size but not at the test sizes is not a choice.
  TritonKernel partial = autotuned("softmax_kernel", {4});
  TritonLaunchable one = triton_launch_plan(p, r, {partial, partial, partial, bench}, softmax());
  CHECK(one.plan.launches[0].autotune.empty());
  CHECK(one.plan.launches[0].tune_group.empty());
}

TEST_CASE("triton: the worker's autotune choice completes the record's kernels") {
  TraceRecord r = TraceRecord::begin("a.py", "", std::nullopt, 0);
  trace::Compile& c = r.compile.emplace();
  json cand = json::array({{{"config", 0}, {"num_warps", 4}, {"constexprs", {{"BLOCK", 64}}}},
                           {{"config", 1}, {"error", "out of resources"}},
                           {{"config", 2}, {"num_warps", 8}, {"constexprs", {{"BLOCK", 128}}}}});
  json tuned = {
      {"key", "k"},
      {"kernel", "k"},
      {"num_warps", 4},
      {"constexprs", {{"BLOCK", 64}}},
      {"autotune", {{"configs", 3}, {"chosen", 0}, {"timed", false}, {"candidates", cand}}}};
  json other = {{"key", "g"}, {"kernel", "g"}, {"num_warps", 4}};
  c.kernels = json::array({tuned, other});
  AutotuneChoice ch;
  ch.group = "k";
  ch.config = 2;
  ch.times_ms = std::vector<std::optional<double>>{0.5, std::nullopt, 0.25};
  AutotuneChoice round = read_message<AutotuneChoice>(write_object(ch), "autotune choice");
  CHECK_FALSE(round.times_ms->at(1).has_value());
  apply_autotune(r, {{"k", {"k"}}}, {round});
  json j = r.to_json()["compile"]["kernels"];
  CHECK(j[0]["autotune"]["chosen"] == 2);
  CHECK(j[0]["autotune"]["timed"] == true);
  CHECK(j[0]["autotune"]["times_ms"] == json::array({0.5, nullptr, 0.25}));
  CHECK(j[0]["num_warps"] == 8);
  CHECK(j[0]["constexprs"]["BLOCK"] == 128);
  CHECK_FALSE(j[1].contains("autotune"));
}

TEST_CASE(
    "triton: the Pythons tried for Triton, configured first, else the usual places and $PATH") {
  Config cfg;
  cfg.triton_python = "/opt/x/bin/python3";
  CHECK(triton_pythons(cfg) == std::vector<std::string>{"/opt/x/bin/python3"});
  cfg.triton_python.clear();
  // A folder of $PATH with its own python3 (an environment's, which may link to the system's
  // interpreter): tried after the system's, each path once.
  std::string dir = fresh_test_dir("pythons").string();
  std::string py = dir + "/python3";
  if (access("/usr/bin/python3", X_OK) == 0) {
    std::filesystem::create_symlink("/usr/bin/python3", py);  // as a virtual environment's
  } else {
    std::ofstream(py) << "#!/bin/sh\n";
    chmod(py.c_str(), 0755);
  }
  const char* old_path = std::getenv("PATH");
  std::string saved = old_path ? old_path : "";
  const char* old_env = std::getenv("KERNRL_TRITON_PYTHON");
  std::string saved_env = old_env ? old_env : "";
  unsetenv("KERNRL_TRITON_PYTHON");
  // A folder anyone may write into is skipped.
  std::string open_dir = fresh_test_dir("pythons-open").string();
  std::filesystem::create_symlink("/bin/sh", open_dir + "/python3");
  chmod(open_dir.c_str(), 0777);
  setenv("PATH", (open_dir + ":" + dir + ":" + dir + ":relative:/usr/bin").c_str(), 1);
  std::vector<std::string> got = triton_pythons(cfg);
  std::filesystem::remove_all(open_dir);
  setenv("PATH", saved.c_str(), 1);
  if (old_env) setenv("KERNRL_TRITON_PYTHON", saved_env.c_str(), 1);
  REQUIRE(!got.empty());
  CHECK(got.back() == py);
  CHECK(std::count(got.begin(), got.end(), py) == 1);
  CHECK(std::none_of(got.begin(), got.end(), [&](const std::string& p) {
    return p.rfind(open_dir, 0) == 0 || p.rfind("relative", 0) == 0;
  }));
  if (access("/usr/bin/python3", X_OK) == 0) CHECK(got.front() == "/usr/bin/python3");
  std::filesystem::remove_all(dir);
}
