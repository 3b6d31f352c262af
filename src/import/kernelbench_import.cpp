#include "import/kernelbench_import.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>

#include "core/expr.h"
#include "import/converter.h"
#include "import/py_side.h"
#include "protocol/launch_plan.h"

namespace kernrl {
namespace kbimport {

// ------------------------------------------------------------------ values
Val make_int(int64_t v) {
  Val r;
  r.kind = Val::Int;
  r.k = v;
  return r;
}
Val make_int_expr(const std::string& e) {
  Val r;
  r.kind = Val::Int;
  r.e = e;
  return r;
}
Val make_float(double v, const std::string& text) {
  Val r;
  r.kind = Val::Float;
  r.f = v;
  r.text = text;
  return r;
}
Val make_bool(bool b) {
  Val r;
  r.kind = Val::Bool;
  r.k = b ? 1 : 0;
  return r;
}
Val make_unknown(const std::string& why) {
  Val r;
  r.kind = Val::Unknown;
  r.why = why;
  return r;
}
std::string int_text(const Val& v) {
  if (v.k) return std::to_string(*v.k);
  return v.e;
}

std::string c_type_of(const std::string& dtype) {
  static const std::map<std::string, std::string> m = {
      {"float32", "float"},          {"float64", "double"},   {"float16", "__half"},
      {"bfloat16", "__nv_bfloat16"}, {"complex64", "float2"}, {"int8", "int8_t"},
      {"uint8", "uint8_t"},          {"int16", "int16_t"},    {"int32", "int"},
      {"uint32", "uint32_t"},        {"int64", "int64_t"},    {"bool", "bool"}};
  auto it = m.find(dtype);
  return it == m.end() ? "" : it->second;
}
std::string dtype_of_c(const std::string& c) {
  static const std::map<std::string, std::string> m = {{"float", "float32"},
                                                       {"double", "float64"},
                                                       {"__half", "float16"},
                                                       {"half", "float16"},
                                                       {"Half", "float16"},
                                                       {"at::Half", "float16"},
                                                       {"c10::Half", "float16"},
                                                       {"__nv_bfloat16", "bfloat16"},
                                                       {"BFloat16", "bfloat16"},
                                                       {"float2", "complex64"},
                                                       {"complex<float>", "complex64"},
                                                       {"int8_t", "int8"},
                                                       {"signed char", "int8"},
                                                       {"uint8_t", "uint8"},
                                                       {"unsigned char", "uint8"},
                                                       {"int16_t", "int16"},
                                                       {"short", "int16"},
                                                       {"int", "int32"},
                                                       {"int32_t", "int32"},
                                                       {"uint32_t", "uint32"},
                                                       {"unsigned int", "uint32"},
                                                       {"unsigned", "uint32"},
                                                       {"int64_t", "int64"},
                                                       {"long", "int64"},
                                                       {"long long", "int64"},
                                                       {"long int", "int64"},
                                                       {"bool", "bool"}};
  auto it = m.find(c);
  return it == m.end() ? "" : it->second;
}
std::string dtype_of_torch(const std::string& name) {
  std::string s = name;
  size_t p = s.rfind("::");
  if (p != std::string::npos) s = s.substr(p + 2);
  p = s.rfind('.');
  if (p != std::string::npos) s = s.substr(p + 1);
  static const std::map<std::string, std::string> m = {{"kFloat", "float32"},
                                                       {"kFloat32", "float32"},
                                                       {"Float", "float32"},
                                                       {"float32", "float32"},
                                                       {"float", "float32"},
                                                       {"kDouble", "float64"},
                                                       {"kFloat64", "float64"},
                                                       {"Double", "float64"},
                                                       {"float64", "float64"},
                                                       {"double", "float64"},
                                                       {"kHalf", "float16"},
                                                       {"kFloat16", "float16"},
                                                       {"Half", "float16"},
                                                       {"float16", "float16"},
                                                       {"half", "float16"},
                                                       {"kBFloat16", "bfloat16"},
                                                       {"BFloat16", "bfloat16"},
                                                       {"bfloat16", "bfloat16"},
                                                       {"kInt", "int32"},
                                                       {"kInt32", "int32"},
                                                       {"Int", "int32"},
                                                       {"int32", "int32"},
                                                       {"int", "int32"},
                                                       {"kLong", "int64"},
                                                       {"kInt64", "int64"},
                                                       {"Long", "int64"},
                                                       {"int64", "int64"},
                                                       {"long", "int64"},
                                                       {"kByte", "uint8"},
                                                       {"kUInt8", "uint8"},
                                                       {"Byte", "uint8"},
                                                       {"uint8", "uint8"},
                                                       {"kChar", "int8"},
                                                       {"kInt8", "int8"},
                                                       {"Char", "int8"},
                                                       {"int8", "int8"},
                                                       {"kShort", "int16"},
                                                       {"kInt16", "int16"},
                                                       {"Short", "int16"},
                                                       {"int16", "int16"},
                                                       {"kBool", "bool"},
                                                       {"Bool", "bool"},
                                                       {"bool", "bool"},
                                                       {"kComplexFloat", "complex64"},
                                                       {"ComplexFloat", "complex64"},
                                                       {"complex64", "complex64"},
                                                       {"kUInt32", "uint32"},
                                                       {"uint32", "uint32"}};
  auto it = m.find(s);
  return it == m.end() ? "" : it->second;
}
int dtype_bytes(const std::string& dtype) {
  auto d = dtype_from_name(dtype);
  return d ? d->bytes : 4;
}
std::string float_literal(double v) {
  char buf[64];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}
std::optional<std::string> real_text(const Val& v) {
  switch (v.kind) {
    case Val::Float:
      if (!v.e.empty()) return v.e;
      if (!v.scalar.empty()) return v.scalar;
      if (v.f) return float_literal(*v.f);
      return std::nullopt;
    case Val::Int:
    case Val::Bool:
      if (v.k) return float_literal(static_cast<double>(*v.k));
      if (v.kind == Val::Int && !v.e.empty()) return "1.0 * (" + v.e + ")";
      return std::nullopt;
    case Val::Ratio:
      if (v.items.size() == 2 && v.items[0].kind == Val::Int && v.items[1].kind == Val::Int) {
        auto atom = [](const std::string& t) {
          bool simple = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
          });
          return simple ? t : "(" + t + ")";
        };
        std::string num = v.items[0].k ? float_literal(static_cast<double>(*v.items[0].k))
                                       : "1.0 * " + atom(int_text(v.items[0]));
        return num + " / " + atom(int_text(v.items[1]));
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

bool unsigned_int_type(const std::string& c) {
  return int_type(c) && (c.rfind("unsigned", 0) == 0 || c == "size_t" || c.rfind("uint", 0) == 0);
}

bool int_type(const std::string& c) {
  static const std::set<std::string> t = {"int",
                                          "unsigned",
                                          "unsigned int",
                                          "signed",
                                          "signed int",
                                          "long",
                                          "long int",
                                          "long long",
                                          "long long int",
                                          "unsigned long",
                                          "unsigned long long",
                                          "unsigned long int",
                                          "short",
                                          "unsigned short",
                                          "size_t",
                                          "ssize_t",
                                          "ptrdiff_t",
                                          "int8_t",
                                          "uint8_t",
                                          "int16_t",
                                          "uint16_t",
                                          "int32_t",
                                          "uint32_t",
                                          "int64_t",
                                          "uint64_t",
                                          "index_t",
                                          "uint",
                                          "char",
                                          "unsigned char",
                                          "signed char",
                                          "SymInt",
                                          "c10::SymInt",
                                          "long unsigned int",
                                          "intptr_t",
                                          "uintptr_t"};
  return t.count(c) > 0;
}
bool float_type(const std::string& c) {
  return c == "float" || c == "double" || c == "long double";
}
int c_type_bytes(const std::string& c) {
  static const std::map<std::string, int> m = {{"int", 4},
                                               {"unsigned", 4},
                                               {"unsigned int", 4},
                                               {"signed", 4},
                                               {"signed int", 4},
                                               {"int32_t", 4},
                                               {"uint32_t", 4},
                                               {"uint", 4},
                                               {"float", 4},
                                               {"long", 8},
                                               {"long int", 8},
                                               {"long long", 8},
                                               {"long long int", 8},
                                               {"unsigned long", 8},
                                               {"unsigned long long", 8},
                                               {"unsigned long int", 8},
                                               {"long unsigned int", 8},
                                               {"size_t", 8},
                                               {"ssize_t", 8},
                                               {"ptrdiff_t", 8},
                                               {"int64_t", 8},
                                               {"uint64_t", 8},
                                               {"intptr_t", 8},
                                               {"uintptr_t", 8},
                                               {"double", 8},
                                               {"short", 2},
                                               {"unsigned short", 2},
                                               {"int16_t", 2},
                                               {"uint16_t", 2},
                                               {"char", 1},
                                               {"unsigned char", 1},
                                               {"signed char", 1},
                                               {"int8_t", 1},
                                               {"uint8_t", 1},
                                               {"bool", 1},
                                               {"__half", 2},
                                               {"half", 2},
                                               {"__nv_bfloat16", 2},
                                               {"float2", 8},
                                               {"float4", 16},
                                               {"int2", 8},
                                               {"int4", 16},
                                               {"double2", 16},
                                               {"index_t", 8}};
  auto it = m.find(c);
  return it == m.end() ? 0 : it->second;
}

Val int_binop(const std::string& op, const Val& a, const Val& b, const std::string& what) {
  if (a.k && b.k) {
    int64_t x = *a.k, y = *b.k;
    if ((op == "/" || op == "%") && y == 0)
      throw ImportError("host_logic", "`" + what + "` divides by zero");
    // kernrl computes in 64 bits; past them C++ is undefined and Python's integers grow.
    int64_t r = 0;
    const bool overflow =
        (op == "+" && __builtin_add_overflow(x, y, &r)) ||
        (op == "-" && __builtin_sub_overflow(x, y, &r)) ||
        (op == "*" && __builtin_mul_overflow(x, y, &r)) ||
        ((op == "/" || op == "%") && x == std::numeric_limits<int64_t>::min() && y == -1);
    if (overflow) throw ImportError("host_logic", "`" + what + "` overflows a 64-bit integer");
    if (op == "+" || op == "-" || op == "*") return make_int(r);
    if (op == "/") return make_int(x / y);
    if (op == "%") return make_int(x % y);
  }
  auto atomic = [](const std::string& t) {
    return std::all_of(t.begin(), t.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
  };
  auto wrap = [&](const Val& v) {
    std::string t = int_text(v);
    return atomic(t) ? t : "(" + t + ")";
  };
  if (op == "*" && a.k && *a.k == 1) return b;
  if ((op == "*" || op == "/") && b.k && *b.k == 1) return a;
  if ((op == "+" || op == "-") && b.k && *b.k == 0) return a;
  if (op == "+") return make_int_expr(int_text(a) + " + " + int_text(b));
  if (op == "-") return make_int_expr(int_text(a) + " - " + wrap(b));
  return make_int_expr(wrap(a) + " " + op + " " + wrap(b));
}

// ------------------------------------------------------------------ converter state
int Converter::add_tensor(TensorInfo t) {
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

Val Converter::alloc(const std::vector<Val>& shape, const std::string& dtype,
                     const std::string& fill, const std::string& origin, const std::string& var) {
  if (dtype.empty() || !dtype_from_name(dtype))
    throw ImportError("unsupported_cuda",
                      "`" + origin + "` allocates a tensor of a dtype kernrl does not have");
  TensorInfo t;
  t.role = "alloc";
  t.name = var;
  t.dtype = dtype;
  t.shape = shape;
  t.origin = origin;
  Val v;
  v.kind = Val::Tensor;
  v.tensor = add_tensor(t);
  if (!fill.empty()) add_fill(v.tensor, fill);
  return v;
}

namespace {
std::string numel_text(const std::vector<Val>& shape) {
  int64_t k = 1;
  std::vector<std::string> terms;
  for (const Val& d : shape) {
    if (d.k) {
      k *= *d.k;
      continue;
    }
    std::string t = int_text(d);
    bool atomic = std::all_of(t.begin(), t.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    terms.push_back(atomic ? t : "(" + t + ")");
  }
  std::string s;
  if (k != 1 || terms.empty()) s = std::to_string(k);
  for (const auto& t : terms) s += (s.empty() ? "" : " * ") + t;
  return s;
}
std::string sanitize(const std::string& dtype) {
  std::string s;
  for (char c : dtype) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}
}  // namespace

void Converter::add_fill(int tensor, const std::string& value) {
  TensorInfo& t = tensors[static_cast<size_t>(tensor)];
  LaunchOut L;
  L.fill = true;
  L.fills = tensor;
  L.kernel = "kernrl_import_fill_" + sanitize(t.dtype);
  std::string n = numel_text(t.shape);
  bool constant =
      std::all_of(t.shape.begin(), t.shape.end(), [](const Val& d) { return d.k.has_value(); });
  L.grid = {constant ? std::to_string(std::max(1LL, (std::stoll(n) + 255) / 256))
                     : "cdiv(" + n + ", 256)"};
  L.block = {"256"};
  LaunchArgOut p;
  p.tensor = tensor;
  LaunchArgOut count;
  count.text = n;
  LaunchArgOut v;
  double d = std::strtod(value.c_str(), nullptr);
  v.text = float_literal(d);
  L.args = {p, count, v};
  if (!repeat_var_.empty()) {
    L.repeat_count = repeat_count_;
    L.repeat_var = repeat_var_;
  }
  t.fill = value;
  t.fill_launch = static_cast<int>(launches.size());
  fill_types.insert(t.dtype);
  ++writes[storage_of(tensor)];  // a view copied before no longer shows it
  launches.push_back(L);
}

Vars Converter::with_values(Vars vars) const {
  for (const auto& [name, expr] : named_values) {
    try {
      vars[name] = eval_expr(expr, vars);
    } catch (const ExprError&) {  // it depends on num_sms where that is not bound
    }
  }
  return vars;
}

Val Converter::named_value(const Val& v, const std::string& var) {
  // An integer, or a condition that differs between size sets (its 0-or-1 expression).
  if (!name_values || (v.kind != Val::Int && v.kind != Val::Bool) || v.k ||
      v.e.size() <= kValueChars)
    return v;
  for (const auto& [name, expr] : named_values)
    if (expr == v.e) {
      Val r = v;
      r.e = name;
      return r;
    }
  try {
    for (const auto& n : expr_names(v.e)) {
      bool value = std::any_of(named_values.begin(), named_values.end(),
                               [&](const auto& nv) { return nv.first == n; });
      const ScalarSpec* s = P.find_scalar(n);
      if (!value && n != "num_sms" && !P.bench.count(n) && !(s && !s->is_float())) return v;
    }
    for (const Vars& s : size_sets) eval_expr(v.e, with_values(plan_vars(P, s, 132)));
  } catch (const ExprError&) {
    return v;
  }
  std::string base;
  for (char c : var) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
  std::string name = base;
  for (int k = 2; reserved.count(name) || is_builtin_name(name) || is_argument_word(name); ++k)
    name = base + "_" + std::to_string(k);
  reserved.insert(name);
  named_values.emplace_back(name, v.e);
  Val r = v;
  r.e = name;
  return r;
}

std::optional<std::vector<int64_t>> Converter::per_set(const Val& v) const {
  std::vector<int64_t> out;
  if (v.kind != Val::Int) return std::nullopt;
  for (const Vars& s : size_sets) {
    if (v.k) {
      out.push_back(*v.k);
      continue;
    }
    try {
      out.push_back(eval_expr(v.e, with_values(s)));
    } catch (const ExprError&) {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<int64_t> Converter::one_value(const Val& v) const {
  auto p = per_set(v);
  if (!p || p->empty()) return std::nullopt;
  for (int64_t x : *p)
    if (x != p->front()) return std::nullopt;
  return p->front();
}

std::string Converter::size_expr(const std::string& entry) const {
  return entry;
}

namespace {

std::string fill_kernel(const std::string& dtype) {
  std::string c = c_type_of(dtype);
  std::string name = "kernrl_import_fill_" + sanitize(dtype);
  std::string store = dtype == "float16"    ? "__float2half((float)v)"
                      : dtype == "bfloat16" ? "__float2bfloat16((float)v)"
                                            : "(" + c + ")v";
  if (dtype == "complex64") store = "make_float2((float)v, 0.0f)";
  return "extern \"C\" __global__ void " + name + "(" + c +
         "* p, long long n, double v) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) p[i] = " +
         store + ";\n}\n";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

}  // namespace

std::string Converter::run(const std::string& source_name) {
  size_sets.push_back(P.bench);
  for (const auto& t : P.tests) size_sets.push_back(t);
  reserved.insert("num_sms");
  for (const auto& n : P.size_names) reserved.insert(n);
  for (const auto* l : {&P.inputs, &P.parameters, &P.outputs})
    for (const auto& t : *l) reserved.insert(t.name);
  for (const auto& s : P.scalars) reserved.insert(s.name);

  py::PySide py(*this, python_);
  Val ret = py.run().ret;
  // A view returned (a narrow, a transpose...) is copied into the output: its values are what
  // forward returns.
  if (ret.kind == Val::Tensor && ret.elem == "lazy")
    ret = materialized(ret, "the returned view", "torch_op_in_forward", true);
  for (Val& v : ret.items)
    if (v.kind == Val::Tensor && v.elem == "lazy")
      v = materialized(v, "the returned view", "torch_op_in_forward", true);
  // A transposed tensor (y.t()) returned as an output has no memory of its own in that layout.
  for (const Val& v : ret.kind == Val::List ? ret.items : std::vector<Val>{ret})
    if (v.kind == Val::Tensor && v.elem == "transposed")
      fail("torch_op_in_forward", "forward returns a transposed tensor (`.t()`, `.T`)");
  // Views (x.view(...) in forward) are their buffer's tensor in the launch block.
  auto root = [&](int t) {
    while (t >= 0 && tensors[static_cast<size_t>(t)].base >= 0)
      t = tensors[static_cast<size_t>(t)].base;
    return t;
  };
  for (LaunchOut& L : launches) {
    for (auto& a : L.args) {
      // An offset counts elements of the view's dtype: the buffer's, for a view of the same type.
      if (!a.offset.empty() && tensors[static_cast<size_t>(root(a.tensor))].dtype !=
                                   tensors[static_cast<size_t>(a.tensor)].dtype)
        fail("unsupported_cuda", "a kernel is given a pointer into a view of another dtype");
      a.tensor = root(a.tensor);
      for (int& t : a.tensors) t = root(t);
    }
    L.out = root(L.out);
    L.fills = root(L.fills);
  }
  if (ret.kind == Val::Tensor) ret.tensor = root(ret.tensor);
  for (Val& v : ret.items)
    if (v.kind == Val::Tensor) v.tensor = root(v.tensor);

  // Outputs: what forward returns, in the problem's order.
  std::vector<int> outs;
  if (ret.kind == Val::Tensor) {
    outs.push_back(ret.tensor);
  } else if (ret.kind == Val::List) {
    for (const Val& v : ret.items) {
      if (v.kind != Val::Tensor)
        fail("mismatch", "forward returns a value that is not a tensor kernrl follows");
      outs.push_back(v.tensor);
    }
  } else {
    fail("mismatch", "forward returns no tensor that kernrl can follow to the CUDA code");
  }
  std::string out_names;
  for (const auto& o : P.outputs) out_names += (out_names.empty() ? "" : ", ") + o.name;
  if (outs.size() != P.outputs.size())
    fail("mismatch", "forward returns " + std::to_string(outs.size()) + " tensor(s); " + P.id +
                         " has " + std::to_string(P.outputs.size()) + " output(s) (" + out_names +
                         ")");
  std::set<int> seen;
  for (size_t i = 0; i < outs.size(); ++i) {
    const TensorSpec& spec = P.outputs[i];
    // An input the kernels wrote into and forward returns (an in-place kernel), on a suite's
    // problem (where torch steps are allowed): the output starts as a copy of it, made first, and
    // the launches use the copy wherever they used the input, so that they compute what they
    // computed and the input stays unchanged. On kernrl's own problems the kernels do all of the
    // work: refused below.
    if (!P.torchscript.empty() && tensors[static_cast<size_t>(outs[i])].role == "input" &&
        writes.count(outs[i]) && std::count(outs.begin(), outs.end(), outs[i]) == 1) {
      const int input = outs[i];
      TensorInfo copy = tensors[static_cast<size_t>(input)];
      copy.role = "alloc";
      copy.origin = "a copy of the input `" + copy.name + "`";
      copy.base = -1;
      copy.fill.clear();
      copy.fill_launch = -1;
      const int made = add_tensor(copy);
      for (LaunchOut& L : launches) {
        for (auto& a : L.args) {
          if (a.tensor == input) a.tensor = made;
          for (int& t : a.tensors)
            if (t == input) t = made;
        }
        if (L.out == input) L.out = made;
        if (L.fills == input) L.fills = made;
      }
      for (TensorInfo& t : tensors)
        if (t.fill_launch >= 0) ++t.fill_launch;
      LaunchOut step;
      step.torch = "reshape";
      step.out = made;
      LaunchArgOut from, dims;
      from.tensor = input;
      for (const Val& d : copy.shape) dims.text += (dims.text.empty() ? "" : ", ") + int_text(d);
      dims.text = "[" + dims.text + "]";
      step.args = {from, dims};
      launches.insert(launches.begin(), step);
      notes.push_back("forward returns the input `" + copy.name +
                      "` after its kernels wrote into it: kernrl's inputs stay unchanged, so the "
                      "output `" +
                      spec.name +
                      "` starts as a copy of it (a reshape step, whose time counts in this "
                      "file's time) and the kernels work on that copy");
      outs[i] = made;
    }
    TensorInfo& t = tensors[static_cast<size_t>(outs[i])];
    if (t.role == "input" || t.role == "parameter")
      fail("in_place",
           "forward returns the " + t.role + " `" + t.name + "` as the output `" + spec.name +
               "`: the result is written in place, and kernrl's inputs must stay unchanged" +
               (t.role == "input" && writes.count(outs[i])
                    ? std::string(" (on a suite built from KernelBench the kernels would work on "
                                  "a copy; on kernrl's own problems the kernels do all of the "
                                  "work, copies included)")
                    : std::string()));
    if (!seen.insert(outs[i]).second) fail("mismatch", "forward returns the same tensor twice");
    if (t.dtype != spec.dtype.name)
      fail("mismatch", "the output `" + spec.name + "` is " + spec.dtype.name +
                           ", but the wrapper allocates it as " + t.dtype + " (`" + t.origin +
                           "`)");
    Val n = make_int(1);
    for (const Val& d : t.shape) n = int_binop("*", n, d, t.origin);
    auto have = per_set(n);
    if (!have)
      fail("host_logic",
           "the size of the output `" + spec.name + "` depends on the GPU (`" + t.origin + "`)");
    for (size_t s = 0; s < size_sets.size(); ++s) {
      int64_t want = P.numel_of(spec, size_sets[s]);
      if ((*have)[s] != want) {
        std::string at;
        for (const auto& [k, v] : size_sets[s])
          at += (at.empty() ? "" : " ") + k + "=" + std::to_string(v);
        fail("mismatch", "the wrapper's output (`" + t.origin + "`) has " +
                             std::to_string((*have)[s]) + " elements at " + at +
                             "; the problem's `" + spec.name + "` has " + std::to_string(want));
      }
    }
    t.role = "output";
    t.name = spec.name;
  }

  // Scratch: every other allocation a launch uses.
  std::set<int> used;
  // Tensors a torch step reads or writes, or a kernel gets an accessor of: their scratch has a
  // shape.
  std::set<int> shaped;
  for (const LaunchOut& L : launches) {
    for (const auto& a : L.args)
      if (a.accessor_bits) shaped.insert(a.tensor);
    for (size_t a = 0; a < L.args.size(); ++a)
      if (L.args[a].tensor >= 0 && !(L.fill && a == 0)) used.insert(L.args[a].tensor);
    if (!L.torch.empty()) {
      used.insert(L.out);
      shaped.insert(L.out);
      for (const auto& a : L.args) {
        if (a.tensor >= 0) shaped.insert(a.tensor);
        for (int t : a.tensors) used.insert(t), shaped.insert(t);
      }
    }
  }
  std::vector<bool> drop(launches.size(), false);
  std::vector<std::pair<std::string, int>> scratch;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TensorInfo& t = tensors[i];
    if (t.role != "alloc") continue;
    if (!used.count(static_cast<int>(i))) {
      for (size_t l = 0; l < launches.size(); ++l)
        if (launches[l].fill && launches[l].fills == static_cast<int>(i)) drop[l] = true;
      continue;
    }
    std::string base;
    for (char c : t.name) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "buf" + base;
    std::string name = base;
    for (int k = 2; reserved.count(name); ++k) name = base + "_" + std::to_string(k);
    reserved.insert(name);
    t.name = name;
    t.role = "scratch";
    scratch.push_back({name, static_cast<int>(i)});
    // kernrl zeroes scratch buffers before each evaluation: a zero fill that comes before any
    // other use of the buffer is that.
    for (size_t l = 0; l < launches.size(); ++l) {
      // (This fill's own value: a buffer filled with ones and zeroed later keeps its ones.)
      if (!launches[l].fill || launches[l].fills != static_cast<int>(i) ||
          launches[l].args.size() < 3 ||
          std::strtod(launches[l].args[2].text.c_str(), nullptr) != 0)
        continue;
      bool used_before = false;
      for (size_t k = 0; k < l && !used_before; ++k) {
        used_before = launches[k].out == static_cast<int>(i) ||
                      (launches[k].fill && launches[k].fills == static_cast<int>(i));
        for (const auto& a : launches[k].args)
          used_before = used_before || a.tensor == static_cast<int>(i);
      }
      if (!used_before) drop[l] = true;
    }
  }
  // An accessor gives the kernel its buffer's shape in the launch block: the shape the wrapper's
  // tensor had, dimension by dimension, at every size set.
  bool accessors = false;
  for (size_t l = 0; l < launches.size(); ++l)
    for (const auto& a : launches[l].args) {
      if (!a.accessor_bits || drop[l]) continue;
      accessors = true;
      const TensorInfo& t = tensors[static_cast<size_t>(a.tensor)];
      std::vector<Val> buffer = t.shape;
      const TensorSpec* spec = t.role == "scratch" ? nullptr : P.find_tensor(t.name);
      const std::string what =
          "the accessor of `" + t.name + "` given to `" + launches[l].kernel + "`";
      const size_t rank = spec ? spec->shape.size() : buffer.size();
      if (rank != a.accessor_shape.size())
        fail("mismatch", what + " has " + std::to_string(a.accessor_shape.size()) +
                             " dimensions; kernrl's buffer has " + std::to_string(rank));
      for (size_t d = 0; d < rank; ++d) {
        auto want = per_set(a.accessor_shape[d]);
        auto have =
            spec ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{}) : per_set(buffer[d]);
        if (!want || !have)
          fail("host_logic", what + ": its size " + std::to_string(d) + " depends on the GPU");
        for (size_t k = 0; k < size_sets.size(); ++k) {
          int64_t buf = spec ? P.shape_of(*spec, size_sets[k])[d] : (*have)[k];
          if ((*want)[k] != buf)
            fail("mismatch", what + " has size " + std::to_string((*want)[k]) + " in dimension " +
                                 std::to_string(d) + " where kernrl's buffer `" + t.name +
                                 "` has " + std::to_string(buf) +
                                 " (a view kernrl would give the buffer's shape)");
        }
      }
    }
  size_t kernels = 0;
  std::set<std::string> fills_kept;
  for (size_t l = 0; l < launches.size(); ++l) {
    if (drop[l]) continue;
    if (launches[l].fill)
      fills_kept.insert(tensors[static_cast<size_t>(launches[l].fills)].dtype);
    else if (launches[l].torch.empty())
      ++kernels;
  }
  if (kernels == 0) fail("mismatch", "forward launches no CUDA kernel");
  for (size_t l = 0; l < launches.size(); ++l)
    if (!drop[l] && launches[l].fill) {
      const TensorInfo& t = tensors[static_cast<size_t>(launches[l].fills)];
      notes.push_back("`" + t.origin + "` fills `" + t.name +
                      "`: a fill kernel runs first, as kernrl poisons outputs");
    }

  // The device code of the modules forward uses.
  std::string code;
  std::vector<std::string> used_exts, host_fns = py.host_calls;
  const ExtModule* first_used = nullptr;
  for (const ExtModule& m : exts) {
    if (!m.used) continue;
    if (!first_used) first_used = &m;
    if (m.cuda_flag_macros != first_used->cuda_flag_macros)
      fail("unsupported_cuda", "load_inline modules " + used_exts[0] + " and " + m.var +
                                   " compile their CUDA sources with different -D flags; "
                                   "kernrl writes them into one file");
    used_exts.push_back(m.var);
    for (const auto& s : m.sources)
      if (s.cuda) code += device_code(m, s) + "\n";
  }

  // The file.
  std::ostringstream o;
  std::string name = source_name;
  for (char& c : name)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  std::sort(host_fns.begin(), host_fns.end());
  host_fns.erase(std::unique(host_fns.begin(), host_fns.end()), host_fns.end());
  o << "// Converted by kernrl import-kernelbench" << (name.empty() ? "" : " from " + name) << ".\n"
    << "// The CUDA source of load_inline module " << join(used_exts)
    << " without its host wrapper (" << join(host_fns)
    << ");\n// the wrapper's launches are the launch block.\n";
  for (const auto& n : notes) o << "// Note: " << n << "\n";
  o << "/* kernrl\nproblem: " << P.id << "\n";
  const auto block_begin = o.tellp();
  o << "launches:\n";
  for (size_t l = 0; l < launches.size(); ++l) {
    if (drop[l]) continue;
    const LaunchOut& L = launches[l];
    std::vector<std::string> args;
    for (const auto& a : L.args) {
      std::vector<std::string> names;
      for (int t : a.tensors) names.push_back(tensors[static_cast<size_t>(t)].name);
      if (a.accessor_bits) {
        args.push_back("accessor" + std::to_string(a.accessor_bits) + "(" +
                       tensors[static_cast<size_t>(a.tensor)].name + ", " +
                       std::to_string(a.accessor_shape.size()) + ")");
        continue;
      }
      std::string text = a.tensor >= 0 ? tensors[static_cast<size_t>(a.tensor)].name +
                                             (a.offset.empty() ? "" : " + " + a.offset)
                         : !names.empty() ? "[" + join(names) + "]"
                                          : a.text;
      // A struct's fields: `struct(TYPE VALUE, ...)`, one argument (docs/kernel-format.md).
      if (!a.field.empty()) {
        text = a.field + " " + text;
        if (a.struct_first)
          args.push_back("struct(" + text);
        else
          args.back() += ", " + text;
        continue;
      }
      args.push_back(text);
    }
    for (size_t k = 0, f = 0; k < L.args.size(); ++k) {
      if (L.args[k].field.empty()) {
        ++f;
        continue;
      }
      if (k + 1 == L.args.size() || L.args[k + 1].field.empty() || L.args[k + 1].struct_first)
        args[f++] += ")";
    }
    if (!L.torch.empty()) {
      o << "  - torch: " << L.torch << "\n    args: [" << join(args)
        << "]\n    out: " << tensors[static_cast<size_t>(L.out)].name << "\n";
      if (L.result != 0) o << "    result: " << L.result << "\n";
    } else {
      o << "  - kernel: " << L.kernel << "\n";
      o << "    grid: [" << join(L.grid) << "]\n";
      o << "    block: [" << join(L.block) << "]\n";
      if (L.shared != "0") o << "    shared_bytes: " << L.shared << "\n";
      o << "    args: [" << join(args) << "]\n";
    }
    if (!L.repeat_var.empty())
      o << "    repeat: {count: " << L.repeat_count << ", var: " << L.repeat_var << "}\n";
    else if (!L.repeat_count.empty() && L.repeat_count != "1")
      o << "    repeat: {count: " << L.repeat_count << "}\n";
  }
  if (!scratch.empty()) {
    o << "scratch:\n";
    for (const auto& [sname, idx] : scratch) {
      const TensorInfo& t = tensors[static_cast<size_t>(idx)];
      if (shaped.count(idx)) {
        std::vector<std::string> dims;
        for (const Val& d : t.shape) dims.push_back(int_text(d));
        o << "  " << sname << ": {dtype: " << t.dtype << ", shape: [" << join(dims) << "]}\n";
        continue;
      }
      o << "  " << sname << ": {dtype: " << t.dtype << ", count: " << numel_text(t.shape) << "}\n";
    }
  }
  // The values the launch block uses (through other values too), before its launches.
  if (!named_values.empty()) {
    std::string text = o.str().substr(static_cast<size_t>(block_begin));
    std::set<std::string> used_names;
    auto note_names = [&](const std::string& t) {
      for (size_t i = 0; i < t.size();) {
        if (!std::isalpha(static_cast<unsigned char>(t[i])) && t[i] != '_') {
          ++i;
          continue;
        }
        size_t j = i;
        while (j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_')) ++j;
        used_names.insert(t.substr(i, j - i));
        i = j;
      }
    };
    note_names(text);
    std::vector<bool> keep(named_values.size(), false);
    for (size_t k = named_values.size(); k-- > 0;)
      if (used_names.count(named_values[k].first)) {
        keep[k] = true;
        note_names(named_values[k].second);
      }
    std::string vs;
    for (size_t k = 0; k < named_values.size(); ++k)
      if (keep[k]) vs += "  " + named_values[k].first + ": " + named_values[k].second + "\n";
    if (!vs.empty()) {
      std::string head = o.str().substr(0, static_cast<size_t>(block_begin));
      o.str("");
      o.clear();
      o << head << "values:\n" << vs << text;
    }
  }
  o << "*/\n";
  // The -D flags of the CUDA sources' compile (of every module used: the same).
  if (first_used)
    for (const auto& [k, v] : first_used->cuda_flag_macros)
      o << "#define " << k << " " << v << "\n";
  if (fills_kept.count("float16")) o << "#include <cuda_fp16.h>\n";
  if (fills_kept.count("bfloat16")) o << "#include <cuda_bf16.h>\n";
  // PyTorch's packed accessors, which the kernels take (docs/import-kernelbench.md).
  if (accessors || code.find("TensorAccessor") != std::string::npos)
    o << "#include <kernrl/tensor_accessor.h>\n";
  o << "\n" << code;
  if (!fills_kept.empty()) {
    o << "\n// Added by kernrl import-kernelbench: fills buffers the wrapper created filled.\n";
    for (const auto& d : fills_kept) o << fill_kernel(d);
  }
  return o.str();
}

}  // namespace kbimport

KernelBenchImport import_kernelbench(const std::string& python, const ProblemSpec& problem,
                                     const std::string& source_name) {
  // Without named values first: a file whose expressions all fit converts as it always has.
  // Where an expression is past the length limit, the file is converted again with its long host
  // integers named (Converter::named_value); its refusal then is that conversion's.
  KernelBenchImport r;
  for (bool name_values : {false, true}) {
    r = KernelBenchImport{};
    kbimport::Converter c(problem, python);
    c.name_values = name_values;
    try {
      r.kernel_file = c.run(source_name);
      r.converted = true;
      r.notes = c.notes;
    } catch (const kbimport::ImportError& e) {
      r.category = e.category;
      r.reason = e.what();
    } catch (const std::exception& e) {
      r.category = "internal";
      r.reason = std::string("the converter failed on this file: ") + e.what();
    }
    const std::string too_long = "characters; the limit is " + std::to_string(kMaxExprChars);
    if (r.converted || r.reason.find(too_long) == std::string::npos) break;
  }
  return r;
}

bool looks_like_kernelbench(const std::string& text) {
  return text.find("ModelNew") != std::string::npos &&
         text.find("load_inline") != std::string::npos;
}

}  // namespace kernrl
