// The fused GPU evaluator of the float pass rule (compare_kernels.cu), installed into
// worker/compare.h by the worker at start-up, and its check against the torch definition.
#pragma once

#include <string>

#include "worker/compare.h"

namespace kernrl {

// FloatStatsFn for CUDA tensors of float, double, half and bfloat16; false for anything else.
bool float_stats_gpu(const torch::Tensor& got, const torch::Tensor& want, const Tolerance& tol,
                     bool full, FloatStats* out);

// Compares float_stats_gpu with float_stats_torch on generated tensors (every dtype, NaN and
// infinities on either side, values on the tolerance's edge, empty and odd sizes). Returns the
// failures in words, one per line; empty when they agree. `kernrl-worker --self-test` runs it.
std::string self_test_float_stats();

}  // namespace kernrl
