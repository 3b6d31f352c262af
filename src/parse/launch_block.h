// Step 2: the `/* kernrl ... */` launch block of a kernel file, parsed and checked against the
// problem into a launch plan (protocol/launch_plan.h), which travels to the GPU worker as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/expr.h"
#include "core/problem.h"
#include "extract/extract.h"
#include "protocol/launch_plan.h"

namespace kernrl {

// A launch configuration that cannot run (a grid or block dimension out of the device's range,
// cluster dimensions that do not fit, negative or too much shared memory) at some size set:
// graded as `launch_error` before anything launches.
struct LaunchConfigError : FormatError {
  using FormatError::FormatError;
};

constexpr size_t kMaxNameChars = 256;
constexpr int64_t kMaxDynamicSharedBytes =
    232448;  // 227 KiB: the most a block may have (sm_90, sm_100)  // kernel names, scratch names,
             // repeat variables, problem ids

// The keys a launch may have (the contract shown to models lists the same;
// tests/unit/test_contract.cpp).
const std::vector<std::string>& launch_keys();

// Parses the launch block of `src` (lines reported relative to the submitted file). Throws
// FormatError.
LaunchPlan parse_launch_block(const ExtractedSource& src);

// Classifies arguments and checks every name and expression against the problem at all of its
// size sets (num_sms as given). Throws FormatError with the line and the name.
void check_plan(LaunchPlan& plan, const ProblemSpec& problem, int64_t num_sms);

// Why `name` cannot be a launch-block kernel name (empty when it can): a C++ name with optional
// template arguments, printable ASCII, at most kMaxNameChars; never a newline or a quote.
std::string kernel_name_problem(const std::string& name);

// A float literal as launch-block arguments write it (0.5, 1e-5, 2.f); float_literal_problem says
// why its value is unusable (out of double range), empty when it is fine.
bool is_float_literal(const std::string& text);
std::string float_literal_problem(const std::string& text);

// `s` with control characters escaped and cut to `max_chars`, for error messages.
std::string printable(const std::string& s, size_t max_chars = 60);

}  // namespace kernrl
