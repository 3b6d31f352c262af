// The host side (host_interp.h): declarations, construction and argument lists.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "core/expr.h"
#include "import/host_interp.h"

namespace kernrl::kbimport::host {

size_t Interp::exec_decl(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
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
      // join "a::" with the following name, and its template arguments (`std::vector<int64_t>`)
      if (k < e && T[k].kind == CTok::Ident) {
        type_words.back() += T[k].text;
        ++k;
        if (k < e && is_punct(T[k], "<")) {
          size_t c = c_match(T, k, e);
          if (c < e) {
            type_words.back() += c_text(T, k, c + 1);
            k = c + 1;
          }
        }
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
  bool pointer = false, is_const = false, reference = false;
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
    if (w == "&" || w == "&&") {
      reference = !pointer;  // `int*& p` is a reference too; `int&* p` does not exist
      continue;
    }
    type += (type.empty() ? "" : " ") + w;
  }
  (void)is_const;
  type = resolve_type(fr, type);
  // Declarators.
  while (k < e) {
    bool ptr = pointer;
    bool ref = reference;
    while (k < e && (is_punct(T[k], "*") || is_punct(T[k], "&") || is_punct(T[k], "&&"))) {
      ptr |= is_punct(T[k], "*");
      ref |= !is_punct(T[k], "*");
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
    if (v.kind == Val::List) {
      // The items of an array or vector hold values of its element type: of 32 bits only where
      // that type is (`long long d[2] = {n, c};` holds 64-bit values).
      std::string elem = strip_std(type);
      if (elem.rfind("vector<", 0) == 0 && elem.back() == '>')
        elem = plain_type(elem.substr(7, elem.size() - 8));
      auto c = c_int(elem);
      if (!c || c->bytes > 4 || (!array && elem == strip_std(type)))
        for (Val& item : v.items) item.c32 = false;
    }
    if (v.kind == Val::Tensor) {
      TensorInfo& t = C.tensors[static_cast<size_t>(v.tensor)];
      if (t.role == "alloc" && t.name.empty()) t.name = name;  // scratch buffers keep the name
    }
    declare(fr, name, std::move(v));
    if (!ptr && !array && !ref) {
      if (auto c = c_int(strip_std(type)); c && c->bytes < 8 && int_type(strip_std(type)))
        lookup(fr, name)->ctype = strip_std(type);
      if (strip_std(type) == "float") lookup(fr, name)->ctype = "float";
    }
    if (ref) {
      // A reference: kernrl holds a copy of what it refers to, which stays the same only while
      // neither is assigned to. The reference (unless const) and the variable it names (`a`,
      // `a.n`, `v[0]`) take no assignment from here on.
      if (!is_const) lookup(fr, name)->ref = "a reference (`" + what + "`)";
      size_t a = k, b = decl_end;
      if (a < b && is_punct(T[a], "=")) {
        ++a;
      } else if (a < b && (is_punct(T[a], "(") || is_punct(T[a], "{"))) {
        b = close_of(T, a, b);
        ++a;
      }
      while (a < b && is_punct(T[a], "(") && close_of(T, a, b) + 1 == b) ++a, --b;
      if (a < b && T[a].kind == CTok::Ident) {
        bool path = true;  // NAME, NAME.m, NAME[i]: not a call's result
        for (size_t q = a + 1; q < b && path;) {
          if ((is_punct(T[q], ".") || is_punct(T[q], "->")) && q + 1 < b &&
              T[q + 1].kind == CTok::Ident) {
            q += 2;
          } else if (is_punct(T[q], "[")) {
            q = close_of(T, q, b) + 1;
          } else {
            path = false;
          }
        }
        Var* target = path && T[a].text != name ? lookup(fr, T[a].text) : nullptr;
        if (target && target->ref.empty())
          target->ref = "which the reference `" + name + "` refers to (`" + what + "`)";
      }
    }
    k = decl_end;
    if (k < e && is_punct(T[k], ",")) ++k;
  }
  return std::min(end, e + 1);
}

size_t Interp::next_declarator(const std::vector<CTok>& T, size_t k, size_t e) {
  int d = 0;
  for (size_t q = k; q < e; ++q) {
    const CTok& t = T[q];
    if (t.kind != CTok::Punct) continue;
    // Template arguments (`auto a = x.packed_accessor32<float, 3>();`), as split_args skips them.
    if (size_t c = d == 0 ? template_args_close(T, q, k, e) : 0) {
      q = c;
      continue;
    }
    if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
    if (t.text == ")" || t.text == "]" || t.text == "}") --d;
    if (d == 0 && t.text == ",") return q;
  }
  return e;
}

Val Interp::construct(Frame& fr, const std::vector<CTok>& T, const std::string& type,
                      const std::vector<std::pair<size_t, size_t>>& args, const std::string& what,
                      bool braces) {
  std::vector<Val> vals;
  for (auto [a, b] : args) vals.push_back(eval(fr, T, a, b));
  if (type == "dim3") return make_dim3(vals, what, fr);
  if (contains(type, "Guard") || contains(type, "guard")) return Val{};
  if (contains(type, "vector") && !braces && vals.size() == 2 && vals[0].kind == Val::List &&
      vals[0].elem == "list begin" && vals[1].elem == "list end" &&
      vals[0].items.size() == vals[1].items.size()) {
    Val l = vals[0];  // the range of a whole list: a copy of it
    l.elem.clear();
    return l;
  }
  if (contains(type, "vector") && !braces) {
    // std::vector<T> v(n) / v(n, value) / v(other): a list kernrl knows only from known values.
    if (vals.size() == 1 && vals[0].kind == Val::List) return vals[0];
    if ((vals.size() == 1 || vals.size() == 2) && vals[0].kind == Val::Int && vals[0].k &&
        *vals[0].k >= 0 && *vals[0].k <= 64) {
      Val l;
      l.kind = Val::List;
      l.items.assign(static_cast<size_t>(*vals[0].k), vals.size() == 2 ? vals[1] : make_int(0));
      return l;
    }
    return make_unknown("a `" + type + "` built on the host (`" + what + "`)");
  }
  if (contains(type, "vector") || braces) {
    Val l;
    l.kind = Val::List;
    l.items = vals;
    return l;
  }
  if (vals.size() == 1) return vals[0];
  return make_unknown("a `" + type + "` built on the host");
}

Val Interp::make_dim3(const std::vector<Val>& vals, const std::string& what, Frame& fr) {
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

Val Interp::convert_decl(Frame& fr, const std::string& type, bool ptr, bool has_init, Val v,
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
    if (const StructDecl* d = struct_decl(t)) {
      // A plain struct whose fields the wrapper sets, each read from where it was set.
      if (d->why.empty()) return new_struct(*d, name, false);
      return make_unknown("`" + name + "`, a `" + t +
                          "` filled on the host (a struct of the source that kernrl does not "
                          "pass: " +
                          d->why + ")");
    }
    return make_unknown("`" + name + "` (declared without a value)");
  }
  if (const StructDecl* d = struct_decl(t)) {
    if (!d->why.empty())
      return make_unknown("`" + name + "`, a `" + t +
                          "` (a struct of the source that kernrl does not pass: " + d->why + ")");
    if (v.kind == Val::Struct && v.name == d->name) return v;  // a copy of another
    if (v.kind == Val::List && v.items.empty() && v.elem.empty())
      return new_struct(*d, name, true);  // `T a{};`, `T a = {};`: value-initialised
    return make_unknown("`" + name + "`, a `" + t + "` initialised by `" + what +
                        "` (kernrl follows a struct's fields set one by one, or `{}`)");
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
  if (int_type(t)) {
    Val r = to_int(v, what, fr);
    r = unsigned_int_type(t) ? as_unsigned(r, what, fr) : r;
    // As C++ converts it: a constant wraps around to a narrower type, a value of the sizes must
    // fit it at every size set.
    if (auto c = c_int(t); c && c->bytes < 8) r = narrow_int(r, *c, t, true, what, fr, true);
    r.c32 = r.c32 && c_int(t) && c_int(t)->bytes <= 4;
    return r;
  }
  if (float_type(t)) return narrow_float(to_float(v, what, fr), t == "float");  // rounded
  if (v.kind == Val::Unknown || v.kind == Val::Void) return v;
  // Other types (a struct of the source): kept as they are.
  return v;
}

std::vector<std::pair<size_t, size_t>> Interp::split_args(const std::vector<CTok>& T, size_t i,
                                                          size_t end) {
  std::vector<std::pair<size_t, size_t>> out;
  if (i >= end) return out;
  int d = 0;
  size_t start = i;
  for (size_t k = i; k < end; ++k) {
    const CTok& t = T[k];
    if (t.kind != CTok::Punct) continue;
    // Template arguments (x.packed_accessor32<float, 3>(), std::min<int>(a, b)).
    if (size_t c = d == 0 ? template_args_close(T, k, i, end) : 0) {
      k = c;
      continue;
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

}  // namespace kernrl::kbimport::host
