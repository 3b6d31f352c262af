// A kernel file's launch plan: its launches and scratch buffers, as the launch block's parser
// (parse/launch_block.h) makes it and the GPU worker runs it; sent in an EvalRequest as JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/expr.h"

namespace kernrl {

enum class ArgKind { Tensor, Scratch, Scalar, FloatLiteral, IntExpr };

struct LaunchArg {
  std::string text;
  ArgKind kind = ArgKind::IntExpr;
};

struct LaunchSpec {
  std::string kernel;  // name or name expression
  std::vector<std::string> grid, block, cluster;
  std::string shared_bytes = "0";
  std::vector<LaunchArg> args;
  std::string repeat_count = "1";
  std::string repeat_var;
  bool cooperative = false;
  int line = 0;  // file line of this launch
};

struct ScratchSpec {
  std::string name;
  DType dtype;
  std::string count;
  int line = 0;
};

struct LaunchPlan {
  std::string problem;  // from the block; may be empty
  std::vector<LaunchSpec> launches;
  std::vector<ScratchSpec> scratch;
  int line = 0;  // line of `/* kernrl`

  std::vector<std::string> kernel_names() const;  // distinct, in order
  nlohmann::json to_json() const;
  static LaunchPlan from_json(const nlohmann::json& j);
};

// Variables of expressions for one size set: sizes, num_sms and (when set) the repeat variable.
Vars plan_vars(const Vars& sizes, int64_t num_sms);

}  // namespace kernrl
