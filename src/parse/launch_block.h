// Step 2: the `/* kernrl ... */` launch block of a kernel file, parsed and checked against the
// problem. The plan travels to the GPU worker as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/expr.h"
#include "core/problem.h"
#include "extract/extract.h"

namespace kernrl {

enum class ArgKind { Tensor, Scratch, Scalar, FloatLiteral, IntExpr };

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

struct LaunchSpec {
  std::string kernel;  // name or name expression
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
  int line = 0;                   // line of `/* kernrl`
  std::string language = "cuda";  // "cuda" or "triton"

  std::vector<std::string> kernel_names() const;  // distinct, in order
  nlohmann::json to_json() const;
  static LaunchPlan from_json(const nlohmann::json& j);
};

// A launch configuration that cannot run (a grid or block dimension out of the device's range,
// cluster dimensions that do not fit, negative or too much shared memory) at some size set:
// graded as `launch_error` before anything launches.
struct LaunchConfigError : FormatError {
  using FormatError::FormatError;
};

constexpr size_t kMaxNameChars = 256;
constexpr int64_t kMaxDynamicSharedBytes =
    232448;  // 227 KiB: the most a block may have (sm_90, sm_100)  // kernel names, scratch names,
             // repeat variables, problem ids

// The keys a launch may have (the contract shown to models lists the same;
// tests/unit/test_contract.cpp).
const std::vector<std::string>& launch_keys();
// The keys a Triton launch may have.
const std::vector<std::string>& triton_launch_keys();

// Parses the launch block of `src` (lines reported relative to the submitted file): `/* kernrl`
// in a CUDA file; in a Triton file (src.language "triton") a module docstring that starts with
// `kernrl` or a `# kernrl` comment block. Throws FormatError.
LaunchPlan parse_launch_block(const ExtractedSource& src);

// Classifies arguments and checks every name and expression against the problem at all of its
// size sets (num_sms as given). Throws FormatError with the line and the name.
void check_plan(LaunchPlan& plan, const ProblemSpec& problem, int64_t num_sms);

// Why `name` cannot be a launch-block kernel name (empty when it can): a C++ name with optional
// template arguments, printable ASCII, at most kMaxNameChars; never a newline or a quote.
std::string kernel_name_problem(const std::string& name);

// A float literal as launch-block arguments write it (0.5, 1e-5, 2.f); float_literal_problem says
// why its value is unusable (out of double range), empty when it is fine.
bool is_float_literal(const std::string& text);
std::string float_literal_problem(const std::string& text);

// `s` with control characters escaped and cut to `max_chars`, for error messages.
std::string printable(const std::string& s, size_t max_chars = 60);

// Variables of expressions for one size set: sizes, num_sms and (when set) the repeat variable.
Vars plan_vars(const Vars& sizes, int64_t num_sms);
// The same with the problem's integer scalars (fixed values, `kernel_size`) where no size has
// their name: usable in every expression of the launch block.
Vars plan_vars(const ProblemSpec& p, const Vars& sizes, int64_t num_sms);

}  // namespace kernrl
