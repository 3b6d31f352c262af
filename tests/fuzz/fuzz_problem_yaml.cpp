// problem.yaml from bytes: a spec that validates must also describe itself (to_json evaluates every
// shape, flops and bytes at the bench size).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/problem.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  kernrl::ProblemSpec p;
  try {
    p = kernrl::parse_problem_yaml(text, "fuzz/problem.yaml");
  } catch (const kernrl::SpecError&) {
    return 0;
  }
  p.to_json();
  for (const auto& t : p.tests) {
    p.flops_at(t);
    p.bytes_at(t);
  }
  return 0;
}
