// A problem spec's arithmetic: its tensors' shapes and sizes, its work (flops, bytes) at a size
// set, and its JSON form. Reading one is problem_yaml.cpp; finding one is problem_catalog.cpp.
#include "core/problem.h"

namespace kernrl {

std::vector<const TensorSpec*> ProblemSpec::read_tensors() const {
  std::vector<const TensorSpec*> r;
  for (const auto& t : inputs) r.push_back(&t);
  for (const auto& t : parameters) r.push_back(&t);
  return r;
}

const TensorSpec* ProblemSpec::find_tensor(const std::string& n) const {
  for (const auto* list : {&inputs, &parameters, &outputs})
    for (const auto& t : *list)
      if (t.name == n) return &t;
  return nullptr;
}

const ScalarSpec* ProblemSpec::find_scalar(const std::string& n) const {
  for (const auto& s : scalars)
    if (s.name == n) return &s;
  return nullptr;
}

std::vector<int64_t> ProblemSpec::shape_of(const TensorSpec& t, const Vars& sizes) const {
  std::vector<int64_t> s;
  for (const auto& e : t.shape) {
    int64_t d = eval_expr(e, sizes);
    if (d < 0) throw ExprError("tensor '" + t.name + "' has a negative dimension " + e);
    s.push_back(d);
  }
  return s;
}

int64_t ProblemSpec::numel_of(const TensorSpec& t, const Vars& sizes) const {
  int64_t n = 1;
  for (int64_t d : shape_of(t, sizes))
    if (__builtin_mul_overflow(n, d, &n)) throw ExprError("tensor '" + t.name + "' is too large");
  return n;
}

int64_t ProblemSpec::flops_at(const Vars& sizes) const {
  return eval_expr(flops, sizes);
}

int64_t ProblemSpec::bytes_at(const Vars& sizes) const {
  if (bytes != "auto") return eval_expr(bytes, sizes);
  int64_t total = 0;
  for (const auto* list : {&inputs, &parameters, &outputs})
    for (const auto& t : *list) {
      int64_t b;
      if (__builtin_mul_overflow(numel_of(t, sizes), int64_t{t.dtype.bytes}, &b) ||
          __builtin_add_overflow(total, b, &total))
        throw ExprError("the problem's bytes overflow 64 bits");
    }
  return total;
}

std::map<std::string, double> ProblemSpec::scalar_values() const {
  std::map<std::string, double> m;
  for (const auto& s : scalars) m[s.name] = s.value;
  return m;
}

nlohmann::json ProblemSpec::to_json() const {
  using nlohmann::json;
  auto tensors = [&](const std::vector<TensorSpec>& list, bool out) {
    json a = json::array();
    for (const auto& t : list) {
      json j = {{"name", t.name},
                {"dtype", t.dtype.name},
                {"shape", t.shape},
                {"bench_shape", shape_of(t, bench)}};
      if (out) {
        j["compare"] = t.compare;
        if (t.compare == "allclose")
          j["tolerance"] = {{"atol", t.tolerance.atol},
                            {"rtol", t.tolerance.rtol},
                            {"rel_l2", t.tolerance.rel_l2}};
        if (!t.count.empty()) j["count"] = t.count;
      } else {
        j["init"] = t.init.kind;
      }
      a.push_back(j);
    }
    return a;
  };
  json sc = json::object();
  for (const auto& s : scalars) sc[s.name] = {{"dtype", s.dtype}, {"value", s.value}};
  json jb = json::object();
  for (const auto& n : size_names) jb[n] = bench.at(n);
  json jt = json::array();
  for (const auto& t : tests) {
    json o = json::object();
    for (const auto& n : size_names) o[n] = t.at(n);
    jt.push_back(o);
  }
  return {{"id", id},
          {"level", level},
          {"name", name},
          {"description", description},
          {"sizes", {{"bench", jb}, {"test", jt}}},
          {"inputs", tensors(inputs, false)},
          {"parameters", tensors(parameters, false)},
          {"outputs", tensors(outputs, true)},
          {"scalars", sc},
          {"compare", compare},
          {"tolerance",
           {{"atol", tolerance.atol}, {"rtol", tolerance.rtol}, {"rel_l2", tolerance.rel_l2}}},
          {"flops", flops},
          {"bytes", bytes},
          {"bench_flops", flops_at(bench)},
          {"bench_bytes", bytes_at(bench)},
          {"torch", torch}};
}

}  // namespace kernrl
