#include "references/reference.h"

#include <stdexcept>

namespace kernrl {

std::map<std::string, ReferenceEntry>& reference_registry() {
  static std::map<std::string, ReferenceEntry> registry;  // function-local: safe static init order
  return registry;
}

const ReferenceEntry* find_reference(const std::string& id) {
  auto& r = reference_registry();
  auto it = r.find(id);
  return it == r.end() ? nullptr : &it->second;
}

ReferenceRegistrar::ReferenceRegistrar(const char* id, ReferenceFn fn) {
  reference_registry()[id].run = std::move(fn);
}

ReferenceRegistrar::ReferenceRegistrar(const char* id, ReferenceFn fused, ReferenceFn portable) {
  ReferenceEntry& e = reference_registry()[id];
  e.run = kFusedOpsNative ? fused : portable;
  e.fused = std::move(fused);
  e.portable = std::move(portable);
}

ReferenceRegistrar::ReferenceRegistrar(const char* id, InputGenFn gen, int) {
  reference_registry()[id].generate = std::move(gen);
}

const torch::Tensor& RefContext::t(const std::string& name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw std::out_of_range("reference asked for unknown tensor '" + name + "'");
  return it->second;
}

int64_t RefContext::size(const std::string& name) const {
  auto it = sizes.find(name);
  if (it == sizes.end()) throw std::out_of_range("reference asked for unknown size '" + name + "'");
  return it->second;
}

double RefContext::scalar(const std::string& name) const {
  auto it = scalars.find(name);
  if (it == scalars.end()) throw std::out_of_range("reference asked for unknown scalar '" + name + "'");
  return it->second;
}

}  // namespace kernrl
