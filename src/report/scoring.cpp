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

const ScoreSpec& score_of_record(const TraceRecord& r) {
  static const ScoreSpec defaults;
  auto p = rec::problem_of(r);
  return p ? score_of(*p) : defaults;
}

std::string speedup_kind(const TraceRecord& r) {
  return r.baseline ? r.baseline->kind.value_or("torch") : "torch";
}

std::optional<double> speedup_over(const TraceRecord& r, const std::string& kind) {
  if (!rec::is_correct(r)) return std::nullopt;
  std::optional<double> v;
  if (r.baseline && r.baseline->speedups) {
    auto it = r.baseline->speedups->find(kind);
    if (it != r.baseline->speedups->end()) v = it->second;
  } else if (kind == speedup_kind(r)) {
    v = r.speedup.get() ? std::optional<double>(*r.speedup) : std::nullopt;
  }
  if (!v || !(*v > 0) || !std::isfinite(*v)) return std::nullopt;
  return v;
}

}  // namespace kernrl::report
