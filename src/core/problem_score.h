// The optional `score` and `throughput` blocks of a problem.yaml (docs/problem-format.md), read
// apart from the rest of the spec.
#pragma once

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "core/problem.h"

namespace kernrl {

// Reads `score` and `throughput` from a problem.yaml's root into `p`; `sizes` are the size names.
// Throws SpecError naming `file` and the line.
void read_score_fields(const YAML::Node& root, ProblemSpec& p, const std::set<std::string>& sizes,
                       const std::string& file);

}  // namespace kernrl
