// Launch plans derived from a Python answer's host wrapper (docs/kernel-format.md, "Host
// wrappers"): a Triton file with no launch block whose ModelNew (or Model) forward launches
// kernel[grid](...). The wrapper runs only in the kernrl-triton sandbox
// (src/triton/wrapper_plan.py), on shape-only tensors, once per size set; here its per-size-set
// launches become one launch block, which then goes through the same parser and checks as a written
// one.
//
//   wrapper_plan_request  the problem and its size sets -> the helper's request
//   merge_wrapper_plan    the helper's answer -> the launch block (YAML) and the plan; pure, tested
//                         without Triton (tests/unit/test_wrapper_plan.cpp)
//   derive_wrapper_plan   both, with the child between them
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "protocol/launch_plan.h"

namespace kernrl {

// Whether `src` is a Triton file without a launch block that launches its kernels from a host
// wrapper (a Model/ModelNew class whose forward calls kernel[grid](...)): its plan is derived.
bool wants_wrapper_plan(const ExtractedSource& src);

struct WrapperPlan {
  LaunchPlan plan;
  std::string launch_block;  // the derived launch block's YAML (the record shows it)
  std::string cls;           // ModelNew or Model
  std::vector<std::string> notes;
  // Kernels of kernrl's own that the plan launches (kernrl_zero_fill, for an output the wrapper
  // allocates with torch.zeros): Triton source appended to the file's for the compile.
  std::string extra_source;
};

// The Triton kernel kernrl launches before the wrapper's kernels to fill an output with zeros.
extern const char* const kZeroFillSource;

// The wrapper could not be run to the end (the helper timed out or died): a compile_error.
struct WrapperRunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json wrapper_plan_request(const ExtractedSource& src, const std::string& filename,
                                    const ProblemSpec& problem, const std::vector<Vars>& size_sets,
                                    int64_t num_sms);

// Throws FormatError (the line of the answer and why) when the launches differ between size sets
// in a way one launch block cannot say, or the helper refused the wrapper.
WrapperPlan merge_wrapper_plan(const nlohmann::json& answer, const ProblemSpec& problem,
                               const std::vector<Vars>& size_sets, int64_t num_sms);

// One integer of the plan from its value and traced expression at each size set: an expression
// that gives every value (a traced one), else the value when it is the same at every set, else an
// expression that picks each set's value by its sizes. Throws FormatError (naming `what`) when no
// expression fits.
std::string value_expression(const std::vector<int64_t>& values,
                             const std::vector<std::string>& exprs, const std::vector<Vars>& vars,
                             const std::string& what, int line);

// Throws FormatError, WrapperRunError, or UsageError for a missing Triton or sandbox.
WrapperPlan derive_wrapper_plan(const ExtractedSource& src, const std::string& filename,
                                const ProblemSpec& problem, const std::vector<Vars>& size_sets,
                                int64_t num_sms, const Config& cfg);

}  // namespace kernrl
