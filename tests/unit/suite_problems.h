// Suite problems written for the importer's unit tests.
#pragma once

#include <string>

#include "core/problem.h"

namespace kernrl::test {

// A suite problem (reference TorchScript) of a linear layer then an elementwise epilogue, with the
// reference's constructor list Model(input_size, output_size, divisor). `divisor` is the Python
// text of the module constant get_init_inputs passes third (a tuple stays a tuple).
ProblemSpec suite_linear(const std::string& divisor = "10.0");

// A ConvTranspose2d (kernel 4, stride 2, padding 1, output padding 1) then an activation kernel,
// as a suite records it.
ProblemSpec suite_conv_transpose();

}  // namespace kernrl::test
