// The checks of a kernel's outputs and inputs against the reference, for the correctness trials
// and the timed runs: the record's comparisons (through compare.h) and the fast verdicts decided
// from one read-back of the GPU tally (compare_gpu.h).
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/problem.h"
#include "references/reference.h"

namespace kernrl {

// Compares `outputs` with the reference's; *passed says whether all matched. `full`: every
// output's statistics for the record, not only the verdict.
nlohmann::json compare_with_reference(const ProblemSpec& p, const TensorMap& outputs,
                                      const TensorMap& want, const Config& cfg, bool* passed,
                                      bool full = true);

// The first failed output of compare_with_reference's answer, in words ("" when none failed).
std::string first_failure(const nlohmann::json& outs);

// The inputs whose bits differ between `before` and `after`.
std::vector<std::string> modified_inputs(const TensorMap& before, const TensorMap& after);

// Whether every output passes, decided from one read-back. False when an output fails or cannot
// be decided this way: the caller then compares with compare_with_reference, whose verdict and
// words are the record's.
bool outputs_pass_quickly(const ProblemSpec& p, const TensorMap& got, const TensorMap& want,
                          const Config& cfg);

// The checks of one correctness trial: the first run's outputs against the reference (in full:
// the record's comparisons), whether the second run's outputs pass, and which inputs differ from
// their pristine copy. Where every output can be queued on the GPU tally, all of it is read back
// at once; otherwise each part is compared on its own. Failures are described by compare_output
// either way.
struct TrialChecks {
  nlohmann::json outputs;
  bool first_passed = false;
  std::vector<std::string> changed;
  bool rerun_passed = false;
  std::string rerun_why;  // the second run's first failure, in words
};
TrialChecks check_trial(const ProblemSpec& p, const TensorMap& first, const TensorMap& rerun,
                        const TensorMap& want, const TensorMap& pristine, const TensorMap& inputs,
                        const Config& cfg);

}  // namespace kernrl
