#include "report/scoring.h"

#include <cmath>
#include <map>
#include <mutex>

#include "core/paths.h"
#include "report/records.h"

namespace kernrl::report {
using nlohmann::json;

const ScoreSpec& score_of(const std::string& problem) {
  static std::mutex mu;
  static std::map<std::string, ScoreSpec> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(problem);
  if (it != cache.end()) return it->second;
  ScoreSpec score;
  try {
    auto dir = find_problem_dir(problems_dir(), problem);
    if (problem_id_of_dir(dir) == problem) score = load_problem(dir).score;
  } catch (const std::exception&) {
    // Not a problem of this problem set (or an unreadable one): the defaults.
  }
  return cache.emplace(problem, score).first->second;
}

const ScoreSpec& score_of_record(const json& r) {
  static const ScoreSpec defaults;
  auto p = rec::problem_of(r);
  return p ? score_of(*p) : defaults;
}

std::string speedup_kind(const json& r) {
  const json& b = rec::field(r, "baseline");
  if (b.is_object() && b.contains("kind") && b["kind"].is_string())
    return b["kind"].get<std::string>();
  return "torch";
}

std::optional<double> speedup_over(const json& r, const std::string& kind) {
  if (!rec::is_correct(r)) return std::nullopt;
  std::optional<double> v;
  const json& b = rec::field(r, "baseline");
  if (b.is_object() && b.contains("speedups") && b["speedups"].is_object()) {
    auto it = b["speedups"].find(kind);
    if (it != b["speedups"].end() && it->is_number()) v = it->get<double>();
  } else if (kind == speedup_kind(r)) {
    v = rec::number(r, "speedup");
  }
  if (!v || !(*v > 0) || !std::isfinite(*v)) return std::nullopt;
  return v;
}

}  // namespace kernrl::report
