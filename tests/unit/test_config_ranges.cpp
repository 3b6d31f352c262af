// Every config value is type- and range-checked, with the key and the line in the error.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/config.h"
#include "core/problem.h"

using namespace kernrl;
namespace fs = std::filesystem;

namespace {

// The error of a config text over the defaults, or "" when it loads.
std::string err(const std::string& yaml) {
  try {
    Config::from_yaml_text(yaml, "c.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("config: NaN, infinities, zero and absurd values are refused with key and line") {
  CHECK(err("timeouts:\n  compile_s: .nan\n")
            .find("c.yaml:2: timeouts.compile_s: must be a number greater than 0") == 0);
  CHECK(err("timeouts:\n  compile_s: .inf\n").find("c.yaml:2: timeouts.compile_s") == 0);
  CHECK(err("timeouts:\n  run_s: -.inf\n").find("c.yaml:2: timeouts.run_s") == 0);
  CHECK(err("timeouts:\n  run_s: 0\n").find("c.yaml:2: timeouts.run_s") == 0);
  CHECK(err("timeouts:\n  run_s: -5\n").find("timeouts.run_s") != std::string::npos);
  CHECK(err("timeouts:\n  run_s: 1e999\n").find("c.yaml:2: timeouts.run_s: expected a number") ==
        0);
  CHECK(err("timeouts:\n  run_s: 1e9\n").find("at most 86400") != std::string::npos);
  CHECK(err("\n\ncorrectness:\n  trials: 0\n")
            .find("c.yaml:4: correctness.trials: must be from 1 to 1000 (got 0)") == 0);
  CHECK(err("correctness:\n  trials: 99999999999999999999\n")
            .find("c.yaml:2: correctness.trials: expected an integer") == 0);
  CHECK(err("correctness:\n  trials: 2.5\n").find("expected an integer") != std::string::npos);
  CHECK(err("timing:\n  warmup: -1\n").find("timing.warmup") != std::string::npos);
  CHECK(err("timing:\n  target_rel_stderr: 0\n").find("c.yaml:2: timing.target_rel_stderr") == 0);
  CHECK(err("timing:\n  time_cap_s: .nan\n").find("timing.time_cap_s") != std::string::npos);
  CHECK(err("timing:\n  input_sets: 100000\n").find("timing.input_sets: must be from 1 to 64") !=
        std::string::npos);
  CHECK(err("timing:\n  min_samples: 50\n  max_samples: 40\n")
            .find("c.yaml:3: timing.max_samples (40) is below timing.min_samples (50)") == 0);
  CHECK(err("timing:\n  flush_l2: maybe\n")
            .find("c.yaml:2: timing.flush_l2: expected true or false") == 0);
  CHECK(err("compile:\n  memory_limit_mb: 0\n").find("compile.memory_limit_mb") !=
        std::string::npos);
  CHECK(err("compile:\n  arch: sm_90a; rm -rf /\n")
            .find("c.yaml:2: compile.arch: expected auto or a GPU architecture") == 0);
  CHECK(err("compile:\n  fallback_arch: auto\n").find("compile.fallback_arch") !=
        std::string::npos);
  CHECK(err("compile:\n  arch: [sm_90]\n").find("compile.arch: expected a string, got a list") !=
        std::string::npos);
  CHECK(err("records:\n  compile_log_bytes: 10\n")
            .find("records.compile_log_bytes: must be from 256") != std::string::npos);
  CHECK(err("tolerance_overrides:\n  L1_23_Softmax: {atol: .nan}\n")
            .find("c.yaml:2: tolerance_overrides.L1_23_Softmax.atol") == 0);
  CHECK(err("tolerance_overrides:\n  L1_23_Softmax: {atol: -1}\n")
            .find("tolerance_overrides.L1_23_Softmax.atol") != std::string::npos);
  CHECK(err("tolerance_overrides:\n  L1_23_Softmax: {atl: 1}\n").find("unknown key 'atl'") !=
        std::string::npos);
  CHECK(err("tolerance_overrides:\n  L1_23_Softmax: 5\n").find("expected {atol, rtol, rel_l2}") !=
        std::string::npos);
  CHECK(err("reward:\n  preset: \"\"\n").find("reward.preset: must name a preset") !=
        std::string::npos);
}

TEST_CASE(
    "config: shapes, duplicates and broken YAML name the line; nothing throws but SpecError") {
  CHECK(err("timing: 5\n").find("c.yaml:1: timing: expected a mapping of keys") == 0);
  CHECK(err("- a\n- b\n").find("a config is a mapping of sections") != std::string::npos);
  CHECK(err("timing:\n  warmup: 1\n  warmup: 2\n").find("c.yaml:3: timing.warmup appears twice") ==
        0);
  CHECK(err("timing:\n  warmup: 1\ntiming:\n  warmup: 2\n")
            .find("c.yaml:3: section 'timing' appears twice") == 0);
  CHECK(err("timing: {warmup: [\n").find("c.yaml:") == 0);
  CHECK(err("bogus:\n  x: 1\n").find("c.yaml:1: unknown config section 'bogus'") == 0);
  CHECK(err(std::string(5000, '[')).find("c.yaml") == 0);  // deep nesting: an error, not a crash
  CHECK(err("a: &x [1]\nb: *x\n").find("are not allowed") !=
        std::string::npos);  // anchors and aliases refused
  CHECK(err(std::string((1 << 20) + 1, ' ')).find("larger than 1 MiB") != std::string::npos);
  CHECK(err("") == "");
  CHECK(err("# only a comment\n") == "");
}

TEST_CASE("config: valid values load; a rejected text changes nothing") {
  Config c = Config::from_yaml_text(
      "timeouts: {compile_s: 0.5, run_s: 120}\ncompile: {arch: sm_80, cache_dir: }\nrecords: "
      "{worker_log_bytes: 4096}\n",
      "t");
  CHECK(c.compile_timeout_s == 0.5);
  CHECK(c.run_timeout_s == 120);
  CHECK(c.arch == "sm_80");
  CHECK(c.cache_dir.empty());
  CHECK(c.record_worker_log_bytes == 4096);
  CHECK(c.record_compile_log_bytes == 16384);
  Config d = c;
  CHECK_THROWS_AS(d.merge_text("timeouts: {compile_s: 5}\ncorrectness: {trials: 0}\n", "t"),
                  SpecError);
  CHECK(d.compile_timeout_s == 0.5);  // the valid key of the rejected text was not applied
  CHECK(Config::from_json(c.to_json()).to_json() == c.to_json());
  // The shipped defaults pass their own checks and agree with the built-in ones.
  Config shipped = load_config("");
  CHECK(shipped.to_json() == Config().to_json());
}

TEST_CASE("config files: unreadable or missing files are errors naming them") {
  fs::path d = fs::temp_directory_path() / "kernrl-test-config-files";
  fs::create_directories(d);
  Config c;
  CHECK_THROWS_WITH_AS(c.merge_file(d / "missing.yaml"),
                       doctest::Contains("missing.yaml: cannot read config file"), SpecError);
  CHECK_THROWS_WITH_AS(c.merge_file(d), doctest::Contains("not a regular file"), SpecError);
  std::ofstream(d / "bad.yaml") << "timeouts:\n  compile_s: .nan\n";
  CHECK_THROWS_WITH_AS(c.merge_file(d / "bad.yaml"),
                       doctest::Contains("bad.yaml:2: timeouts.compile_s"), SpecError);
  fs::remove_all(d);
}
