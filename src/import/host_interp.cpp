// The C++ host side of a load_inline module, run symbolically: every statement of the wrapper is
// executed with values kernrl knows (constants, dtypes, the problem's scalars) or expressions over
// the sizes; kernel launches become launch-block entries, allocations become outputs or scratch
// buffers, and anything the launch block cannot express is an ImportError naming it.
// This file: start-up, lookup, variables, conversions, integer arithmetic, types; the
// converter's entry to the host side.
#include "import/host_interp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "core/expr.h"

namespace kernrl::kbimport::host {

Val Interp::call_named(const std::string& fn, std::vector<Val> args,
                       const std::vector<std::pair<std::string, Val>>& kwargs) {
  load_globals();
  FnRef f = find_function(fn, false);
  if (!f.item)
    fail("mismatch", "forward calls `" + fn + "`, which the CUDA source of load_inline module `" +
                         C.exts[ext_].var + "` does not define");
  if (f.ambiguous)
    fail("host_logic", "forward calls `" + fn +
                           "`, which the CUDA source defines more than once (overloads or "
                           "specializations); kernrl does not choose between them");
  if (f.item->is_global)
    fail("unsupported_cuda", "forward calls the __global__ kernel `" + fn + "` directly");
  // Keyword arguments by parameter name.
  for (const auto& [k, v] : kwargs) {
    size_t at = f.item->params.size();
    for (size_t i = 0; i < f.item->params.size(); ++i)
      if (f.item->params[i].name == k) at = i;
    if (at == f.item->params.size())
      fail("mismatch", "forward passes `" + k + "=` to `" + fn + "`, which has no such parameter");
    if (args.size() <= at) args.resize(at + 1);
    args[at] = v;
  }
  return call(f, args, {}, nullptr);
}

void Interp::load_globals() {
  globals_.fn = "(file scope)";
  globals_.ext = ext_;
  globals_.scopes.emplace_back();
  for (const auto& s : C.exts[ext_].sources) load_globals(s, s.items);
}

void Interp::load_globals(const ExtModule::Source& s, const std::vector<CItem>& items) {
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

void Interp::collect(const std::vector<CItem>& items, const ExtModule::Source& src,
                     const std::string& name, bool kernel, FnRef* out) const {
  for (const CItem& it : items) {
    if (it.kind == CItem::Block) collect(it.children, src, name, kernel, out);
    if (it.kind != CItem::Function || it.name != name) continue;
    if (kernel != it.is_global) continue;
    // A declaration without a body (a prototype) does not count as another definition.
    if (out->item && it.body_close > it.body_open) out->ambiguous = true;
    if (!out->item) *out = FnRef{&it, &src, false};
  }
}

bool Interp::source_struct(const std::string& written) const {
  // `struct Args a;` declares an `Args` too.
  std::string type = written;
  for (const std::string kw : {"struct ", "class ", "union "})
    if (type.rfind(kw, 0) == 0) type = type.substr(kw.size());
  std::function<bool(const std::vector<CItem>&, const std::vector<CTok>&)> in =
      [&](const std::vector<CItem>& items, const std::vector<CTok>& toks) {
        for (const CItem& it : items) {
          if (it.kind == CItem::Block && in(it.children, toks)) return true;
          if (it.kind != CItem::Type) continue;
          const size_t last = std::min(it.last, toks.size());
          for (size_t k = it.first; k + 1 < last; ++k)
            if ((toks[k].text == "struct" || toks[k].text == "class" || toks[k].text == "union") &&
                toks[k + 1].text == type)
              return true;
          // `typedef struct { ... } Args;`
          if (it.first < last && last >= 2 && toks[it.first].text == "typedef" &&
              toks[last - 1].text == ";" && toks[last - 2].text == type)
            return true;
        }
        return false;
      };
  for (const auto& s : C.exts[ext_].sources)
    if (in(s.items, s.toks)) return true;
  return false;
}

FnRef Interp::find_function(const std::string& name, bool kernel) const {
  FnRef f;
  for (const auto& s : C.exts[ext_].sources) collect(s.items, s, name, kernel, &f);
  return f;
}

Var* Interp::lookup(Frame& fr, const std::string& name) {
  for (Frame* f = &fr; f; f = f->parent)
    for (auto it = f->scopes.rbegin(); it != f->scopes.rend(); ++it) {
      auto v = it->find(name);
      if (v != it->end()) return &v->second;
    }
  return nullptr;
}

std::string Interp::alias(Frame& fr, const std::string& name) {
  for (Frame* f = &fr; f; f = f->parent) {
    auto it = f->types.find(name);
    if (it != f->types.end()) return it->second;
  }
  return "";
}

int Interp::depth(Frame& fr) {
  return fr.depth_base + static_cast<int>(fr.scopes.size());
}

void Interp::declare(Frame& fr, const std::string& name, Val v) {
  fr.scopes.back()[name] = Var{C.named_value(v, name), depth(fr), "", ""};
}

int Interp::loop_depth(Frame& fr) {
  for (Frame* f = &fr; f; f = f->parent)
    if (f->loop_depth >= 0) return f->loop_depth;
  return -1;
}

void Interp::store(Frame& fr, const std::string& name, const std::vector<std::string>& path, Val v,
                   const std::string& what) {
  ++writes_;
  Var* var = lookup(fr, name);
  if (!var)
    fail("host_logic",
         "`" + what + "` in `" + fr.fn + "` assigns to `" + name + "`, which is not declared");
  if (!var->ref.empty())
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` assigns to `" + name + "`, " +
                           var->ref + "; kernrl follows copies, not references");
  int ld = loop_depth(fr);
  if (ld >= 0 && var->depth < ld)
    fail("host_logic", "a loop in `" + fr.fn + "` whose trip count depends on the sizes changes `" +
                           name + "` on each pass (`" + what +
                           "`); the launch block repeats launches, not host state");
  Val* target = &var->v;
  // A member of a struct of the source: the value is converted to its type.
  const StructDecl::Field* member = nullptr;
  for (const auto& p : path) {
    if (target->kind == Val::Dim3 && (p == "x" || p == "y" || p == "z")) {
      target = &target->items[p == "x" ? 0 : p == "y" ? 1 : 2];
    } else if (target->kind == Val::Struct) {
      const StructDecl* d = struct_decl(target->name);
      size_t at = d ? d->fields.size() : 0;
      for (size_t k = 0; d && k < d->fields.size(); ++k)
        if (d->fields[k].name == p) at = k;
      if (!d || at >= d->fields.size() || at >= target->items.size())
        fail("host_logic", "`" + what + "` in `" + fr.fn + "` assigns to `" + p +
                               "`, which is not a data member of `" + target->name + "`");
      member = &d->fields[at];
      target = &target->items[at];
      if (member->count > 0 && target->kind == Val::List) continue;  // an element next
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
  if (member) {
    if (target->kind == Val::List)
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` assigns to the array `" + member->name +
                             "` as a whole");
    *target = struct_field_value(*member, v, what, fr);
    return;
  }
  // Keep the declared category: an int stays an int, a float (a Float, a Ratio, or an Int of the
  // sizes held in a float: `float s = x.size(1);`) stays a float.
  bool is_float = target->kind == Val::Float || target->kind == Val::Ratio ||
                  (target->kind == Val::Int && target->floaty);
  if (is_float) {
    v = to_float(v, what, fr);
    if (v.kind == Val::Int) v.floaty = true;
  } else if (target->kind == Val::Int && v.kind != Val::Int) {
    v = to_int(v, what, fr);
  }
  // A variable of a narrow integer type holds the value converted to it; any other (a 64-bit
  // one, an item of an array or vector) is not known to be 32 bits wide.
  v.c32 = false;
  if (path.empty() && !var->ctype.empty() && v.kind == Val::Int && !is_float)
    if (auto c = c_int(var->ctype)) v = narrow_int(v, *c, var->ctype, true, what, fr, true);
  if (path.empty() && var->ctype == "float") v = narrow_float(v, true);
  if (path.empty()) v = C.named_value(v, name);
  *target = std::move(v);
}

Val Interp::as_unsigned(Val v, const std::string& what, Frame& fr) {
  if (v.kind != Val::Int) return v;
  auto p = C.per_set(v);
  bool negative =
      v.k ? *v.k < 0 : p && std::any_of(p->begin(), p->end(), [](int64_t x) { return x < 0; });
  if (negative)
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                           "` gives an unsigned integer a value that is negative at some size set "
                           "(it wraps around in C++; kernrl follows integers as signed values)");
  v.uns = true;
  return v;
}

Val Interp::to_int(const Val& v, const std::string& what, Frame& fr) {
  switch (v.kind) {
    case Val::Int: {
      Val r = v;
      r.floaty = false;
      return r;
    }
    case Val::Bool:
      if (v.k) return make_int(*v.k);
      // A condition that differs between size sets: its 0-or-1 arithmetic (host_branches.cpp).
      if (!v.e.empty()) return make_int_expr(v.e);
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

Val Interp::to_float(const Val& v, const std::string& what, Frame& fr) {
  switch (v.kind) {
    case Val::Float:
      return v;
    case Val::Int:
      if (v.k) return make_float(static_cast<double>(*v.k));
      {
        Val r = v;
        r.floaty = true;
        r.c32 = false;
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

std::string Interp::plain_type(const std::string& written) {
  std::string t = written;
  for (size_t at; (at = t.find("std::")) != std::string::npos;) t.erase(at, 5);
  if (t.rfind("::", 0) == 0) t.erase(0, 2);
  std::string out;
  for (char c : t) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::optional<Interp::CInt> Interp::c_int(const std::string& written) {
  const std::string t = plain_type(written);
  static const std::map<std::string, CInt> named = {
      {"int8_t", {1, true}},     {"uint8_t", {1, false}},  {"int16_t", {2, true}},
      {"uint16_t", {2, false}},  {"int32_t", {4, true}},   {"uint32_t", {4, false}},
      {"int64_t", {8, true}},    {"uint64_t", {8, false}}, {"size_t", {8, false}},
      {"ssize_t", {8, true}},    {"ptrdiff_t", {8, true}}, {"intptr_t", {8, true}},
      {"uintptr_t", {8, false}}, {"index_t", {8, true}},   {"uint", {4, false}},
  };
  if (auto it = named.find(t); it != named.end()) return it->second;
  // Words of the builtin integer types in any order: `long unsigned int`, `short`, `signed`.
  int longs = 0, shorts = 0, chars = 0, ints = 0, sign = 0, uns = 0;
  size_t from = 0;
  while (from <= t.size()) {
    size_t sp = t.find(' ', from);
    std::string w = t.substr(from, sp == std::string::npos ? std::string::npos : sp - from);
    if (w == "long")
      ++longs;
    else if (w == "short")
      ++shorts;
    else if (w == "char")
      ++chars;
    else if (w == "int")
      ++ints;
    else if (w == "signed")
      ++sign;
    else if (w == "unsigned")
      ++uns;
    else
      return std::nullopt;
    if (sp == std::string::npos) break;
    from = sp + 1;
  }
  if (longs > 2 || shorts > 1 || chars > 1 || ints > 1 || sign + uns > 1 ||
      (shorts && (longs || chars)) || (chars && (longs || ints)))
    return std::nullopt;
  if (chars && !sign && !uns) return std::nullopt;  // `char`: a character
  CInt c;
  c.is_signed = uns == 0;
  c.bytes = chars ? 1 : shorts ? 2 : longs ? 8 : 4;
  return c;
}

Val Interp::narrow_int(const Val& v, const CInt& t, const std::string& ctype, bool wrap,
                       const std::string& what, Frame& fr, bool unknown_ok) {
  if (v.kind != Val::Int) return v;
  const int bits = t.bytes * 8;
  const int64_t lo = t.is_signed ? (bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1))) : 0;
  const int64_t hi = bits == 64    ? INT64_MAX
                     : t.is_signed ? (int64_t{1} << (bits - 1)) - 1
                                   : (int64_t{1} << bits) - 1;
  Val r = v;
  r.uns = !t.is_signed;  // the value of a signed type compares and computes as signed
  r.c32 = t.bytes <= 4;
  if (v.k) {
    if (*v.k >= lo && *v.k <= hi) return r;
    if (!wrap)
      fail("mismatch", what + " is " + std::to_string(*v.k) + ", beyond the range of `" + ctype +
                           "`: pybind11 refuses it");
    if (bits == 64)  // a negative value of a 64-bit unsigned type: beyond what kernrl holds
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` gives the `" + ctype +
                             "` the negative value " + std::to_string(*v.k) +
                             " (it wraps around in C++; kernrl follows integers as signed values)");
    uint64_t u = static_cast<uint64_t>(*v.k) & ((uint64_t{1} << bits) - 1);
    int64_t w = static_cast<int64_t>(u);
    if (t.is_signed && w > hi) w -= int64_t{1} << bits;
    r.k = w;
    r.e.clear();
    r.scalar.clear();
    return r;
  }
  if (t.is_signed && bits == 64) return r;
  auto p = C.per_set(v);
  if (!p && !C.repeat_var_.empty()) {
    // In a loop run as a launch-block repeat: its value at each pass of each size set.
    p.emplace();
    for (const Vars& s : C.size_sets) {
      Vars vars = s;
      try {
        const int64_t n = eval_expr(C.repeat_count_, C.with_values(vars));
        if (n > (int64_t{1} << 16)) {
          p.reset();
          break;
        }
        for (int64_t i = 0; i < n; ++i) {
          vars[C.repeat_var_] = i;
          p->push_back(eval_expr(v.e, C.with_values(vars)));
        }
      } catch (const ExprError&) {
        p.reset();
        break;
      }
    }
  }
  if (!p && unknown_ok) return r;
  if (!p)
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                           "` depends on what kernrl cannot evaluate at each size set; kernrl "
                           "cannot tell that it fits a `" +
                           ctype + "`");
  for (int64_t x : *p)
    if (x < lo || x > hi) {
      if (!wrap)
        fail("mismatch", what + " is " + std::to_string(x) +
                             " at some size set, beyond the range of `" + ctype +
                             "`: pybind11 refuses it");
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` is " + std::to_string(x) +
                             " at some size set, beyond the range of `" + ctype +
                             "` (C++ would wrap it around; kernrl follows values in range)");
    }
  return r;
}

Val Interp::to_c_int(const Val& v, const std::string& type, const std::string& what, Frame& fr) {
  const bool from_float = v.kind == Val::Float || v.kind == Val::Ratio;
  Val r = to_int(v, what, fr);
  if (unsigned_int_type(type)) r = as_unsigned(r, what, fr);
  auto c = c_int(type);
  if (!c) return r;
  if (from_float && r.k) {
    // A floating-point value beyond the integer type's range: undefined behaviour in C++.
    const int bits = c->bytes * 8;
    const double lo = c->is_signed ? -std::ldexp(1.0, bits - 1) : 0.0;
    const double hi = c->is_signed ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);
    const double f = v.kind == Val::Float && v.f ? *v.f : static_cast<double>(*r.k);
    if (!(f > lo - 1.0 && f < hi))
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` converts a floating-point value beyond the range of `" + type +
                             "` to it (undefined in C++)");
  }
  return narrow_int(r, *c, plain_type(type), true, what, fr, true);
}

Val Interp::narrow_float(const Val& v, bool f32) {
  if (!f32 || v.kind != Val::Float || !v.f || !v.e.empty() || !v.scalar.empty()) return v;
  const double n = static_cast<double>(static_cast<float>(*v.f));
  return n == *v.f ? v : make_float(n);
}

void Interp::fail_value(const Val& v, const std::string& wanted, const std::string& what,
                        Frame& fr) {
  if (v.kind == Val::Unknown)
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` uses " + v.why +
                           ", which kernrl cannot compute");
  fail("host_logic",
       "host logic in `" + fr.fn + "`: `" + what + "` needs " + wanted + " kernrl can compute");
}

Val Interp::arith(const std::string& op, const Val& a0, const Val& b0, const std::string& what,
                  Frame& fr) {
  if (a0.multiple_of > 0 || b0.multiple_of > 0) return address_arith(op, a0, b0, what, fr);
  if ((a0.kind == Val::Ptr || b0.kind == Val::Ptr) && (op == "+" || op == "-"))
    return pointer_arith(op, a0, b0, what, fr);
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
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` is not a finite number");
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
    // Anything else of + - * / is a real expression over the sizes, which kernrl evaluates at
    // each size set where it is passed to a float parameter (docs/kernel-format.md).
    auto ta = real_text(a0), tb = real_text(b0);
    if (ta && tb && (op == "+" || op == "-" || op == "*" || op == "/")) {
      Val r;
      r.kind = Val::Float;
      r.e = "(" + *ta + ") " + op + " (" + *tb + ")";
      return r;
    }
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                           "` computes a floating-point value from the sizes on the host that "
                           "kernrl cannot write as an expression (" +
                           op + ")");
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
  // `(n + 3) & ~3` (rounds down to a multiple of 4) and `n & 3` (n's remainder by 4), of a size
  // that is not negative at any size set: `/ 4 * 4` and `% 4`.
  if (op == "&" && (a.k || b.k)) {
    const Val& sz = a.k ? b : a;
    const int64_t c = a.k ? *a.k : *b.k;
    auto p = C.per_set(sz);
    bool non_negative = p && std::all_of(p->begin(), p->end(), [](int64_t v) { return v >= 0; });
    auto pow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
    non_negative = non_negative && c != INT64_MIN && c != INT64_MAX;  // -c, c + 1 overflow
    if (non_negative && c < 0 && pow2(-c))
      return arith("*", arith("/", sz, make_int(-c), what, fr), make_int(-c), what, fr);
    if (non_negative && c >= 0 && pow2(c + 1)) return arith("%", sz, make_int(c + 1), what, fr);
  }
  if (op == "&" || op == "|" || op == "^")
    fail("host_logic",
         "host logic in `" + fr.fn + "`: `" + what + "` uses a bitwise operator on sizes");
  return int_binop(op, a, b, what);
}

// Arithmetic on buffer addresses (`(uintptr_t)p % 16`, `((uintptr_t)a | (uintptr_t)b) & 15`):
// kernrl's buffers are kBufferAlignment-aligned, so an alignment check on them is decided (and
// noted); any other use of an address is host logic kernrl cannot compute.
Val Interp::address_arith(const std::string& op, const Val& a, const Val& b,
                          const std::string& what, Frame& fr) {
  const Val& addr = a.multiple_of > 0 ? a : b;
  const Val& other = a.multiple_of > 0 ? b : a;
  Val r = make_unknown("the address of a buffer");
  if (other.multiple_of > 0 && (op == "|" || op == "+" || op == "-")) {
    r.multiple_of = std::gcd(addr.multiple_of, other.multiple_of);
    return r;
  }
  const bool addr_left = a.multiple_of > 0;
  if (addr_left && other.kind == Val::Int && other.k && *other.k > 0) {
    const int64_t k = *other.k;
    bool zero = false;
    if (op == "%") zero = addr.multiple_of % k == 0;
    if (op == "&") zero = (k & (k + 1)) == 0 && addr.multiple_of % (k + 1) == 0;
    if (zero) {
      std::string n = "`" + what + "` in `" + fr.fn + "` is 0: kernrl's buffers are " +
                      std::to_string(kBufferAlignment) + "-byte aligned";
      if (std::find(C.notes.begin(), C.notes.end(), n) == C.notes.end()) C.notes.push_back(n);
      return make_int(0);
    }
    if (op == "*" || op == "+") {
      r.multiple_of = op == "*" ? addr.multiple_of * k : std::gcd(addr.multiple_of, k);
      return r;
    }
  }
  fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                         "` computes with a buffer's address; kernrl can decide only whether "
                         "it is aligned to a divisor of " +
                         std::to_string(kBufferAlignment) + " bytes");
}

Val Interp::pointer_arith(const std::string& op, const Val& a, const Val& b,
                          const std::string& what, Frame& fr) {
  auto refuse = [&](const std::string& why) {
    fail("unsupported_cuda", "`" + what + "` in `" + fr.fn + "` " + why);
  };
  if (a.kind == Val::Ptr && b.kind == Val::Ptr) refuse("computes with two pointers");
  const bool ptr_left = a.kind == Val::Ptr;
  if (!ptr_left && op == "-") refuse("subtracts a pointer");
  const Val& p = ptr_left ? a : b;
  Val n = ptr_left ? b : a;
  if (p.tensor < 0) refuse("offsets a null pointer");
  if (n.kind == Val::Bool) n = to_int(n, what, fr);
  if (n.kind != Val::Int || n.floaty) fail_value(n, "an integer", what, fr);
  // kernrl passes a pointer into a buffer at a whole number of its elements: the pointee type
  // must be as wide as the tensor's dtype or a multiple of it (float4 over float32).
  const TensorInfo& t = C.tensors[static_cast<size_t>(p.tensor)];
  const int unit = p.elem.empty() ? 0 : c_type_bytes(strip_std(resolve_type(fr, p.elem)));
  const int item = dtype_bytes(t.dtype);
  if (unit == 0 || unit % item != 0)
    refuse("offsets a `" + (p.elem.empty() ? std::string("void") : p.elem) +
           "*` pointer into the " + t.dtype +
           " tensor; kernrl passes pointers into a buffer at whole elements of its dtype");
  Val step = unit == item ? n : arith("*", n, make_int(unit / item), what, fr);
  Val r = p;
  r.items = {has_offset(p) || op == "-" ? arith(op, ptr_offset(p), step, what, fr) : step};
  return r;
}

Val Interp::minmax(const std::string& which, const Val& a, const Val& b, const std::string& what,
                   Frame& fr) {
  if ((a.kind == Val::Float || b.kind == Val::Float) && !(a.kind == Val::Int && !a.k) &&
      !(b.kind == Val::Int && !b.k)) {
    Val x = to_float(a, what, fr), y = to_float(b, what, fr);
    if (x.f && y.f) return make_float(which == "min" ? std::min(*x.f, *y.f) : std::max(*x.f, *y.f));
  }
  Val x = to_int(a, what, fr), y = to_int(b, what, fr);
  if (x.k && y.k) return make_int(which == "min" ? std::min(*x.k, *y.k) : std::max(*x.k, *y.k));
  return make_int_expr(which + "(" + int_text(x) + ", " + int_text(y) + ")");
}

Val Interp::compare(const std::string& op, const Val& a, const Val& b, const std::string& what,
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
  if (a.kind == Val::Ptr && b.kind == Val::Ptr) {
    // Pointers into one tensor compare by their offsets, decided only where both are constants.
    Val oa = ptr_offset(a), ob = ptr_offset(b);
    if (a.tensor != b.tensor || a.tensor < 0) return make_bool(cmp(a.tensor, b.tensor));
    if (!oa.k || !ob.k)
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` compares pointers into a tensor at offsets that depend on the "
                             "sizes");
    return make_bool(cmp(*oa.k, *ob.k));
  }
  if (a.kind == Val::Float || b.kind == Val::Float || a.kind == Val::Ratio ||
      b.kind == Val::Ratio) {
    Val x = to_float(a, what, fr), y = to_float(b, what, fr);
    if (x.f && y.f) return make_bool(cmp(*x.f, *y.f));
    // An integer that depends on the sizes against a whole-number float (`n > 0.0`) compares as
    // integers; anything else would be truncated.
    auto whole = [](const Val& v) {
      return v.kind == Val::Float && v.f && std::floor(*v.f) == *v.f;
    };
    bool int_vs_whole = (a.kind == Val::Int && whole(b)) || (whole(a) && b.kind == Val::Int);
    if (!int_vs_whole)
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` compares a floating-point value that depends on the sizes");
  }
  Val x = to_int(a, what, fr), y = to_int(b, what, fr);
  // C++ converts the signed side of a comparison with an unsigned one to unsigned: the same
  // result as kernrl's signed one only where the signed side is not negative.
  if (x.uns != y.uns) {
    const Val& s = x.uns ? y : x;
    auto p = C.per_set(s);
    if (s.k ? *s.k < 0 : !p || std::any_of(p->begin(), p->end(), [](int64_t v) { return v < 0; }))
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` compares an unsigned integer with a value that may be negative "
                             "(C++ compares them as unsigned)");
  }
  if (x.k && y.k) return make_bool(cmp(*x.k, *y.k));
  auto px = C.per_set(x), py = C.per_set(y);
  if (!px || !py) {
    // Values that depend on the GPU (num_sms) or a repeat variable: only its arithmetic is known,
    // which a branch can still use (host_branches.cpp).
    if (x.kind == Val::Int && y.kind == Val::Int && !C.repeat_var_.size()) {
      Val r;
      r.kind = Val::Bool;
      r.text = what;
      r.e = compare_expr(op, int_text(x), int_text(y));
      if (!r.e.empty()) return r;
    }
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                           "` compares values that depend on the GPU or a loop");
  }
  Val r;
  r.kind = Val::Bool;
  r.text = what;
  for (size_t s = 0; s < px->size(); ++s) r.per_set.push_back(cmp((*px)[s], (*py)[s]) ? 1 : 0);
  r.e = compare_expr(op, int_text(x), int_text(y));
  return r;
}

void Interp::note_decided(Frame& fr, const std::optional<bool>& cond, const std::string& what) {
  if (!cond || !last_by_sizes_) return;
  std::string n = "`" + what + "` in `" + fr.fn + "` is " + (*cond ? "true" : "false") +
                  " at every size set of the problem (bench and tests), so it was decided here";
  if (std::find(C.notes.begin(), C.notes.end(), n) == C.notes.end()) C.notes.push_back(n);
}

std::optional<bool> Interp::truth(const Val& v) {
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
  if (v.kind == Val::Void && v.optional) return false;  // `if (bias)` of an empty optional
  return std::nullopt;
}

Val Interp::logic(const std::string& op, const Val& a, const Val& b, const std::string& what,
                  Frame& fr) {
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
  std::string ea = cond_expr(a), eb = cond_expr(b);
  if (!ea.empty() && !eb.empty())
    r.e = op == "&&" ? "(" + ea + ") * (" + eb + ")" : "min((" + ea + ") + (" + eb + "), 1)";
  return r;
}

std::string Interp::resolve_type(Frame& fr, const std::string& t) {
  std::string a = alias(fr, t);
  return a.empty() ? t : a;
}

bool Interp::type_word(Frame& fr, const CTok& t) {
  if (t.kind != CTok::Ident) return false;
  static const std::set<std::string> words = {
      "int",          "float",         "double",      "char",           "bool",         "long",
      "short",        "unsigned",      "signed",      "void",           "auto",         "size_t",
      "ssize_t",      "ptrdiff_t",     "int8_t",      "uint8_t",        "int16_t",      "uint16_t",
      "int32_t",      "uint32_t",      "int64_t",     "uint64_t",       "dim3",         "half",
      "__half",       "__nv_bfloat16", "float2",      "float4",         "int2",         "int4",
      "cudaStream_t", "cudaError_t",   "cudaEvent_t", "cudaDeviceProp", "const",        "constexpr",
      "static",       "volatile",      "register",    "inline",         "__restrict__", "typename",
      "index_t",      "uint",          "decltype"};
  if (words.count(t.text)) return true;
  if (!alias(fr, t.text).empty()) return true;
  if (t.text.size() > 2 && t.text.compare(t.text.size() - 2, 2, "_t") == 0) return true;
  return false;
}

bool Interp::is_declaration(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
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

}  // namespace kernrl::kbimport::host

namespace kernrl::kbimport {

Val Converter::call_host(int ext, const std::string& fn, const std::vector<Val>& args,
                         const std::vector<std::pair<std::string, Val>>& kwargs) {
  host::Interp in(*this, ext);
  return in.call_named(fn, args, kwargs);
}

int Converter::header_macro(const std::string& n) {
  // Defined, with the value the host side uses for them (host_primary.cpp).
  static const std::set<std::string> known = {"M_PI",      "INT_MAX",    "INT32_MAX", "INT_MIN",
                                              "INT32_MIN", "UINT16_MAX", "USHRT_MAX", "UINT32_MAX",
                                              "UINT_MAX",  "INT64_MAX",  "LLONG_MAX", "LONG_MAX"};
  if (known.count(n)) return 1;
  // Perhaps defined: the prefixes of torch's, CUDA's, pybind11's and Python's macros, and the C
  // library's constants and macros.
  static const char* const prefixes[] = {
      "C10_",   "AT_",     "TORCH_",   "CAFFE",    "PYBIND11_", "Py",       "PY",
      "HAVE_",  "SIZEOF_", "ALIGNOF_", "THRUST_",  "CUB_",      "CCCL_",    "LIBCUDACXX_",
      "NV",     "CU_",     "CUDART_",  "CUBLAS",   "CUSPARSE",  "CUSOLVER", "CUFFT",
      "CURAND", "CUDNN",   "NCCL",     "GLOG_",    "GOOGLE_",   "GFLAGS_",  "FLT_",
      "DBL_",   "LDBL_",   "FP_",      "HUGE_VAL", "PRI",       "SCN",      "PTHREAD_",
      "EXIT_",  "cuda"};
  for (const char* p : prefixes)
    if (n.rfind(p, 0) == 0) return -1;
  // <cmath>'s constants: M_E, M_PI_2, M_SQRT1_2 ... and their M_PIl, M_PIf128 forms.
  for (const char* c : {"E", "LOG2E", "LOG10E", "LN2", "LN10", "PI", "PI_2", "PI_4", "1_PI", "2_PI",
                        "2_SQRTPI", "SQRT2", "SQRT1_2"}) {
    const std::string m = std::string("M_") + c;
    if (n == m || n == m + "l" || n.rfind(m + "f", 0) == 0) return -1;
  }
  static const std::set<std::string> names = {"CUDA_VERSION",
                                              "CUDA_KERNEL_ASSERT",
                                              "CUDA_KERNEL_LOOP",
                                              "CUDA_KERNEL_LOOP_TYPE",
                                              "INFINITY",
                                              "NAN",
                                              "NULL",
                                              "EOF",
                                              "RAND_MAX",
                                              "CHECK",
                                              "CHECK_EQ",
                                              "CHECK_NE",
                                              "CHECK_LE",
                                              "CHECK_LT",
                                              "CHECK_GE",
                                              "CHECK_GT",
                                              "CHECK_NOTNULL",
                                              "DCHECK",
                                              "LOG",
                                              "VLOG",
                                              "PLOG",
                                              "DLOG",
                                              "assert",
                                              "errno",
                                              "offsetof",
                                              "MAXFLOAT",
                                              "BYTE_ORDER",
                                              "LITTLE_ENDIAN",
                                              "BIG_ENDIAN",
                                              "PDP_ENDIAN",
                                              "CLOCKS_PER_SEC",
                                              "PATH_MAX",
                                              "BUFSIZ",
                                              "FILENAME_MAX",
                                              "CHAR_BIT",
                                              "MB_LEN_MAX",
                                              "LONG_BIT",
                                              "WORD_BIT",
                                              "linux",
                                              "unix",
                                              "i386",
                                              "stdin",
                                              "stdout",
                                              "stderr"};
  if (names.count(n)) return -1;
  // <climits> and <cstdint>: CHAR_MAX, INT8_MIN, UINT_LEAST16_MAX, SIZE_MAX, INT64_C ...
  for (const char* suffix : {"_MAX", "_MIN", "_C", "_WIDTH"}) {
    const size_t k = std::strlen(suffix);
    if (n.size() <= k || n.compare(n.size() - k, k, suffix) != 0) continue;
    std::string head = n.substr(0, n.size() - k);
    static const std::set<std::string> types = {"CHAR", "SCHAR", "UCHAR", "SHRT",    "USHRT",
                                                "LONG", "ULONG", "LLONG", "ULLONG",  "WCHAR",
                                                "WINT", "SIZE",  "SSIZE", "PTRDIFF", "SIG_ATOMIC"};
    if (types.count(head)) return -1;
    if (head.rfind("U", 0) == 0) head = head.substr(1);
    if (head.rfind("INT", 0) == 0) return -1;  // INT, INT8, INT_LEAST32, INTMAX, INTPTR ...
  }
  return 0;
}

void Converter::add_macros(const std::vector<CTok>& toks, std::map<std::string, int>& names,
                           bool cuda) {
  // #if / #ifdef / #ifndef blocks as the host compile sees them. Each branch is 1 taken, 0 not
  // taken, -1 not known here (an #if expression, a compiler's predefined name). An #elif or #else
  // after a branch taken is not taken; after one not known, it is not known either (unless its own
  // condition is false). Directives in a branch not taken are skipped; those under one not known
  // make their macro's uses refused.
  struct Block {
    int now = 0;           // the current branch
    bool taken = false;    // an earlier branch was taken
    bool unknown = false;  // an earlier branch may have been
  };
  std::vector<Block> blocks;
  auto defined = [&](const std::string& n) -> int {
    if (auto it = names.find(n); it != names.end()) return it->second;
    if (n == "__CUDA_ARCH__") return 0;  // the host pass of nvcc, or the host compiler
    if (n == "__CUDACC__" || n == "__NVCC__") return cuda ? 1 : 0;
    // load_inline's own -D flags, in both compiles.
    if (n == "TORCH_EXTENSION_NAME" || n == "TORCH_API_INCLUDE_EXTENSION_H") return 1;
    if (n.rfind("__", 0) == 0 || n.rfind("_", 0) == 0) return -1;  // predefined, perhaps
    // torch/extension.h (or torch/types.h, cuda.h and cuda_runtime.h) comes first in both
    // translation units: what its headers define is defined from the source's first line.
    return header_macro(n);
  };
  auto condition = [](std::string rest) {
    rest.erase(0, rest.find_first_not_of(" \t"));
    rest.erase(rest.find_last_not_of(" \t\n") + 1);
    return rest == "0" ? 0 : rest == "1" ? 1 : -1;
  };
  auto open = [&](int c) {
    Block b;
    b.now = c;
    b.taken = c == 1;
    b.unknown = c < 0;
    blocks.push_back(b);
  };
  for (size_t ti = 0; ti < toks.size(); ++ti) {
    const CTok& t = toks[ti];
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
    if (p == std::string::npos) continue;
    auto word = [&](size_t n) {
      std::vector<CTok> w = c_tokens(joined.substr(p + n));
      return w.size() == 1 && w[0].kind == CTok::Ident ? w[0].text : std::string();
    };
    if (joined.compare(p, 6, "ifndef") == 0 || joined.compare(p, 5, "ifdef") == 0) {
      bool neg = joined.compare(p, 6, "ifndef") == 0;
      std::string n = word(neg ? 6 : 5);
      int d = n.empty() ? -1 : defined(n);
      open(d < 0 ? -1 : neg ? 1 - d : d);
      continue;
    }
    if (joined.compare(p, 4, "elif") == 0 || joined.compare(p, 4, "else") == 0) {
      if (!blocks.empty()) {
        Block& b = blocks.back();
        const int c = joined.compare(p, 4, "else") == 0 ? 1 : condition(joined.substr(p + 4));
        b.now = b.taken ? 0 : c == 0 ? 0 : b.unknown ? -1 : c;
        b.taken = b.taken || b.now == 1;
        b.unknown = b.unknown || b.now < 0;
      }
      continue;
    }
    if (joined.compare(p, 2, "if") == 0) {
      open(condition(joined.substr(p + 2)));
      continue;
    }
    if (joined.compare(p, 5, "endif") == 0) {
      if (!blocks.empty()) blocks.pop_back();
      continue;
    }
    bool skipped = false, unknown = false;
    for (const Block& b : blocks) {
      skipped = skipped || b.now == 0;
      unknown = unknown || b.now < 0;
    }
    if (skipped) continue;  // a block the host skips
    if (joined.compare(p, 5, "undef") == 0) {
      std::vector<CTok> dt = c_tokens(joined.substr(p + 5));
      if (dt.empty() || dt[0].kind != CTok::Ident) continue;
      if (unknown) conditional_macros.insert(dt[0].text);
      names[dt[0].text] = unknown ? -1 : 0;
      MacroEvent ev;
      ev.toks = &toks;
      ev.index = ti;
      macro_events[dt[0].text].push_back(std::move(ev));
      continue;
    }
    if (joined.compare(p, 6, "define") != 0) continue;
    std::vector<CTok> dt = c_tokens(joined.substr(p + 6));
    if (dt.empty() || dt[0].kind != CTok::Ident) continue;
    std::string name = dt[0].text;
    if (unknown) conditional_macros.insert(name);
    names[name] = unknown ? -1 : 1;
    bool fn_like = dt.size() > 1 && host::is_punct(dt[1], "(") && dt[1].begin == dt[0].end;
    MacroEvent ev;
    ev.toks = &toks;
    ev.index = ti;
    ev.define = true;
    ev.fn_like = fn_like;
    if (fn_like) {
      size_t c = c_match(dt, 1, dt.size());
      if (c >= dt.size()) continue;
      FnMacro m;
      for (size_t i = 2; i < c; ++i) {
        if (dt[i].kind == CTok::Ident) m.params.push_back(dt[i].text);
        if (host::is_punct(dt[i], "...")) m.variadic = true;
      }
      m.body.assign(dt.begin() + static_cast<long>(c) + 1, dt.end());
      fn_macros[name] = m;
      ev.fn = std::move(m);
    } else {
      macros[name] = std::vector<CTok>(dt.begin() + 1, dt.end());
      ev.body = macros[name];
    }
    macro_events[name].push_back(std::move(ev));
  }
}

}  // namespace kernrl::kbimport
