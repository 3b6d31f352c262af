// The problem catalogue: the problem folders under a root (problems/L<level>/<number>_<Name>/),
// their ids, and finding one by id, prefix or a near name. Throws SpecError (core/problem.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kernrl {

// All problem folders under `root` (problems/L*/<dir>), sorted by level then number.
std::vector<std::filesystem::path> problem_dirs(const std::filesystem::path& root);

// Resolves an id (exact, or a unique prefix such as "L1_23") to its folder; throws SpecError.
std::filesystem::path find_problem_dir(const std::filesystem::path& root, const std::string& id);

// The longest problem name a lookup considers (longer ones are refused before any matching).
constexpr size_t kMaxProblemQuery = 256;

// The rule find_problem_dir follows, over a list of ids held in memory: the exact id, a unique
// prefix, or a unique substring; throws SpecError saying why not (ambiguous, or unknown with the
// closest names).
std::string match_problem_id(const std::vector<std::string>& ids, const std::string& id);

// "L1_23" for a KernelBench file name holding level_1_problem_23_ ("" for other names).
std::string kernelbench_problem_id(const std::string& name);

// "L1_23_Softmax" from a folder problems/L1/23_Softmax.
std::string problem_id_of_dir(const std::filesystem::path& dir);

}  // namespace kernrl
