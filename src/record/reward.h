// Rewards for RL loops, from a preset in configs/rewards/ (documented in docs/rewards.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "record/trace_record.h"

namespace kernrl {

struct RewardPreset {
  std::string name;
  std::string kind;  // kernrl | staged | weighted
  int version = 1;   // the preset's `version` (docs/rewards.md); 1 when the file gives none
  std::map<std::string, double> params;
  double get(const std::string& k) const;
  // The parameter, or `otherwise` when the preset does not set it (`sol` of a version 1 preset).
  double get_or(const std::string& k, double otherwise) const;
};

// A preset by name (configs/rewards/<name>.yaml) or by path. Throws SpecError.
RewardPreset load_reward_preset(const std::string& name_or_path);

// The reward of one trace record (none when nothing ran: status `compiled`). A correct record's
// `sol_fraction` adds `sol * min(sol_fraction, 1)` where the preset sets `sol`.
std::optional<double> compute_reward(const RewardPreset& preset, const TraceRecord& record);
// The same for a record as JSON: a number, or null.
nlohmann::json compute_reward(const RewardPreset& preset, const nlohmann::json& record);

}  // namespace kernrl
