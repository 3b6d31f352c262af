// Step 5: is the kernel's output right? Float outputs: every element within atol + rtol*|ref|
// (NaN and +-inf must match) AND relative L2 error <= rel_l2, so an all-zeros or constant answer
// fails even where outputs are tiny. Integer, boolean and `exact` outputs compare bit for bit.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "core/problem.h"
#include "references/reference.h"

namespace kernrl {

struct OutputCheck {
  std::string name;
  bool passed = false;
  int64_t compared = 0;  // elements compared (a variable-size output: only the first `count`)
  int64_t mismatches = 0;
  double max_abs_err = 0, max_rel_err = 0, rel_l2 = 0;
  nlohmann::json first_mismatch;  // {index: [..], got, want} or null
  std::string reason;             // why it failed, in words
  nlohmann::json to_json() const;
};

// The float pass rule over two same-shape contiguous tensors, in numbers: how many elements fail
// (NaN where the reference has none or the other way round, a different infinity, or finite
// reference and |got - ref| > atol + rtol*|ref|, all in float64), the first failing flat index,
// the L2 norms of the difference and of the reference over the elements whose reference is finite,
// and (with `full`) the largest absolute and relative errors (NaN when a difference is NaN).
struct FloatStats {
  int64_t mismatches = 0;
  int64_t first_bad = -1;  // flat index, -1 when none
  double err_norm = 0, ref_norm = 0;
  double max_abs = 0, max_rel = 0;
};

// The relative L2 error of `compared` elements from their numbers (the error's norm over the
// reference's; where the reference's norm is 0, 0 if the error is within atol per element on
// average, infinity otherwise), and the verdict of the float pass rule: no mismatch and that error
// within tol.rel_l2. compare_output decides with these; so does the worker's quick verdict.
double relative_l2(const FloatStats& st, const Tolerance& tol, int64_t compared);
bool float_passes(const FloatStats& st, const Tolerance& tol, int64_t compared);

// The same numbers with torch operations (any device): the definition the GPU path must match.
FloatStats float_stats_torch(const torch::Tensor& got, const torch::Tensor& want,
                             const Tolerance& tol, bool full);

// A faster evaluator of the same rule (the worker installs one fused GPU kernel). It returns
// false for tensors it does not handle, and the torch definition runs instead.
using FloatStatsFn = bool (*)(const torch::Tensor& got, const torch::Tensor& want,
                              const Tolerance& tol, bool full, FloatStats* out);
void set_float_stats_fn(FloatStatsFn fn);

// Compares one output. `rows` limits the comparison to the first rows along dim 0 (-1: all).
// With `full` false only the verdict is computed (mismatches, rel_l2, the first mismatch and the
// reason), not max_abs_err and max_rel_err: the same pass rule, fewer passes over the data.
OutputCheck compare_output(const TensorSpec& spec, const torch::Tensor& got,
                           const torch::Tensor& want, const Tolerance& tol, int64_t rows = -1,
                           bool full = true);

// compare_output's result for a float `allclose` output from its numbers, for a caller that
// computed them itself (the worker, with several comparisons read back at once). `got` and `want`
// are the tensors as compared (contiguous; complex ones as real views); they are read only for
// the first mismatch.
OutputCheck float_output_check(const TensorSpec& spec, const torch::Tensor& got,
                               const torch::Tensor& want, const Tolerance& tol,
                               const FloatStats& st, bool full);

// Compares every output of `p` (count outputs first, then the outputs they size).
std::vector<OutputCheck> compare_outputs(const ProblemSpec& p, const TensorMap& got,
                                         const TensorMap& want,
                                         const Tolerance* override_tol = nullptr, bool full = true);

}  // namespace kernrl
