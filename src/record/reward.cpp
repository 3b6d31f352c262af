#include "record/reward.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/paths.h"
#include "core/problem.h"

namespace kernrl {
namespace fs = std::filesystem;

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
  for (const auto& kv : n)
    if (kv.first.Scalar() != "kind") p.params[kv.first.Scalar()] = kv.second.as<double>();
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
  if (p.kind == "kernrl") {
    if (!format_ok) return p.params.count("format_failure") ? p.get("format_failure") : p.get("compile_failure");
    if (!compiled) return p.get("compile_failure");
    if (!correct) return p.get("incorrect");
    if (speedup > 1) return std::min(speedup - 1, p.get("speed_cap"));
    return (speedup - 1) * p.get("slow_scale");
  }
  if (p.kind == "staged") {
    double r = 0;
    if (compiled) r += p.get("compiled");
    if (correct) r += p.get("correct");
    if (correct && speedup > 1)
      r += p.get("faster") + std::min(p.get("speed_max"), p.get("speed_max") * std::log2(speedup) / p.get("speed_log_div"));
    return r;
  }
  double r = 0;
  if (format_ok) r += p.get("format");
  if (compiled) r += p.get("compile");
  if (correct) r += p.get("correct") + p.get("speed") * std::min(speedup, p.get("speed_cap")) / p.get("speed_cap");
  return r;
}

nlohmann::json compute_reward(const RewardPreset& p, const nlohmann::json& rec) {
  std::optional<double> r = compute_reward(p, TraceRecord::from_json(rec));
  return r ? nlohmann::json(*r) : nlohmann::json(nullptr);
}

}  // namespace kernrl
