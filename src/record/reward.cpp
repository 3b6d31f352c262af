#include "record/reward.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/paths.h"
#include "core/problem.h"

namespace kernrl {
namespace fs = std::filesystem;

double RewardPreset::get_or(const std::string& k, double otherwise) const {
  auto it = params.find(k);
  return it == params.end() ? otherwise : it->second;
}

double RewardPreset::get(const std::string& k) const {
  auto it = params.find(k);
  if (it == params.end()) throw SpecError("reward preset '" + name + "' has no '" + k + "'");
  return it->second;
}

RewardPreset load_reward_preset(const std::string& name_or_path) {
  fs::path file = name_or_path;
  if (file.extension() != ".yaml" && file.extension() != ".yml")
    file = data_dir() / "configs" / "rewards" / (name_or_path + ".yaml");
  if (!fs::exists(file)) throw SpecError("unknown reward preset '" + name_or_path + "' (no " + file.string() + ")");
  YAML::Node n;
  try {
    n = YAML::LoadFile(file.string());
  } catch (const YAML::Exception& e) {
    throw SpecError(file.string() + ": " + e.what());
  }
  RewardPreset p;
  p.name = file.stem().string();
  p.kind = n["kind"] ? n["kind"].as<std::string>() : "";
  if (p.kind != "kernrl" && p.kind != "staged" && p.kind != "weighted")
    throw SpecError(file.string() + ": kind must be kernrl, staged or weighted");
  try {
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      if (key == "version")
        p.version = kv.second.as<int>();
      else if (key != "kind")
        p.params[key] = kv.second.as<double>();
    }
  } catch (const YAML::Exception& e) {
    throw SpecError(file.string() + ": every value but kind must be a number (" + e.what() + ")");
  }
  if (p.version < 1) throw SpecError(file.string() + ": version must be 1 or more");
  if (p.get_or("sol", 0) < 0) throw SpecError(file.string() + ": sol must not be negative");
  return p;
}

std::optional<double> compute_reward(const RewardPreset& p, const TraceRecord& rec) {
  if (rec.status_is(Status::Compiled)) return std::nullopt;
  // A record without a status the reader knows counts as neither a format nor a compile error.
  bool format_ok = !rec.status_is(Status::FormatError);
  bool compiled = format_ok && !rec.status_is(Status::CompileError);
  // A kernel measured faster than the hardware allows cannot be trusted: no reward for correctness.
  bool correct = rec.status_is(Status::Correct) && !rec.suspicious.value_or(false);
  double speedup = rec.speedup.value_or(0.0);
  // How close to the hardware limit a correct kernel ran: a gradient where speedups stay near 1x.
  double sol = 0;
  if (correct && rec.sol_fraction) {
    double f = *rec.sol_fraction;
    if (std::isfinite(f)) sol = p.get_or("sol", 0) * std::clamp(f, 0.0, 1.0);
  }
  if (p.kind == "kernrl") {
    if (!format_ok) return p.params.count("format_failure") ? p.get("format_failure") : p.get("compile_failure");
    if (!compiled) return p.get("compile_failure");
    if (!correct) return p.get("incorrect");
    if (speedup > 1) return std::min(speedup - 1, p.get("speed_cap")) + sol;
    return (speedup - 1) * p.get("slow_scale") + sol;
  }
  if (p.kind == "staged") {
    double r = 0;
    if (compiled) r += p.get("compiled");
    if (correct) r += p.get("correct") + sol;
    if (correct && speedup > 1)
      r += p.get("faster") + std::min(p.get("speed_max"), p.get("speed_max") * std::log2(speedup) / p.get("speed_log_div"));
    return r;
  }
  double r = 0;
  if (format_ok) r += p.get("format");
  if (compiled) r += p.get("compile");
  if (correct)
    r += p.get("correct") +
         p.get("speed") * std::min(speedup, p.get("speed_cap")) / p.get("speed_cap") + sol;
  return r;
}

nlohmann::json compute_reward(const RewardPreset& p, const nlohmann::json& rec) {
  std::optional<double> r = compute_reward(p, TraceRecord::from_json(rec));
  return r ? nlohmann::json(*r) : nlohmann::json(nullptr);
}

}  // namespace kernrl
