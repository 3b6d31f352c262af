#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/config.h"
#include "core/paths.h"
#include "core/problem.h"

using namespace kernrl;
namespace fs = std::filesystem;

namespace {

// A problem folder under a temporary problems root, with the given YAML.
fs::path write_problem(const std::string& yaml) {
  fs::path root = fs::temp_directory_path() / "kernrl-spec-test" / "L1" / "99_Test";
  fs::create_directories(root);
  std::ofstream(root / "problem.yaml") << yaml;
  return root;
}

const char* kGood = R"(id: L1_99_Test
level: 1
name: Test
description: test
sizes:
  bench: {N: 1024}
  test:
    - {N: 3}
    - {N: 17}
inputs:
  - {name: x, dtype: float32, shape: [N], init: {normal: {mean: 0, std: 1}}}
outputs:
  - {name: out, dtype: float32, shape: [N]}
  - {name: idx, dtype: int64, shape: [N]}
flops: "N"
bytes: auto
torch: "x"
)";

std::string replace(std::string s, const std::string& a, const std::string& b) {
  s.replace(s.find(a), a.size(), b);
  return s;
}

}  // namespace

TEST_CASE("a valid spec loads with defaults") {
  auto p = load_problem(write_problem(kGood));
  CHECK(p.id == "L1_99_Test");
  CHECK(p.tests.size() == 2);
  CHECK(p.outputs[0].compare == "allclose");
  CHECK(p.outputs[1].compare == "exact");  // integers always compare exactly
  CHECK(p.outputs[0].tolerance.atol == doctest::Approx(1e-4));
  CHECK(p.bytes_at(p.bench) == 1024 * 4 + 1024 * 4 + 1024 * 8);
  CHECK(p.shape_of(p.inputs[0], p.tests[1]) == std::vector<int64_t>{17});
}

TEST_CASE("spec errors name the file and line") {
  auto err = [](const std::string& yaml) {
    try {
      load_problem(write_problem(yaml));
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err(replace(kGood, "shape: [N], init", "shape: [M], init"))
            .find("problem.yaml:11: unknown size 'M'") != std::string::npos);
  CHECK(err(replace(kGood, "dtype: int64", "dtype: int65")).find(":14: unknown dtype 'int65'") !=
        std::string::npos);
  CHECK(err(replace(kGood, "    - {N: 17}\n", "")).find("at least two size sets") !=
        std::string::npos);
  CHECK(err(replace(kGood, "{normal: {mean: 0, std: 1}}", "{gauss: {}}"))
            .find("unknown init 'gauss'") != std::string::npos);
  // An init whose parameters are no mapping (found by fuzz_problem_yaml: it threw yaml-cpp's own
  // exception, which nothing caught).
  CHECK(err(replace(kGood, "{normal: {mean: 0, std: 1}}", "{normal: N * N}"))
            .find("init normal takes a mapping of its parameters") != std::string::npos);
  CHECK(err(replace(kGood, "id: L1_99_Test", "id: L1_98_Test")).find("does not match its folder") !=
        std::string::npos);
  CHECK(err(replace(kGood, "name: idx", "name: x")).find("used twice") != std::string::npos);
  CHECK(err(replace(kGood, "flops:", "flop:")).find("unknown key 'flop'") != std::string::npos);
}

TEST_CASE("problem lookup by id and unique prefix") {
  fs::path root = problems_dir();
  CHECK(find_problem_dir(root, "L1_23_Softmax").filename() == "23_Softmax");
  CHECK(find_problem_dir(root, "L1_23").filename() == "23_Softmax");
  CHECK_THROWS_WITH_AS(find_problem_dir(root, "L1_999"), doctest::Contains("unknown problem"),
                       SpecError);
  CHECK_THROWS_WITH_AS(find_problem_dir(root, "L1"), doctest::Contains("ambiguous"), SpecError);
}

TEST_CASE("config: defaults, a file over them, unknown keys rejected") {
  Config c = load_config("");
  CHECK(c.trials == 5);
  CHECK(c.compile_timeout_s == 30);
  fs::path f = fs::temp_directory_path() / "kernrl-test-config.yaml";
  std::ofstream(f) << "timing:\n  min_samples: 20\n  max_samples: 40\ntolerance_overrides:\n  "
                      "L1_23_Softmax: {atol: 1.0e-3}\n";
  c.merge_file(f);
  CHECK(c.min_samples == 20);
  CHECK(c.tolerance_overrides.at("L1_23_Softmax").atol == doctest::Approx(1e-3));
  CHECK(Config::from_json(c.to_json()).to_json() == c.to_json());
  std::ofstream(f) << "timing:\n  min_sample: 20\n";
  CHECK_THROWS_WITH_AS(c.merge_file(f), doctest::Contains("unknown key 'min_sample'"), SpecError);
}

TEST_CASE("problem YAML from text: hostile documents and numbers are spec errors") {
  CHECK(parse_problem_yaml(kGood, "p.yaml").id == "L1_99_Test");
  auto err = [](const std::string& yaml) {
    try {
      parse_problem_yaml(yaml, "p.yaml");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err(std::string("x: &a [1]\n") + kGood).find("anchors") != std::string::npos);
  CHECK(err(std::string(kGood) + "extra: " + std::string(5000, '[') + std::string(5000, ']') + "\n")
            .find("nested") != std::string::npos);
  CHECK(err(replace(kGood, "{N: 3}", "{N: -3}")).find("out of range") != std::string::npos);
  CHECK(err(replace(kGood, "{N: 3}", "{N: 99999999999999999999}")).find("wrong type") !=
        std::string::npos);
  CHECK(err(replace(kGood, "std: 1", "std: .nan")).find("finite") != std::string::npos);
  CHECK(err(replace(kGood, "std: 1", "std: -1")).find("finite number from 0") != std::string::npos);
  std::string big = err(replace(kGood, "flops: \"N\"", "flops: \"N * N * N * N * N * N * N\""));
  CHECK(big.find("at N=1024") != std::string::npos);
  CHECK(big.find("overflow") != std::string::npos);
  CHECK(err(replace(kGood, "bench: {N: 1024}", "bench: {N: 1099511627776}")) == "no error");
  CHECK(err(replace(replace(kGood, "bench: {N: 1024}", "bench: {N: 1099511627776}"), "flops: \"N\"",
                    "flops: \"N * N\""))
            .find("overflow") != std::string::npos);
  CHECK(err(replace(kGood, "shape: [N]}\n  - {name: idx", "shape: [N - 5]}\n  - {name: idx"))
            .find("negative dimension") != std::string::npos);
  CHECK(err("- just\n- a list\n").find("mapping") != std::string::npos);
  CHECK(err(replace(kGood,
                    "inputs:\n  - {name: x, dtype: float32, shape: [N], init: {normal: {mean: 0, "
                    "std: 1}}}",
                    "inputs: 3"))
            .find("p.yaml:10: 'inputs' must be a list") != std::string::npos);
}

TEST_CASE("KernelBench file names give a problem id by plain scanning") {
  CHECK(kernelbench_problem_id("level_1_problem_23_sample_0_kernel.cu") == "L1_23");
  CHECK(kernelbench_problem_id("run_level_10_problem_5_x.md") == "L10_5");
  CHECK(kernelbench_problem_id("level_x_level_2_problem_7_") == "L2_7");
  CHECK(kernelbench_problem_id("level_1_problem_23.cu").empty());
  CHECK(kernelbench_problem_id("level__problem_2_").empty());
  CHECK(kernelbench_problem_id("level_" + std::string(30000, '1') + "_problem_2_").empty());
  CHECK(kernelbench_problem_id(std::string(30000, 'l')).empty());
}

#define CHECK_CONTAINS(text, part) CHECK_MESSAGE((text).find(part) != std::string::npos, text)

TEST_CASE("problem YAML: reference.forward names each input once, the rest scalars") {
  auto with = [](const std::string& forward) {
    return replace(kGood, "flops: \"N\"",
                   "scalars:\n  s: {dtype: float64, value: 2.5}\nreference: {torchscript: ts, "
                   "forward: " +
                       forward + "}\nflops: \"N\"");
  };
  ProblemSpec p = parse_problem_yaml(with("[x, s]"), "p.yaml");
  CHECK(p.forward_args == std::vector<std::string>{"x", "s"});
  CHECK(parse_problem_yaml(with("[s, x]"), "p.yaml").forward_args ==
        std::vector<std::string>{"s", "x"});
  CHECK(parse_problem_yaml(replace(kGood, "flops: \"N\"",
                                   "reference: {torchscript: ts}\nflops: "
                                   "\"N\""),
                           "p.yaml")
            .forward_args.empty());
  auto err = [&](const std::string& forward) {
    try {
      parse_problem_yaml(with(forward), "p.yaml");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_CONTAINS(err("[x, t]"), "'t' is not an input or scalar");
  CHECK_CONTAINS(err("[s]"), "input 'x' is missing");
  CHECK_CONTAINS(err("[x, x, s]"), "given twice");
  CHECK_CONTAINS(err("x"), "must be a list");
}
