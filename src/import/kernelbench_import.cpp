#include "import/kernelbench_import.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>

#include "core/expr.h"
#include "import/converter.h"

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
    if (op == "+") return make_int(x + y);
    if (op == "-") return make_int(x - y);
    if (op == "*") return make_int(x * y);
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
  launches.push_back(L);
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
      out.push_back(eval_expr(v.e, s));
    } catch (const ExprError&) {
      return std::nullopt;
    }
  }
  return out;
}

std::string Converter::size_expr(const std::string& entry) const {
  return entry;
}

// ------------------------------------------------------------------ the Python side
namespace {

bool starts_with(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}
bool contains(const std::string& s, const char* p) {
  return s.find(p) != std::string::npos;
}
[[noreturn]] void fail(const std::string& category, const std::string& msg) {
  throw ImportError(category, msg);
}

bool tok_is(const PyTok& t, const char* text) {
  return t.text == text && (t.kind == PyTok::Op || t.kind == PyTok::Name);
}

// A Python block: a def's or a class's body lines.
struct Block {
  size_t begin = 0, end = 0;  // indices into lines
};

Block body_of(const std::vector<PyLine>& lines, size_t header) {
  Block b{header + 1, header + 1};
  while (b.end < lines.size() && lines[b.end].indent > lines[header].indent) ++b.end;
  return b;
}

// The index of the first top-level ':' of a compound statement's header (0 when none).
size_t header_colon(const std::vector<PyTok>& toks) {
  int d = 0;
  for (size_t i = 0; i < toks.size(); ++i) {
    const PyTok& t = toks[i];
    if (t.kind != PyTok::Op) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
    if (t.text == ")" || t.text == "]" || t.text == "}") --d;
    if (d == 0 && t.text == ":") return i;
  }
  return 0;
}

class PySide {
 public:
  PySide(Converter& c, const std::string& python) : C(c), src_(python) {}

  struct Result {
    Val ret;
    std::string fn_names;  // host functions called, for the header comment
  };

  Result run() {
    lines_ = py_lines(src_);
    scan_module();
    // Macros (#define and -D flags) before any host code runs.
    for (const auto& [name, value] : cflag_defines) C.macros[name] = c_tokens(value);
    for (const ExtModule& m : C.exts)
      for (const auto& so : m.sources) C.add_macros(so.toks);
    return run_forward();
  }

  std::vector<std::string> host_calls;
  std::map<std::string, std::string> cflag_defines;  // -DNAME=VALUE of extra_cuda_cflags

 private:
  Converter& C;
  const std::string& src_;
  std::vector<PyLine> lines_;
  std::map<std::string, std::string> aliases_;  // import aliases: F -> torch.nn.functional
  std::map<std::string, PyExprP> module_vars_;
  std::set<std::string> module_defs_;
  std::map<std::string, PyExprP> init_attrs_;  // self.X = expr in ModelNew.__init__
  std::set<std::string> init_params_;
  std::set<std::string> class_defs_;         // methods of ModelNew
  std::map<std::string, int> ext_by_var_;    // "name" or "self.name" -> ext index
  std::map<std::string, int> param_tensor_;  // problem parameter -> tensor
  std::map<std::string, Val> self_overrides_;
  size_t class_line_ = 0;
  bool have_class_ = false;
  Block forward_{0, 0};
  size_t forward_header_ = 0;
  bool have_forward_ = false;
  int module_eval_depth_ = 0;

  // ---------------------------------------------------------------- module scan
  std::string resolve(const std::string& dotted) const {
    if (dotted.empty()) return dotted;
    size_t dot = dotted.find('.');
    std::string head = dotted.substr(0, dot);
    auto it = aliases_.find(head);
    if (it == aliases_.end()) return dotted;
    return it->second + (dot == std::string::npos ? "" : dotted.substr(dot));
  }

  void scan_imports(const PyLine& l) {
    const auto& t = l.toks;
    if (t.empty()) return;
    if (tok_is(t[0], "import")) {
      // import a.b.c [as x], d
      size_t i = 1;
      while (i < t.size()) {
        std::string mod;
        while (i < t.size() && !tok_is(t[i], ",") && !tok_is(t[i], "as")) mod += t[i++].text;
        std::string as;
        if (i < t.size() && tok_is(t[i], "as") && i + 1 < t.size()) {
          as = t[i + 1].text;
          i += 2;
        }
        if (!as.empty()) aliases_[as] = mod;
        if (i < t.size() && tok_is(t[i], ",")) ++i;
      }
    } else if (tok_is(t[0], "from")) {
      size_t i = 1;
      std::string mod;
      while (i < t.size() && !tok_is(t[i], "import")) mod += t[i++].text;
      ++i;
      while (i < t.size()) {
        if (tok_is(t[i], "(") || tok_is(t[i], ")") || tok_is(t[i], ",")) {
          ++i;
          continue;
        }
        std::string name = t[i++].text;
        std::string as = name;
        if (i + 1 < t.size() && tok_is(t[i], "as")) {
          as = t[i + 1].text;
          i += 2;
        }
        aliases_[as] = mod + "." + name;
      }
    }
  }

  bool is_load_inline(const PyExprP& e) const {
    if (!e || e->kind != PyExpr::Call) return false;
    std::string d = resolve(py_dotted(e->kids[0]));
    return d == "load_inline" ||
           (d.size() > 12 && d.compare(d.size() - 12, 12, ".load_inline") == 0);
  }
  bool is_load_files(const PyExprP& e) const {
    if (!e || e->kind != PyExpr::Call) return false;
    std::string d = resolve(py_dotted(e->kids[0]));
    return d == "torch.utils.cpp_extension.load" || d == "cpp_extension.load";
  }

  // The value of a string expression of the module (sources are usually module-level strings).
  std::vector<std::string> strings_of(const PyExprP& e, int line) {
    if (++module_eval_depth_ > 64)
      fail("python_syntax", "the CUDA source strings refer to each other in a loop");
    std::vector<std::string> out;
    switch (e->kind) {
      case PyExpr::Str:
        out.push_back(e->fstring ? format_fstring(e->text, line) : e->text);
        break;
      case PyExpr::Name: {
        auto it = module_vars_.find(e->text);
        if (it == module_vars_.end())
          fail("not_kernelbench", "the CUDA source `" + e->text +
                                      "` passed to load_inline is not a string of the module");
        out = strings_of(it->second, line);
        break;
      }
      case PyExpr::BinOp:
        if (e->text == "+") {
          auto a = strings_of(e->kids[0], line), b = strings_of(e->kids[1], line);
          if (a.size() == 1 && b.size() == 1) {
            out.push_back(a[0] + b[0]);
          } else {
            out = a;
            out.insert(out.end(), b.begin(), b.end());
          }
          break;
        }
        fail("not_kernelbench", "the CUDA source passed to load_inline is built with `" + e->text +
                                    "` (line " + std::to_string(line) + ")");
      case PyExpr::List:
      case PyExpr::Tuple:
        for (const auto& k : e->kids) {
          auto s = strings_of(k, line);
          out.insert(out.end(), s.begin(), s.end());
        }
        break;
      case PyExpr::Call: {
        std::string d = resolve(py_dotted(e->kids[0]));
        if ((d == "textwrap.dedent" || d == "dedent" || d == "str") && e->kids.size() == 2) {
          out = strings_of(e->kids[1], line);
          break;
        }
        if (e->kids[0]->kind == PyExpr::Attr &&
            (e->kids[0]->text == "strip" || e->kids[0]->text == "lstrip" ||
             e->kids[0]->text == "rstrip")) {
          out = strings_of(e->kids[0]->kids[0], line);
          break;
        }
        if (e->kids[0]->kind == PyExpr::Attr && e->kids[0]->text == "format")
          fail("not_kernelbench",
               "the CUDA source passed to load_inline is built with str.format (line " +
                   std::to_string(line) + ")");
        fail("not_kernelbench", "the CUDA source passed to load_inline is computed by `" +
                                    py_text(e) + "` (line " + std::to_string(line) + ")");
      }
      case PyExpr::Const:
        if (e->text == "None") break;
        [[fallthrough]];
      default:
        fail("not_kernelbench", "the CUDA source passed to load_inline is `" + py_text(e) +
                                    "` (line " + std::to_string(line) + ")");
    }
    --module_eval_depth_;
    return out;
  }

  std::string format_fstring(const std::string& text, int line) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
        out += '{';
        ++i;
        continue;
      }
      if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      if (c == '{') {
        size_t e = text.find('}', i);
        if (e == std::string::npos)
          fail("python_syntax",
               "an f-string field is never closed (line " + std::to_string(line) + ")");
        std::string name = text.substr(i + 1, e - i - 1);
        auto it = module_vars_.find(name);
        if (it == module_vars_.end() ||
            !(it->second->kind == PyExpr::Num || it->second->kind == PyExpr::Str))
          fail("not_kernelbench", "the CUDA source is an f-string with the field {" + name +
                                      "}, which is not a constant of the module (line " +
                                      std::to_string(line) + ")");
        out += it->second->text;
        i = e;
        continue;
      }
      out += c;
    }
    return out;
  }

  PyExprP kwarg(const PyExprP& call, const char* name, size_t position) {
    for (const auto& [k, v] : call->kwargs)
      if (k == name) return v;
    if (position + 1 < call->kids.size()) return call->kids[position + 1];
    return nullptr;
  }

  int add_ext(const std::string& var, const PyExprP& call, int line) {
    auto known = ext_by_var_.find(var);
    if (known != ext_by_var_.end()) return known->second;
    ExtModule m;
    m.var = var;
    m.line = line;
    // load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
    //             extra_cuda_cflags=None, ...)
    if (auto e = kwarg(call, "cuda_sources", 2)) m.cuda_sources = strings_of(e, line);
    if (auto e = kwarg(call, "cpp_sources", 1)) m.cpp_sources = strings_of(e, line);
    if (auto e = kwarg(call, "functions", 3)) {
      if (e->kind == PyExpr::Str)
        m.functions.push_back(e->text);
      else if (e->kind == PyExpr::List || e->kind == PyExpr::Tuple)
        for (const auto& k : e->kids)
          if (k->kind == PyExpr::Str) m.functions.push_back(k->text);
    }
    if (auto e = kwarg(call, "extra_cuda_cflags", 5)) {
      if (e->kind == PyExpr::List || e->kind == PyExpr::Tuple)
        for (const auto& k : e->kids)
          if (k->kind == PyExpr::Str && starts_with(k->text, "-D") && k->text.size() > 2) {
            std::string d = k->text.substr(2);
            size_t eq = d.find('=');
            cflag_defines[d.substr(0, eq)] = eq == std::string::npos ? "1" : d.substr(eq + 1);
          }
    }
    if (m.cuda_sources.empty())
      fail("not_kernelbench", "load_inline module `" + var + "` (line " + std::to_string(line) +
                                  ") has no cuda_sources");
    for (const auto& s : m.cuda_sources) {
      ExtModule::Source so;
      so.text = s;
      so.cuda = true;
      so.toks = c_tokens(s);
      so.items = c_items(so.toks, 0, so.toks.size());
      m.sources.push_back(std::move(so));
    }
    for (const auto& s : m.cpp_sources) {
      ExtModule::Source so;
      so.text = s;
      so.cuda = false;
      so.toks = c_tokens(s);
      so.items = c_items(so.toks, 0, so.toks.size());
      m.sources.push_back(std::move(so));
    }
    C.exts.push_back(std::move(m));
    int idx = static_cast<int>(C.exts.size()) - 1;
    ext_by_var_[var] = idx;
    return idx;
  }

  // Splits "target = value" at the top-level '='.
  static size_t assign_at(const std::vector<PyTok>& t) {
    int d = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].kind != PyTok::Op) continue;
      if (t[i].text == "(" || t[i].text == "[" || t[i].text == "{") ++d;
      if (t[i].text == ")" || t[i].text == "]" || t[i].text == "}") --d;
      if (d == 0 && t[i].text == "=") return i;
    }
    return 0;
  }

  void scan_module() {
    bool triton = false, load_files = false, any_inline = false;
    for (size_t i = 0; i < lines_.size(); ++i) {
      const PyLine& l = lines_[i];
      for (const auto& t : l.toks)
        if (t.kind == PyTok::Name && (t.text == "triton")) triton = true;
      if (l.indent != 0) continue;
      const auto& t = l.toks;
      if (tok_is(t[0], "import") || tok_is(t[0], "from")) {
        scan_imports(l);
        continue;
      }
      if (tok_is(t[0], "class") && t.size() > 1 && t[1].text == "ModelNew") {
        have_class_ = true;
        class_line_ = i;
        continue;
      }
      if (tok_is(t[0], "def") && t.size() > 1) {
        module_defs_.insert(t[1].text);
        continue;
      }
      if (tok_is(t[0], "class") || tok_is(t[0], "@") || tok_is(t[0], "if") ||
          tok_is(t[0], "with") || tok_is(t[0], "for") || tok_is(t[0], "try"))
        continue;
      size_t eq = assign_at(t);
      if (eq == 1 && t[0].kind == PyTok::Name) {
        PyExprP v;
        try {
          v = py_parse_expr(t, 2, t.size());
        } catch (const ImportError&) {
          continue;  // a module-level line kernrl does not need
        }
        module_vars_[t[0].text] = v;
      }
    }
    // load_inline calls at module level, in order.
    for (const auto& [name, v] : module_vars_) {
      if (is_load_inline(v)) any_inline = true;
      if (is_load_files(v)) load_files = true;
    }
    if (!have_class_) {
      if (triton)
        fail("not_kernelbench",
             "a Triton module without class ModelNew; kernrl expects CUDA kernels");
      fail("not_kernelbench", "no class ModelNew: not a KernelBench generation");
    }
    // The class: __init__, forward and other methods.
    Block cls = body_of(lines_, class_line_);
    for (size_t i = cls.begin; i < cls.end; ++i) {
      const PyLine& l = lines_[i];
      if (!tok_is(l.toks[0], "def") || l.toks.size() < 2) continue;
      std::string name = l.toks[1].text;
      class_defs_.insert(name);
      Block b = body_of(lines_, i);
      if (name == "__init__") read_init(i, b, &any_inline, &load_files);
      if (name == "forward") {
        forward_ = b;
        forward_header_ = i;
        have_forward_ = true;
      }
    }
    if (!any_inline) {
      if (load_files)
        fail("not_kernelbench",
             "the CUDA is built from files with torch.utils.cpp_extension.load; kernrl reads "
             "load_inline sources");
      if (triton) fail("not_kernelbench", "ModelNew uses Triton kernels, not load_inline CUDA");
      fail("not_kernelbench", "ModelNew builds no CUDA with load_inline (a PyTorch-only answer)");
    }
    if (!have_forward_) fail("not_kernelbench", "class ModelNew has no forward method");
    for (const auto& [name, v] : module_vars_)
      if (is_load_inline(v)) add_ext(name, v, v->line);
  }

  void read_init(size_t header, const Block& b, bool* any_inline, bool* load_files) {
    const auto& t = lines_[header].toks;
    // def __init__(self, a, b=1, *args, **kwargs):
    int d = 0;
    bool in_default = false;
    for (size_t i = 2; i < t.size(); ++i) {
      const PyTok& k = t[i];
      if (k.kind == PyTok::Op && (k.text == "(" || k.text == "[" || k.text == "{")) ++d;
      if (k.kind == PyTok::Op && (k.text == ")" || k.text == "]" || k.text == "}")) --d;
      if (d == 1 && k.kind == PyTok::Op && k.text == ",") in_default = false;
      if (d == 1 && k.kind == PyTok::Op && (k.text == "=" || k.text == ":")) in_default = true;
      if (d == 1 && k.kind == PyTok::Name && !in_default && k.text != "self")
        init_params_.insert(k.text);
    }
    for (size_t i = b.begin; i < b.end; ++i) {
      const auto& lt = lines_[i].toks;
      size_t eq = assign_at(lt);
      if (eq >= 3 && tok_is(lt[0], "self") && tok_is(lt[1], ".") && lt[2].kind == PyTok::Name) {
        PyExprP v;
        try {
          v = py_parse_expr(lt, eq + 1, lt.size());
        } catch (const ImportError&) {
          continue;
        }
        std::string attr = lt[2].text;
        init_attrs_[attr] = v;
        if (is_load_inline(v)) {
          *any_inline = true;
          add_ext("self." + attr, v, lines_[i].line);
        }
        if (is_load_files(v)) *load_files = true;
      }
    }
  }

  // ---------------------------------------------------------------- values
  Val tensor_val(int idx) {
    Val v;
    v.kind = Val::Tensor;
    v.tensor = idx;
    return v;
  }

  std::vector<Val> shape_of(const TensorSpec& t) {
    std::vector<Val> s;
    for (const auto& d : t.shape) {
      try {
        s.push_back(make_int(eval_expr(d, {})));
      } catch (const ExprError&) {
        s.push_back(make_int_expr(d));
      }
    }
    return s;
  }

  Val problem_param(const std::string& name, const std::string& as_written) {
    auto it = param_tensor_.find(name);
    if (it != param_tensor_.end()) return tensor_val(it->second);
    for (const auto& p : C.P.parameters)
      if (p.name == name) {
        TensorInfo t;
        t.role = "parameter";
        t.name = p.name;
        t.dtype = p.dtype.name;
        t.shape = shape_of(p);
        int idx = C.add_tensor(t);
        param_tensor_[name] = idx;
        return tensor_val(idx);
      }
    std::string names;
    for (const auto& p : C.P.parameters) names += (names.empty() ? "" : ", ") + p.name;
    fail("mismatch", "ModelNew uses the parameter `" + as_written +
                         "`, which is not among the problem's parameters (" +
                         (names.empty() ? "it has none" : names) + ")");
  }

  Val from_problem_name(const std::string& n) {
    if (const ScalarSpec* s = C.P.find_scalar(n)) {
      if (s->is_float()) {
        Val v = make_float(s->value, n);
        v.scalar = n;
        return v;
      }
      Val v = make_int(static_cast<int64_t>(s->value));
      v.scalar = n;
      return v;
    }
    if (C.P.bench.count(n)) return make_int_expr(n);
    return make_unknown("the constructor argument `" + n + "` (not a scalar or size of " + C.P.id +
                        ")");
  }

  Val self_attr(const std::string& attr) {
    auto o = self_overrides_.find(attr);
    if (o != self_overrides_.end()) return o->second;
    auto e = ext_by_var_.find("self." + attr);
    if (e != ext_by_var_.end()) {
      Val v;
      v.kind = Val::Ext;
      v.ext = e->second;
      return v;
    }
    auto it = init_attrs_.find(attr);
    if (it == init_attrs_.end()) {
      if (class_defs_.count(attr)) {
        Val f;
        f.kind = Val::Func;
        f.name = "self." + attr;
        return f;
      }
      return make_unknown("`self." + attr + "` (not set in __init__)");
    }
    return init_value(attr, it->second);
  }

  Val init_value(const std::string& attr, const PyExprP& v) {
    switch (v->kind) {
      case PyExpr::Num:
        return number(v->text);
      case PyExpr::Const:
        if (v->text == "True" || v->text == "False") return make_bool(v->text == "True");
        return Val{};
      case PyExpr::Name:
        if (init_params_.count(v->text)) return from_problem_name(v->text);
        return module_value(v->text);
      case PyExpr::Call: {
        std::string d = resolve(py_dotted(v->kids[0]));
        if (d == "torch.nn.Parameter" || d == "nn.Parameter" ||
            d == "torch.nn.parameter.Parameter" || d == "Parameter")
          return problem_param(attr, "self." + attr);
        if ((d == "int" || d == "float") && v->kids.size() == 2) {
          Val inner = init_value(attr, v->kids[1]);
          if (d == "float" && inner.kind == Val::Int && inner.k)
            return make_float(static_cast<double>(*inner.k));
          return inner;
        }
        if (starts_with(d, "torch.nn.") || starts_with(d, "nn.")) {
          Val l;
          l.kind = Val::Layer;
          l.name = attr;
          l.elem = d.substr(d.rfind('.') + 1);
          return l;
        }
        return make_unknown("`self." + attr + "` (" + py_text(v) + ")");
      }
      default:
        return make_unknown("`self." + attr + "` (" + py_text(v) + ")");
    }
  }

  Val module_value(const std::string& name) {
    auto e = ext_by_var_.find(name);
    if (e != ext_by_var_.end()) {
      Val v;
      v.kind = Val::Ext;
      v.ext = e->second;
      return v;
    }
    auto it = module_vars_.find(name);
    if (it != module_vars_.end()) {
      if (it->second->kind == PyExpr::Num) return number(it->second->text);
      if (it->second->kind == PyExpr::Const &&
          (it->second->text == "True" || it->second->text == "False"))
        return make_bool(it->second->text == "True");
    }
    if (module_defs_.count(name)) {
      Val f;
      f.kind = Val::Func;
      f.name = name;
      return f;
    }
    Val f;
    f.kind = Val::Func;
    f.name = resolve(name);
    return f;
  }

  static Val number(const std::string& lit) {
    std::string s;
    for (char c : lit)
      if (c != '_') s += c;
    bool hex = starts_with(s, "0x") || starts_with(s, "0X");
    if (!hex && s.find_first_of(".eE") != std::string::npos)
      return make_float(std::strtod(s.c_str(), nullptr), s);
    if (!s.empty() && (s.back() == 'j' || s.back() == 'J'))
      return make_unknown("a complex literal");
    int base = hex                                              ? 16
               : (starts_with(s, "0o") || starts_with(s, "0O")) ? 8
               : (starts_with(s, "0b") || starts_with(s, "0B")) ? 2
                                                                : 10;
    return make_int(
        static_cast<int64_t>(std::strtoull(base == 10 ? s.c_str() : s.c_str() + 2, nullptr, base)));
  }

  // ---------------------------------------------------------------- forward
  struct Env {
    std::map<std::string, Val> locals;
    std::optional<Val> ret;
  };

  Result run_forward() {
    const auto& t = lines_[forward_header_].toks;
    // def forward(self, a, b, ...):
    std::vector<std::string> params;
    int d = 0;
    bool in_default = false;
    for (size_t i = 2; i < t.size(); ++i) {
      const PyTok& k = t[i];
      if (k.kind == PyTok::Op && (k.text == "(" || k.text == "[" || k.text == "{")) ++d;
      if (k.kind == PyTok::Op && (k.text == ")" || k.text == "]" || k.text == "}")) {
        --d;
        if (d == 0) break;
      }
      if (d == 1 && k.kind == PyTok::Op && k.text == ",") in_default = false;
      if (d == 1 && k.kind == PyTok::Op && (k.text == "=" || k.text == ":")) in_default = true;
      if (d == 1 && k.kind == PyTok::Op && (k.text == "*" || k.text == "**"))
        fail("mismatch",
             "ModelNew.forward takes *args; kernrl maps forward's parameters to the problem's "
             "inputs by position");
      if (d == 1 && k.kind == PyTok::Name && !in_default && k.text != "self")
        params.push_back(k.text);
    }
    Env env;
    std::string names;
    for (const auto& in : C.P.inputs) names += (names.empty() ? "" : ", ") + in.name;
    if (params.size() != C.P.inputs.size())
      fail("mismatch", "ModelNew.forward takes " + std::to_string(params.size()) + " inputs; " +
                           C.P.id + " has " + std::to_string(C.P.inputs.size()) + " (" + names +
                           ")");
    for (size_t i = 0; i < params.size(); ++i) {
      const TensorSpec& in = C.P.inputs[i];
      TensorInfo ti;
      ti.role = "input";
      ti.name = in.name;
      ti.dtype = in.dtype.name;
      ti.shape = shape_of(in);
      env.locals[params[i]] = tensor_val(C.add_tensor(ti));
    }
    exec_lines(env, forward_.begin, forward_.end);
    Result r;
    r.ret = env.ret ? *env.ret : Val{};
    return r;
  }

  [[noreturn]] void torch_op(const std::string& what, const std::string& text) {
    fail("torch_op_in_forward", "PyTorch op `" + what + "` left in forward (`" + text +
                                    "`); kernrl grades CUDA kernels only, so forward may only call "
                                    "the load_inline extension");
  }

  void exec_lines(Env& env, size_t begin, size_t end) {
    size_t i = begin;
    while (i < end && !env.ret) {
      const PyLine& l = lines_[i];
      const auto& t = l.toks;
      size_t next = i + 1;
      while (next < end && lines_[next].indent > l.indent) ++next;
      const std::string& w = t[0].text;
      if (t[0].kind == PyTok::Name) {
        if (w == "return") {
          env.ret = t.size() > 1 ? eval(env, py_parse_expr(t, 1, t.size())) : Val{};
          return;
        }
        if (w == "pass" || w == "assert" || w == "del" || w == "global" || w == "nonlocal") {
          i = next;
          continue;
        }
        if (w == "if") {
          i = exec_if(env, i, end);
          continue;
        }
        if (w == "with" || w == "try") {
          size_t colon = header_colon(t);
          if (colon + 1 < t.size())
            exec_inline(env, l, colon + 1);
          else
            exec_lines(env, i + 1, next);
          i = next;
          // except/finally/else clauses of a try: skipped.
          while (i < end && lines_[i].indent == l.indent &&
                 (tok_is(lines_[i].toks[0], "except") || tok_is(lines_[i].toks[0], "finally") ||
                  (w == "try" && tok_is(lines_[i].toks[0], "else")))) {
            ++i;
            while (i < end && lines_[i].indent > l.indent) ++i;
          }
          continue;
        }
        if (w == "for" || w == "while")
          fail("host_logic",
               "host logic in forward: a `" + w + "` loop (line " + std::to_string(l.line) + ")");
        if (w == "def" || w == "class" || w == "import" || w == "from") {
          i = next;
          continue;
        }
        if (w == "raise")
          fail("mismatch",
               "forward raises an error for this problem (line " + std::to_string(l.line) + ")");
      }
      exec_simple(env, t, 0, l.line);
      i = next;
    }
  }

  void exec_inline(Env& env, const PyLine& l, size_t from) {
    exec_simple(env, l.toks, from, l.line);
  }

  size_t exec_if(Env& env, size_t i, size_t end) {
    // if / elif / else chain at one indentation.
    int indent = lines_[i].indent;
    bool taken = false;
    while (i < end) {
      const PyLine& l = lines_[i];
      const auto& t = l.toks;
      bool is_else = tok_is(t[0], "else");
      if (!(tok_is(t[0], "if") || tok_is(t[0], "elif") || is_else) || l.indent != indent) break;
      if (tok_is(t[0], "if") && i != 0 && taken) break;
      size_t colon = header_colon(t);
      size_t next = i + 1;
      while (next < end && lines_[next].indent > indent) ++next;
      if (!taken) {
        bool run = is_else;
        if (!is_else) {
          Val c = eval(env, py_parse_expr(t, 1, colon));
          auto b = truth(c);
          if (!b)
            fail("host_logic",
                 "host logic in forward: `" + py_text(py_parse_expr(t, 1, colon)) +
                     "` decides what runs and is not the same at every size set of the problem");
          run = *b;
        }
        if (run) {
          taken = true;
          if (colon + 1 < t.size())
            exec_inline(env, l, colon + 1);
          else
            exec_lines(env, i + 1, next);
        }
      }
      i = next;
      if (i < end && !(tok_is(lines_[i].toks[0], "elif") || tok_is(lines_[i].toks[0], "else")))
        break;
      if (is_else) break;
    }
    return i;
  }

  std::optional<bool> truth(const Val& v) {
    if ((v.kind == Val::Bool || v.kind == Val::Int) && v.k) return *v.k != 0;
    if (v.kind == Val::Bool && !v.per_set.empty()) {
      bool all = std::all_of(v.per_set.begin(), v.per_set.end(), [](char c) { return c; });
      bool none = std::none_of(v.per_set.begin(), v.per_set.end(), [](char c) { return c; });
      if (all || none) return all;
    }
    if (v.kind == Val::Float && v.f) return *v.f != 0;
    if (v.kind == Val::Void) return false;
    if (v.kind == Val::Tensor) return true;
    return std::nullopt;
  }

  void exec_simple(Env& env, const std::vector<PyTok>& t, size_t from, int line) {
    // Assignment targets = value; augmented assignment; or an expression.
    int d = 0;
    size_t eq = 0;
    std::string aug;
    for (size_t i = from; i < t.size(); ++i) {
      if (t[i].kind != PyTok::Op) continue;
      const std::string& x = t[i].text;
      if (x == "(" || x == "[" || x == "{") ++d;
      if (x == ")" || x == "]" || x == "}") --d;
      if (d != 0) continue;
      if (x == "=") eq = i;
      if (x.size() >= 2 && x.back() == '=' && x != "==" && x != "!=" && x != "<=" && x != ">=" &&
          eq == 0) {
        eq = i;
        aug = x.substr(0, x.size() - 1);
        break;
      }
      if (x == ";")
        fail("host_logic",
             "several statements on one line of forward (line " + std::to_string(line) + ")");
    }
    if (eq == 0) {
      eval(env, py_parse_expr(t, from, t.size()));
      return;
    }
    // Only the last '=' carries the value; earlier ones are more targets (a = b = v).
    Val value = eval(env, py_parse_expr(t, eq + 1, t.size()));
    size_t target_end = eq;
    // Strip an annotation: x: torch.Tensor = ...
    for (size_t i = from; i < eq; ++i)
      if (tok_is(t[i], ":")) {
        target_end = i;
        break;
      }
    PyExprP target = py_parse_expr(t, from, target_end);
    if (!aug.empty()) {
      Val old = eval(env, target);
      value = binop(aug, old, value, py_text(target) + " " + aug + "= ...");
    }
    bind(env, target, value, line);
  }

  void bind(Env& env, const PyExprP& target, const Val& value, int line) {
    if (target->kind == PyExpr::Name) {
      env.locals[target->text] = value;
      name_alloc(value, target->text);
      return;
    }
    if (target->kind == PyExpr::Attr && target->kids[0]->kind == PyExpr::Name &&
        target->kids[0]->text == "self") {
      self_overrides_[target->text] = value;
      return;
    }
    if (target->kind == PyExpr::Tuple || target->kind == PyExpr::List) {
      if (value.kind != Val::List || value.items.size() != target->kids.size())
        fail("host_logic", "forward unpacks `" + py_text(target) +
                               "` from a value kernrl cannot split (line " + std::to_string(line) +
                               ")");
      for (size_t i = 0; i < target->kids.size(); ++i)
        bind(env, target->kids[i], value.items[i], line);
      return;
    }
    fail("host_logic",
         "forward assigns to `" + py_text(target) + "` (line " + std::to_string(line) + ")");
  }

  void name_alloc(const Val& v, const std::string& name) {
    if (v.kind == Val::Tensor) {
      TensorInfo& t = C.tensors[static_cast<size_t>(v.tensor)];
      if (t.role == "alloc" && t.name.empty()) t.name = name;
    }
  }

  Val binop(const std::string& op, const Val& a, const Val& b, const std::string& text) {
    if (a.kind == Val::Tensor || b.kind == Val::Tensor) torch_op(op, text);
    if (op == "+" || op == "-" || op == "*" || op == "//" || op == "%") {
      if (a.kind == Val::Int && b.kind == Val::Int)
        return int_binop(op == "//" ? "/" : op, a, b, text);
      if ((a.kind == Val::Int || a.kind == Val::Float) &&
          (b.kind == Val::Int || b.kind == Val::Float)) {
        auto num = [](const Val& v) -> std::optional<double> {
          if (v.kind == Val::Float) return v.f;
          if (v.k) return static_cast<double>(*v.k);
          return std::nullopt;
        };
        auto x = num(a), y = num(b);
        if (x && y) {
          double r = op == "+"    ? *x + *y
                     : op == "-"  ? *x - *y
                     : op == "*"  ? *x * *y
                     : op == "//" ? std::floor(*x / *y)
                                  : std::fmod(*x, *y);
          return make_float(r);
        }
      }
    }
    if (op == "/") {
      auto num = [](const Val& v) -> std::optional<double> {
        if (v.kind == Val::Float) return v.f;
        if (v.kind == Val::Int && v.k) return static_cast<double>(*v.k);
        return std::nullopt;
      };
      auto x = num(a), y = num(b);
      if (x && y) return make_float(*x / *y);
      if (a.kind == Val::Int && b.kind == Val::Int) {
        Val r;
        r.kind = Val::Ratio;
        r.items = {a, b};
        return r;
      }
    }
    if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=") {
      auto cmp = [&](auto x, auto y) {
        return op == "<"    ? x < y
               : op == ">"  ? x > y
               : op == "<=" ? x <= y
               : op == ">=" ? x >= y
               : op == "==" ? x == y
                            : x != y;
      };
      if (a.kind == Val::Int && b.kind == Val::Int) {
        auto pa = C.per_set(a), pb = C.per_set(b);
        if (pa && pb) {
          Val r;
          r.kind = Val::Bool;
          for (size_t s = 0; s < pa->size(); ++s) r.per_set.push_back(cmp((*pa)[s], (*pb)[s]));
          bool all = std::all_of(r.per_set.begin(), r.per_set.end(), [](char c) { return c; });
          bool none = std::none_of(r.per_set.begin(), r.per_set.end(), [](char c) { return c; });
          if (all || none) return make_bool(all);
          return r;
        }
      }
      if (a.kind == Val::DType && b.kind == Val::DType) return make_bool(cmp(a.dtype, b.dtype));
    }
    if (op == "and" || op == "or") {
      auto x = truth(a), y = truth(b);
      if (x && y) return make_bool(op == "and" ? (*x && *y) : (*x || *y));
    }
    if (a.kind == Val::Unknown) fail("host_logic", "forward uses " + a.why + " in `" + text + "`");
    if (b.kind == Val::Unknown) fail("host_logic", "forward uses " + b.why + " in `" + text + "`");
    fail("host_logic", "host logic in forward: `" + text + "`");
  }

  Val eval(Env& env, const PyExprP& e) {
    switch (e->kind) {
      case PyExpr::Num:
        return number(e->text);
      case PyExpr::Str: {
        Val s;
        s.kind = Val::Str;
        s.text = e->text;
        return s;
      }
      case PyExpr::Const:
        if (e->text == "True" || e->text == "False") return make_bool(e->text == "True");
        return Val{};
      case PyExpr::Name: {
        auto it = env.locals.find(e->text);
        if (it != env.locals.end()) return it->second;
        if (e->text == "self") {
          Val s;
          s.kind = Val::Layer;
          s.name = "self";
          return s;
        }
        return module_value(e->text);
      }
      case PyExpr::Attr:
        return attr(env, e);
      case PyExpr::Call:
        return call(env, e);
      case PyExpr::Index: {
        Val obj = eval(env, e->kids[0]);
        if (obj.kind == Val::Tensor) torch_op("Tensor.__getitem__", py_text(e));
        Val idx = eval(env, e->kids[1]);
        if (obj.kind == Val::List && idx.kind == Val::Int && idx.k) {
          int64_t k = *idx.k;
          if (k < 0) k += static_cast<int64_t>(obj.items.size());
          if (k < 0 || k >= static_cast<int64_t>(obj.items.size()))
            fail("mismatch",
                 "`" + py_text(e) + "` in forward indexes past the end for this problem");
          return obj.items[static_cast<size_t>(k)];
        }
        fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
      }
      case PyExpr::BinOp: {
        if (e->text == "@") torch_op("@ (matmul)", py_text(e));
        Val a = eval(env, e->kids[0]);
        Val b = eval(env, e->kids[1]);
        return binop(e->text, a, b, py_text(e));
      }
      case PyExpr::Unary: {
        Val v = eval(env, e->kids[0]);
        if (v.kind == Val::Tensor) torch_op(e->text, py_text(e));
        if (e->text == "-" && v.kind == Val::Int) return int_binop("-", make_int(0), v, py_text(e));
        if (e->text == "-" && v.kind == Val::Float && v.f) return make_float(-*v.f);
        if (e->text == "+") return v;
        if (e->text == "not") {
          auto b = truth(v);
          if (b) return make_bool(!*b);
        }
        fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
      }
      case PyExpr::Tuple:
      case PyExpr::List: {
        Val l;
        l.kind = Val::List;
        for (const auto& k : e->kids) l.items.push_back(eval(env, k));
        return l;
      }
      case PyExpr::Other:
        fail("host_logic", "host logic in forward: a " + e->text);
    }
    fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
  }

  Val attr(Env& env, const PyExprP& e) {
    const PyExprP& obj_e = e->kids[0];
    if (obj_e->kind == PyExpr::Name && obj_e->text == "self" && !env.locals.count("self"))
      return self_attr(e->text);
    Val obj = eval(env, obj_e);
    switch (obj.kind) {
      case Val::Tensor: {
        const TensorInfo& t = C.tensors[static_cast<size_t>(obj.tensor)];
        if (e->text == "shape") {
          Val l;
          l.kind = Val::List;
          l.items = t.shape;
          return l;
        }
        if (e->text == "dtype") {
          Val d;
          d.kind = Val::DType;
          d.dtype = t.dtype;
          return d;
        }
        if (e->text == "device" || e->text == "is_cuda") {
          Val d;
          d.kind = Val::Device;
          return d;
        }
        if (e->text == "ndim") return make_int(static_cast<int64_t>(t.shape.size()));
        Val m;
        m.kind = Val::Func;
        m.name = "Tensor." + e->text;
        m.tensor = obj.tensor;
        return m;
      }
      case Val::Ext: {
        Val f;
        f.kind = Val::ExtFn;
        f.ext = obj.ext;
        f.name = e->text;
        return f;
      }
      case Val::Layer: {
        if (obj.name == "self") return self_attr(e->text);
        // A suite built from KernelBench names parameters by module path (`conv.weight`).
        std::string path = obj.name + "." + e->text;
        for (const auto& p : C.P.parameters)
          if (p.name == path) return problem_param(path, "self." + path);
        std::string full = obj.name + "_" + e->text;
        for (const auto& p : C.P.parameters)
          if (p.name == full) return problem_param(full, "self." + obj.name + "." + e->text);
        return problem_param(e->text, "self." + obj.name + "." + e->text);
      }
      case Val::Func: {
        Val f = obj;
        f.name = obj.name + "." + e->text;
        return f;
      }
      case Val::DType:
      case Val::Device:
        return obj;
      default:
        break;
    }
    if (obj.kind == Val::Unknown) fail("host_logic", "forward uses " + obj.why);
    fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
  }

  std::vector<Val> shape_args(Env& env, const PyExprP& call, size_t first, std::string* dtype) {
    std::vector<Val> shape;
    for (size_t i = first; i < call->kids.size(); ++i) {
      Val v = eval(env, call->kids[i]);
      if (v.kind == Val::List) {
        for (const auto& d : v.items) shape.push_back(as_int(d, py_text(call)));
      } else {
        shape.push_back(as_int(v, py_text(call)));
      }
    }
    for (const auto& [k, v] : call->kwargs) {
      if (k == "dtype") {
        std::string d = dtype_of_torch(resolve(py_dotted(v)));
        if (d.empty()) fail("host_logic", "forward allocates with dtype `" + py_text(v) + "`");
        *dtype = d;
      }
      if (k == "size") {
        Val s = eval(env, v);
        if (s.kind == Val::List)
          for (const auto& d : s.items) shape.push_back(as_int(d, py_text(call)));
      }
    }
    return shape;
  }

  Val as_int(const Val& v, const std::string& text) {
    if (v.kind == Val::Int) return v;
    if (v.kind == Val::Float && v.f && std::floor(*v.f) == *v.f)
      return make_int(static_cast<int64_t>(*v.f));
    if (v.kind == Val::Unknown) fail("host_logic", "forward uses " + v.why + " in `" + text + "`");
    fail("host_logic", "host logic in forward: `" + text + "` needs an integer kernrl can compute");
  }

  Val call(Env& env, const PyExprP& e) {
    const PyExprP& callee_e = e->kids[0];
    std::string text = py_text(e);
    // Methods of tensors.
    if (callee_e->kind == PyExpr::Attr) {
      Val obj;
      bool self_obj = callee_e->kids[0]->kind == PyExpr::Name && callee_e->kids[0]->text == "self";
      if (!self_obj) obj = eval(env, callee_e->kids[0]);
      if (!self_obj && obj.kind == Val::Tensor) return tensor_method(env, obj, callee_e->text, e);
    }
    Val f = eval(env, callee_e);
    std::vector<Val> args;
    auto eval_args = [&]() {
      args.clear();
      for (size_t i = 1; i < e->kids.size(); ++i) args.push_back(eval(env, e->kids[i]));
    };
    if (f.kind == Val::ExtFn) {
      eval_args();
      std::vector<std::pair<std::string, Val>> kwargs;
      for (const auto& [k, v] : e->kwargs) {
        if (k == "*") fail("host_logic", "forward passes *args to the extension (`" + text + "`)");
        kwargs.push_back({k, eval(env, v)});
      }
      C.exts[static_cast<size_t>(f.ext)].used = true;
      host_calls.push_back(f.name);
      for (Val& a : args)
        if (a.kind == Val::Unknown)
          fail("host_logic", "forward passes " + a.why + " to `" + f.name + "`");
      Val r = C.call_host(f.ext, f.name, args, kwargs);
      return r;
    }
    if (f.kind == Val::Layer) {
      if (f.name == "self") fail("host_logic", "forward calls the model itself");
      fail("torch_op_in_forward", "PyTorch module `self." + f.name + "` (nn." + f.elem +
                                      ") left in forward (`" + text +
                                      "`); kernrl grades CUDA kernels only, so forward may only "
                                      "call the load_inline extension");
    }
    if (f.kind == Val::Unknown) fail("host_logic", "forward calls " + f.why);
    if (f.kind != Val::Func) fail("host_logic", "host logic in forward: `" + text + "`");
    std::string name = f.name;
    if (starts_with(name, "self."))
      fail("host_logic", "forward calls the method `" + name +
                             "`; kernrl follows forward and the extension only");
    if (module_defs_.count(name))
      fail("host_logic", "forward calls the Python function `" + name + "` of the module");
    // Builtins.
    if (name == "int" || name == "float" || name == "len" || name == "min" || name == "max" ||
        name == "tuple" || name == "list" || name == "isinstance" || name == "math.ceil" ||
        name == "math.floor" || name == "abs") {
      eval_args();
      if (name == "isinstance") return make_bool(true);
      if (name == "len" && args.size() == 1 && args[0].kind == Val::List)
        return make_int(static_cast<int64_t>(args[0].items.size()));
      if ((name == "tuple" || name == "list") && args.size() == 1) return args[0];
      if (name == "int" && args.size() == 1) {
        if (args[0].kind == Val::Ratio)
          return int_binop("/", args[0].items[0], args[0].items[1], text);
        if (args[0].kind == Val::Float && args[0].f)
          return make_int(static_cast<int64_t>(*args[0].f));
        return as_int(args[0], text);
      }
      if (name == "float" && args.size() == 1) {
        if (args[0].kind == Val::Int && args[0].k)
          return make_float(static_cast<double>(*args[0].k));
        if (args[0].kind == Val::Float) return args[0];
      }
      if ((name == "math.ceil" || name == "math.floor") && args.size() == 1 &&
          args[0].kind == Val::Ratio) {
        if (name == "math.ceil")
          return make_int_expr("cdiv(" + int_text(args[0].items[0]) + ", " +
                               int_text(args[0].items[1]) + ")");
        return int_binop("/", args[0].items[0], args[0].items[1], text);
      }
      if ((name == "min" || name == "max") && args.size() == 2 && args[0].kind == Val::Int &&
          args[1].kind == Val::Int) {
        if (args[0].k && args[1].k)
          return make_int(name == "min" ? std::min(*args[0].k, *args[1].k)
                                        : std::max(*args[0].k, *args[1].k));
        return make_int_expr(name + "(" + int_text(args[0]) + ", " + int_text(args[1]) + ")");
      }
      fail("host_logic", "host logic in forward: `" + text + "`");
    }
    // Allocations in forward: torch.empty(...), torch.zeros_like(x), ...
    static const std::set<std::string> allocs = {
        "torch.empty",      "torch.zeros",      "torch.ones",      "torch.full",
        "torch.empty_like", "torch.zeros_like", "torch.ones_like", "torch.full_like"};
    if (allocs.count(name)) {
      std::string kind = name.substr(6);
      bool like = contains(kind, "_like");
      std::string dtype = "float32";
      std::vector<Val> shape;
      std::string fill = starts_with(kind, "zeros") ? "0" : starts_with(kind, "ones") ? "1" : "";
      if (like) {
        if (e->kids.size() < 2) fail("host_logic", "`" + text + "` without a tensor");
        Val src = eval(env, e->kids[1]);
        if (src.kind != Val::Tensor)
          fail("host_logic", "`" + text + "`: the _like argument is not a tensor kernrl follows");
        shape = C.tensors[static_cast<size_t>(src.tensor)].shape;
        dtype = C.tensors[static_cast<size_t>(src.tensor)].dtype;
        std::string d2 = dtype;
        shape_args(env, e, e->kids.size(), &d2);  // dtype= only
        dtype = d2;
      } else if (starts_with(kind, "full")) {
        if (e->kids.size() < 3) fail("host_logic", "`" + text + "` without a fill value");
        Val s = eval(env, e->kids[1]);
        if (s.kind == Val::List)
          for (const auto& d : s.items) shape.push_back(as_int(d, text));
        else
          shape.push_back(as_int(s, text));
        Val fv = eval(env, e->kids[2]);
        if (fv.kind == Val::Int && fv.k)
          fill = std::to_string(*fv.k);
        else if (fv.kind == Val::Float && fv.f)
          fill = float_literal(*fv.f);
        else
          fail("host_logic", "`" + text + "` fills with a value kernrl cannot compute");
        shape_args(env, e, e->kids.size(), &dtype);
      } else {
        shape = shape_args(env, e, 1, &dtype);
      }
      return C.alloc(shape, dtype, fill, text, "");
    }
    if (starts_with(name, "torch.") || starts_with(name, "F.") || starts_with(name, "nn.") ||
        starts_with(name, "math.") || starts_with(name, "numpy.") || starts_with(name, "np."))
      torch_op(name, text);
    if (contains(name, "triton"))
      fail("not_kernelbench", "forward calls a Triton kernel (`" + text + "`)");
    fail("host_logic",
         "forward calls `" + name + "`, which kernrl does not follow (`" + text + "`)");
  }

  Val tensor_method(Env& env, const Val& obj, const std::string& m, const PyExprP& e) {
    const TensorInfo& t = C.tensors[static_cast<size_t>(obj.tensor)];
    std::string text = py_text(e);
    std::vector<Val> args;
    for (size_t i = 1; i < e->kids.size(); ++i) args.push_back(eval(env, e->kids[i]));
    if (m == "contiguous" || m == "cuda" || m == "view" || m == "reshape" || m == "view_as" ||
        m == "flatten" || m == "squeeze" || m == "unsqueeze" || m == "detach" || m == "clone" ||
        m == "requires_grad_")
      return obj;
    if (m == "to" || m == "type") {
      for (const auto& [k, v] : e->kwargs)
        if (k == "dtype") {
          std::string d = dtype_of_torch(resolve(py_dotted(v)));
          if (!d.empty() && d != t.dtype) torch_op("Tensor.to", text);
        }
      for (const Val& a : args)
        if (a.kind == Val::DType && a.dtype != t.dtype) torch_op("Tensor.to", text);
      for (size_t i = 1; i < e->kids.size(); ++i) {
        std::string d = dtype_of_torch(resolve(py_dotted(e->kids[i])));
        if (!d.empty() && d != t.dtype && py_dotted(e->kids[i]).find("torch") != std::string::npos)
          torch_op("Tensor.to", text);
      }
      return obj;
    }
    if (m == "float" || m == "double" || m == "half" || m == "int" || m == "long") {
      std::string d = m == "float"    ? "float32"
                      : m == "double" ? "float64"
                      : m == "half"   ? "float16"
                      : m == "int"    ? "int32"
                                      : "int64";
      if (d != t.dtype) torch_op("Tensor." + m, text);
      return obj;
    }
    if (m == "size") {
      if (args.empty()) {
        Val l;
        l.kind = Val::List;
        l.items = t.shape;
        return l;
      }
      Val i = as_int(args[0], text);
      if (!i.k)
        fail("host_logic", "`" + text + "` in forward picks a dimension kernrl cannot compute");
      int64_t k = *i.k < 0 ? *i.k + static_cast<int64_t>(t.shape.size()) : *i.k;
      if (k < 0 || k >= static_cast<int64_t>(t.shape.size()))
        fail("mismatch", "`" + text + "` in forward asks for dimension " + std::to_string(*i.k) +
                             " of a tensor with " + std::to_string(t.shape.size()) +
                             " dimensions in this problem");
      return t.shape[static_cast<size_t>(k)];
    }
    if (m == "dim" || m == "ndimension") return make_int(static_cast<int64_t>(t.shape.size()));
    if (m == "numel") {
      Val n = make_int(1);
      for (const Val& d : t.shape) n = int_binop("*", n, d, text);
      return n;
    }
    if (m == "is_contiguous" || m == "is_cuda") return make_bool(true);
    if (m == "new_empty" || m == "new_zeros" || m == "new_ones") {
      std::string dtype = t.dtype;
      std::vector<Val> shape = shape_args(env, e, 1, &dtype);
      return C.alloc(shape, dtype, m == "new_zeros" ? "0" : m == "new_ones" ? "1" : "", text, "");
    }
    if (m == "item" || m == "cpu" || m == "tolist" || m == "numpy")
      fail("data_dependent_host", "forward reads a GPU result on the host (`" + text + "`)");
    torch_op("Tensor." + m, text);
  }
};

// ------------------------------------------------------------------ device code
bool mentions_torch(const std::vector<CTok>& toks, size_t first, size_t last, std::string* what) {
  for (size_t i = first; i < last; ++i) {
    const CTok& t = toks[i];
    if (t.kind != CTok::Ident) continue;
    bool ns = i + 1 < last && toks[i + 1].text == "::";
    if ((t.text == "torch" || t.text == "at" || t.text == "c10" || t.text == "pybind11" ||
         t.text == "py") &&
        ns) {
      if (what) *what = t.text + "::" + (i + 2 < last ? toks[i + 2].text : "");
      return true;
    }
    if (t.text == "Tensor" || starts_with(t.text, "TORCH_") || starts_with(t.text, "AT_") ||
        starts_with(t.text, "C10_") || t.text == "PYBIND11_MODULE" ||
        contains(t.text, "TensorAccessor") || t.text == "IntArrayRef") {
      if (what) *what = t.text;
      return true;
    }
  }
  return false;
}

bool uses_host_api(const std::vector<CTok>& toks, size_t first, size_t last) {
  static const char* const host[] = {"cudaMalloc",
                                     "cudaMemcpy",
                                     "cudaFree",
                                     "cudaStreamCreate",
                                     "cudaDeviceSynchronize",
                                     "cudaGetLastError",
                                     "cudaEventCreate",
                                     "cudaFuncSetAttribute",
                                     "cudaGetDeviceProperties",
                                     "cudaMemset",
                                     "cublasCreate",
                                     "cudaLaunchKernel",
                                     "cudaOccupancyMaxActiveBlocksPerMultiprocessor"};
  for (size_t i = first; i < last; ++i) {
    const CTok& t = toks[i];
    if (t.kind == CTok::Punct && t.text == "<<<") return true;
    if (t.kind != CTok::Ident) continue;
    for (const char* h : host)
      if (starts_with(t.text, h)) return true;
    if (t.text == "std" && i + 2 < last &&
        (toks[i + 2].text == "vector" || toks[i + 2].text == "cout" || toks[i + 2].text == "cerr" ||
         toks[i + 2].text == "string" || toks[i + 2].text == "runtime_error" ||
         toks[i + 2].text == "map"))
      return true;
  }
  return false;
}

bool dropped_include(const std::string& directive) {
  std::string d = directive;
  size_t p = d.find("include");
  if (p == std::string::npos) return false;
  std::string target = d.substr(p + 7);
  static const char* const host[] = {"torch/",
                                     "ATen/",
                                     "c10/",
                                     "pybind11",
                                     "THC/",
                                     "<vector>",
                                     "<iostream>",
                                     "<string>",
                                     "<sstream>",
                                     "<memory>",
                                     "<map>",
                                     "<unordered_map>",
                                     "<stdexcept>",
                                     "<iomanip>",
                                     "<fstream>",
                                     "<chrono>",
                                     "<thread>",
                                     "<random>",
                                     "cublas",
                                     "cudnn",
                                     "cufft",
                                     "curand",
                                     "cusparse",
                                     "cusolver",
                                     "<thrust/",
                                     "<Python.h>",
                                     "<set>",
                                     "<list>",
                                     "<mutex>",
                                     "<optional>",
                                     "<cuda_profiler_api.h>",
                                     "<nvtx",
                                     "<iterator>",
                                     "<cuda_runtime.h>",
                                     "<cuda_runtime_api.h>"};
  for (const char* h : host)
    if (target.find(h) != std::string::npos) return true;
  return false;
}

struct Removal {
  size_t begin, end;
  std::string replacement;
};

void plan_removals(const ExtModule& m, const ExtModule::Source& s, const std::vector<CItem>& items,
                   std::vector<Removal>* out) {
  for (const CItem& it : items) {
    const CTok& first = s.toks[it.first];
    const CTok& last = s.toks[it.last - 1];
    size_t b = first.begin, e = last.end;
    switch (it.kind) {
      case CItem::Directive: {
        std::string d = first.text;
        bool define = d.find("define") != std::string::npos && d.find("define") < 8;
        std::string dummy;
        if (dropped_include(d))
          out->push_back({b, e, ""});
        else if (define &&
                 (d.find("TORCH_") != std::string::npos || d.find("AT_") != std::string::npos ||
                  d.find("torch::") != std::string::npos || d.find("at::") != std::string::npos ||
                  d.find("c10::") != std::string::npos || d.find("is_cuda") != std::string::npos ||
                  d.find("is_contiguous") != std::string::npos ||
                  d.find("C10_") != std::string::npos ||
                  d.find("cudaGetErrorString") != std::string::npos ||
                  d.find("cudaGetLastError") != std::string::npos))
          out->push_back({b, e, ""});
        break;
      }
      case CItem::Function: {
        bool device = it.is_global || it.is_device;
        bool host_only = it.is_host && !it.is_device;
        bool listed =
            std::find(m.functions.begin(), m.functions.end(), it.name) != m.functions.end();
        std::string what;
        bool torch = mentions_torch(s.toks, it.first, it.last, &what);
        bool host = host_only || listed || it.name == "PYBIND11_MODULE" || it.name.empty() ||
                    (!device && (torch || uses_host_api(s.toks, it.first, it.last)));
        if (host)
          out->push_back(
              {b, e,
               it.name.empty() || it.name == "PYBIND11_MODULE"
                   ? ""
                   : "// (host function " + it.name + ": its launches are in the launch block)"});
        break;
      }
      case CItem::Declaration:
      case CItem::Type: {
        if (mentions_torch(s.toks, it.first, it.last, nullptr) ||
            uses_host_api(s.toks, it.first, it.last))
          out->push_back({b, e, ""});
        break;
      }
      case CItem::Block:
        plan_removals(m, s, it.children, out);
        break;
    }
  }
}

void collect_kept(const ExtModule::Source& s, const std::vector<CItem>& items,
                  const std::vector<Removal>& removed, std::vector<const CItem*>* kept) {
  for (const CItem& it : items) {
    if (it.kind == CItem::Block) {
      collect_kept(s, it.children, removed, kept);
      continue;
    }
    size_t b = s.toks[it.first].begin;
    bool gone =
        std::any_of(removed.begin(), removed.end(), [&](const Removal& r) { return r.begin == b; });
    if (!gone) kept->push_back(&it);
  }
}

std::string device_code(const ExtModule& m, const ExtModule::Source& s) {
  std::vector<Removal> removals;
  plan_removals(m, s, s.items, &removals);
  std::vector<const CItem*> kept;
  collect_kept(s, s.items, removals, &kept);
  for (const CItem* it : kept) {
    std::string what;
    if (it->kind != CItem::Directive && mentions_torch(s.toks, it->first, it->last, &what)) {
      std::string where = it->kind == CItem::Function ? "the device function `" + it->name + "`"
                                                      : "the device code";
      throw ImportError("unsupported_cuda",
                        where + " uses PyTorch's `" + what + "`; a kernel file is plain CUDA");
    }
  }
  std::sort(removals.begin(), removals.end(),
            [](const Removal& a, const Removal& b) { return a.begin < b.begin; });
  std::string out;
  size_t at = 0;
  for (const Removal& r : removals) {
    if (r.begin < at) continue;
    out += s.text.substr(at, r.begin - at);
    out += r.replacement;
    at = r.end;
  }
  out += s.text.substr(at);
  // Trim runs of blank lines left behind.
  std::string trimmed;
  int blank = 0;
  std::istringstream in(out);
  std::string line;
  bool started = false;
  while (std::getline(in, line)) {
    bool is_blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (is_blank) {
      if (!started) continue;
      if (++blank > 1) continue;
    } else {
      blank = 0;
      started = true;
    }
    trimmed += line + "\n";
  }
  while (trimmed.size() >= 2 && trimmed[trimmed.size() - 1] == '\n' &&
         trimmed[trimmed.size() - 2] == '\n')
    trimmed.pop_back();
  return trimmed;
}

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

  PySide py(*this, python_);
  Val ret = py.run().ret;

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
    TensorInfo& t = tensors[static_cast<size_t>(outs[i])];
    const TensorSpec& spec = P.outputs[i];
    if (t.role == "input" || t.role == "parameter")
      fail("in_place",
           "forward returns the " + t.role + " `" + t.name + "` as the output `" + spec.name +
               "`: the result is written in place, and kernrl's inputs must stay unchanged");
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
  for (const LaunchOut& L : launches)
    for (size_t a = 0; a < L.args.size(); ++a)
      if (L.args[a].tensor >= 0 && !(L.fill && a == 0)) used.insert(L.args[a].tensor);
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
    // kernrl zeroes scratch buffers before each evaluation.
    for (size_t l = 0; l < launches.size(); ++l)
      if (launches[l].fill && launches[l].fills == static_cast<int>(i) && t.fill == "0")
        drop[l] = true;
  }
  size_t kernels = 0;
  std::set<std::string> fills_kept;
  for (size_t l = 0; l < launches.size(); ++l) {
    if (drop[l]) continue;
    if (launches[l].fill)
      fills_kept.insert(tensors[static_cast<size_t>(launches[l].fills)].dtype);
    else
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
  for (const ExtModule& m : exts) {
    if (!m.used) continue;
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
  o << "/* kernrl\nproblem: " << P.id << "\nlaunches:\n";
  for (size_t l = 0; l < launches.size(); ++l) {
    if (drop[l]) continue;
    const LaunchOut& L = launches[l];
    o << "  - kernel: " << L.kernel << "\n";
    o << "    grid: [" << join(L.grid) << "]\n";
    o << "    block: [" << join(L.block) << "]\n";
    if (L.shared != "0") o << "    shared_bytes: " << L.shared << "\n";
    std::vector<std::string> args;
    for (const auto& a : L.args)
      args.push_back(a.tensor >= 0 ? tensors[static_cast<size_t>(a.tensor)].name : a.text);
    o << "    args: [" << join(args) << "]\n";
    if (!L.repeat_var.empty())
      o << "    repeat: {count: " << L.repeat_count << ", var: " << L.repeat_var << "}\n";
  }
  if (!scratch.empty()) {
    o << "scratch:\n";
    for (const auto& [sname, idx] : scratch) {
      const TensorInfo& t = tensors[static_cast<size_t>(idx)];
      o << "  " << sname << ": {dtype: " << t.dtype << ", count: " << numel_text(t.shape) << "}\n";
    }
  }
  o << "*/\n";
  if (!py.cflag_defines.empty()) {
    for (const auto& [k, v] : py.cflag_defines) o << "#define " << k << " " << v << "\n";
  }
  if (fills_kept.count("float16")) o << "#include <cuda_fp16.h>\n";
  if (fills_kept.count("bfloat16")) o << "#include <cuda_bf16.h>\n";
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
  KernelBenchImport r;
  kbimport::Converter c(problem, python);
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
  return r;
}

bool looks_like_kernelbench(const std::string& text) {
  return text.find("ModelNew") != std::string::npos &&
         text.find("load_inline") != std::string::npos;
}

}  // namespace kernrl
