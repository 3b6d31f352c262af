// A torch step of a launch plan (docs/kernel-format.md, "PyTorch operators"): one ATen operator of
// kernrl's fixed list, called through libtorch's dispatcher on the evaluation's own tensors, its
// result written into the step's `out` buffer. No code of the submission runs: the file names an
// operator and its arguments, kernrl calls it. Used by the GPU worker; CPU-testable (kernrl_torch).
#pragma once

#include <torch/torch.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/launch_plan.h"

namespace kernrl {

// One argument of a torch step as the worker has it.
struct TorchStepArg {
  enum Kind { Tensor, Int, Float, IntList, Bool, None, TensorList } kind = None;
  torch::Tensor tensor;
  std::vector<torch::Tensor> tensors;  // TensorList
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> list;
  bool b = false;
  std::string text;  // as written, for messages
};

// A step that cannot be prepared or run (wrong arguments for the operator's schema, a result whose
// shape is not the out buffer's): graded as the kernel file's launch_error.
struct TorchStepError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TorchStep {
 public:
  // Looks the operator up, converts the arguments to its schema (missing trailing ones take the
  // schema's defaults) and checks, by running it once on meta tensors (or, where an operator has
  // no meta kernel, on the real ones), that its result has the shape of `out` (or, for an out
  // buffer of `flat_out` with the same element count, viewed in the result's shape). `result`
  // picks which of the operator's results goes to `out` (a Tensor of its schema's returns; 0
  // where its `.out` overload is used). Throws TorchStepError.
  TorchStep(const std::string& op, std::vector<TorchStepArg> args, torch::Tensor out, bool flat_out,
            const std::string& where, int result = 0);
  // Enqueues the operator on the current stream; the result lands in `out` (through the
  // operator's `.out` overload where it has one, else copied). Throws TorchStepError.
  void run();
  const std::vector<int64_t>& result_shape() const { return shape_; }

 private:
  std::string op_, where_;
  size_t result_ = 0;              // the index of the result that goes to out_
  std::vector<c10::IValue> args_;  // the functional overload's arguments, defaults filled in
  std::optional<c10::OperatorHandle> fn_, out_fn_;
  torch::Tensor out_;
  std::vector<int64_t> shape_;
};

}  // namespace kernrl
