// Launch blocks parsed and checked against a problem, for unit tests of kernel arguments.
#pragma once

#include <string>

#include "core/errors.h"
#include "core/problem.h"
#include "parse/launch_block.h"

namespace kernrl::test {

// The plan of `yaml` (a launch block's text, without its comment markers), checked against `p`.
inline LaunchPlan checked(const std::string& yaml, const ProblemSpec& p) {
  LaunchPlan plan = parse_launch_block({"/* kernrl\n" + yaml + "*/\n", 1, false});
  check_plan(plan, p, 132);
  return plan;
}

// The message `checked` throws, "no error" where it throws none; `config`: whether it was a
// launch configuration error (else a format error).
inline std::string plan_error(const std::string& yaml, const ProblemSpec& p,
                              bool* config = nullptr) {
  try {
    checked(yaml, p);
  } catch (const LaunchConfigError& e) {
    if (config) *config = true;
    return e.what();
  } catch (const FormatError& e) {
    if (config) *config = false;
    return e.what();
  }
  return "no error";
}

}  // namespace kernrl::test
