#include "worker/inputs.h"

#include <cmath>
#include <stdexcept>

#include "worker/torchscript_reference.h"

namespace kernrl {

torch::Dtype torch_dtype(const DType& d) {
  static const std::map<std::string, torch::Dtype> m = {{"float32", torch::kFloat32},
                                                        {"float64", torch::kFloat64},
                                                        {"float16", torch::kFloat16},
                                                        {"bfloat16", torch::kBFloat16},
                                                        {"complex64", torch::kComplexFloat},
                                                        {"int8", torch::kInt8},
                                                        {"uint8", torch::kUInt8},
                                                        {"int16", torch::kInt16},
                                                        {"int32", torch::kInt32},
                                                        {"uint32", torch::kInt32},
                                                        {"int64", torch::kInt64},
                                                        {"bool", torch::kBool}};
  return m.at(d.name);
}

namespace {

std::vector<int64_t> shape_vec(const ProblemSpec& p, const TensorSpec& t, const Vars& sizes) {
  return p.shape_of(t, sizes);
}

torch::Tensor draw(const ProblemSpec& p, const TensorSpec& t, const Vars& sizes,
                   torch::Device device) {
  auto shape = shape_vec(p, t, sizes);
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(device);
  const auto& k = t.init.kind;
  const auto& a = t.init.params;
  torch::Tensor x;
  if (k == "normal") {
    x = torch::randn(shape, f32) * a.at("std") + a.at("mean");
  } else if (k == "uniform") {
    x = torch::rand(shape, f32) * (a.at("high") - a.at("low")) + a.at("low");
  } else if (k == "kaiming_uniform") {
    double bound = 1.0 / std::sqrt(static_cast<double>(eval_expr(t.init.fan_in, sizes)));
    x = torch::rand(shape, f32) * (2 * bound) - bound;
  } else if (k == "randint") {
    x = torch::randint(static_cast<int64_t>(a.at("low")), static_cast<int64_t>(a.at("high")), shape,
                       i64);
  } else if (k == "bernoulli") {
    x = torch::rand(shape, f32) < a.at("p");
  } else if (k == "constant") {
    x = torch::full(shape, a.at("value"), t.dtype.is_float ? f32 : i64);
  } else {
    throw std::runtime_error("unknown init " + k);
  }
  if (t.dtype.is_complex && !x.is_complex()) {
    // Real and imaginary parts drawn independently from the same distribution.
    TensorSpec real = t;
    real.dtype = *dtype_from_name("float32");
    x = torch::complex(x, draw(p, real, sizes, device));
  }
  return x.to(torch_dtype(t.dtype));
}

void check_tensor(const ProblemSpec& p, const TensorSpec& t, const torch::Tensor& x,
                  const Vars& sizes, const char* what) {
  auto want = p.shape_of(t, sizes);
  if (!x.defined())
    throw std::runtime_error(p.id + ": " + what + " did not return '" + t.name + "'");
  if (x.sizes().vec() != want || x.scalar_type() != torch_dtype(t.dtype)) {
    std::ostringstream got, exp;
    got << x.sizes() << " " << x.scalar_type();
    exp << torch::IntArrayRef(want) << " " << torch_dtype(t.dtype);
    throw std::runtime_error(p.id + ": " + what + " returned '" + t.name + "' as " + got.str() +
                             ", the spec says " + exp.str());
  }
}

// Draws the values of input `t` into `x` (already of its shape and dtype) from torch's current
// seed. Float and complex tensors are drawn in place, one kernel each; the rest are drawn as
// float32 or int64 and converted. Whether a tensor is fresh or reused, the same seed gives the
// same values: fresh draws and the regenerated copies that verify them go through here.
void fill(const ProblemSpec& p, const TensorSpec& t, const Vars& sizes, torch::Tensor& x) {
  const auto& k = t.init.kind;
  const auto& a = t.init.params;
  if (x.is_floating_point() || x.is_complex()) {
    torch::Tensor v = x.is_complex() ? torch::view_as_real(x) : x;
    if (k == "normal") {
      v.normal_(a.at("mean"), a.at("std"));
      return;
    }
    if (k == "uniform") {
      v.uniform_(a.at("low"), a.at("high"));
      return;
    }
    if (k == "kaiming_uniform") {
      double bound = 1.0 / std::sqrt(static_cast<double>(eval_expr(t.init.fan_in, sizes)));
      v.uniform_(-bound, bound);
      return;
    }
    if (k == "constant" && !x.is_complex()) {
      x.fill_(a.at("value"));
      return;
    }
  }
  x.copy_(draw(p, t, sizes, x.device()));
}

}  // namespace

void refill_inputs(const ProblemSpec& p, const Vars& sizes, uint64_t seed, TensorMap& m) {
  bool custom = false;
  TensorMap drawn;  // what a custom generator sees: the inputs drawn from their distributions
  for (const TensorSpec* t : p.read_tensors()) {
    if (t->init.kind == "custom") {
      custom = true;
      continue;
    }
    torch::manual_seed(derive_seed(seed, t->name));
    torch::Tensor& x = m.at(t->name);
    fill(p, *t, sizes, x);
    drawn[t->name] = x;
  }
  if (!custom) return;
  const ReferenceEntry* e = reference_for(p);
  if (!e || !e->generate)
    throw std::runtime_error(p.id + " has custom inputs but no KERNRL_INPUTS generator");
  torch::manual_seed(derive_seed(seed, "custom"));
  auto scalars = p.scalar_values();
  torch::Device device = m.begin()->second.device();
  RefContext ctx{drawn, sizes, scalars, device};
  TensorMap extra = e->generate(ctx);
  for (const TensorSpec* t : p.read_tensors()) {
    if (t->init.kind != "custom") continue;
    auto it = extra.find(t->name);
    if (it == extra.end())
      throw std::runtime_error(p.id + ": the input generator did not return '" + t->name + "'");
    check_tensor(p, *t, it->second, sizes, "the input generator");
    m.at(t->name).copy_(it->second);
  }
}

TensorMap make_inputs(const ProblemSpec& p, const Vars& sizes, uint64_t seed,
                      torch::Device device) {
  TensorMap m;
  for (const TensorSpec* t : p.read_tensors())
    m[t->name] = torch::empty(p.shape_of(*t, sizes),
                              torch::TensorOptions().dtype(torch_dtype(t->dtype)).device(device));
  refill_inputs(p, sizes, seed, m);
  return m;
}

TensorMap run_reference(const ProblemSpec& p, const TensorMap& inputs, const Vars& sizes) {
  const ReferenceEntry* e = reference_for(p);
  if (!e || !e->run) throw std::runtime_error("no reference is registered for " + p.id);
  auto scalars = p.scalar_values();
  torch::Device device =
      inputs.empty() ? torch::Device(torch::kCPU) : inputs.begin()->second.device();
  RefContext ctx{inputs, sizes, scalars, device};
  TensorMap out;
  {
    torch::NoGradGuard no_grad;
    out = e->run(ctx);
  }
  for (const auto& t : p.outputs) {
    auto it = out.find(t.name);
    check_tensor(p, t, it == out.end() ? torch::Tensor() : it->second, sizes, "the reference");
    it->second = it->second.contiguous();
  }
  return out;
}

TensorMap alloc_outputs(const ProblemSpec& p, const Vars& sizes, torch::Device device) {
  TensorMap m;
  for (const auto& t : p.outputs)
    m[t.name] = torch::empty(p.shape_of(t, sizes),
                             torch::TensorOptions().dtype(torch_dtype(t.dtype)).device(device));
  return m;
}

}  // namespace kernrl
