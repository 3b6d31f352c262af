// Launch blocks: the input is the YAML between /* kernrl and */; a plan that parses is checked
// against a real problem (L1_23_Softmax) at all of its size sets.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/paths.h"
#include "core/problem.h"
#include "parse/launch_block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kernrl::ProblemSpec problem =
      kernrl::load_problem(kernrl::find_problem_dir(kernrl::problems_dir(), "L1_23_Softmax"));
  std::string yaml(reinterpret_cast<const char*>(data), size);
  kernrl::LaunchPlan plan;
  try {
    plan = kernrl::parse_launch_block({"/* kernrl\n" + yaml + "\n*/\n", 1, false});
  } catch (const kernrl::FormatError&) {
    return 0;
  }
  // Whatever parses has kernel names the compiler may see.
  for (const auto& l : plan.launches)
    if (!kernrl::kernel_name_problem(l.kernel).empty()) std::abort();
  try {
    kernrl::check_plan(plan, problem, 132);
  } catch (const kernrl::FormatError&) {
    return 0;
  }
  // A checked plan travels as JSON and comes back the same.
  if (kernrl::LaunchPlan::from_json(plan.to_json()).to_json() != plan.to_json()) std::abort();
  return 0;
}
