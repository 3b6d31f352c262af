// A problem's reference as the worker runs it: the libtorch function its reference.cpp registered
// (references/reference.h), or, for a problem whose spec names a TorchScript reference (a suite
// built by `kernrl suite add`), the problem's own module compiled to TorchScript when the suite
// was built, loaded with torch::jit::load and run on the inputs' device. One mechanism for every
// problem of such a suite: no hand port per problem.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

#include "core/problem.h"
#include "references/reference.h"

namespace kernrl {

// Points every device constant of `graph` (a traced graph's `prim::Constant` of type Device, e.g.
// the `device=cpu` of the factory calls a traced input generator recorded) at `device`, in nested
// blocks too; returns how many it changed. A traced get_inputs() then draws where it runs.
int move_device_constants(torch::jit::Graph& graph, const c10::Device& device);

// The reference of `p`, or nullptr when `p` is a libtorch problem with no registered reference.
// For a TorchScript problem the entry's `run` runs the module saved for the active size set
// (`<torchscript>/bench.pt`, `test0.pt`, ...), and its `generate` gives the `init: custom`
// tensors: the module's parameters and buffers (the weights, named by module path) and the
// inputs of the traced input generator, if the spec names one: drawn on the inputs' device
// (its device constants moved there; on the CPU, then copied, where that fails). Throws
// std::runtime_error naming the file when a module cannot be loaded or the sizes are not one of the
// problem's sets.
const ReferenceEntry* reference_for(const ProblemSpec& p);

}  // namespace kernrl
