#include "serve/problems.h"

#include <set>

#include "contract/prompt.h"
#include "core/problem.h"
#include "core/problem_catalog.h"

namespace kernrl::serve {
using nlohmann::json;

ProblemCatalog::ProblemCatalog(const std::string& root, std::vector<std::string>* warnings)
    : root_(root) {
  for (const auto& dir : problem_dirs(root)) {
    ProblemSpec p;
    try {
      p = load_problem(dir);
    } catch (const SpecError& e) {
      if (warnings) warnings->push_back(std::string("skipping a broken problem: ") + e.what());
      continue;
    }
    ProblemInfo info;
    info.id = p.id;
    info.name = p.name;
    info.level = p.level;
    info.prompt = task_prompt(p);
    info.triton_prompt = task_prompt(p, "triton");
    info.reference_code = p.torch;
    std::set<std::string> dtypes;
    for (const auto* list : {&p.inputs, &p.parameters, &p.outputs})
      for (const auto& t : *list) dtypes.insert(t.dtype.name);
    json bench = json::object();
    for (const auto& n : p.size_names) bench[n] = p.bench.at(n);
    info.summary = {
        {"id", p.id}, {"level", p.level}, {"name", p.name}, {"sizes", bench}, {"dtypes", dtypes}};
    info.spec = p.to_json();
    info.spec["template"] = kernel_template(p);
    info.spec["triton_template"] = triton_template(p);
    by_id_[info.id] = problems_.size();
    ids_.push_back(info.id);
    problems_.push_back(std::move(info));
  }
}

const ProblemInfo* ProblemCatalog::find_openenv(const std::string& query) const {
  if (auto it = by_id_.find(query); it != by_id_.end()) return &problems_[it->second];
  if (query.empty() || query.size() > kMaxProblemQuery) return nullptr;
  for (const auto& p : problems_)
    if (p.id.find(query) != std::string::npos) return &p;
  return nullptr;
}

const ProblemInfo* ProblemCatalog::find_kernrl(const std::string& query, std::string* error) const {
  if (auto it = by_id_.find(query); it != by_id_.end()) return &problems_[it->second];
  try {
    // The rule `--problem` follows, over the ids loaded at start (nothing is read from disk).
    auto it = by_id_.find(match_problem_id(ids_, query));
    if (it != by_id_.end()) return &problems_[it->second];
    *error = "unknown problem '" + query + "'";
  } catch (const SpecError& e) {
    *error = e.what();
  }
  return nullptr;
}

const ProblemInfo& ProblemCatalog::pick(uint64_t seed) const {
  return problems_.at(seed % problems_.size());
}

}  // namespace kernrl::serve
