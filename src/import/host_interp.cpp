// The C++ host side of a load_inline module, run symbolically: every statement of the wrapper is
// executed with values kernrl knows (constants, dtypes, the problem's scalars) or expressions over
// the sizes; kernel launches become launch-block entries, allocations become outputs or scratch
// buffers, and anything the launch block cannot express is an ImportError naming it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "core/expr.h"
#include "import/converter.h"

namespace kernrl::kbimport {

namespace {

constexpr int kMaxCallDepth = 24;
constexpr int kMaxLoopIterations = 4096;
constexpr int kMaxMacroDepth = 32;

bool starts_with(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}
bool contains(const std::string& s, const char* p) {
  return s.find(p) != std::string::npos;
}

std::string strip_std(std::string t) {
  for (const char* p : {"std::", "::", "c10::", "at::", "torch::"})
    if (starts_with(t, p)) t = t.substr(std::char_traits<char>::length(p));
  return t;
}

[[noreturn]] void fail(const std::string& category, const std::string& msg) {
  throw ImportError(category, msg);
}

bool is_punct(const CTok& t, const char* p) {
  return t.kind == CTok::Punct && t.text == p;
}
bool is_ident(const CTok& t, const char* p) {
  return t.kind == CTok::Ident && t.text == p;
}

// Library prefixes: a call to one of these is a library call, never converted.
std::string library_of(const std::string& name) {
  static const std::pair<const char*, const char*> libs[] = {
      {"cublasLt", "cuBLASLt"}, {"cublas", "cuBLAS"},   {"cudnn", "cuDNN"},
      {"cufft", "cuFFT"},       {"curand", "cuRAND"},   {"cusparse", "cuSPARSE"},
      {"cusolver", "cuSOLVER"}, {"thrust::", "Thrust"}, {"cub::Device", "CUB (device-wide)"},
      {"cutlass::", "CUTLASS"}, {"nccl", "NCCL"},       {"cute::", "CuTe"}};
  for (const auto& [prefix, lib] : libs)
    if (starts_with(name, prefix)) return lib;
  return "";
}

struct Var {
  Val v;
  int depth = 0;
};

struct Frame {
  Frame* parent = nullptr;  // a lambda sees the variables of the frame it is written in
  std::vector<std::map<std::string, Var>> scopes;
  std::map<std::string, std::string> types;  // type aliases (scalar_t -> float)
  std::string fn;
  int ext = -1;
  const std::vector<CTok>* T = nullptr;
  std::optional<Val> ret;
  bool returned = false;
  int depth_base = 0;   // depth of scopes[0], counting the frames it nests in
  int loop_depth = -1;  // while a loop body runs as a repeat: the body's depth; assignments to
                        // variables of shallower depth are host logic
};

struct FnRef {
  const CItem* item = nullptr;
  const ExtModule::Source* src = nullptr;
};

}  // namespace

class Interp {
 public:
  Interp(Converter& c, int ext) : C(c), ext_(ext) {}

  Val call_named(const std::string& fn, std::vector<Val> args,
                 const std::vector<std::pair<std::string, Val>>& kwargs) {
    load_globals();
    FnRef f = find_function(fn, false);
    if (!f.item)
      fail("mismatch", "forward calls `" + fn + "`, which the CUDA source of load_inline module `" +
                           C.exts[ext_].var + "` does not define");
    if (f.item->is_global)
      fail("unsupported_cuda", "forward calls the __global__ kernel `" + fn + "` directly");
    // Keyword arguments by parameter name.
    for (const auto& [k, v] : kwargs) {
      size_t at = f.item->params.size();
      for (size_t i = 0; i < f.item->params.size(); ++i)
        if (f.item->params[i].name == k) at = i;
      if (at == f.item->params.size())
        fail("mismatch",
             "forward passes `" + k + "=` to `" + fn + "`, which has no such parameter");
      if (args.size() <= at) args.resize(at + 1);
      args[at] = v;
    }
    return call(f, args, {}, nullptr);
  }

 private:
  Converter& C;
  int ext_;
  int call_depth_ = 0;
  int macro_depth_ = 0;

  // Top-level constants of the sources (constexpr int BLOCK = 256;), seen by every host function.
  Frame globals_;
  void load_globals() {
    globals_.fn = "(file scope)";
    globals_.ext = ext_;
    globals_.scopes.emplace_back();
    for (const auto& s : C.exts[ext_].sources) load_globals(s, s.items);
  }
  void load_globals(const ExtModule::Source& s, const std::vector<CItem>& items) {
    for (const CItem& it : items) {
      if (it.kind == CItem::Block) load_globals(s, it.children);
      if (it.kind != CItem::Declaration) continue;
      globals_.T = &s.toks;
      try {
        if (is_declaration(globals_, s.toks, it.first, it.last))
          exec_decl(globals_, s.toks, it.first, it.last);
      } catch (const ImportError&) {
        // Device globals and declarations kernrl does not follow: only an error if used.
      }
    }
  }

  // ---------------------------------------------------------------- lookup
  void collect(const std::vector<CItem>& items, const ExtModule::Source& src,
               const std::string& name, bool kernel, FnRef* out) const {
    for (const CItem& it : items) {
      if (it.kind == CItem::Block) collect(it.children, src, name, kernel, out);
      if (it.kind != CItem::Function || it.name != name) continue;
      if (kernel != it.is_global) continue;
      if (!out->item) *out = FnRef{&it, &src};
    }
  }
  FnRef find_function(const std::string& name, bool kernel) const {
    FnRef f;
    for (const auto& s : C.exts[ext_].sources) collect(s.items, s, name, kernel, &f);
    return f;
  }

  // ---------------------------------------------------------------- variables
  Var* lookup(Frame& fr, const std::string& name) {
    for (Frame* f = &fr; f; f = f->parent)
      for (auto it = f->scopes.rbegin(); it != f->scopes.rend(); ++it) {
        auto v = it->find(name);
        if (v != it->end()) return &v->second;
      }
    return nullptr;
  }
  std::string alias(Frame& fr, const std::string& name) {
    for (Frame* f = &fr; f; f = f->parent) {
      auto it = f->types.find(name);
      if (it != f->types.end()) return it->second;
    }
    return "";
  }
  int depth(Frame& fr) { return fr.depth_base + static_cast<int>(fr.scopes.size()); }
  void declare(Frame& fr, const std::string& name, Val v) {
    fr.scopes.back()[name] = Var{std::move(v), depth(fr)};
  }
  int loop_depth(Frame& fr) {
    for (Frame* f = &fr; f; f = f->parent)
      if (f->loop_depth >= 0) return f->loop_depth;
    return -1;
  }
  void store(Frame& fr, const std::string& name, const std::vector<std::string>& path, Val v,
             const std::string& what) {
    Var* var = lookup(fr, name);
    if (!var)
      fail("host_logic",
           "`" + what + "` in `" + fr.fn + "` assigns to `" + name + "`, which is not declared");
    int ld = loop_depth(fr);
    if (ld >= 0 && var->depth < ld)
      fail("host_logic", "a loop in `" + fr.fn +
                             "` whose trip count depends on the sizes changes `" + name +
                             "` on each pass (`" + what +
                             "`); the launch block repeats launches, not host state");
    Val* target = &var->v;
    for (const auto& p : path) {
      if (target->kind == Val::Dim3 && (p == "x" || p == "y" || p == "z")) {
        target = &target->items[p == "x" ? 0 : p == "y" ? 1 : 2];
      } else if (target->kind == Val::List && !p.empty() &&
                 std::isdigit(static_cast<unsigned char>(p[0]))) {
        size_t k = std::stoul(p);
        if (k >= target->items.size())
          fail("host_logic",
               "`" + what + "` in `" + fr.fn + "` writes past the end of `" + name + "`");
        target = &target->items[k];
      } else {
        fail("host_logic",
             "`" + what + "` in `" + fr.fn + "` assigns to a member kernrl cannot follow");
      }
    }
    // Keep the declared category: an int stays an int.
    if (target->kind == Val::Int && v.kind != Val::Int)
      v = to_int(v, what, fr);
    else if (target->kind == Val::Float && v.kind != Val::Float)
      v = to_float(v, what, fr);
    *target = std::move(v);
  }

  // ---------------------------------------------------------------- conversions
  Val to_int(const Val& v, const std::string& what, Frame& fr) {
    switch (v.kind) {
      case Val::Int: {
        Val r = v;
        r.floaty = false;
        return r;
      }
      case Val::Bool:
        if (v.k) return make_int(*v.k);
        break;
      case Val::Float:
        if (v.f) return make_int(static_cast<int64_t>(*v.f));
        break;
      case Val::Ratio: {
        // (float)a / b converted back to an integer: truncation, a / b for non-negative sizes.
        return arith("/", v.items[0], v.items[1], what, fr);
      }
      default:
        break;
    }
    fail_value(v, "an integer", what, fr);
  }
  Val to_float(const Val& v, const std::string& what, Frame& fr) {
    switch (v.kind) {
      case Val::Float:
        return v;
      case Val::Int:
        if (v.k) return make_float(static_cast<double>(*v.k));
        {
          Val r = v;
          r.floaty = true;
          return r;
        }
      case Val::Bool:
        if (v.k) return make_float(static_cast<double>(*v.k));
        break;
      case Val::Ratio:
        return v;
      default:
        break;
    }
    fail_value(v, "a number", what, fr);
  }
  [[noreturn]] void fail_value(const Val& v, const std::string& wanted, const std::string& what,
                               Frame& fr) {
    if (v.kind == Val::Unknown)
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` uses " + v.why +
                             ", which kernrl cannot compute");
    fail("host_logic",
         "host logic in `" + fr.fn + "`: `" + what + "` needs " + wanted + " kernrl can compute");
  }

  // ---------------------------------------------------------------- integer arithmetic
  Val arith(const std::string& op, const Val& a0, const Val& b0, const std::string& what,
            Frame& fr) {
    // Floating point: constants fold; sizes in floating point become a Ratio for ceil/floor.
    if (a0.kind == Val::Float || b0.kind == Val::Float || a0.floaty || b0.floaty ||
        a0.kind == Val::Ratio || b0.kind == Val::Ratio) {
      Val a = a0.kind == Val::Bool ? to_int(a0, what, fr) : a0;
      Val b = b0.kind == Val::Bool ? to_int(b0, what, fr) : b0;
      auto num = [&](const Val& v) -> std::optional<double> {
        if (v.kind == Val::Float) return v.f;
        if (v.kind == Val::Int && v.k) return static_cast<double>(*v.k);
        return std::nullopt;
      };
      auto x = num(a), y = num(b);
      // A whole-valued float constant next to a size (n / 16.0, n * 2.0f): the size's Ratio or
      // floating value, so that ceil(n / 16.0) is still cdiv(n, 16).
      auto whole = [](const Val& v) {
        return v.kind == Val::Float && v.f && std::isfinite(*v.f) && std::floor(*v.f) == *v.f &&
               std::fabs(*v.f) < 9e15;
      };
      if (!(x && y) && (a.kind == Val::Int || a.kind == Val::Float) &&
          (b.kind == Val::Int || b.kind == Val::Float)) {
        if (whole(a)) a = make_int(static_cast<int64_t>(*a.f)), a.floaty = true;
        if (whole(b)) b = make_int(static_cast<int64_t>(*b.f)), b.floaty = true;
      }
      if (x && y) {
        double r = op == "+"   ? *x + *y
                   : op == "-" ? *x - *y
                   : op == "*" ? *x * *y
                   : op == "/" ? *x / *y
                               : std::fmod(*x, *y);
        if (!std::isfinite(r))
          fail("host_logic",
               "host logic in `" + fr.fn + "`: `" + what + "` is not a finite number");
        return make_float(r);
      }
      if (op == "/" && a.kind == Val::Int && b.kind == Val::Int) {
        Val r;
        r.kind = Val::Ratio;
        r.items = {to_int(a, what, fr), to_int(b, what, fr)};
        return r;
      }
      if (a.kind == Val::Int && b.kind == Val::Int && (op == "+" || op == "-" || op == "*")) {
        Val r = arith(op, to_int(a, what, fr), to_int(b, what, fr), what, fr);
        r.floaty = true;
        return r;
      }
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` computes a floating-point value from the sizes on the host; kernrl "
                             "passes floats only from the problem's scalars or literals");
    }
    Val a = a0.kind == Val::Bool ? to_int(a0, what, fr) : a0;
    Val b = b0.kind == Val::Bool ? to_int(b0, what, fr) : b0;
    if (a.kind != Val::Int) fail_value(a, "an integer", what, fr);
    if (b.kind != Val::Int) fail_value(b, "an integer", what, fr);
    if (a.k && b.k) {
      int64_t x = *a.k, y = *b.k;
      if ((op == "/" || op == "%") && y == 0)
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` divides by zero");
      int64_t r = op == "+"    ? x + y
                  : op == "-"  ? x - y
                  : op == "*"  ? x * y
                  : op == "/"  ? x / y
                  : op == "%"  ? x % y
                  : op == "<<" ? (x << y)
                  : op == ">>" ? (x >> y)
                  : op == "&"  ? (x & y)
                  : op == "|"  ? (x | y)
                               : (x ^ y);
      return make_int(r);
    }
    if (op == "<<" || op == ">>") {
      if (!b.k || *b.k < 0 || *b.k > 62)
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                               "` shifts by an amount that depends on the sizes");
      return arith(op == "<<" ? "*" : "/", a, make_int(int64_t{1} << *b.k), what, fr);
    }
    if (op == "&" || op == "|" || op == "^")
      fail("host_logic",
           "host logic in `" + fr.fn + "`: `" + what + "` uses a bitwise operator on sizes");
    return int_binop(op, a, b, what);
  }
  Val minmax(const std::string& which, const Val& a, const Val& b, const std::string& what,
             Frame& fr) {
    if ((a.kind == Val::Float || b.kind == Val::Float) && !(a.kind == Val::Int && !a.k) &&
        !(b.kind == Val::Int && !b.k)) {
      Val x = to_float(a, what, fr), y = to_float(b, what, fr);
      if (x.f && y.f)
        return make_float(which == "min" ? std::min(*x.f, *y.f) : std::max(*x.f, *y.f));
    }
    Val x = to_int(a, what, fr), y = to_int(b, what, fr);
    if (x.k && y.k) return make_int(which == "min" ? std::min(*x.k, *y.k) : std::max(*x.k, *y.k));
    return make_int_expr(which + "(" + int_text(x) + ", " + int_text(y) + ")");
  }
  Val compare(const std::string& op, const Val& a, const Val& b, const std::string& what,
              Frame& fr) {
    auto cmp = [&](auto x, auto y) -> bool {
      return op == "<"    ? x < y
             : op == ">"  ? x > y
             : op == "<=" ? x <= y
             : op == ">=" ? x >= y
             : op == "==" ? x == y
                          : x != y;
    };
    if (a.kind == Val::DType || b.kind == Val::DType) {
      if (a.kind != b.kind) fail_value(a.kind == Val::DType ? b : a, "a dtype", what, fr);
      if (op != "==" && op != "!=") fail("host_logic", "`" + what + "` compares dtypes with " + op);
      return make_bool(cmp(a.dtype, b.dtype));
    }
    if (a.kind == Val::Ptr && b.kind == Val::Ptr) return make_bool(cmp(a.tensor, b.tensor));
    if (a.kind == Val::Float || b.kind == Val::Float) {
      Val x = to_float(a, what, fr), y = to_float(b, what, fr);
      if (x.f && y.f) return make_bool(cmp(*x.f, *y.f));
    }
    Val x = to_int(a, what, fr), y = to_int(b, what, fr);
    if (x.k && y.k) return make_bool(cmp(*x.k, *y.k));
    auto px = C.per_set(x), py = C.per_set(y);
    if (!px || !py)
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` compares values that depend on the GPU or a loop");
    Val r;
    r.kind = Val::Bool;
    r.text = what;
    for (size_t s = 0; s < px->size(); ++s) r.per_set.push_back(cmp((*px)[s], (*py)[s]) ? 1 : 0);
    return r;
  }
  // Set by truth() when a condition was decided by the problem's size sets, not by constants.
  bool last_by_sizes_ = false;
  void note_decided(Frame& fr, const std::optional<bool>& cond, const std::string& what) {
    if (!cond || !last_by_sizes_) return;
    std::string n = "`" + what + "` in `" + fr.fn + "` is " + (*cond ? "true" : "false") +
                    " at every size set of the problem (bench and tests), so it was decided here";
    if (std::find(C.notes.begin(), C.notes.end(), n) == C.notes.end()) C.notes.push_back(n);
  }

  // A condition's value when it is the same at every size set of the problem.
  std::optional<bool> truth(const Val& v) {
    if (v.kind == Val::Bool || v.kind == Val::Int) {
      if (v.k) return *v.k != 0;
      if (v.kind == Val::Bool && !v.per_set.empty()) {
        bool all = std::all_of(v.per_set.begin(), v.per_set.end(), [](char c) { return c; });
        bool none = std::none_of(v.per_set.begin(), v.per_set.end(), [](char c) { return c; });
        if (all || none) {
          last_by_sizes_ = true;
          return all;
        }
        return std::nullopt;
      }
      if (v.kind == Val::Int) {
        auto p = C.per_set(v);
        if (p) {
          bool all = std::all_of(p->begin(), p->end(), [](int64_t x) { return x != 0; });
          bool none = std::all_of(p->begin(), p->end(), [](int64_t x) { return x == 0; });
          if (all || none) {
            last_by_sizes_ = true;
            return all;
          }
        }
        return std::nullopt;
      }
    }
    if (v.kind == Val::Float && v.f) return *v.f != 0;
    if (v.kind == Val::Ptr) return v.tensor >= 0;
    if (v.kind == Val::Tensor) return true;
    return std::nullopt;
  }
  Val logic(const std::string& op, const Val& a, const Val& b, const std::string& what, Frame& fr) {
    auto bits = [&](const Val& v) -> std::vector<char> {
      size_t n = C.size_sets.size();
      if (v.kind == Val::Bool && !v.per_set.empty()) return v.per_set;
      auto t = truth(v);
      if (t) return std::vector<char>(n, *t ? 1 : 0);
      if (v.kind == Val::Int) {
        auto p = C.per_set(v);
        if (p) {
          std::vector<char> r;
          for (int64_t x : *p) r.push_back(x != 0);
          return r;
        }
      }
      fail("host_logic",
           "host logic in `" + fr.fn + "`: the condition `" + what + "` cannot be evaluated");
    };
    auto x = bits(a), y = bits(b);
    Val r;
    r.kind = Val::Bool;
    r.text = what;
    for (size_t s = 0; s < x.size(); ++s)
      r.per_set.push_back(op == "&&" ? (x[s] && y[s]) : (x[s] || y[s]));
    if (a.k && b.k) return make_bool(op == "&&" ? (*a.k && *b.k) : (*a.k || *b.k));
    return r;
  }

  // ---------------------------------------------------------------- types
  std::string resolve_type(Frame& fr, const std::string& t) {
    std::string a = alias(fr, t);
    return a.empty() ? t : a;
  }
  bool type_word(Frame& fr, const CTok& t) {
    if (t.kind != CTok::Ident) return false;
    static const std::set<std::string> words = {
        "int",           "float",       "double",      "char",           "bool",
        "long",          "short",       "unsigned",    "signed",         "void",
        "auto",          "size_t",      "ssize_t",     "ptrdiff_t",      "int8_t",
        "uint8_t",       "int16_t",     "uint16_t",    "int32_t",        "uint32_t",
        "int64_t",       "uint64_t",    "dim3",        "half",           "__half",
        "__nv_bfloat16", "float2",      "float4",      "int2",           "int4",
        "cudaStream_t",  "cudaError_t", "cudaEvent_t", "cudaDeviceProp", "const",
        "constexpr",     "static",      "volatile",    "register",       "inline",
        "__restrict__",  "typename",    "index_t",     "uint",           "decltype"};
    if (words.count(t.text)) return true;
    if (!alias(fr, t.text).empty()) return true;
    if (t.text.size() > 2 && t.text.compare(t.text.size() - 2, 2, "_t") == 0) return true;
    return false;
  }
  // Whether T[i, end) starts a declaration: a type then a name then = ( { ; , or [.
  bool is_declaration(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
    size_t k = i;
    int words = 0;
    bool first_is_type = false;
    while (k < end) {
      const CTok& t = T[k];
      if (t.kind == CTok::Ident) {
        if (words == 0) first_is_type = type_word(fr, t) || contains(t.text, "Tensor");
        ++words;
        ++k;
        while (k + 1 < end && is_punct(T[k], "::") && T[k + 1].kind == CTok::Ident) k += 2;
        if (k < end && is_punct(T[k], "<")) {
          size_t c = c_match(T, k, end);
          if (c >= end) return false;
          k = c + 1;
        }
        continue;
      }
      if (is_punct(t, "::") && words == 0) {
        ++k;
        continue;
      }
      if (is_punct(t, "*") || is_punct(t, "&") || is_punct(t, "&&")) {
        if (words == 0) return false;
        ++k;
        continue;
      }
      break;
    }
    if (words < 2 || k >= end) return false;
    const CTok& last = T[k - 1];
    if (last.kind != CTok::Ident) return false;
    const CTok& next = T[k];
    bool ends = is_punct(next, "=") || is_punct(next, "(") || is_punct(next, "{") ||
                is_punct(next, ";") || is_punct(next, ",") || is_punct(next, "[");
    if (!ends) return false;
    (void)first_is_type;
    return true;
  }

  // ---------------------------------------------------------------- statements
  size_t find_semi(const std::vector<CTok>& T, size_t i, size_t end) {
    int d = 0;
    for (size_t k = i; k < end; ++k) {
      const CTok& t = T[k];
      if (t.kind != CTok::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
      if (t.text == ")" || t.text == "]" || t.text == "}") --d;
      if (d == 0 && t.text == ";") return k;
      if (d < 0) return k;
    }
    return end;
  }
  size_t close_of(const std::vector<CTok>& T, size_t open, size_t end) {
    size_t c = c_match(T, open, end);
    if (c >= end)
      fail("unsupported_cuda", "the host code cannot be read: '" + T[open].text + "' at line " +
                                   std::to_string(T[open].line) + " is never closed");
    return c;
  }
  size_t stmt_end(const std::vector<CTok>& T, size_t i, size_t end) {
    if (i >= end) return end;
    const CTok& t = T[i];
    if (is_punct(t, "{")) return close_of(T, i, end) + 1;
    if (t.kind == CTok::Directive) return i + 1;
    if (is_ident(t, "if") || is_ident(t, "for") || is_ident(t, "while") || is_ident(t, "switch")) {
      size_t c = close_of(T, i + 1, end);
      size_t e = stmt_end(T, c + 1, end);
      if (is_ident(t, "if") && e < end && is_ident(T[e], "else")) e = stmt_end(T, e + 1, end);
      return e;
    }
    if (is_ident(t, "do")) {
      size_t e = stmt_end(T, i + 1, end);
      return find_semi(T, e, end) + 1;
    }
    if (is_ident(t, "try")) {
      size_t e = stmt_end(T, i + 1, end);
      while (e < end && is_ident(T[e], "catch")) {
        size_t c = close_of(T, e + 1, end);
        e = stmt_end(T, c + 1, end);
      }
      return e;
    }
    return std::min(end, find_semi(T, i, end) + 1);
  }

  // Whether T[i, end) does anything but checks: no launch, no assignment, no call of the source's
  // functions, no return of a value.
  bool only_checks(const std::vector<CTok>& T, size_t i, size_t end) {
    for (size_t k = i; k < end; ++k) {
      const CTok& t = T[k];
      if (t.kind == CTok::Punct &&
          (t.text == "<<<" || t.text == "=" || t.text == "+=" || t.text == "-=" || t.text == "*=" ||
           t.text == "/=" || t.text == "++" || t.text == "--"))
        return false;
      if (t.kind == CTok::Ident) {
        if (find_function(t.text, false).item || find_function(t.text, true).item) return false;
        if (t.text == "cudaMemset" || t.text == "cudaMemcpy" || starts_with(t.text, "AT_DISPATCH"))
          return false;
        if (t.text == "return" && k + 1 < end && !is_punct(T[k + 1], ";")) {
          // `return` of a value in a check is an early exit with a result: not a check.
          bool error_like = false;
          for (size_t q = k; q < end && !is_punct(T[q], ";"); ++q)
            if (T[q].kind == CTok::Ident &&
                (contains(T[q].text, "rror") || T[q].text == "false" || T[q].text == "nullptr"))
              error_like = true;
          if (!error_like) return false;
        }
      }
    }
    return true;
  }

  void exec_range(Frame& fr, size_t i, size_t end) {
    const std::vector<CTok>& T = *fr.T;
    while (i < end && !fr.returned) i = exec_stmt(fr, T, i, end);
  }

  void exec_block(Frame& fr, size_t i, size_t end) {
    fr.scopes.emplace_back();
    exec_range(fr, i, end);
    fr.scopes.pop_back();
  }

  // Runs one statement (or a braced body) T[i, stmt_end).
  void exec_body(Frame& fr, size_t i, size_t end) {
    const std::vector<CTok>& T = *fr.T;
    if (i < end && is_punct(T[i], "{")) {
      size_t c = close_of(T, i, end);
      exec_block(fr, i + 1, c);
    } else {
      fr.scopes.emplace_back();
      exec_stmt(fr, T, i, end);
      fr.scopes.pop_back();
    }
  }

  std::string snippet(const std::vector<CTok>& T, size_t i, size_t end) {
    std::string s = c_text(T, i, end);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
  }

  size_t exec_stmt(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
    const CTok& t = T[i];
    if (t.kind == CTok::Directive) return i + 1;
    if (is_punct(t, ";")) return i + 1;
    if (is_punct(t, "{")) {
      size_t c = close_of(T, i, end);
      exec_block(fr, i + 1, c);
      return c + 1;
    }
    if (t.kind == CTok::Ident) {
      const std::string& w = t.text;
      if (w == "return") {
        size_t e = find_semi(T, i + 1, end);
        if (e > i + 1)
          fr.ret = eval(fr, T, i + 1, e);
        else
          fr.ret = Val{};
        fr.returned = true;
        return e + 1;
      }
      if (w == "if") return exec_if(fr, T, i, end);
      if (w == "for") return exec_for(fr, T, i, end);
      if (w == "while" || w == "do") return exec_while(fr, T, i, end);
      if (w == "switch") fail("host_logic", "host logic in `" + fr.fn + "`: a `switch` statement");
      if (w == "break" || w == "continue" || w == "goto")
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + w + "` in the host code");
      if (w == "try") {
        size_t e = stmt_end(T, i, end);
        size_t body_end = stmt_end(T, i + 1, end);
        exec_body(fr, i + 1, body_end);
        return e;
      }
      if (w == "throw") {
        size_t e = find_semi(T, i, end);
        fail("mismatch", "the host wrapper `" + fr.fn + "` raises an error for this problem (`" +
                             snippet(T, i, e) + "`)");
      }
      if (w == "using" || w == "typedef") {
        size_t e = find_semi(T, i, end);
        if (w == "using" && i + 3 < e && T[i + 1].kind == CTok::Ident && is_punct(T[i + 2], "="))
          fr.types[T[i + 1].text] = resolve_type(fr, c_text(T, i + 3, e));
        else if (w == "typedef" && e > i + 2 && T[e - 1].kind == CTok::Ident)
          fr.types[T[e - 1].text] = resolve_type(fr, c_text(T, i + 1, e - 1));
        return e + 1;
      }
      if (w == "static_assert") return find_semi(T, i, end) + 1;
      if (is_declaration(fr, T, i, end)) return exec_decl(fr, T, i, end);
    }
    size_t e = find_semi(T, i, end);
    eval_statement_expr(fr, T, i, e);
    return std::min(end, e + 1);
  }

  void eval_statement_expr(Frame& fr, const std::vector<CTok>& T, size_t i, size_t e) {
    // A function-like macro used as a statement that only checks (CHECK_INPUT(x),
    // CUDA_CHECK(cudaGetLastError())): its call arguments run, the check does not.
    if (T[i].kind == CTok::Ident && i + 1 < e && is_punct(T[i + 1], "(")) {
      auto m = C.fn_macros.find(T[i].text);
      if (m != C.fn_macros.end() && macro_is_check(m->second)) {
        size_t c = close_of(T, i + 1, e);
        for (auto [a, b] : split_args(T, i + 2, c))
          if (b > a + 1 && T[a].kind == CTok::Ident && is_punct(T[a + 1], "(") &&
              starts_with(T[a].text, "cuda"))
            eval(fr, T, a, b);
        return;
      }
    }
    eval(fr, T, i, e);
  }

  bool macro_is_check(const Converter::FnMacro& m, int depth = 0) {
    for (const CTok& t : m.body) {
      if (t.kind != CTok::Ident) continue;
      if (starts_with(t.text, "TORCH_") || starts_with(t.text, "AT_ASSERT") || t.text == "throw" ||
          t.text == "cudaSuccess" || t.text == "cudaError_t" || t.text == "printf" ||
          t.text == "fprintf" || t.text == "exit" || t.text == "abort" || t.text == "assert" ||
          t.text == "cudaGetErrorString" || starts_with(t.text, "C10_") ||
          starts_with(t.text, "CHECK"))
        return true;
      // A macro made of other checking macros (CHECK_INPUT(x) -> CHECK_CUDA(x); ...).
      auto inner = C.fn_macros.find(t.text);
      if (depth < 8 && inner != C.fn_macros.end() && &inner->second != &m &&
          macro_is_check(inner->second, depth + 1))
        return true;
    }
    return false;
  }

  size_t exec_if(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
    size_t j = i + 1;
    if (j < end && is_ident(T[j], "constexpr")) ++j;
    if (j >= end || !is_punct(T[j], "("))
      fail("unsupported_cuda",
           "the host code cannot be read near `if` at line " + std::to_string(T[i].line));
    size_t c = close_of(T, j, end);
    size_t then_end = stmt_end(T, c + 1, end);
    size_t else_begin = end, else_end = then_end;
    if (then_end < end && is_ident(T[then_end], "else")) {
      else_begin = then_end + 1;
      else_end = stmt_end(T, else_begin, end);
    }
    std::string what = "if (" + snippet(T, j + 1, c) + ")";
    std::optional<bool> cond;
    last_by_sizes_ = false;
    try {
      cond = truth(eval(fr, T, j + 1, c));
    } catch (const ImportError&) {
      cond.reset();
    }
    note_decided(fr, cond, what);
    if (!cond) {
      bool checks = only_checks(T, c + 1, then_end) &&
                    (else_begin == end || only_checks(T, else_begin, else_end));
      if (checks) return else_end;  // an input check or an error report: no effect on launches
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` decides what runs, and is not the same at every size set of the "
                             "problem (the launch block cannot branch)");
    }
    if (*cond)
      exec_body(fr, c + 1, then_end);
    else if (else_begin < end)
      exec_body(fr, else_begin, else_end);
    return else_end;
  }

  bool contains_launch(const std::vector<CTok>& T, size_t i, size_t end) {
    for (size_t k = i; k < end; ++k) {
      if (is_punct(T[k], "<<<")) return true;
      if (T[k].kind == CTok::Ident && (find_function(T[k].text, false).item ||
                                       T[k].text == "cudaMemset" || T[k].text == "cudaMemsetAsync"))
        return true;
    }
    return false;
  }

  size_t exec_for(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
    size_t open = i + 1;
    if (open >= end || !is_punct(T[open], "("))
      fail("unsupported_cuda",
           "the host code cannot be read near `for` at line " + std::to_string(T[i].line));
    size_t close = close_of(T, open, end);
    size_t body_end = stmt_end(T, close + 1, end);
    size_t s1 = find_semi(T, open + 1, close);
    if (s1 >= close) fail("host_logic", "host logic in `" + fr.fn + "`: a range-based for loop");
    size_t s2 = find_semi(T, s1 + 1, close);
    std::string what = "for (" + snippet(T, open + 1, close) + ")";
    fr.scopes.emplace_back();
    if (s1 > open + 1) {
      if (is_declaration(fr, T, open + 1, s1 + 1))
        exec_decl(fr, T, open + 1, s1 + 1);
      else
        eval(fr, T, open + 1, s1);
    }
    for (int n = 0;; ++n) {
      // Only a constant condition unrolls: one that merely holds at every size set now may not
      // on a later pass.
      std::optional<bool> cond = true;
      if (s2 > s1 + 1) {
        Val cv = eval(fr, T, s1 + 1, s2);
        cond.reset();
        if ((cv.kind == Val::Bool || cv.kind == Val::Int) && cv.k) cond = *cv.k != 0;
      }
      if (!cond) {
        run_as_repeat(fr, T, open, s1, s2, close, close + 1, body_end, what);
        break;
      }
      if (!*cond) break;
      if (n >= kMaxLoopIterations)
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` runs more than " +
                               std::to_string(kMaxLoopIterations) + " times");
      exec_body(fr, close + 1, body_end);
      if (fr.returned) break;
      if (close > s2 + 1) eval(fr, T, s2 + 1, close);
    }
    fr.scopes.pop_back();
    return body_end;
  }

  // A loop whose trip count depends on the sizes: `for (int i = C; i < E; ++i)` with launches that
  // do not change host state becomes a launch-block repeat {count: E - C, var: i}.
  void run_as_repeat(Frame& fr, const std::vector<CTok>& T, size_t open, size_t s1, size_t s2,
                     size_t close, size_t body, size_t body_end, const std::string& what) {
    auto bad = [&](const std::string& why) {
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` runs a number of times that depends on the sizes" + why);
    };
    if (!contains_launch(T, body, body_end)) bad(" and computes host values");
    if (!C.repeat_var_.empty()) bad(" inside another such loop");
    // init: [type] v = C
    size_t k = open + 1;
    while (k < s1 && T[k].kind == CTok::Ident && k + 1 < s1 && T[k + 1].kind == CTok::Ident) ++k;
    if (!(k + 2 < s1 + 1 && T[k].kind == CTok::Ident && is_punct(T[k + 1], "=")))
      bad("; only `for (int i = START; i < COUNT; ++i)` loops become repeats");
    std::string v = T[k].text;
    Val start = to_int(eval(fr, T, k + 2, s1), what, fr);
    if (!start.k) bad(" and starts at a size-dependent value");
    // cond: v < E or v <= E
    if (!(s2 > s1 + 3 && is_ident(T[s1 + 1], v.c_str()) &&
          (is_punct(T[s1 + 2], "<") || is_punct(T[s1 + 2], "<="))))
      bad("; only `i < COUNT` conditions become repeats");
    bool le = is_punct(T[s1 + 2], "<=");
    Val limit = to_int(eval(fr, T, s1 + 3, s2), what, fr);
    // step: ++v, v++, v += 1
    std::string step = c_text(T, s2 + 1, close);
    if (!(step == "++" + v || step == "++ " + v || step == v + "++" || step == v + " ++" ||
          step == v + " += 1" || step == v + "+=1"))
      bad("; only loops stepping by one become repeats");
    Val count = arith("-", limit, start, what, fr);
    if (le) count = arith("+", count, make_int(1), what, fr);
    std::string var = v;
    while (C.reserved.count(var)) var += "_";
    C.reserved.insert(var);
    Val iv = arith("+", make_int_expr(var), start, what, fr);
    C.repeat_var_ = var;
    C.repeat_count_ = "max(" + int_text(count) + ", 0)";
    int saved = fr.loop_depth;
    fr.scopes.emplace_back();
    fr.loop_depth = depth(fr);
    declare(fr, v, iv);
    fr.scopes.back()[v].depth = depth(fr) + 1;  // the loop variable itself may be read freely
    size_t before = C.launches.size();
    if (is_punct(T[body], "{"))
      exec_range(fr, body + 1, close_of(T, body, body_end));
    else
      exec_stmt(fr, T, body, body_end);
    fr.scopes.pop_back();
    fr.loop_depth = saved;
    C.repeat_var_.clear();
    C.repeat_count_.clear();
    if (C.launches.size() == before) bad(" and launches nothing kernrl can follow");
    C.notes.push_back("`" + what + "` became `repeat: {count: " + C.launches.back().repeat_count +
                      ", var: " + var + "}`");
  }

  size_t exec_while(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
    bool do_while = is_ident(T[i], "do");
    size_t e = stmt_end(T, i, end);
    size_t body, body_end, cond_open;
    if (do_while) {
      body = i + 1;
      body_end = stmt_end(T, body, end);
      cond_open = body_end + 1;
    } else {
      cond_open = i + 1;
      body = close_of(T, cond_open, end) + 1;
      body_end = stmt_end(T, body, end);
    }
    size_t cond_close = close_of(T, cond_open, end);
    std::string what = std::string(do_while ? "do ... while (" : "while (") +
                       snippet(T, cond_open + 1, cond_close) + ")";
    for (int n = 0;; ++n) {
      if (!(do_while && n == 0)) {
        Val cv = eval(fr, T, cond_open + 1, cond_close);
        std::optional<bool> cond;
        if ((cv.kind == Val::Bool || cv.kind == Val::Int) && cv.k) cond = *cv.k != 0;
        if (!cond)
          fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                                 "` runs a number of times that depends on the sizes");
        if (!*cond) break;
      }
      if (n >= kMaxLoopIterations)
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` runs more than " +
                               std::to_string(kMaxLoopIterations) + " times");
      exec_body(fr, body, body_end);
      if (fr.returned) break;
    }
    return e;
  }

  size_t exec_decl(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
    size_t e = find_semi(T, i, end);
    // Type: everything up to the first declarator name.
    size_t k = i;
    std::vector<std::string> type_words;
    size_t type_end = i;
    while (k < e) {
      const CTok& t = T[k];
      if (t.kind == CTok::Ident) {
        // A name followed by = ( { ; , [ ends the type: it is the declarator.
        size_t n = k + 1;
        if (n < e && is_punct(T[n], "::")) {
          type_words.push_back(t.text);
          k = n;
          continue;
        }
        if (n < e && is_punct(T[n], "<")) {
          size_t c = c_match(T, n, e);
          type_words.push_back(c_text(T, k, c + 1));
          k = c + 1;
          continue;
        }
        bool ends = n >= e || is_punct(T[n], "=") || is_punct(T[n], "(") || is_punct(T[n], "{") ||
                    is_punct(T[n], ";") || is_punct(T[n], ",") || is_punct(T[n], "[");
        if (ends && !type_words.empty()) break;
        type_words.push_back(t.text);
        ++k;
        continue;
      }
      if (is_punct(t, "::")) {
        if (!type_words.empty())
          type_words.back() += "::";
        else
          type_words.push_back("::");
        ++k;
        // join "a::" with the following name
        if (k < e && T[k].kind == CTok::Ident) {
          type_words.back() += T[k].text;
          ++k;
        }
        continue;
      }
      if (is_punct(t, "*") || is_punct(t, "&") || is_punct(t, "&&")) {
        type_words.push_back(t.text);
        ++k;
        continue;
      }
      break;
    }
    type_end = k;
    (void)type_end;
    std::string type;
    bool pointer = false, is_const = false;
    for (const auto& w : type_words) {
      if (w == "const" || w == "constexpr") {
        is_const = true;
        continue;
      }
      if (w == "static" || w == "volatile" || w == "register" || w == "inline" ||
          w == "__restrict__" || w == "__restrict")
        continue;
      if (w == "*") {
        pointer = true;
        continue;
      }
      if (w == "&" || w == "&&") continue;
      type += (type.empty() ? "" : " ") + w;
    }
    (void)is_const;
    type = resolve_type(fr, type);
    // Declarators.
    while (k < e) {
      bool ptr = pointer;
      while (k < e && (is_punct(T[k], "*") || is_punct(T[k], "&"))) {
        ptr |= is_punct(T[k], "*");
        ++k;
      }
      while (k < e && T[k].kind == CTok::Ident &&
             (T[k].text == "const" || T[k].text == "__restrict__"))
        ++k;
      if (k >= e || T[k].kind != CTok::Ident) break;
      std::string name = T[k].text;
      ++k;
      Val v;
      bool has_init = false;
      std::vector<std::pair<size_t, size_t>> ctor_args;
      bool array = false;
      size_t array_open = 0, array_close = 0;
      if (k < e && is_punct(T[k], "[")) {
        size_t c = close_of(T, k, e);
        array = true;
        array_open = k;
        array_close = c;
        k = c + 1;
      }
      size_t decl_end = next_declarator(T, k, e);
      std::string what = snippet(T, i, e);
      if (k < e && is_punct(T[k], "=")) {
        has_init = true;
        v = eval(fr, T, k + 1, decl_end);
      } else if (k < e && (is_punct(T[k], "(") || is_punct(T[k], "{"))) {
        size_t c = close_of(T, k, e);
        ctor_args = split_args(T, k + 1, c);
        has_init = true;
        if (type == "dim3" || ctor_args.size() != 1 || array) {
          v = construct(fr, T, type, ctor_args, what, is_punct(T[k], "{"));
        } else {
          v = eval(fr, T, ctor_args[0].first, ctor_args[0].second);
        }
      }
      if (array) {
        if (has_init && v.kind != Val::List) v = Val{};
        if (!has_init) {
          // T name[N]: N default values (streams, device properties), else unknown values.
          Val n = to_int(eval(fr, T, array_open + 1, array_close), what, fr);
          v = Val{};
          v.kind = Val::List;
          if (!n.k || *n.k < 0 || *n.k > 64) {
            v = make_unknown("the array `" + name + "`");
          } else {
            Val item = convert_decl(fr, type, ptr, false, Val{}, name, what);
            v.items.assign(static_cast<size_t>(*n.k), item);
          }
        }
      } else {
        v = convert_decl(fr, type, ptr, has_init, std::move(v), name, what);
      }
      if (v.kind == Val::Tensor) {
        TensorInfo& t = C.tensors[static_cast<size_t>(v.tensor)];
        if (t.role == "alloc" && t.name.empty()) t.name = name;  // scratch buffers keep the name
      }
      declare(fr, name, std::move(v));
      k = decl_end;
      if (k < e && is_punct(T[k], ",")) ++k;
    }
    return std::min(end, e + 1);
  }

  size_t next_declarator(const std::vector<CTok>& T, size_t k, size_t e) {
    int d = 0;
    for (size_t q = k; q < e; ++q) {
      const CTok& t = T[q];
      if (t.kind != CTok::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
      if (t.text == ")" || t.text == "]" || t.text == "}") --d;
      if (d == 0 && t.text == ",") return q;
    }
    return e;
  }

  Val construct(Frame& fr, const std::vector<CTok>& T, const std::string& type,
                const std::vector<std::pair<size_t, size_t>>& args, const std::string& what,
                bool braces) {
    std::vector<Val> vals;
    for (auto [a, b] : args) vals.push_back(eval(fr, T, a, b));
    if (type == "dim3") return make_dim3(vals, what, fr);
    if (contains(type, "Guard") || contains(type, "guard")) return Val{};
    if (contains(type, "vector") || braces) {
      Val l;
      l.kind = Val::List;
      l.items = vals;
      return l;
    }
    if (vals.size() == 1) return vals[0];
    return make_unknown("a `" + type + "` built on the host");
  }

  Val make_dim3(const std::vector<Val>& vals, const std::string& what, Frame& fr) {
    if (vals.size() == 1 && vals[0].kind == Val::Dim3) return vals[0];
    if (vals.empty() || vals.size() > 3)
      fail("host_logic",
           "`" + what + "` builds a dim3 of " + std::to_string(vals.size()) + " values");
    Val d;
    d.kind = Val::Dim3;
    for (const auto& v : vals) d.items.push_back(to_int(v, what, fr));
    while (d.items.size() < 3) d.items.push_back(make_int(1));
    return d;
  }

  Val convert_decl(Frame& fr, const std::string& type, bool ptr, bool has_init, Val v,
                   const std::string& name, const std::string& what) {
    std::string t = strip_std(type);
    if (ptr) {
      if (!has_init) return make_unknown("the pointer `" + name + "` (not set)");
      if (v.kind == Val::Ptr) {
        Val p = v;
        if (t != "void" && t != "auto") p.elem = t;
        return p;
      }
      if (v.kind == Val::Int && v.k && *v.k == 0) {
        Val p;
        p.kind = Val::Ptr;
        return p;
      }
      if (v.kind == Val::Props) return v;
      fail_value(v, "a tensor's data pointer", what, fr);
    }
    if (!has_init) {
      if (t == "dim3") return make_dim3({make_int(1)}, what, fr);
      if (t == "cudaStream_t") {
        Val s;
        s.kind = Val::Stream;
        return s;
      }
      if (t == "cudaDeviceProp") {
        Val p;
        p.kind = Val::Props;
        return p;
      }
      if (contains(t, "vector")) {
        Val l;
        l.kind = Val::List;
        return l;
      }
      return make_unknown("`" + name + "` (declared without a value)");
    }
    if (t == "auto" || contains(t, "Tensor") || t == "dim3" || contains(t, "Guard") ||
        contains(t, "Stream") || t == "cudaStream_t" || t == "cudaError_t" ||
        contains(t, "IntArrayRef") || contains(t, "vector") || contains(t, "Options") ||
        contains(t, "ScalarType") || t == "cudaDeviceProp" || t == "cudaEvent_t")
      return v;
    if (t == "bool") {
      if (v.kind == Val::Bool) return v;
      if (auto b = truth(v)) return make_bool(*b);
      return v;
    }
    if (int_type(t)) return to_int(v, what, fr);
    if (float_type(t)) return to_float(v, what, fr);
    if (v.kind == Val::Unknown || v.kind == Val::Void) return v;
    // Other types (a struct of the source): kept as they are.
    return v;
  }

  std::vector<std::pair<size_t, size_t>> split_args(const std::vector<CTok>& T, size_t i,
                                                    size_t end) {
    std::vector<std::pair<size_t, size_t>> out;
    if (i >= end) return out;
    int d = 0;
    size_t start = i;
    for (size_t k = i; k < end; ++k) {
      const CTok& t = T[k];
      if (t.kind != CTok::Punct) continue;
      if (d == 0 && t.text == "<" && k > i && T[k - 1].kind == CTok::Ident) {
        // Template arguments (x.packed_accessor32<float, 3>(), std::min<int>(a, b)).
        size_t c = c_match(T, k, end);
        if (c < end && c + 1 < end &&
            (is_punct(T[c + 1], "(") || is_punct(T[c + 1], "::") || is_punct(T[c + 1], "{"))) {
          k = c;
          continue;
        }
      }
      if (t.text == "(" || t.text == "[" || t.text == "{" || t.text == "<<<") ++d;
      if (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ">>>") --d;
      if (d == 0 && t.text == ",") {
        out.push_back({start, k});
        start = k + 1;
      }
    }
    out.push_back({start, end});
    return out;
  }

  // ---------------------------------------------------------------- expressions
  struct Ex {
    Frame& fr;
    const std::vector<CTok>& T;
    size_t i, end;
    // The lvalue just parsed: a variable and member/index path ("" name: none).
    std::string lv_name;
    std::vector<std::string> lv_path;
  };

  Val eval(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
    Ex x{fr, T, i, end, "", {}};
    Val v = comma(x);
    if (x.i < end)
      fail("host_logic", "host logic in `" + fr.fn + "`: cannot follow `" + snippet(T, i, end) +
                             "` (at `" + T[x.i].text + "`)");
    return v;
  }

  std::string what_of(const Ex& x, size_t from) { return snippet(x.T, from, std::min(x.i, x.end)); }
  bool at(const Ex& x, const char* p) { return x.i < x.end && is_punct(x.T[x.i], p); }

  Val comma(Ex& x) {
    Val v = assign(x);
    while (at(x, ",")) {
      ++x.i;
      v = assign(x);
    }
    return v;
  }

  Val assign(Ex& x) {
    size_t from = x.i;
    x.lv_name.clear();
    x.lv_path.clear();
    Val lhs = ternary(x);
    static const char* const ops[] = {
        "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "|=", "&=", "^="};
    for (const char* op : ops) {
      if (!at(x, op)) continue;
      std::string name = x.lv_name;
      std::vector<std::string> path = x.lv_path;
      if (name.empty())
        fail("host_logic", "host logic in `" + x.fr.fn + "`: cannot follow the assignment `" +
                               snippet(x.T, from, x.end) + "`");
      ++x.i;
      Val rhs = assign(x);
      std::string what = what_of(x, from);
      if (std::string(op) != "=") {
        std::string bop = std::string(op).substr(0, std::string(op).size() - 1);
        rhs = binary(bop, lhs, rhs, what, x.fr);
      }
      store(x.fr, name, path, rhs, what);
      return rhs;
    }
    return lhs;
  }

  Val ternary(Ex& x) {
    size_t from = x.i;
    Val c = logical_or(x);
    if (!at(x, "?")) return c;
    // Find the ':' of this '?' and the end of the else branch.
    size_t q = x.i;
    int d = 0, nested = 0;
    size_t colon = x.end;
    for (size_t k = q + 1; k < x.end; ++k) {
      const CTok& t = x.T[k];
      if (t.kind != CTok::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
      if (t.text == ")" || t.text == "]" || t.text == "}") --d;
      if (d == 0 && t.text == "?") ++nested;
      if (d == 0 && t.text == ":") {
        if (nested == 0) {
          colon = k;
          break;
        }
        --nested;
      }
    }
    if (colon >= x.end) fail("unsupported_cuda", "the host code cannot be read: `?` without `:`");
    size_t else_end = x.end;
    d = 0;
    for (size_t k = colon + 1; k < x.end; ++k) {
      const CTok& t = x.T[k];
      if (t.kind != CTok::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
      if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (d == 0) {
          else_end = k;
          break;
        }
        --d;
      }
      if (d == 0 && (t.text == "," || t.text == ";")) {
        else_end = k;
        break;
      }
    }
    last_by_sizes_ = false;
    auto cond = truth(c);
    std::string what = snippet(x.T, from, else_end);
    note_decided(x.fr, cond, what);
    if (!cond)
      fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what +
                             "` picks a value by a condition that is not the same at every size "
                             "set of the problem");
    Val r = *cond ? eval(x.fr, x.T, q + 1, colon) : eval(x.fr, x.T, colon + 1, else_end);
    x.i = else_end;
    x.lv_name.clear();
    return r;
  }

  Val binary(const std::string& op, const Val& a, const Val& b, const std::string& what,
             Frame& fr) {
    if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%" || op == "<<" || op == ">>" ||
        op == "&" || op == "|" || op == "^") {
      if ((a.kind == Val::Ptr || b.kind == Val::Ptr) && (op == "+" || op == "-"))
        fail("unsupported_cuda",
             "`" + what + "` in `" + fr.fn +
                 "` offsets a tensor's data pointer; kernrl passes each tensor's start");
      if (a.kind == Val::Tensor || b.kind == Val::Tensor)
        fail("library_call", "PyTorch op `" + op + "` on tensors in the host wrapper `" + fr.fn +
                                 "` (`" + what + "`)");
      return arith(op, a, b, what, fr);
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=" || op == "==" || op == "!=")
      return compare(op, a, b, what, fr);
    if (op == "&&" || op == "||") return logic(op, a, b, what, fr);
    fail("host_logic", "host logic in `" + fr.fn + "`: operator " + op);
  }

  template <typename Next>
  Val left(Ex& x, std::initializer_list<const char*> ops, Next next) {
    size_t from = x.i;
    Val v = next();
    for (;;) {
      const char* found = nullptr;
      for (const char* op : ops)
        if (at(x, op)) found = op;
      if (!found) return v;
      ++x.i;
      Val r = next();
      x.lv_name.clear();
      v = binary(found, v, r, what_of(x, from), x.fr);
    }
  }
  Val logical_or(Ex& x) {
    return left(x, {"||"}, [&] { return logical_and(x); });
  }
  Val logical_and(Ex& x) {
    return left(x, {"&&"}, [&] { return bit_or(x); });
  }
  Val bit_or(Ex& x) {
    return left(x, {"|"}, [&] { return bit_xor(x); });
  }
  Val bit_xor(Ex& x) {
    return left(x, {"^"}, [&] { return bit_and(x); });
  }
  Val bit_and(Ex& x) {
    return left(x, {"&"}, [&] { return equality(x); });
  }
  Val equality(Ex& x) {
    return left(x, {"==", "!="}, [&] { return relational(x); });
  }
  Val relational(Ex& x) {
    return left(x, {"<", ">", "<=", ">="}, [&] { return shift(x); });
  }
  Val shift(Ex& x) {
    return left(x, {"<<", ">>"}, [&] { return additive(x); });
  }
  Val additive(Ex& x) {
    return left(x, {"+", "-"}, [&] { return multiplicative(x); });
  }
  Val multiplicative(Ex& x) {
    return left(x, {"*", "/", "%"}, [&] { return unary(x); });
  }

  bool cast_ahead(Ex& x, size_t open, size_t close) {
    // ( type ) followed by an operand.
    if (close + 1 >= x.end) return false;
    for (size_t k = open + 1; k < close; ++k) {
      const CTok& t = x.T[k];
      if (t.kind == CTok::Ident) {
        if (k == open + 1 && !(type_word(x.fr, t) || t.text == "float" || t.text == "int")) {
          // a qualified or unknown type name: only with a '*' (a pointer cast)
          bool star = false;
          for (size_t q = open + 1; q < close; ++q) star |= is_punct(x.T[q], "*");
          if (!star) return false;
        }
        continue;
      }
      if (is_punct(t, "*") || is_punct(t, "::") || is_punct(t, "&")) continue;
      return false;
    }
    const CTok& n = x.T[close + 1];
    if (n.kind == CTok::Ident || n.kind == CTok::Number || is_punct(n, "(")) return true;
    return false;
  }

  Val cast_to(Frame& fr, const std::string& type_text, const Val& v, const std::string& what) {
    std::string t = type_text;
    bool ptr = contains(t, "*");
    std::string base;
    for (char c : t)
      if (c != '*' && c != '&') base += c;
    while (!base.empty() && base.back() == ' ') base.pop_back();
    for (const char* q : {"const ", "volatile "})
      while (starts_with(base, q)) base = base.substr(std::char_traits<char>::length(q));
    size_t cpos = base.find(" const");
    if (cpos != std::string::npos) base = base.substr(0, cpos);
    base = resolve_type(fr, base);
    if (ptr) {
      if (v.kind == Val::Ptr) {
        Val p = v;
        if (strip_std(base) != "void") p.elem = base;
        return p;
      }
      fail_value(v, "a data pointer", what, fr);
    }
    std::string s = strip_std(base);
    if (int_type(s)) return to_int(v, what, fr);
    if (float_type(s)) return to_float(v, what, fr);
    if (s == "bool") {
      if (auto b = truth(v)) return make_bool(*b);
    }
    return v;
  }

  Val unary(Ex& x) {
    size_t from = x.i;
    if (x.i >= x.end)
      fail("unsupported_cuda",
           "the host code cannot be read: an expression is missing in `" + x.fr.fn + "`");
    const CTok& t = x.T[x.i];
    if (is_punct(t, "-") || is_punct(t, "+")) {
      ++x.i;
      Val v = unary(x);
      x.lv_name.clear();
      if (is_punct(t, "+")) return v;
      if (v.kind == Val::Float) return v.f ? make_float(-*v.f) : v;
      return arith("-", make_int(0), v, what_of(x, from), x.fr);
    }
    if (is_punct(t, "!")) {
      ++x.i;
      Val v = unary(x);
      x.lv_name.clear();
      if (auto b = truth(v)) return make_bool(!*b);
      if (v.kind == Val::Bool && !v.per_set.empty()) {
        for (auto& c : v.per_set) c = !c;
        return v;
      }
      fail("host_logic",
           "host logic in `" + x.fr.fn + "`: cannot evaluate `" + what_of(x, from) + "`");
    }
    if (is_punct(t, "~")) {
      ++x.i;
      Val v = to_int(unary(x), what_of(x, from), x.fr);
      if (!v.k) fail("host_logic", "host logic in `" + x.fr.fn + "`: `~` on a size");
      return make_int(~*v.k);
    }
    if (is_punct(t, "&")) {
      // Address-of: &var for cuda*(&out) calls; the variable's name is kept.
      ++x.i;
      Val v = unary(x);
      Val p = v;
      p.name = x.lv_name;
      p.path = x.lv_path;
      return p;
    }
    if (is_punct(t, "*")) {
      ++x.i;
      Val v = unary(x);
      if (v.kind == Val::Props) return v;
      fail("data_dependent_host",
           "`" + what_of(x, from) + "` in `" + x.fr.fn + "` reads GPU memory on the host");
    }
    if (is_punct(t, "++") || is_punct(t, "--")) {
      ++x.i;
      Val v = unary(x);
      std::string name = x.lv_name;
      auto path = x.lv_path;
      if (name.empty())
        fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what_of(x, from) + "`");
      Val r = arith(is_punct(t, "++") ? "+" : "-", v, make_int(1), what_of(x, from), x.fr);
      store(x.fr, name, path, r, what_of(x, from));
      x.lv_name.clear();
      return r;
    }
    if (is_ident(t, "sizeof")) {
      ++x.i;
      if (at(x, "(")) {
        size_t c = close_of(x.T, x.i, x.end);
        std::string ty = resolve_type(x.fr, c_text(x.T, x.i + 1, c));
        int b = c_type_bytes(strip_std(ty));
        if (b == 0) {
          // sizeof(variable)
          Var* v = c == x.i + 2 ? lookup(x.fr, x.T[x.i + 1].text) : nullptr;
          if (v && v->v.kind == Val::Int)
            b = 4;
          else if (v && v->v.kind == Val::Float)
            b = 4;
          else
            fail("host_logic", "host logic in `" + x.fr.fn + "`: sizeof(" + ty + ")");
        }
        x.i = c + 1;
        return make_int(b);
      }
      fail("host_logic", "host logic in `" + x.fr.fn + "`: sizeof without parentheses");
    }
    if (is_punct(t, "(")) {
      size_t c = close_of(x.T, x.i, x.end);
      if (cast_ahead(x, x.i, c)) {
        std::string ty = c_text(x.T, x.i + 1, c);
        x.i = c + 1;
        Val v = unary(x);
        x.lv_name.clear();
        return cast_to(x.fr, ty, v, what_of(x, from));
      }
    }
    return postfix(x);
  }

  // ---------------------------------------------------------------- postfix and primary
  Val postfix(Ex& x) {
    size_t from = x.i;
    Val v = primary(x);
    for (;;) {
      if (at(x, "(")) {
        size_t c = close_of(x.T, x.i, x.end);
        auto args = split_args(x.T, x.i + 1, c);
        if (args.size() == 1 && args[0].first == args[0].second) args.clear();
        x.i = c + 1;
        x.lv_name.clear();
        v = call_value(x, v, args, what_of(x, from));
        continue;
      }
      if (at(x, ".") || at(x, "->")) {
        ++x.i;
        if (x.i >= x.end || x.T[x.i].kind != CTok::Ident)
          fail("unsupported_cuda", "the host code cannot be read near `" + what_of(x, from) + "`");
        std::string member = x.T[x.i].text;
        ++x.i;
        std::string targs;
        if (at(x, "<")) {
          size_t c = c_match(x.T, x.i, x.end);
          if (c < x.end && c + 1 < x.end && is_punct(x.T[c + 1], "(")) {
            targs = resolve_type(x.fr, c_text(x.T, x.i + 1, c));
            x.i = c + 1;
          }
        }
        if (at(x, "(")) {
          size_t c = close_of(x.T, x.i, x.end);
          auto args = split_args(x.T, x.i + 1, c);
          if (args.size() == 1 && args[0].first == args[0].second) args.clear();
          x.i = c + 1;
          x.lv_name.clear();
          v = method(x, v, member, targs, args, what_of(x, from));
        } else {
          if (!x.lv_name.empty()) x.lv_path.push_back(member);
          v = field(x, v, member, what_of(x, from));
        }
        continue;
      }
      if (at(x, "[")) {
        size_t c = close_of(x.T, x.i, x.end);
        Val idx = to_int(eval(x.fr, x.T, x.i + 1, c), what_of(x, from), x.fr);
        x.i = c + 1;
        std::string what = what_of(x, from);
        if (v.kind == Val::List) {
          if (!idx.k) fail("host_logic", "`" + what + "` in `" + x.fr.fn + "` indexes with a size");
          int64_t k = *idx.k;
          if (k < 0) k += static_cast<int64_t>(v.items.size());
          if (k < 0 || k >= static_cast<int64_t>(v.items.size()))
            fail("mismatch",
                 "`" + what + "` in `" + x.fr.fn + "` indexes past the end for this problem");
          if (!x.lv_name.empty()) x.lv_path.push_back(std::to_string(k));
          Val item = v.items[static_cast<size_t>(k)];
          v = item;
          continue;
        }
        if (v.kind == Val::Ptr || v.kind == Val::Tensor)
          fail("data_dependent_host",
               "`" + what + "` in `" + x.fr.fn + "` reads tensor data on the host");
        fail_value(v, "a list", what, x.fr);
      }
      if (at(x, "++") || at(x, "--")) {
        bool inc = at(x, "++");
        ++x.i;
        std::string name = x.lv_name;
        if (name.empty())
          fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what_of(x, from) + "`");
        Val r = arith(inc ? "+" : "-", v, make_int(1), what_of(x, from), x.fr);
        store(x.fr, name, x.lv_path, r, what_of(x, from));
        x.lv_name.clear();
        continue;  // the old value stays v
      }
      return v;
    }
  }

  Val number(const std::string& lit) {
    std::string s;
    for (char c : lit)
      if (c != '\'') s += c;
    bool hex = starts_with(s, "0x") || starts_with(s, "0X");
    bool is_float = !hex && (contains(s, ".") || contains(s, "e") || contains(s, "E") ||
                             (!s.empty() && (s.back() == 'f' || s.back() == 'F')));
    if (is_float) {
      std::string body = s;
      while (!body.empty() && std::strchr("fFlL", body.back())) body.pop_back();
      double v = std::strtod(body.c_str(), nullptr);
      std::string text = body;
      if (!text.empty() && text.back() == '.') text += "0";
      if (!text.empty() && text[0] == '.') text = "0" + text;
      return make_float(v, text);
    }
    while (!s.empty() && std::strchr("uUlLzZ", s.back())) s.pop_back();
    int base = 10;
    std::string digits = s;
    if (hex)
      base = 16, digits = s.substr(2);
    else if (starts_with(s, "0b") || starts_with(s, "0B"))
      base = 2, digits = s.substr(2);
    else if (s.size() > 1 && s[0] == '0')
      base = 8, digits = s.substr(1);
    return make_int(static_cast<int64_t>(std::strtoull(digits.c_str(), nullptr, base)));
  }

  // A qualified name: a::b::c (with template arguments when a call follows).
  std::string qualified(Ex& x) {
    std::string name;
    if (at(x, "::")) {
      ++x.i;
    }
    name = x.T[x.i].text;
    ++x.i;
    while (x.i + 1 < x.end && is_punct(x.T[x.i], "::") && x.T[x.i + 1].kind == CTok::Ident) {
      name += "::" + x.T[x.i + 1].text;
      x.i += 2;
    }
    return name;
  }

  Val primary(Ex& x) {
    size_t from = x.i;
    if (x.i >= x.end)
      fail("unsupported_cuda",
           "the host code cannot be read: an expression is missing in `" + x.fr.fn + "`");
    const CTok& t = x.T[x.i];
    x.lv_name.clear();
    x.lv_path.clear();
    if (t.kind == CTok::Number) {
      ++x.i;
      return number(t.text);
    }
    if (t.kind == CTok::String) {
      Val s;
      s.kind = Val::Str;
      while (x.i < x.end && x.T[x.i].kind == CTok::String) s.text += x.T[x.i++].text;
      return s;
    }
    if (t.kind == CTok::Char) {
      ++x.i;
      return make_int(t.text.size() >= 3 ? static_cast<unsigned char>(t.text[1]) : 0);
    }
    if (is_punct(t, "(")) {
      size_t c = close_of(x.T, x.i, x.end);
      Val v = eval(x.fr, x.T, x.i + 1, c);
      x.i = c + 1;
      return v;
    }
    if (is_punct(t, "{")) {
      size_t c = close_of(x.T, x.i, x.end);
      Val l;
      l.kind = Val::List;
      for (auto [a, b] : split_args(x.T, x.i + 1, c))
        if (b > a) l.items.push_back(eval(x.fr, x.T, a, b));
      x.i = c + 1;
      return l;
    }
    if (is_punct(t, "[")) {
      // A lambda: [captures](params) { body }
      size_t c = close_of(x.T, x.i, x.end);
      size_t k = c + 1;
      if (k < x.end && is_punct(x.T[k], "(")) k = close_of(x.T, k, x.end) + 1;
      while (k < x.end && !is_punct(x.T[k], "{")) ++k;
      if (k >= x.end)
        fail("unsupported_cuda",
             "the host code cannot be read: a lambda without a body in `" + x.fr.fn + "`");
      size_t b = close_of(x.T, k, x.end);
      Val f;
      f.kind = Val::Func;
      f.name = "(lambda)";
      f.first = k + 1;
      f.last = b;
      f.toks = &x.T;
      x.i = b + 1;
      return f;
    }
    if (t.kind != CTok::Ident && !is_punct(t, "::"))
      fail("host_logic",
           "host logic in `" + x.fr.fn + "`: cannot follow `" + snippet(x.T, from, x.end) + "`");

    std::string name = qualified(x);
    // Template arguments: name<...> followed by ( or <<< or ::.
    std::string targs;
    size_t targ_open = 0, targ_close = 0;
    if (at(x, "<")) {
      size_t c = c_match(x.T, x.i, x.end);
      if (c < x.end && c + 1 < x.end &&
          (is_punct(x.T[c + 1], "(") || is_punct(x.T[c + 1], "<<<") || is_punct(x.T[c + 1], "{"))) {
        targ_open = x.i;
        targ_close = c;
        targs = c_text(x.T, x.i + 1, c);
        x.i = c + 1;
      } else if (c < x.end && c + 1 < x.end && is_punct(x.T[c + 1], "::")) {
        x.i = c + 1;
        while (x.i + 1 < x.end && is_punct(x.T[x.i], "::") && x.T[x.i + 1].kind == CTok::Ident) {
          name += "::" + x.T[x.i + 1].text;
          x.i += 2;
        }
      }
    }
    if (at(x, "<<<")) return launch(x, name, targ_open, targ_close, from);

    if (name == "true" || name == "false") return make_bool(name == "true");
    if (name == "nullptr" || name == "NULL") {
      Val p;
      p.kind = Val::Ptr;
      return p;
    }
    if (Var* v = lookup(x.fr, name)) {
      x.lv_name = name;
      return v->v;
    }
    if (std::string a = alias(x.fr, name); !a.empty()) {
      Val ty;
      ty.kind = Val::Type;
      ty.elem = a;
      return ty;
    }
    if (auto m = C.macros.find(name); m != C.macros.end())
      return expand_object_macro(x, name, m->second);
    if (auto m = C.fn_macros.find(name); m != C.fn_macros.end() && at(x, "(")) {
      if (macro_is_check(m->second)) {
        // A checking macro used in an expression: its value is not needed.
        size_t c = close_of(x.T, x.i, x.end);
        x.i = c + 1;
        return Val{};
      }
      size_t c = close_of(x.T, x.i, x.end);
      auto args = split_args(x.T, x.i + 1, c);
      x.i = c + 1;
      return expand_fn_macro(x, name, m->second, args);
    }
    std::string s = strip_std(name);
    // dtypes
    if (std::string d = dtype_of_torch(name);
        !d.empty() && (starts_with(s, "k") || contains(name, "ScalarType"))) {
      Val dt;
      dt.kind = Val::DType;
      dt.dtype = d;
      return dt;
    }
    if (s == "kCUDA" || s == "kCPU" || contains(name, "DeviceType")) {
      Val dv;
      dv.kind = Val::Device;
      return dv;
    }
    if (s == "cudaSuccess") return make_int(0);
    if (starts_with(s, "cudaMemcpy") && !at(x, "(")) return make_int(0);  // direction enums
    if (starts_with(s, "cudaFuncAttribute") || starts_with(s, "cudaDevAttr") ||
        starts_with(s, "cudaFuncCache") || starts_with(s, "cudaSharedMem") ||
        starts_with(s, "cudaStream") || starts_with(s, "cudaEvent")) {
      Val e;
      e.kind = Val::Str;
      e.text = s;
      if (!at(x, "(")) return e;
    }
    if (s == "INT_MAX") return make_int(2147483647);
    if (s == "M_PI") return make_float(3.14159265358979323846, "3.14159265358979323846");
    // Types used as values: float(x), dim3(a, b), torch::Tensor()
    if (type_word(x.fr, x.T[from]) || s == "float" || s == "double" || s == "int") {
      Val ty;
      ty.kind = Val::Type;
      ty.elem = resolve_type(x.fr, name);
      return ty;
    }
    // Functions of the source, kernels, builtins.
    Val f;
    f.kind = Val::Func;
    f.name = name;
    f.text = targs;
    if (targ_close > targ_open) {
      f.first = targ_open;
      f.last = targ_close;
      f.toks = &x.T;
    }
    if (find_function(name, true).item && !at(x, "("))
      return f;  // a kernel named as a value (cudaFuncSetAttribute(k, ...))
    return f;
  }

  Val expand_object_macro(Ex& x, const std::string& name, const std::vector<CTok>& body) {
    if (++macro_depth_ > kMaxMacroDepth)
      fail("unsupported_cuda", "the macro `" + name + "` expands too deeply");
    Val v = body.empty() ? Val{} : eval(x.fr, body, 0, body.size());
    --macro_depth_;
    return v;
  }

  Val expand_fn_macro(Ex& x, const std::string& name, const Converter::FnMacro& m,
                      const std::vector<std::pair<size_t, size_t>>& args) {
    if (++macro_depth_ > kMaxMacroDepth)
      fail("unsupported_cuda", "the macro `" + name + "` expands too deeply");
    if (args.size() != m.params.size() &&
        !(m.params.empty() && args.size() == 1 && args[0].first == args[0].second))
      fail("unsupported_cuda",
           "the macro `" + name + "` is used with " + std::to_string(args.size()) + " arguments");
    // The expansion: the body with each parameter replaced by its argument's tokens.
    auto expanded = std::make_shared<std::vector<CTok>>();
    for (const CTok& t : m.body) {
      bool replaced = false;
      if (t.kind == CTok::Ident)
        for (size_t p = 0; p < m.params.size(); ++p)
          if (m.params[p] == t.text) {
            CTok open;
            open.kind = CTok::Punct;
            open.text = "(";
            expanded->push_back(open);
            for (size_t k = args[p].first; k < args[p].second; ++k) expanded->push_back(x.T[k]);
            CTok close = open;
            close.text = ")";
            expanded->push_back(close);
            replaced = true;
          }
      if (!replaced) expanded->push_back(t);
    }
    keep_alive_.push_back(expanded);
    Val v = expanded->empty() ? Val{} : eval(x.fr, *expanded, 0, expanded->size());
    --macro_depth_;
    return v;
  }
  std::vector<std::shared_ptr<std::vector<CTok>>> keep_alive_;

  // ---------------------------------------------------------------- members
  Val field(Ex& x, const Val& v, const std::string& member, const std::string& what) {
    if (v.kind == Val::Dim3 && (member == "x" || member == "y" || member == "z"))
      return v.items[member == "x" ? 0 : member == "y" ? 1 : 2];
    if (v.kind == Val::Props) {
      if (member == "multiProcessorCount") return make_int_expr("num_sms");
      static const std::map<std::string, int64_t> props = {
          {"maxThreadsPerBlock", 1024},          {"warpSize", 32},
          {"sharedMemPerBlock", 49152},          {"sharedMemPerBlockOptin", 232448},
          {"maxThreadsPerMultiProcessor", 2048}, {"regsPerBlock", 65536},
          {"maxBlocksPerMultiProcessor", 32}};
      auto it = props.find(member);
      if (it != props.end()) return make_int(it->second);
      fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what +
                             "` reads the device property `" + member +
                             "`, which depends on the GPU");
    }
    if (v.kind == Val::Unknown) fail_value(v, "a value", what, x.fr);
    fail("host_logic", "host logic in `" + x.fr.fn + "`: cannot follow `" + what + "`");
  }

  std::string shape_text(const TensorInfo& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + int_text(t.shape[i]);
    return s + "]";
  }

  Val numel(const TensorInfo& t, const std::string& what, Frame& fr) {
    Val n = make_int(1);
    for (const Val& d : t.shape) n = arith("*", n, d, what, fr);
    return n;
  }

  Val list_of(const std::vector<Val>& items) {
    Val l;
    l.kind = Val::List;
    l.items = items;
    return l;
  }

  int64_t dim_index(const Val& idx, size_t rank, const std::string& what, Frame& fr) {
    if (idx.kind != Val::Int || !idx.k)
      fail("host_logic",
           "`" + what + "` in `" + fr.fn + "` picks a dimension kernrl cannot compute");
    int64_t k = *idx.k;
    if (k < 0) k += static_cast<int64_t>(rank);
    if (k < 0 || k >= static_cast<int64_t>(rank))
      fail("mismatch", "`" + what + "` in `" + fr.fn + "` asks for dimension " +
                           std::to_string(*idx.k) + " of a tensor with " + std::to_string(rank) +
                           " dimensions in this problem");
    return k;
  }

  std::vector<Val> eval_args(Frame& fr, const std::vector<CTok>& T,
                             const std::vector<std::pair<size_t, size_t>>& args) {
    std::vector<Val> out;
    for (auto [a, b] : args) out.push_back(b > a ? eval(fr, T, a, b) : Val{});
    return out;
  }

  Val method(Ex& x, const Val& v, const std::string& m, const std::string& targs,
             const std::vector<std::pair<size_t, size_t>>& args, const std::string& what) {
    Frame& fr = x.fr;
    if (v.kind == Val::Tensor) {
      TensorInfo& t = C.tensors[static_cast<size_t>(v.tensor)];
      auto a = [&](size_t k) { return eval(fr, x.T, args[k].first, args[k].second); };
      if (m == "size" || m == "sizes" || m == "sym_size" || m == "sym_sizes") {
        if (args.empty()) return list_of(t.shape);
        return t.shape[static_cast<size_t>(
            dim_index(to_int(a(0), what, fr), t.shape.size(), what, fr))];
      }
      if (m == "numel" || m == "sym_numel") return numel(t, what, fr);
      if (m == "dim" || m == "ndimension") return make_int(static_cast<int64_t>(t.shape.size()));
      if (m == "stride" || m == "strides") {
        auto stride_of = [&](size_t d) {
          Val s = make_int(1);
          for (size_t q = d + 1; q < t.shape.size(); ++q) s = arith("*", s, t.shape[q], what, fr);
          return s;
        };
        if (args.empty()) {
          std::vector<Val> all;
          for (size_t d = 0; d < t.shape.size(); ++d) all.push_back(stride_of(d));
          return list_of(all);
        }
        return stride_of(
            static_cast<size_t>(dim_index(to_int(a(0), what, fr), t.shape.size(), what, fr)));
      }
      if (m == "data_ptr" || m == "data" || m == "const_data_ptr" || m == "mutable_data_ptr") {
        Val p;
        p.kind = Val::Ptr;
        p.tensor = v.tensor;
        std::string ty = strip_std(resolve_type(fr, targs));
        if (!targs.empty()) {
          std::string want = dtype_of_c(ty);
          if (want.empty())
            fail("unsupported_cuda",
                 "`" + what + "` in `" + fr.fn + "` reads a tensor as `" + targs + "`");
          if (want != t.dtype)
            fail("mismatch", "`" + what + "` in `" + fr.fn + "` reads the " + t.dtype +
                                 " tensor `" + t.name + "` as " + ty +
                                 " (PyTorch would refuse it)");
          p.elem = ty == "at::Half" || ty == "Half" ? "__half" : ty;
        }
        return p;
      }
      if (m == "contiguous" || m == "cuda" || m == "view" || m == "reshape" || m == "view_as" ||
          m == "flatten" || m == "squeeze" || m == "unsqueeze" || m == "detach" ||
          m == "clone_if_needed") {
        if (m == "view" || m == "reshape") {
          // A view of the same data: numel must stay the same, which the shape check at the end
          // covers for outputs.
          return v;
        }
        return v;
      }
      if (m == "to" || m == "type_as") {
        for (size_t k = 0; k < args.size(); ++k) {
          Val o = a(k);
          if ((o.kind == Val::DType || o.kind == Val::Opts) && !o.dtype.empty() &&
              o.dtype != t.dtype)
            fail("library_call", "PyTorch op `Tensor::to` converts `" + t.name + "` from " +
                                     t.dtype + " to " + o.dtype + " in the host wrapper `" + fr.fn +
                                     "`");
        }
        return v;
      }
      if (m == "options") {
        Val o;
        o.kind = Val::Opts;
        o.dtype = t.dtype;
        return o;
      }
      if (m == "scalar_type" || m == "dtype" || m == "type") {
        Val d;
        d.kind = Val::DType;
        d.dtype = t.dtype;
        return d;
      }
      if (m == "device" || m == "get_device") {
        Val d;
        d.kind = Val::Device;
        return d;
      }
      if (m == "is_cuda" || m == "is_contiguous" || m == "defined") return make_bool(true);
      if (m == "is_floating_point")
        return make_bool(dtype_of_c(c_type_of(t.dtype)) == t.dtype &&
                         (t.dtype.rfind("float", 0) == 0 || t.dtype == "bfloat16"));
      if (m == "element_size" || m == "itemsize") return make_int(dtype_bytes(t.dtype));
      if (m == "zero_" || m == "fill_") {
        std::string value = "0";
        if (m == "fill_") {
          Val fv = a(0);
          if (fv.kind == Val::Int && fv.k)
            value = std::to_string(*fv.k);
          else if (fv.kind == Val::Float && fv.f)
            value = float_literal(*fv.f);
          else
            fail("host_logic", "`" + what + "` in `" + fr.fn +
                                   "` fills a tensor with a value kernrl cannot compute");
        }
        if (t.role != "alloc")
          fail("in_place", "`" + what + "` in `" + fr.fn + "` writes into the " + t.role + " `" +
                               t.name + "`; kernrl's inputs must stay unchanged");
        C.add_fill(v.tensor, value);
        return v;
      }
      if (m == "item" || m == "cpu" || m == "tolist" || m == "data_ptr_host")
        fail("data_dependent_host", "`" + what + "` in `" + fr.fn +
                                        "` reads a GPU result on the host (`Tensor::" + m + "`)");
      if (m == "packed_accessor32" || m == "packed_accessor64" || m == "accessor" ||
          m == "generic_packed_accessor")
        fail("unsupported_cuda", "`" + what + "` in `" + fr.fn +
                                     "` passes a PackedTensorAccessor; kernrl passes raw pointers");
      fail("library_call",
           "PyTorch op `Tensor::" + m + "` in the host wrapper `" + fr.fn + "` (`" + what + "`)");
    }
    if (v.kind == Val::Opts || (v.kind == Val::Func && (strip_std(v.name) == "TensorOptions"))) {
      Val o = v;
      if (v.kind != Val::Opts) {
        o = Val{};
        o.kind = Val::Opts;
      }
      if (m == "dtype" && !args.empty()) {
        Val d = eval(fr, x.T, args[0].first, args[0].second);
        if (d.kind == Val::DType)
          o.dtype = d.dtype;
        else if (d.kind == Val::Type)
          o.dtype = dtype_of_c(strip_std(d.elem));
      }
      return o;
    }
    if (v.kind == Val::Stream) {
      if (m == "stream" || m == "id") return v;
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "`");
    }
    if (v.kind == Val::Device) return v;
    if (v.kind == Val::DType) {
      if (m == "name" || m == "toString") {
        Val s;
        s.kind = Val::Str;
        return s;
      }
      return v;
    }
    if (v.kind == Val::List) {
      if (m == "size") return make_int(static_cast<int64_t>(v.items.size()));
      if (m == "push_back" || m == "emplace_back") {
        if (x.lv_name.empty()) {
          // The object was a variable: look it up by the text before the dot.
        }
        fail("host_logic",
             "host logic in `" + fr.fn + "`: `" + what + "` builds a list on the host");
      }
      if (m == "data" || m == "vec") return v;
    }
    if (v.kind == Val::Unknown) fail_value(v, "a value", what, fr);
    fail("host_logic", "host logic in `" + fr.fn + "`: cannot follow `" + what + "`");
  }

  // ---------------------------------------------------------------- calls
  Val call_value(Ex& x, const Val& callee, const std::vector<std::pair<size_t, size_t>>& args,
                 const std::string& what) {
    Frame& fr = x.fr;
    if (callee.kind == Val::Type) {
      std::vector<Val> vals = eval_args(fr, x.T, args);
      if (strip_std(callee.elem) == "dim3") return make_dim3(vals, what, fr);
      if (vals.size() == 1) return cast_to(fr, callee.elem, vals[0], what);
      if (vals.empty()) return int_type(strip_std(callee.elem)) ? make_int(0) : make_float(0.0);
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "`");
    }
    if (callee.kind == Val::Func && callee.name == "(lambda)") {
      return run_lambda(fr, callee);
    }
    if (callee.kind != Val::Func) {
      if (callee.kind == Val::Unknown) fail_value(callee, "a function", what, fr);
      fail("host_logic", "host logic in `" + fr.fn + "`: cannot follow the call `" + what + "`");
    }
    const std::string& name = callee.name;
    if ((name == "static_cast" || name == "reinterpret_cast" || name == "const_cast" ||
         name == "dynamic_cast" || name == "std::static_pointer_cast") &&
        args.size() == 1)
      return cast_to(fr, callee.text, eval(fr, x.T, args[0].first, args[0].second), what);
    // Functions of the source.
    if (FnRef f = find_function(name, false); f.item) {
      std::vector<std::string> targ_types;
      if (!callee.text.empty() && callee.toks)
        for (auto [a, b] : split_args(*callee.toks, callee.first + 1, callee.last))
          targ_types.push_back(resolve_type(fr, c_text(*callee.toks, a, b)));
      return call(f, eval_args(fr, x.T, args), targ_types, &fr);
    }
    if (FnRef k = find_function(name, true); k.item)
      fail("unsupported_cuda", "`" + what + "` in `" + fr.fn + "` calls the __global__ kernel `" +
                                   name + "` without <<<...>>>");
    return builtin(x, name, args, what);
  }

  Val run_lambda(Frame& fr, const Val& f) {
    Frame lf;
    lf.parent = &fr;
    lf.fn = fr.fn;
    lf.ext = fr.ext;
    lf.T = f.toks;
    lf.depth_base = depth(fr);
    lf.scopes.emplace_back();
    exec_range(lf, f.first, f.last);
    return lf.ret ? *lf.ret : Val{};
  }

  Val dispatch(Ex& x, const std::string& name, const std::vector<std::pair<size_t, size_t>>& args,
               const std::string& what) {
    Frame& fr = x.fr;
    if (args.size() < 3)
      fail("unsupported_cuda",
           "`" + name + "` in `" + fr.fn + "` with " + std::to_string(args.size()) + " arguments");
    Val ty = eval(fr, x.T, args[0].first, args[0].second);
    if (ty.kind != Val::DType)
      fail("host_logic",
           "`" + name + "` in `" + fr.fn + "` dispatches on something other than a tensor's dtype");
    // The types the macro covers.
    std::set<std::string> covered;
    std::string n = name;
    auto add = [&](std::initializer_list<const char*> l) {
      for (const char* d : l) covered.insert(d);
    };
    if (contains(n, "FLOATING_AND_COMPLEX"))
      add({"float32", "float64", "complex64", "complex128"});
    else if (contains(n, "REDUCED_FLOATING"))
      add({"float16", "bfloat16"});
    else if (contains(n, "FLOATING"))
      add({"float32", "float64"});
    if (contains(n, "ALL_TYPES"))
      add({"float32", "float64", "int8", "uint8", "int16", "int32", "int64"});
    if (contains(n, "INTEGRAL")) add({"int8", "uint8", "int16", "int32", "int64"});
    if (contains(n, "AND_HALF")) add({"float16"});
    if (contains(n, "COMPLEX") && !contains(n, "FLOATING_AND_COMPLEX"))
      add({"complex64", "complex128"});
    // _AND / _AND2 / _AND3: the extra ScalarTypes come first.
    size_t extra = 0;
    if (contains(n, "_AND3"))
      extra = 3;
    else if (contains(n, "_AND2"))
      extra = 2;
    else if (std::string::npos != n.find("_AND(") ||
             (n.size() > 4 && n.compare(n.size() - 4, 4, "_AND") == 0))
      extra = 1;
    size_t type_arg = 0;
    if (extra) {
      for (size_t k = 0; k < extra && k < args.size(); ++k) {
        Val d = eval(fr, x.T, args[k].first, args[k].second);
        if (d.kind == Val::DType) covered.insert(d.dtype);
      }
      type_arg = extra;
      ty = eval(fr, x.T, args[type_arg].first, args[type_arg].second);
      if (ty.kind != Val::DType)
        fail("host_logic", "`" + name + "` in `" + fr.fn +
                               "` dispatches on something other than a tensor's dtype");
    }
    if (!covered.empty() && !covered.count(ty.dtype))
      fail("mismatch", "`" + name + "` in `" + fr.fn + "` does not cover " + ty.dtype +
                           " (PyTorch would refuse this problem's tensors)");
    Val lambda = eval(fr, x.T, args.back().first, args.back().second);
    if (lambda.kind != Val::Func || lambda.name != "(lambda)")
      fail("unsupported_cuda", "`" + name + "` in `" + fr.fn + "` without a lambda");
    Frame lf;
    lf.parent = &fr;
    lf.fn = fr.fn;
    lf.ext = fr.ext;
    lf.T = lambda.toks;
    lf.depth_base = depth(fr);
    lf.scopes.emplace_back();
    lf.types["scalar_t"] = c_type_of(ty.dtype);
    (void)what;
    exec_range(lf, lambda.first, lambda.last);
    return lf.ret ? *lf.ret : Val{};
  }

  Val alloc_call(Ex& x, const std::string& s, const std::vector<std::pair<size_t, size_t>>& args,
                 const std::string& what, const std::string& var) {
    Frame& fr = x.fr;
    std::vector<Val> vals = eval_args(fr, x.T, args);
    bool like = contains(s, "_like");
    std::string kind = s.substr(0, s.find('_'));  // empty zeros ones full
    std::string fill = kind == "zeros" ? "0" : kind == "ones" ? "1" : "";
    std::vector<Val> shape;
    std::string dtype = "float32";
    size_t k = 0;
    if (like) {
      if (vals.empty() || vals[0].kind != Val::Tensor)
        fail("host_logic", "`" + what + "` in `" + fr.fn +
                               "`: the _like argument is not a tensor kernrl follows");
      const TensorInfo& src = C.tensors[static_cast<size_t>(vals[0].tensor)];
      shape = src.shape;
      dtype = src.dtype;
      k = 1;
    } else {
      if (vals.empty()) fail("host_logic", "`" + what + "` in `" + fr.fn + "` without a shape");
      const Val& sh = vals[0];
      if (sh.kind == Val::List) {
        for (const Val& d : sh.items) shape.push_back(to_int(d, what, fr));
      } else if (sh.kind == Val::Int) {
        shape.push_back(sh);
      } else {
        fail_value(sh, "a shape", what, fr);
      }
      k = 1;
    }
    if (kind == "full") {
      if (k >= vals.size())
        fail("host_logic", "`" + what + "` in `" + fr.fn + "` without a fill value");
      const Val& fv = vals[k];
      if (fv.kind == Val::Int && fv.k)
        fill = std::to_string(*fv.k);
      else if (fv.kind == Val::Float && fv.f)
        fill = float_literal(*fv.f);
      else
        fail("host_logic",
             "`" + what + "` in `" + fr.fn + "` fills with a value kernrl cannot compute");
      ++k;
    }
    for (; k < vals.size(); ++k) {
      if ((vals[k].kind == Val::Opts || vals[k].kind == Val::DType) && !vals[k].dtype.empty())
        dtype = vals[k].dtype;
      if (vals[k].kind == Val::Type) dtype = dtype_of_c(strip_std(vals[k].elem));
    }
    return C.alloc(shape, dtype, fill, what, var);
  }

  Val builtin(Ex& x, const std::string& name, const std::vector<std::pair<size_t, size_t>>& args,
              const std::string& what) {
    Frame& fr = x.fr;
    std::string s = strip_std(name);
    auto a = [&](size_t k) {
      if (k >= args.size())
        fail("host_logic", "`" + what + "` in `" + fr.fn + "`: missing argument");
      return eval(fr, x.T, args[k].first, args[k].second);
    };
    // Checks and prints: no effect on what runs.
    if (starts_with(s, "TORCH_") || starts_with(s, "AT_ASSERT") || starts_with(s, "AT_ERROR") ||
        s == "assert" || starts_with(s, "CHECK") || s == "printf" || s == "fprintf" ||
        s == "puts" || s == "C10_CUDA_KERNEL_LAUNCH_CHECK" || s == "cudaGetLastError" ||
        s == "cudaPeekAtLastError" || s == "cudaDeviceSynchronize" || s == "cudaGetErrorString" ||
        s == "cudaStreamSynchronize" || s == "cudaStreamDestroy" || starts_with(s, "cudaEvent") ||
        s == "cudaFuncSetAttribute" || s == "cudaFuncSetCacheConfig" || s == "cudaSetDevice" ||
        s == "cudaStreamWaitEvent" || s == "cudaDeviceSetCacheConfig" ||
        s == "cudaDeviceSetSharedMemConfig" || s == "cudaFuncSetSharedMemConfig" ||
        s == "cudaProfilerStart" || s == "cudaProfilerStop" || s == "cuda::device_guard" ||
        s == "device_of" || s == "cuda::getCurrentCUDAStream" ||
        s == "cuda::getDefaultCUDAStream" || s == "cuda::getStreamFromPool" ||
        s == "cuda::getCurrentCUDAStream().stream" || s == "cudaGetDevice" || s == "NVTX_RANGE" ||
        starts_with(s, "nvtx")) {
      if (s == "cudaGetDevice" && !args.empty()) {
        Val p = a(0);
        if (!p.name.empty()) store(fr, p.name, p.path, make_int(0), what);
      }
      if (contains(s, "Stream") && !starts_with(s, "cudaStream")) {
        Val st;
        st.kind = Val::Stream;
        return st;
      }
      if (s == "cudaGetLastError" || s == "cudaPeekAtLastError" || s == "cudaDeviceSynchronize")
        return make_int(0);
      if (s == "device_of") {
        Val d;
        d.kind = Val::Device;
        return d;
      }
      return Val{};
    }
    if (starts_with(s, "AT_DISPATCH")) {
      if (contains(s, "SWITCH") || contains(s, "CASE"))
        fail("unsupported_cuda",
             "`" + s + "` in `" + fr.fn + "`; use AT_DISPATCH_FLOATING_TYPES-style macros");
      return dispatch(x, s, args, what);
    }
    if (s == "cudaStreamCreate" || s == "cudaStreamCreateWithFlags" ||
        s == "cudaStreamCreateWithPriority") {
      Val p = a(0);
      Val st;
      st.kind = Val::Stream;
      st.created = true;
      if (!p.name.empty()) store(fr, p.name, p.path, st, what);
      if (std::find(
              C.notes.begin(), C.notes.end(),
              std::string(
                  "launches on the streams the wrapper creates run in order on one stream")) ==
          C.notes.end())
        C.notes.push_back("launches on the streams the wrapper creates run in order on one stream");
      return make_int(0);
    }
    if (s == "cudaGetDeviceProperties") {
      Val p = a(0);
      Val props;
      props.kind = Val::Props;
      if (!p.name.empty()) store(fr, p.name, p.path, props, what);
      return make_int(0);
    }
    if (s == "cuda::getCurrentDeviceProperties" || s == "cuda::getDeviceProperties") {
      Val props;
      props.kind = Val::Props;
      return props;
    }
    if (s == "cudaDeviceGetAttribute") {
      Val p = a(0);
      Val attr = a(1);
      Val value;
      if (attr.text == "cudaDevAttrMultiProcessorCount")
        value = make_int_expr("num_sms");
      else if (attr.text == "cudaDevAttrMaxThreadsPerBlock")
        value = make_int(1024);
      else if (attr.text == "cudaDevAttrMaxSharedMemoryPerBlockOptin")
        value = make_int(232448);
      else if (attr.text == "cudaDevAttrWarpSize")
        value = make_int(32);
      else
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                               "` reads a device attribute that depends on the GPU");
      if (!p.name.empty()) store(fr, p.name, p.path, value, what);
      return make_int(0);
    }
    if (s == "cudaMemset" || s == "cudaMemsetAsync") {
      Val p = a(0), val = a(1), bytes = to_int(a(2), what, fr);
      if (p.kind != Val::Ptr || p.tensor < 0)
        fail("host_logic", "`" + what + "` in `" + fr.fn + "` clears memory kernrl does not know");
      if (!(val.kind == Val::Int && val.k && *val.k == 0))
        fail("host_logic", "`" + what + "` in `" + fr.fn + "` fills memory with a byte pattern");
      const TensorInfo& t = C.tensors[static_cast<size_t>(p.tensor)];
      Val whole = arith("*", numel(t, what, fr), make_int(dtype_bytes(t.dtype)), what, fr);
      auto have = C.per_set(bytes), want = C.per_set(whole);
      if (!have || !want || *have != *want)
        fail("host_logic", "`" + what + "` in `" + fr.fn + "` clears part of `" + t.name +
                               "`; kernrl fills whole tensors");
      if (t.role != "alloc")
        fail("in_place", "`" + what + "` in `" + fr.fn + "` writes into the " + t.role + " `" +
                             t.name + "`; kernrl's inputs must stay unchanged");
      C.add_fill(p.tensor, "0");
      return make_int(0);
    }
    if (starts_with(s, "cudaMemcpy")) {
      std::string all;
      for (auto [ra, rb] : args) all += c_text(x.T, ra, rb) + " ";
      if (contains(all, "DeviceToHost") || contains(all, "cudaMemcpyDefault"))
        fail("data_dependent_host",
             "`" + what + "` in `" + fr.fn + "` copies GPU results to the host");
      fail("host_logic",
           "`" + what + "` in `" + fr.fn + "` copies memory on the host side (" + s + ")");
    }
    if (starts_with(s, "cudaMalloc") || s == "cudaFree" || s == "cudaFreeAsync" ||
        s == "cudaMallocManaged" || s == "cudaHostAlloc")
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` allocates device memory itself (" + s +
                             "); kernrl allocates every buffer");
    if (starts_with(s, "cudaLaunch") || s == "cuLaunchKernel" || s == "cudaLaunchCooperativeKernel")
      fail("unsupported_cuda",
           "`" + what + "` in `" + fr.fn + "` launches through " + s +
               "; kernrl reads launches written as kernel<<<grid, block, shared>>>(...)");
    if (starts_with(s, "cudaOccupancy"))
      fail("host_logic", "`" + what + "` in `" + fr.fn +
                             "` sizes the grid with the occupancy API, which depends on the GPU "
                             "and the compiled kernel");
    if (s == "cudaGraphLaunch" || starts_with(s, "cudaGraph") ||
        starts_with(s, "cudaStreamBeginCapture"))
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` uses CUDA graphs");
    if (std::string lib = library_of(name); !lib.empty())
      fail("library_call", "library call `" + name + "` (" + lib + ") in the host wrapper `" +
                               fr.fn + "`; kernrl runs only the file's __global__ kernels");
    // Allocations.
    static const std::set<std::string> allocs = {
        "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like"};
    if ((starts_with(name, "torch::") || starts_with(name, "at::")) && allocs.count(s))
      return alloc_call(x, s, args, what, "");
    if (s == "empty_strided" || s == "empty_strided_like")
      fail("library_call", "`" + what + "` in `" + fr.fn + "` allocates a strided tensor");
    if (s == "dtype") {
      Val o;
      o.kind = Val::Opts;
      Val d = a(0);
      o.dtype = d.kind == Val::DType  ? d.dtype
                : d.kind == Val::Type ? dtype_of_c(strip_std(d.elem))
                                      : "";
      return o;
    }
    if (s == "TensorOptions" || s == "device" || s == "device_of") {
      Val o;
      o.kind = Val::Opts;
      return o;
    }
    if (s == "min" || s == "max" || s == "fmin" || s == "fmax" || s == "fminf" || s == "fmaxf") {
      if (args.size() == 1) {
        Val l = a(0);
        if (l.kind != Val::List || l.items.empty())
          fail("host_logic", "`" + what + "` in `" + fr.fn + "`");
        Val r = l.items[0];
        for (size_t k = 1; k < l.items.size(); ++k)
          r = minmax(s.find("min") != std::string::npos ? "min" : "max", r, l.items[k], what, fr);
        return r;
      }
      return minmax(s.find("min") != std::string::npos ? "min" : "max", a(0), a(1), what, fr);
    }
    if (s == "ceil" || s == "ceilf" || s == "floor" || s == "floorf" || s == "round" ||
        s == "roundf") {
      Val v = a(0);
      if (v.kind == Val::Ratio) {
        if (starts_with(s, "ceil"))
          return make_int_expr("cdiv(" + int_text(v.items[0]) + ", " + int_text(v.items[1]) + ")");
        if (starts_with(s, "floor")) {
          Val r = arith("/", v.items[0], v.items[1], what, fr);
          r.floaty = true;
          return r;
        }
      }
      if (v.kind == Val::Float && v.f)
        return make_float(starts_with(s, "ceil")    ? std::ceil(*v.f)
                          : starts_with(s, "floor") ? std::floor(*v.f)
                                                    : std::round(*v.f));
      if (v.kind == Val::Int) return v;
      fail("host_logic",
           "host logic in `" + fr.fn + "`: `" + what + "` rounds a value kernrl cannot compute");
    }
    if (s == "sqrt" || s == "sqrtf" || s == "pow" || s == "powf" || s == "log2" || s == "exp" ||
        s == "expf" || s == "log" || s == "logf" || s == "rsqrt" || s == "abs" || s == "fabs" ||
        s == "fabsf") {
      std::vector<Val> vals = eval_args(fr, x.T, args);
      std::vector<double> d;
      for (const Val& v : vals) {
        if (v.kind == Val::Float && v.f)
          d.push_back(*v.f);
        else if (v.kind == Val::Int && v.k)
          d.push_back(static_cast<double>(*v.k));
        else
          fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                                 "` computes with sizes in floating point on the host");
      }
      double r = s.rfind("sqrt", 0) == 0  ? std::sqrt(d[0])
                 : s.rfind("pow", 0) == 0 ? std::pow(d[0], d.at(1))
                 : s == "log2"            ? std::log2(d[0])
                 : s.rfind("exp", 0) == 0 ? std::exp(d[0])
                 : s.rfind("log", 0) == 0 ? std::log(d[0])
                 : s == "rsqrt"           ? 1 / std::sqrt(d[0])
                                          : std::fabs(d[0]);
      if (s == "abs" && vals[0].kind == Val::Int) return make_int(static_cast<int64_t>(r));
      return make_float(r);
    }
    if (s == "make_tuple" || s == "tuple" || s == "vector" || s == "make_pair" || s == "pair" ||
        s == "tie") {
      return list_of(eval_args(fr, x.T, args));
    }
    if (s == "move" || s == "forward") return a(0);
    if (s == "swap" && args.size() == 2) {
      // std::swap(a, b) of two variables (ping-pong buffers in a loop of known length).
      auto name_of = [&](std::pair<size_t, size_t> r) {
        return r.second == r.first + 1 && x.T[r.first].kind == CTok::Ident ? x.T[r.first].text : "";
      };
      std::string na = name_of(args[0]), nb = name_of(args[1]);
      Var* va = na.empty() ? nullptr : lookup(fr, na);
      Var* vb = nb.empty() ? nullptr : lookup(fr, nb);
      if (!va || !vb)
        fail("host_logic",
             "host logic in `" + fr.fn + "`: `" + what + "` swaps values kernrl cannot follow");
      Val ta = va->v, tb = vb->v;
      store(fr, na, {}, tb, what);
      store(fr, nb, {}, ta, what);
      return Val{};
    }
    if (s == "cuda::CUDAStreamGuard" || s == "cuda::OptionalCUDAGuard" || s == "cuda::CUDAGuard")
      return Val{};
    if (starts_with(name, "torch::") || starts_with(name, "at::") || starts_with(name, "c10::") ||
        starts_with(name, "F::"))
      fail("library_call",
           "PyTorch op `" + name + "` in the host wrapper `" + fr.fn + "` (`" + what + "`)");
    if (starts_with(s, "cuda"))
      fail("host_logic",
           "`" + what + "` in `" + fr.fn + "` calls " + s + ", which kernrl does not follow");
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` calls `" + name +
                           "`, which the source does not define");
  }

  // ---------------------------------------------------------------- function calls
  Val bind_param(const CParam& p, const Val& v, const std::string& fn, Frame& fr) {
    std::string base = strip_std(p.base);
    std::string what = "the argument `" + p.name + "` of `" + fn + "`";
    if (contains(base, "optional")) {
      if (v.kind == Val::Void) return v;
      return v;
    }
    if (contains(base, "Tensor") && !contains(base, "vector") && !contains(base, "List")) {
      if (v.kind != Val::Tensor) {
        if (v.kind == Val::Void) fail("mismatch", "`" + fn + "` is called without " + what);
        fail("mismatch", what + " is a tensor, but forward passes something else");
      }
      return v;
    }
    if (p.pointer) return v;
    if (int_type(base)) return to_int(v, what, fr);
    if (float_type(base)) return to_float(v, what, fr);
    if (base == "bool") {
      if (auto b = truth(v)) return make_bool(*b);
      return v;
    }
    if (contains(base, "IntArrayRef") || contains(base, "vector")) return v;
    return v;
  }

  Val call(const FnRef& f, std::vector<Val> args, const std::vector<std::string>& targ_types,
           Frame* caller) {
    if (++call_depth_ > kMaxCallDepth)
      fail("host_logic", "the host functions call each other more than " +
                             std::to_string(kMaxCallDepth) + " levels deep");
    const CItem& it = *f.item;
    Frame fr;
    fr.parent = &globals_;
    fr.fn = it.name;
    fr.ext = ext_;
    fr.T = &f.src->toks;
    fr.depth_base = 1;
    fr.scopes.emplace_back();
    if (it.is_template) {
      size_t k = 0;
      for (const CTemplateParam& tp : it.tparams) {
        if (tp.is_type && k < targ_types.size())
          fr.types[tp.name] = targ_types[k];
        else if (!tp.is_type && k < targ_types.size()) {
          // A value parameter given explicitly: a constant.
          Frame tmp;
          tmp.fn = it.name;
          tmp.scopes.emplace_back();
          auto toks = c_tokens(targ_types[k]);
          keep_alive_.push_back(std::make_shared<std::vector<CTok>>(toks));
          tmp.T = keep_alive_.back().get();
          declare(fr, tp.name, eval(caller ? *caller : tmp, *keep_alive_.back(), 0, toks.size()));
        }
        ++k;
      }
    }
    if (args.size() > it.params.size())
      fail("mismatch", "`" + it.name + "` takes " + std::to_string(it.params.size()) +
                           " arguments; it is called with " + std::to_string(args.size()));
    for (size_t k = 0; k < it.params.size(); ++k) {
      const CParam& p = it.params[k];
      Val v = k < args.size() ? args[k] : Val{};
      if (k >= args.size() || (v.kind == Val::Void && !contains(p.base, "optional"))) {
        fail("mismatch", "`" + it.name + "` is called with " + std::to_string(args.size()) +
                             " arguments; it takes " + std::to_string(it.params.size()));
      }
      if (!p.name.empty()) declare(fr, p.name, bind_param(p, v, it.name, fr));
    }
    exec_range(fr, it.body_open + 1, it.body_close);
    --call_depth_;
    return fr.ret ? *fr.ret : Val{};
  }

  // ---------------------------------------------------------------- launches
  std::string kernel_param_problem(const CParam& p) {
    std::string b = strip_std(p.base);
    if (contains(p.base, "Accessor"))
      return "takes a PackedTensorAccessor (`" + p.type + "`); kernrl passes raw pointers";
    if (contains(p.base, "Tensor")) return "takes a torch::Tensor";
    return "";
  }

  Val launch(Ex& x, const std::string& name, size_t targ_open, size_t targ_close, size_t from) {
    Frame& fr = x.fr;
    FnRef k = find_function(name, true);
    if (!k.item) {
      if (Var* v = lookup(fr, name); v && v->v.kind == Val::Func)
        k = find_function(v->v.name, true);
      if (!k.item)
        fail("unsupported_cuda", "`" + fr.fn + "` launches `" + name +
                                     "`, which is not a __global__ kernel of the source");
    }
    const CItem& kern = *k.item;
    size_t cfg_close = close_of(x.T, x.i, x.end);
    auto cfg = split_args(x.T, x.i + 1, cfg_close);
    x.i = cfg_close + 1;
    if (!at(x, "("))
      fail("unsupported_cuda",
           "the launch of `" + name + "` in `" + fr.fn + "` has no argument list");
    size_t args_close = close_of(x.T, x.i, x.end);
    auto arg_ranges = split_args(x.T, x.i + 1, args_close);
    if (arg_ranges.size() == 1 && arg_ranges[0].first == arg_ranges[0].second) arg_ranges.clear();
    x.i = args_close + 1;
    std::string what = snippet(x.T, from, x.i);
    if (cfg.size() < 2 || cfg.size() > 4)
      fail("unsupported_cuda", "the launch `" + what + "` in `" + fr.fn + "` has " +
                                   std::to_string(cfg.size()) + " values between <<< >>>");

    LaunchOut L;
    auto dims = [&](size_t which_cfg, std::vector<std::string>* out, const char* which) {
      Val v = eval(fr, x.T, cfg[which_cfg].first, cfg[which_cfg].second);
      if (v.kind == Val::Dim3) {
        size_t n = 3;
        while (n > 1 && v.items[n - 1].k && *v.items[n - 1].k == 1) --n;
        for (size_t q = 0; q < n; ++q) out->push_back(int_text(v.items[q]));
      } else {
        out->push_back(int_text(to_int(v, std::string("the ") + which + " of `" + what + "`", fr)));
      }
    };
    dims(0, &L.grid, "grid");
    dims(1, &L.block, "block");
    if (cfg.size() >= 3)
      L.shared = int_text(to_int(eval(fr, x.T, cfg[2].first, cfg[2].second),
                                 "the shared memory of `" + what + "`", fr));
    if (cfg.size() == 4) {
      Val st = eval(fr, x.T, cfg[3].first, cfg[3].second);
      (void)st;  // every launch runs on kernrl's stream, in order
    }

    // Kernel parameters vs arguments.
    for (const CParam& p : kern.params)
      if (std::string why = kernel_param_problem(p); !why.empty())
        fail("unsupported_cuda", "the kernel `" + name + "` " + why);
    if (arg_ranges.size() != kern.params.size())
      fail("mismatch", "the launch `" + what + "` in `" + fr.fn + "` passes " +
                           std::to_string(arg_ranges.size()) + " arguments; `" + name + "` takes " +
                           std::to_string(kern.params.size()));
    std::vector<Val> vals;
    for (auto [a, b] : arg_ranges) vals.push_back(eval(fr, x.T, a, b));

    // Template arguments: explicit, else deduced from pointer arguments.
    std::map<std::string, std::string> tbind;
    std::vector<std::string> targs;
    if (targ_close > targ_open) {
      auto parts = split_args(x.T, targ_open + 1, targ_close);
      for (size_t q = 0; q < parts.size(); ++q) {
        auto [a, b] = parts[q];
        bool is_type = q < kern.tparams.size() ? kern.tparams[q].is_type : false;
        if (is_type) {
          std::string ty = resolve_type(fr, c_text(x.T, a, b));
          if (strip_std(ty) == "Half") ty = "__half";
          targs.push_back(ty);
          if (q < kern.tparams.size()) tbind[kern.tparams[q].name] = ty;
        } else {
          Val v = eval(fr, x.T, a, b);
          if (v.kind == Val::Bool && v.k) {
            targs.push_back(*v.k ? "true" : "false");
            continue;
          }
          Val iv =
              to_int(v, "the template argument `" + c_text(x.T, a, b) + "` of `" + what + "`", fr);
          if (!iv.k)
            fail("unsupported_cuda",
                 "the template argument `" + c_text(x.T, a, b) + "` of `" + what + "` in `" +
                     fr.fn + "` depends on the sizes; a kernel is compiled once for all size sets");
          targs.push_back(std::to_string(*iv.k));
        }
      }
    }
    for (size_t q = 0; q < kern.params.size(); ++q) {
      const CParam& p = kern.params[q];
      if (std::string why = kernel_param_problem(p); !why.empty())
        fail("unsupported_cuda", "the kernel `" + name + "` " + why);
      if (kern.is_template && p.pointer && vals[q].kind == Val::Ptr)
        for (const CTemplateParam& tp : kern.tparams)
          if (tp.is_type && strip_std(p.base) == tp.name && !tbind.count(tp.name) &&
              !vals[q].elem.empty())
            tbind[tp.name] = vals[q].elem;
    }
    if (kern.is_template && targs.size() < kern.tparams.size()) {
      for (size_t q = targs.size(); q < kern.tparams.size(); ++q) {
        const CTemplateParam& tp = kern.tparams[q];
        auto b = tbind.find(tp.name);
        if (!tp.is_type || b == tbind.end())
          fail("unsupported_cuda",
               "cannot tell the template arguments of `" + name + "` in `" + what + "`");
        targs.push_back(b->second);
      }
    }
    L.kernel = name;
    if (!targs.empty()) {
      L.kernel += "<";
      for (size_t q = 0; q < targs.size(); ++q) L.kernel += (q ? ", " : "") + targs[q];
      L.kernel += ">";
    }

    for (size_t q = 0; q < kern.params.size(); ++q) {
      const CParam& p = kern.params[q];
      const Val& v = vals[q];
      std::string where = "argument " + std::to_string(q + 1) + " (`" +
                          c_text(x.T, arg_ranges[q].first, arg_ranges[q].second) +
                          "`) of the launch of `" + name + "` in `" + fr.fn + "`";
      std::string ptype = strip_std(p.base);
      if (auto b = tbind.find(ptype); b != tbind.end()) ptype = strip_std(b->second);
      LaunchArgOut out;
      if (p.pointer) {
        if (v.kind == Val::Ptr) {
          if (v.tensor < 0)
            fail("unsupported_cuda",
                 where + " is a null pointer; kernrl passes a tensor or a scratch buffer");
          out.tensor = v.tensor;
        } else if (v.kind == Val::Tensor) {
          fail("unsupported_cuda",
               where + " passes a tensor object where the kernel takes a pointer");
        } else {
          fail_value(v, "a tensor's data pointer", where, fr);
        }
      } else if (int_type(ptype)) {
        int bytes = c_type_bytes(ptype);
        if (bytes != 4 && bytes != 8)
          fail("unsupported_cuda", where + ": the parameter `" + p.type + " " + p.name + "` is " +
                                       std::to_string(bytes) +
                                       " bytes; kernrl passes integers as 4- or 8-byte values");
        Val iv = to_int(v, where, fr);
        out.text = !iv.scalar.empty() ? iv.scalar : int_text(iv);
      } else if (float_type(ptype)) {
        if (v.kind == Val::Float) {
          out.text =
              !v.scalar.empty() ? v.scalar : (!v.text.empty() ? v.text : float_literal(*v.f));
        } else if (v.kind == Val::Int && v.k) {
          out.text = float_literal(static_cast<double>(*v.k));
        } else if (v.kind == Val::Bool && v.k) {
          out.text = float_literal(static_cast<double>(*v.k));
        } else if (v.kind == Val::Int || v.kind == Val::Ratio) {
          fail("host_logic",
               where + " passes a value computed from the sizes to the floating-point parameter `" +
                   p.name + "`; kernrl passes floats only from the problem's scalars or literals");
        } else {
          fail_value(v, "a number", where, fr);
        }
      } else if (ptype == "bool") {
        fail("unsupported_cuda",
             where + ": the parameter `" + p.name +
                 "` is a bool (1 byte); kernrl passes integers as 4- or 8-byte values");
      } else {
        fail("unsupported_cuda",
             where + ": the parameter `" + p.type + " " + p.name +
                 "` is passed by value; kernrl passes pointers, integers and floats");
      }
      L.args.push_back(out);
    }
    if (!C.repeat_var_.empty()) {
      L.repeat_count = C.repeat_count_;
      L.repeat_var = C.repeat_var_;
    }
    C.launches.push_back(std::move(L));
    return Val{};
  }
};

Val Converter::call_host(int ext, const std::string& fn, const std::vector<Val>& args,
                         const std::vector<std::pair<std::string, Val>>& kwargs) {
  Interp in(*this, ext);
  return in.call_named(fn, args, kwargs);
}

void Converter::add_macros(const std::vector<CTok>& toks) {
  for (const CTok& t : toks) {
    if (t.kind != CTok::Directive) continue;
    std::string text = t.text;
    // Continuations joined.
    std::string joined;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
        ++i;
        joined += ' ';
        continue;
      }
      joined += text[i];
    }
    size_t p = joined.find_first_not_of(" \t", 1);
    if (p == std::string::npos || joined.compare(p, 6, "define") != 0) continue;
    std::vector<CTok> dt = c_tokens(joined.substr(p + 6));
    if (dt.empty() || dt[0].kind != CTok::Ident) continue;
    std::string name = dt[0].text;
    bool fn_like = dt.size() > 1 && is_punct(dt[1], "(") && dt[1].begin == dt[0].end;
    if (fn_like) {
      size_t c = c_match(dt, 1, dt.size());
      if (c >= dt.size()) continue;
      FnMacro m;
      for (size_t i = 2; i < c; ++i)
        if (dt[i].kind == CTok::Ident) m.params.push_back(dt[i].text);
      m.body.assign(dt.begin() + static_cast<long>(c) + 1, dt.end());
      fn_macros[name] = m;
    } else {
      macros[name] = std::vector<CTok>(dt.begin() + 1, dt.end());
    }
  }
}

}  // namespace kernrl::kbimport
