// Suite problems written for the importer's unit tests.
#pragma once

#include <string>

#include "core/problem.h"

namespace kernrl::test {

// A suite problem (reference TorchScript) of a linear layer then an elementwise epilogue, with the
// reference's constructor list Model(input_size, output_size, divisor). `divisor` is the Python
// text of the module constant get_init_inputs passes third (a tuple stays a tuple).
ProblemSpec suite_linear(const std::string& divisor = "10.0");

}  // namespace kernrl::test
