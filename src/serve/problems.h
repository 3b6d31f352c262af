// The problems a service offers, loaded once at start: ids, prompts, reference code, and the two
// ways of finding one by name (OpenEnv's and kernrl's).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kernrl::serve {

struct ProblemInfo {
  std::string id, name;
  int level = 0;
  std::string prompt;         // kernrl's task prompt (`kernrl show --prompt`)
  std::string triton_prompt;  // the same asking for Triton (`show --prompt --language triton`)
  // The prompt for `language` ("triton", else CUDA's).
  const std::string& prompt_for(const std::string& language) const {
    return language == "triton" ? triton_prompt : prompt;
  }
  std::string reference_code;  // the problem's PyTorch code
  nlohmann::json summary;      // {id, level, name, sizes, dtypes} as `kernrl list --json` prints it
  nlohmann::json spec;         // the specification with its template (`kernrl show --json`)
};

class ProblemCatalog {
 public:
  // Every problem under `root` (problems/L*/<n>_<Name>); a broken one is skipped and named in
  // *warnings.
  ProblemCatalog(const std::string& root, std::vector<std::string>* warnings);

  const std::vector<ProblemInfo>& all() const { return problems_; }
  // OpenEnv's lookup: the problem with exactly this id, else the first (in level and number
  // order) whose id contains it; null when none.
  const ProblemInfo* find_openenv(const std::string& query) const;
  // kernrl's lookup (as `--problem`): the exact id, or a unique prefix such as "L1_23"; null with
  // *error saying why otherwise.
  const ProblemInfo* find_kernrl(const std::string& query, std::string* error) const;
  // A problem picked by `seed` (a reset without problem_id).
  const ProblemInfo& pick(uint64_t seed) const;

 private:
  std::string root_;
  std::vector<ProblemInfo> problems_;
  std::vector<std::string> ids_;  // in level and number order
  std::map<std::string, size_t> by_id_;
};

}  // namespace kernrl::serve
