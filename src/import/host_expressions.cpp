// The host side (host_interp.h): expressions, by precedence.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>

#include "core/expr.h"
#include "import/host_interp.h"
#include "import/nesting.h"

namespace kernrl::kbimport::host {

Val Interp::eval(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
  // Nested parentheses and calls recurse: bounded, so that no input overflows the stack.
  Nesting nest(eval_depth_);
  if (eval_depth_ > 200)
    fail("host_logic", "host logic in `" + fr.fn + "`: an expression nested more than 200 deep");
  Ex x{fr, T, i, end, "", {}, "", {}, false};
  Val v = comma(x);
  if (x.i < end)
    fail("host_logic", "host logic in `" + fr.fn + "`: cannot follow `" + snippet(T, i, end) +
                           "` (at `" + T[x.i].text + "`)");
  return v;
}

std::string Interp::what_of(const Ex& x, size_t from) {
  return snippet(x.T, from, std::min(x.i, x.end));
}

bool Interp::at(const Ex& x, const char* p) {
  return x.i < x.end && is_punct(x.T[x.i], p);
}

Val Interp::comma(Ex& x) {
  Val v = assign(x);
  while (at(x, ",")) {
    ++x.i;
    v = assign(x);
  }
  return v;
}

Val Interp::assign(Ex& x) {
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

std::optional<Val> Interp::ternary_min_max(Ex& x, size_t from, size_t q, size_t colon,
                                           size_t else_end, const std::string& what) {
  auto text = [&](size_t i, size_t e) {
    // One pair of parentheses around the whole range is dropped: `(a < b) ? a : b`.
    if (e > i + 1 && is_punct(x.T[i], "(") && close_of(x.T, i, e) == e - 1) ++i, --e;
    std::string t;
    for (size_t k = i; k < e; ++k) t += x.T[k].text + " ";
    return t;
  };
  size_t ci = from, ce = q;
  if (ce > ci + 1 && is_punct(x.T[ci], "(") && close_of(x.T, ci, ce) == ce - 1) ++ci, --ce;
  // The condition's one comparison at depth 0.
  size_t op = ce;
  int d = 0;
  for (size_t k = ci; k < ce; ++k) {
    const CTok& t = x.T[k];
    if (is_punct(t, "(") || is_punct(t, "[")) ++d;
    if (is_punct(t, ")") || is_punct(t, "]")) --d;
    if (d == 0 &&
        (is_punct(t, "<") || is_punct(t, "<=") || is_punct(t, ">") || is_punct(t, ">=") ||
         is_punct(t, "==") || is_punct(t, "!=") || is_punct(t, "&&") || is_punct(t, "||"))) {
      if (op != ce) return std::nullopt;  // more than one: not this pattern
      op = k;
    }
  }
  if (op == ce || is_punct(x.T[op], "==") || is_punct(x.T[op], "!=") || is_punct(x.T[op], "&&") ||
      is_punct(x.T[op], "||"))
    return std::nullopt;
  const std::string a = text(ci, op), b = text(op + 1, ce);
  const std::string then_t = text(q + 1, colon), else_t = text(colon + 1, else_end);
  const bool less = is_punct(x.T[op], "<") || is_punct(x.T[op], "<=");
  std::string fn;
  if (then_t == a && else_t == b) fn = less ? "min" : "max";
  if (then_t == b && else_t == a) fn = less ? "max" : "min";
  if (fn.empty()) return std::nullopt;
  const size_t effects = side_effects();
  Val va = eval(x.fr, x.T, q + 1, colon), vb = eval(x.fr, x.T, colon + 1, else_end);
  if (side_effects() != effects || va.kind != Val::Int || vb.kind != Val::Int) return std::nullopt;
  return minmax(fn, va, vb, what, x.fr);
}

Val Interp::ternary(Ex& x) {
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
  if (!cond) {
    // Integers on both sides: the choice as arithmetic on the condition's 0 or 1.
    std::string ce = cond_expr(c);
    if (!ce.empty()) {
      const size_t effects = side_effects();
      Val a = eval(x.fr, x.T, q + 1, colon), b = eval(x.fr, x.T, colon + 1, else_end);
      if (side_effects() != effects)
        fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what +
                               "` chooses between values that launch, allocate or assign, by a "
                               "condition that is not the same at every size set");
      if (a.kind == Val::Int && b.kind == Val::Int) {
        Val r = select_int(ce, a, b);
        if (r.k || evaluates(r.e)) {
          x.i = else_end;
          x.lv_name.clear();
          return r;
        }
      }
    }
  }
  if (!cond) {
    // `a < b ? a : b` is min(a, b), `a > b ? a : b` max(a, b) (and the branches swapped the
    // other), whatever the condition is at each size set: `b < cap ? b : cap` with cap from the
    // GPU's SM count.
    if (auto r = ternary_min_max(x, from, q, colon, else_end, what)) {
      x.i = else_end;
      x.lv_name.clear();
      return *r;
    }
    fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what +
                           "` picks a value by a condition that is not the same at every size "
                           "set of the problem");
  }
  Val r = *cond ? eval(x.fr, x.T, q + 1, colon) : eval(x.fr, x.T, colon + 1, else_end);
  r.c32 = false;  // the type of `?:` is both branches' common type, which is not followed
  x.i = else_end;
  x.lv_name.clear();
  return r;
}

Val Interp::binary(const std::string& op, const Val& a, const Val& b, const std::string& what,
                   Frame& fr) {
  if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%" || op == "<<" || op == ">>" ||
      op == "&" || op == "|" || op == "^") {
    if (a.kind == Val::Tensor || b.kind == Val::Tensor)
      fail("library_call", "PyTorch op `" + op + "` on tensors in the host wrapper `" + fr.fn +
                               "` (`" + what + "`)");
    Val r = arith(op, a, b, what, fr);
    // Arithmetic on an unsigned integer is unsigned (an approximation of C's conversions that
    // can only refuse more): it must not go below zero.
    if ((a.uns || b.uns) && r.kind == Val::Int) r = as_unsigned(r, what, fr);
    if (r.kind == Val::Int) {
      // Two integers of 32-bit C types: C++ computes the result in 32 bits (`N * C * H * W` of
      // `int`s). Where it leaves that range, signed overflow is undefined and unsigned wraps
      // around: a constant of an unsigned type wraps, anything else is refused.
      const bool in32 = a.kind == Val::Int && b.kind == Val::Int && a.c32 && b.c32 && !a.floaty &&
                        !b.floaty && !r.floaty;
      r.c32 = in32;
      if (in32 && (op == "+" || op == "-" || op == "*" || op == "<<")) {
        const bool uns = a.uns || b.uns;
        if (uns && r.k) return narrow_int(r, CInt{4, false}, "unsigned int", true, what, fr);
        const int64_t lo = uns ? 0 : INT32_MIN, hi = uns ? int64_t{UINT32_MAX} : INT32_MAX;
        auto values =
            r.k ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{*r.k}) : C.per_set(r);
        for (int64_t v : values ? *values : std::vector<int64_t>{})
          if (v < lo || v > hi)
            fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` is " +
                                   std::to_string(v) + (r.k ? "" : " at some size set") +
                                   ", beyond the range of `" + (uns ? "unsigned int" : "int") +
                                   "`, the type C++ computes it in (both operands are 32-bit "
                                   "integers; it overflows)");
      }
    }
    return r;
  }
  if (op == "<" || op == ">" || op == "<=" || op == ">=" || op == "==" || op == "!=")
    return compare(op, a, b, what, fr);
  if (op == "&&" || op == "||") return logic(op, a, b, what, fr);
  fail("host_logic", "host logic in `" + fr.fn + "`: operator " + op);
}

// `a && b`, `a || b` as C++ evaluates them: where `a` alone decides the result at every size set
// (false for `&&`, true for `||`), `b` is not evaluated (`opt.has_value() && opt->defined()`).
Val Interp::short_circuit(Ex& x, const char* op, const std::function<Val()>& next) {
  size_t from = x.i;
  Val v = next();
  while (at(x, op)) {
    ++x.i;
    std::optional<bool> a = v.kind == Val::Bool || v.kind == Val::Int || v.kind == Val::Tensor ||
                                    v.kind == Val::Ptr || v.kind == Val::Float
                                ? truth(v)
                                : std::nullopt;
    bool is_and = std::string(op) == "&&";
    if (a && *a != is_and) {
      // Skip the operand: up to the next operator of this level (or a lower one) at depth 0.
      int depth = 0;
      for (; x.i < x.end; ++x.i) {
        const CTok& t = x.T[x.i];
        // `f<1, 2>(n)`: template arguments, whose commas end nothing.
        if (size_t c = template_args_close(x.T, x.i, 0, x.end)) {
          x.i = c;
          continue;
        }
        if (is_punct(t, "(") || is_punct(t, "[") || is_punct(t, "{")) ++depth;
        if (is_punct(t, ")") || is_punct(t, "]") || is_punct(t, "}")) {
          if (depth == 0) break;
          --depth;
          continue;
        }
        // `&&` binds tighter than `||`: the operand of `||` runs over it.
        if (depth == 0 && ((is_and && is_punct(t, "&&")) || is_punct(t, "||") || is_punct(t, "?") ||
                           is_punct(t, ":") || is_punct(t, ",") || is_punct(t, ";")))
          break;
      }
      x.lv_name.clear();
      v = make_bool(!is_and);
      continue;
    }
    const size_t effects = side_effects();
    Val r = next();
    x.lv_name.clear();
    // The right side runs only where the left does not decide: kernels it launches or tensors it
    // allocates would run at every size set.
    if (side_effects() != effects)
      fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what_of(x, from) + "` runs the " +
                             "right side of " + op +
                             ", which launches, allocates or assigns, at some " + "size sets only");
    v = binary(op, v, r, what_of(x, from), x.fr);
  }
  return v;
}

Val Interp::logical_or(Ex& x) {
  return short_circuit(x, "||", [&] { return logical_and(x); });
}

Val Interp::logical_and(Ex& x) {
  return short_circuit(x, "&&", [&] { return bit_or(x); });
}

Val Interp::bit_or(Ex& x) {
  return left(x, {"|"}, [&] { return bit_xor(x); });
}

Val Interp::bit_xor(Ex& x) {
  return left(x, {"^"}, [&] { return bit_and(x); });
}

Val Interp::bit_and(Ex& x) {
  return left(x, {"&"}, [&] { return equality(x); });
}

Val Interp::equality(Ex& x) {
  return left(x, {"==", "!="}, [&] { return relational(x); });
}

Val Interp::relational(Ex& x) {
  return left(x, {"<", ">", "<=", ">="}, [&] { return shift(x); });
}

Val Interp::shift(Ex& x) {
  return left(x, {"<<", ">>"}, [&] { return additive(x); });
}

Val Interp::additive(Ex& x) {
  return left(x, {"+", "-"}, [&] { return multiplicative(x); });
}

Val Interp::multiplicative(Ex& x) {
  return left(x, {"*", "/", "%"}, [&] { return unary(x); });
}

bool Interp::cast_ahead(Ex& x, size_t open, size_t close) {
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

Val Interp::cast_to(Frame& fr, const std::string& type_text, const Val& v,
                    const std::string& what) {
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
  if (int_type(s) && v.kind == Val::Ptr && v.tensor >= 0) {
    // A buffer's address as an integer: unknown, but a multiple of kernrl's buffer alignment (of
    // less, at an offset: of what divides it, in bytes, at every size set; nothing when the offset
    // depends on num_sms or a repeat variable).
    Val a = make_unknown("the address of a buffer");
    a.multiple_of = kBufferAlignment;
    if (has_offset(v)) {
      auto values = C.per_set(ptr_offset(v));
      const int64_t item = dtype_bytes(C.tensors[static_cast<size_t>(v.tensor)].dtype);
      for (int64_t off : values ? *values : std::vector<int64_t>{})
        a.multiple_of = std::gcd(a.multiple_of, off * item);
      if (!values) a.multiple_of = 0;
    }
    return a;
  }
  if (int_type(s)) return to_c_int(v, s, what, fr);  // narrowed as C++ converts it
  if (float_type(s)) return to_float(v, what, fr);
  if (s == "bool") {
    if (auto b = truth(v)) return make_bool(*b);
  }
  return v;
}

Val Interp::unary(Ex& x) {
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
    if (v.kind == Val::Float && v.f) return make_float(-*v.f);
    if (v.kind == Val::Float && !v.e.empty()) {
      Val r = v;
      r.e = "-(" + v.e + ")";
      return r;
    }
    if (v.kind == Val::Float) return arith("-", make_int(0), v, what_of(x, from), x.fr);
    return arith("-", make_int(0), v, what_of(x, from), x.fr);
  }
  if (is_punct(t, "!")) {
    ++x.i;
    Val v = unary(x);
    x.lv_name.clear();
    if (auto b = truth(v)) return make_bool(!*b);
    if (v.kind == Val::Bool && !v.per_set.empty()) {
      for (auto& c : v.per_set) c = !c;
      if (!v.e.empty()) v.e = "1 - (" + v.e + ")";
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
    // Address-of: &var for cuda*(&out) calls; the variable's name is kept. `&p[i]` of a pointer
    // is p + i (postfix).
    ++x.i;
    x.address_of = x.i < x.end && x.T[x.i].kind == CTok::Ident;
    Val v = unary(x);
    x.address_of = false;
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
        // sizeof(variable): its declared type's size, where kernrl holds it (a variable of a
        // 64-bit integer type, `auto` or `double` is refused).
        Var* v = c == x.i + 2 ? lookup(x.fr, x.T[x.i + 1].text) : nullptr;
        if (v && v->v.kind == Val::Int && !v->ctype.empty() && c_int(v->ctype))
          b = c_int(v->ctype)->bytes;
        else if (v && v->v.kind == Val::Float && v->ctype == "float")
          b = 4;
        else
          fail("host_logic", "host logic in `" + x.fr.fn + "`: sizeof(" + ty + ")");
      }
      x.i = c + 1;
      Val n = make_int(b);
      n.uns = true;  // a size_t: unsigned in comparisons and arithmetic
      return n;
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

}  // namespace kernrl::kbimport::host
