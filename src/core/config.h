// Run settings: configs/default.yaml, then --config FILE over it, then command-line flags.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "core/problem.h"

namespace kernrl {

struct Config {
  int trials = 5;
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 300;
  double target_rel_stderr = 0.01;
  double time_cap_s = 2.0;
  int input_sets = 2;
  bool flush_l2 = true;
  double compile_timeout_s = 30;
  double run_timeout_s = 60;
  std::string arch = "auto";
  std::string fallback_arch = "sm_90a";
  int compile_memory_limit_mb = 8192;
  std::string cache_dir;
  int cache_max_mb = 4096;       // the compile cache is trimmed (oldest first) to stay under this
  bool compile_sandbox = true;   // refuse to compile unless the compiler's OS sandbox holds
  std::map<std::string, Tolerance> tolerance_overrides;
  std::string reward_preset = "kernrl";

  // Applies the keys present in a YAML file over the current values; throws SpecError.
  void merge_file(const std::filesystem::path& file);
  std::filesystem::path resolved_cache_dir() const;
  nlohmann::json to_json() const;
  static Config from_json(const nlohmann::json& j);
};

// configs/default.yaml from the data directory (if found), then `user_file` if not empty.
Config load_config(const std::string& user_file);

}  // namespace kernrl
