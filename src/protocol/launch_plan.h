// A kernel file's launch plan: its launches and scratch buffers, as the launch block's parser
// (parse/launch_block.h) makes it and the GPU worker runs it; sent in an EvalRequest as JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/expr.h"
#include "core/problem.h"

namespace kernrl {

// IntList, Bool, None (as a kernel's argument: a null pointer) and TensorList are arguments of
// torch steps (an IntList's or TensorList's text is its items joined by ", "; a TensorList's items
// are tensor or scratch names, `cat`'s tensors). FloatExpr: a real expression (a float literal or
// float scalar in arithmetic, such as `1.0 / (batch_size * dim)`), evaluated per size set by
// eval_real_expr. Offset: `NAME + EXPR`, a CUDA kernel's pointer into the tensor or scratch
// buffer NAME, advanced by the integer expression EXPR elements (offset_arg_at). Accessor:
// `accessor32(x, 3)` / `accessor64(x, 3)`, a PyTorch packed tensor accessor of a tensor or scratch
// buffer (protocol/tensor_accessor.h), a kernel's argument. Struct: `struct(ptr x, i32 n, ...)`, a
// plain struct of typed fields passed by value to a CUDA kernel (protocol/struct_arg.h). New kinds
// go last: the kind is sent as its number.
enum class ArgKind {
  Tensor,
  Scratch,
  Scalar,
  FloatLiteral,
  IntExpr,
  IntList,
  Bool,
  None,
  FloatExpr,
  TensorList,
  Offset,
  Accessor,
  Struct
};

struct LaunchArg {
  std::string text;
  ArgKind kind = ArgKind::IntExpr;
};

// A compiled Triton launch at some size sets: which kernel and launch configuration it uses there
// (Triton specialises a kernel per size set: constexprs, divisibility, autotuned configs).
struct LaunchVariant {
  Vars sizes;          // the size set (the problem's sizes) this variant is for
  std::string kernel;  // a key of the request's `lowered`
  std::vector<std::string> block, cluster;
  std::string shared_bytes = "0";
  bool cooperative = false;
};

// One `@triton.autotune` config of a Triton launch, as the worker may choose it: the fields of the
// launch (and its variants per size set) when that config is launched.
struct LaunchChoice {
  int config = 0;  // the config's index in the kernel's @triton.autotune list
  std::string kernel;
  std::vector<std::string> block, cluster;
  std::string shared_bytes = "0";
  bool cooperative = false;
  std::vector<LaunchVariant> variants;
};

struct LaunchSpec {
  std::string kernel;  // name or name expression; empty for a torch step
  // A torch step (docs/kernel-format.md, "PyTorch operators"): the ATen operator it calls (`torch`)
  // and the output or scratch buffer its result goes to (`out`); its arguments are `args`.
  std::string torch, out;
  // Which of the operator's results goes to `out` (`result: N`; an operator returning a tuple,
  // such as lstm's output, h_n and c_n); 0 for all others.
  int result = 0;
  std::vector<std::string> grid, block, cluster;
  std::string shared_bytes = "0";
  std::vector<LaunchArg> args;
  std::string repeat_count = "1";
  std::string repeat_var;
  bool cooperative = false;
  int line = 0;  // file line of this launch
  // Triton launches only (docs/kernel-format.md, "Triton kernels"): each tl.constexpr parameter
  // and its value (an integer expression, a float literal, true or false), in the block's order;
  // num_warps, num_stages, num_ctas as written (empty: Triton's default or the autotuned value).
  std::vector<std::pair<std::string, std::string>> constexprs;
  std::string num_warps, num_stages, num_ctas;
  // Set by the Triton compile: the variant of each size set, when they differ (else the fields
  // above hold the one variant). The worker picks the one whose sizes match.
  std::vector<LaunchVariant> variants;
  // Set by the Triton compile for an `@triton.autotune` kernel: every config that compiled
  // (the first is the one the fields above hold), and the tuning group: the launches of one group
  // (those of one compiled kernel at the bench size) are switched together. The worker times each
  // choice at the bench size and keeps the fastest (docs/kernel-format.md, "Autotune").
  std::vector<LaunchChoice> autotune;
  std::string tune_group;

  // The launch with choice `c` of `autotune` in its fields.
  void choose(size_t c);
};

struct ScratchSpec {
  std::string name;
  DType dtype;
  std::string count;               // the element count (the product of `shape` when given)
  std::vector<std::string> shape;  // optional dimensions (integer expressions)
  int line = 0;
};

// A named value of the launch block (`values:`): an integer or real expression over the sizes,
// the scalars, num_sms and the values before it, evaluated in order at each size set; usable by
// every expression of the block as a size is (a real one where a real expression may be).
struct PlanValue {
  std::string name, expr;
  int line = 0;
};

struct LaunchPlan {
  std::string problem;  // from the block; may be empty
  std::vector<PlanValue> values;
  std::vector<LaunchSpec> launches;
  std::vector<ScratchSpec> scratch;
  int line = 0;                   // line of `/* kernrl`
  std::string language = "cuda";  // "cuda" or "triton"

  std::vector<std::string> kernel_names() const;  // distinct, in order (torch steps: none)
  bool has_torch_steps() const;
  nlohmann::json to_json() const;
  static LaunchPlan from_json(const nlohmann::json& j);
};

// An ATen operator a torch step may call, the overload of its functional form, and how many
// results it returns (a tuple's items: a step's `result` picks one).
struct TorchOp {
  std::string name, overload;
  int results = 1;
};
// Every operator a torch step may call (docs/kernel-format.md, "PyTorch operators").
const std::vector<TorchOp>& torch_step_ops();
// Why `op` cannot be a torch step's operator (empty when it can).
std::string torch_step_op_problem(const std::string& op);

// Variables of expressions for one size set: sizes, num_sms and (when set) the repeat variable.
Vars plan_vars(const Vars& sizes, int64_t num_sms);
// The same with the problem's integer scalars (fixed values, `kernel_size`) where no size has
// their name: usable in every expression of the launch block.
Vars plan_vars(const ProblemSpec& p, const Vars& sizes, int64_t num_sms);
// The problem's float scalars, the double-valued names of real expressions (FloatExpr arguments).
RealVars plan_reals(const ProblemSpec& p);
// The plan's values (`values:`) added in order to `vars` (the sizes, num_sms and integer scalars,
// as plan_vars makes them) and `reals` (the float scalars): an integer value to `vars`, a real
// one (with a float literal, a float scalar or a real value in it) to `reals`. Throws ExprError
// naming the value and the size set where one does not evaluate.
void bind_plan_values(const LaunchPlan& plan, const ProblemSpec& p, Vars& vars, RealVars& reals);
// One value of the plan added so (the values before it bound already); true when it is real.
bool bind_plan_value(const PlanValue& v, const ProblemSpec& p, Vars& vars, RealVars& reals);
// plan_vars(p, sizes, num_sms) with the plan's integer values: the variables of every integer
// expression of the plan at one size set. Throws ExprError as bind_plan_values.
Vars plan_vars(const LaunchPlan& plan, const ProblemSpec& p, const Vars& sizes, int64_t num_sms);
// The float scalars and the plan's real values at `vars` (plan_vars' variables, with or without
// a repeat variable): the double-valued names of the plan's real expressions.
RealVars plan_reals(const LaunchPlan& plan, const ProblemSpec& p, const Vars& vars);
// The names a value may not take (it would shadow them): the built-ins cdiv, min, max, num_sms.
bool is_builtin_name(const std::string& name);
// The words an argument may be that are no names (null pointers, a torch step's booleans): null,
// none, None, nullptr, true, false. No value may take one.
bool is_argument_word(const std::string& name);

// `s` without the white space it starts and ends with.
std::string trimmed(const std::string& s);
// Whether `s` is written as a problem's tensor and buffer names are: identifiers joined by dots,
// a part after the first may be digits (`network.0.weight`), at most 256 characters.
bool is_buffer_name(const std::string& s);

// An argument `NAME + EXPR` split at its first `+` outside parentheses (NAME and EXPR trimmed);
// nullopt when it has none, or nothing before or after it. Whether NAME is a buffer is the
// caller's question.
struct OffsetArg {
  std::string buffer, offset;
};
std::optional<OffsetArg> split_offset_arg(const std::string& text);

// An Offset argument at one size set: its buffer, the offset in elements and the buffer's element
// count and element size there. `problem` says why the pointer cannot be passed (the offset is
// outside 0 to the element count, the end included), with `at` (" at batch_size=3", the size set)
// after the value; empty when it can. Throws ExprError when EXPR or the buffer's count does not
// evaluate, std::invalid_argument when the text is no offset into a buffer of `plan` or `p`.
struct OffsetAt {
  std::string buffer;
  int64_t offset = 0, elements = 0, elem_bytes = 0;
  std::string problem;
};
OffsetAt offset_arg_at(const std::string& text, const LaunchPlan& plan, const ProblemSpec& p,
                       const Vars& vars, const std::string& at = "");

}  // namespace kernrl
