// Drawing a problem's inputs and running its reference, on any device (CPU in tests, CUDA in the
// worker). Shared by the GPU worker and the CPU test suites.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "core/hash.h"
#include "core/problem.h"
#include "references/reference.h"

namespace kernrl {

torch::Dtype torch_dtype(const DType& d);

// Every input and parameter of `p` at `sizes`, drawn from `seed` on `device`.
TensorMap make_inputs(const ProblemSpec& p, const Vars& sizes, uint64_t seed, torch::Device device);

// The same draw into the tensors of `m` (every input of `p`, contiguous, of its shape and dtype at
// `sizes`), in place: the values are exactly those make_inputs gives for the same seed.
void refill_inputs(const ProblemSpec& p, const Vars& sizes, uint64_t seed, TensorMap& m);

// Runs the registered reference and checks it returned every output with the declared dtype and
// shape; throws std::runtime_error naming the problem and output otherwise.
TensorMap run_reference(const ProblemSpec& p, const TensorMap& inputs, const Vars& sizes);

// Empty tensors for every output of `p` at `sizes` (complex64 outputs as complex tensors).
TensorMap alloc_outputs(const ProblemSpec& p, const Vars& sizes, torch::Device device);

}  // namespace kernrl
