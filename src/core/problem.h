// A problem specification (problems/L*/<n>_<Name>/problem.yaml), loaded and validated. Its parts:
// the element types (dtype.h, dtype.cpp), the spec and its arithmetic (problem.cpp), the YAML
// reader (problem_yaml.cpp) and the catalogue of problem folders (problem_catalog.h, .cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/expr.h"
#include "core/problem_catalog.h"

namespace kernrl {

// A spec or launch-block error; `what()` names the file and line.
struct SpecError : UsageError {
  using UsageError::UsageError;
};

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
  double rel_l2 = 1e-2;
};

struct InitSpec {
  std::string kind;  // normal uniform randint kaiming_uniform bernoulli constant custom
  std::map<std::string, double> params;  // mean/std, low/high, p, value
  std::string fan_in;                    // kaiming_uniform: integer expression
};

struct TensorSpec {
  std::string name;
  DType dtype;
  std::vector<std::string> shape;  // integer expressions over the sizes
  InitSpec init;                   // inputs and parameters
  // outputs only:
  std::string compare;  // allclose | exact
  Tolerance tolerance;
  std::string count;  // name of the count output of a variable-size output
};

struct ScalarSpec {
  std::string name;
  std::string dtype;  // float32 float64 int32 int64
  double value = 0;
  bool is_float() const { return dtype == "float32" || dtype == "float64"; }
};

// How a problem's speed is scored (problem.yaml `score`, docs/problem-format.md).
struct ScoreSpec {
  std::string baseline = "torch";  // what a record's `speedup` is against: torch | kernel
  bool pooled = true;  // false: left out of pooled (cross-level) speedup and fast_p figures
  std::string lead = "speedup";  // the measure reports lead with: speedup | sol
  std::string note;              // why, one line (reports show it)
};

// The problem's own unit of work (problem.yaml `throughput`), e.g. hashes for a hashing problem.
struct ThroughputSpec {
  std::string unit;   // plural, shown as "<unit>/s"; empty when the problem has none
  std::string count;  // integer expression over the sizes: units of work per run
};

struct ProblemSpec {
  std::string id, name, description, torch;
  int level = 0;
  int number = 0;
  std::filesystem::path dir;
  std::vector<std::string> size_names;  // in the order of the bench set
  Vars bench;
  std::vector<Vars> tests;
  std::vector<TensorSpec> inputs, parameters, outputs;
  std::vector<ScalarSpec> scalars;
  Tolerance tolerance;
  std::string compare = "allclose";
  // problem.yaml's reference.torchscript: the folder of a suite problem's TorchScript modules,
  // one per size set (the reference runs at those sets only); empty for a libtorch reference.
  std::string torchscript;
  // problem.yaml's reference.forward (suites only): the module's forward arguments in order, each
  // an input or a scalar (a Python number KernelBench's get_inputs passes, which the TorchScript
  // reference has fixed); empty: the inputs in order.
  std::vector<std::string> forward_args;
  // problem.yaml's modules (suites built from KernelBench): the reference module's submodules, by
  // module path, in the order nn.Module registers them, each with its class and the torch.nn
  // classes it derives from (`network.0: [Linear]`, `act: [ReLU6, Hardtanh]`; a class defined
  // outside torch.nn as `module:Name`).
  std::vector<std::pair<std::string, std::vector<std::string>>> modules;
  std::string flops = "0", bytes = "auto";
  ScoreSpec score;
  ThroughputSpec throughput;

  // Inputs then parameters: every tensor the kernel reads.
  std::vector<const TensorSpec*> read_tensors() const;
  const TensorSpec* find_tensor(const std::string& name) const;  // inputs, parameters, outputs
  const ScalarSpec* find_scalar(const std::string& name) const;
  std::vector<int64_t> shape_of(const TensorSpec& t, const Vars& sizes) const;
  int64_t numel_of(const TensorSpec& t, const Vars& sizes) const;
  int64_t flops_at(const Vars& sizes) const;
  int64_t bytes_at(const Vars& sizes) const;
  std::map<std::string, double> scalar_values() const;
  nlohmann::json to_json() const;
};

constexpr int64_t kMaxSize = int64_t{1} << 40;  // sizes are 0 to 2^40

// Parses and validates the text of a problem.yaml (`name` appears in errors); everything but the
// id's match with its folder. Throws SpecError naming the line.
ProblemSpec parse_problem_yaml(const std::string& text, const std::string& name);

// Loads and validates one problem folder; throws SpecError naming file and line.
ProblemSpec load_problem(const std::filesystem::path& dir);

// load_problem in two steps, for a reader that keeps parsed problems while their text is the same:
// the text of dir/problem.yaml, and the problem parsed and validated from it.
std::string read_problem_yaml(const std::filesystem::path& dir);
ProblemSpec problem_from_yaml(const std::filesystem::path& dir, const std::string& text);

}  // namespace kernrl
