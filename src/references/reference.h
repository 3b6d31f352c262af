// The libtorch reference API: every problems/L*/<id>/reference.cpp registers one function here.
// References run on whatever device their inputs live on (CPU in CI, CUDA when grading).
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace kernrl {

using TensorMap = std::map<std::string, torch::Tensor>;

// What a reference (or a custom input generator) sees: tensors by name, the active size set and
// the problem's scalars. Lookups of unknown names throw std::out_of_range naming the key.
struct RefContext {
  const TensorMap& tensors;
  const std::map<std::string, int64_t>& sizes;
  const std::map<std::string, double>& scalars;
  torch::Device device;

  const torch::Tensor& t(const std::string& name) const;
  int64_t size(const std::string& name) const;
  double scalar(const std::string& name) const;
  torch::TensorOptions opts(torch::Dtype dtype = torch::kFloat32) const {
    return torch::TensorOptions().dtype(dtype).device(device);
  }
};

// Computes every output of the problem, keyed by output name.
using ReferenceFn = std::function<TensorMap(const RefContext&)>;
// Draws the inputs whose `init` is `custom` (CSR structure, SPD matrices, ...). The torch default
// generators are already seeded for this trial; `ctx.tensors` holds the inputs drawn so far.
using InputGenFn = std::function<TensorMap(const RefContext&)>;

// True for libtorch TORCH_MAJOR.TORCH_MINOR or later.
#define KERNRL_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||         \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// Whether this libtorch has the fused operations some references use where a PyTorch user would
// (scaled_dot_product_attention, _scaled_mm: torch 2.5 and later). Without them the fused route of
// a reference (KERNRL_REFERENCE_ROUTES) runs with the same operations written out.
constexpr bool kFusedOpsNative = KERNRL_TORCH_AT_LEAST(2, 5);

struct ReferenceEntry {
  ReferenceFn run;      // the reference: `fused` where kFusedOpsNative, else `portable`
  InputGenFn generate;  // empty when the problem has no custom inputs
  // A reference with two routes (KERNRL_REFERENCE_ROUTES): both, for the tests that check they
  // agree within the problem's tolerance. Empty for references with one route.
  ReferenceFn fused, portable;
};

// nullptr when no reference is registered under `id`.
const ReferenceEntry* find_reference(const std::string& id);
std::map<std::string, ReferenceEntry>& reference_registry();

struct ReferenceRegistrar {
  ReferenceRegistrar(const char* id, ReferenceFn fn);
  ReferenceRegistrar(const char* id, ReferenceFn fused, ReferenceFn portable);
  ReferenceRegistrar(const char* id, InputGenFn gen, int /*tag*/);
};

}  // namespace kernrl

#define KERNRL_CONCAT_INNER(a, b) a##b
#define KERNRL_CONCAT(a, b) KERNRL_CONCAT_INNER(a, b)
// Registers `fn` as the reference of problem `id`. Use inside the problem's own namespace.
#define KERNRL_REFERENCE(id, fn) \
  static const ::kernrl::ReferenceRegistrar KERNRL_CONCAT(kernrl_reference_, __LINE__)(id, fn)
// Registers a reference with two routes: `fused`, the route a PyTorch user would take through
// fused operations (scaled_dot_product_attention, _scaled_mm), is the reference where libtorch
// has them (kFusedOpsNative); `portable` (plain operations, libtorch 1.13) is the reference
// elsewhere. The problem tests check the two agree within the problem's tolerance.
#define KERNRL_REFERENCE_ROUTES(id, fused, portable)                                              \
  static const ::kernrl::ReferenceRegistrar KERNRL_CONCAT(kernrl_reference_, __LINE__)(id, fused, \
                                                                                       portable)
// Registers `fn` as the generator of the problem's `init: custom` inputs.
#define KERNRL_INPUTS(id, fn) \
  static const ::kernrl::ReferenceRegistrar KERNRL_CONCAT(kernrl_inputs_, __LINE__)(id, fn, 0)
