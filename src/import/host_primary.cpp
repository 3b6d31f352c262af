// The host side (host_interp.h): postfix and primary expressions, macros.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "core/expr.h"
#include "import/host_interp.h"

namespace kernrl::kbimport::host {

Val Interp::postfix(Ex& x) {
  size_t from = x.i;
  const bool address_of = x.address_of;  // `&` before this expression
  x.address_of = false;
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
        // `shape.back()`, `shape.front()`: the list's last or first item, which may be assigned
        // (`out_sizes.back() = N;`).
        if ((member == "back" || member == "front") && args.empty() && v.kind == Val::List) {
          if (v.items.empty())
            fail("mismatch", "`" + what_of(x, from) + "` in `" + x.fr.fn + "` of an empty list");
          size_t k = member == "back" ? v.items.size() - 1 : 0;
          if (!x.lv_name.empty()) x.lv_path.push_back(std::to_string(k));
          Val item = v.items[k];
          v = item;
          continue;
        }
        x.obj_name = x.lv_name;
        x.obj_path = x.lv_path;
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
        if (k < 0)  // C++ does not count from the end: an index below the first element
          fail("mismatch", "`" + what + "` in `" + x.fr.fn + "` indexes with the negative value " +
                               std::to_string(k) + " (undefined behaviour in C++)");
        if (k >= static_cast<int64_t>(v.items.size()))
          fail("mismatch",
               "`" + what + "` in `" + x.fr.fn + "` indexes past the end for this problem");
        if (!x.lv_name.empty()) x.lv_path.push_back(std::to_string(k));
        Val item = v.items[static_cast<size_t>(k)];
        v = item;
        continue;
      }
      // `&p[i]`, nothing after the index: the address of element i, p + i.
      bool last = x.i >= x.end || !(at(x, "(") || at(x, "[") || at(x, ".") || at(x, "->") ||
                                    at(x, "++") || at(x, "--"));
      if (v.kind == Val::Ptr && address_of && last) {
        x.lv_name.clear();
        v = pointer_arith("+", v, idx, what, x.fr);
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

Val Interp::number(const std::string& lit) {
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
  bool uns = false;   // `4u`, `1ul`: a literal of an unsigned type
  bool wide = false;  // `1L`, `1ll`, `1z`: of a 64-bit type
  while (!s.empty() && std::strchr("uUlLzZ", s.back())) {
    uns = uns || s.back() == 'u' || s.back() == 'U';
    wide = wide || !(s.back() == 'u' || s.back() == 'U');
    s.pop_back();
  }
  int base = 10;
  std::string digits = s;
  if (hex)
    base = 16, digits = s.substr(2);
  else if (starts_with(s, "0b") || starts_with(s, "0B"))
    base = 2, digits = s.substr(2);
  else if (s.size() > 1 && s[0] == '0')
    base = 8, digits = s.substr(1);
  const uint64_t value = std::strtoull(digits.c_str(), nullptr, base);
  Val n = make_int(static_cast<int64_t>(value));
  n.uns = uns;
  // The literal's type (C++ [lex.icon]): `int` where it fits, else (a hexadecimal or octal one)
  // `unsigned int` where that fits; an unsigned one `unsigned int` where that fits; else 64 bits.
  if (!wide && !uns && value <= 0x7fffffffu) {
    n.c32 = true;
  } else if (!wide && (uns || base != 10) && value <= 0xffffffffu) {
    n.c32 = true;
    n.uns = true;
  }
  return n;
}

std::string Interp::qualified(Ex& x) {
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

Val Interp::primary(Ex& x) {
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
  // A list built by its type: std::vector<int64_t>{a, b}, c10::IntArrayRef{...}, and the empty
  // shape std::vector<int64_t>{} of a 0-dimensional tensor.
  if (at(x, "{")) {
    const std::string ty = strip_std(name);
    if (ty == "vector" || ty == "array" || ty == "initializer_list" || contains(ty, "IntArrayRef"))
      return primary(x);  // the braced list itself
  }

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
  const MacroRef mr = find_macro(name, x.T, from);
  if (mr.object) return expand_object_macro(x, from, name, *mr.object);
  if (mr.fn && at(x, "(")) {
    if (macro_is_check(*mr.fn)) {
      // A checking macro used in an expression: its value is not needed.
      size_t c = close_of(x.T, x.i, x.end);
      x.i = c + 1;
      return Val{};
    }
    size_t c = close_of(x.T, x.i, x.end);
    auto args = split_args(x.T, x.i + 1, c);
    x.i = c + 1;
    return expand_fn_macro(x, from, name, *mr.fn, args);
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
  // <climits> / <cstdint> limits.
  static const std::map<std::string, int64_t> limits = {
      {"INT_MAX", 2147483647},
      {"INT32_MAX", 2147483647},
      {"INT_MIN", -2147483647 - 1},
      {"INT32_MIN", -2147483647 - 1},
      {"UINT16_MAX", 65535},
      {"USHRT_MAX", 65535},
      {"UINT32_MAX", 4294967295LL},
      {"UINT_MAX", 4294967295LL},
      {"INT64_MAX", std::numeric_limits<int64_t>::max()},
      {"LLONG_MAX", std::numeric_limits<int64_t>::max()},
      {"LONG_MAX", std::numeric_limits<int64_t>::max()}};
  if (auto lim = limits.find(s); lim != limits.end()) return make_int(lim->second);
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

Interp::MacroRef Interp::find_macro(const std::string& name, const std::vector<CTok>& T, size_t i) {
  MacroRef r;
  if (C.conditional_macros.count(name))
    fail("unsupported_cuda", "the macro `" + name +
                                 "` is defined or #undef'd under #if/#ifdef/#ifndef; kernrl does "
                                 "not evaluate the preprocessor's conditions");
  auto ev = C.macro_events.find(name);
  // A name of a -D flag of some module: what the use's translation unit sees (load_inline
  // compiles its CUDA sources with extra_cuda_cflags, its C++ sources with extra_cflags).
  bool flagged = false;
  for (const ExtModule& m : C.exts)
    flagged = flagged || m.cuda_flag_macros.count(name) || m.cpp_flag_macros.count(name);
  if (flagged) {
    const std::vector<CTok>* st = &T;
    size_t si = i;
    if (auto s = macro_site_.find(&T); s != macro_site_.end()) {
      st = s->second.first;
      si = s->second.second;
    }
    const ExtModule& m = C.exts[static_cast<size_t>(ext_)];
    const ExtModule::Source* use = nullptr;
    for (const auto& so : m.sources)
      if (&so.toks == st) use = &so;
    const int line = i < T.size() ? T[i].line : 0;
    if (!use)
      fail("unsupported_cuda", "the macro `" + name + "` (used at line " + std::to_string(line) +
                                   ") is defined by a -D flag, and kernrl does not know which "
                                   "translation unit the use is in");
    // The directives of the same translation unit: all in the use's source, or refused.
    std::vector<const Converter::MacroEvent*> own;
    if (ev != C.macro_events.end())
      for (const auto& e : ev->second)
        for (const auto& so : m.sources)
          if (so.cuda == use->cuda && &so.toks == e.toks) own.push_back(&e);
    for (const auto* e : own)
      if (e->toks != st)
        fail("unsupported_cuda", "the macro `" + name + "` (used at line " + std::to_string(line) +
                                     ") is defined by a -D flag and by another source of its "
                                     "translation unit: which definition applies is unknown");
    const Converter::MacroEvent* last = nullptr;
    for (const auto* e : own)
      if (e->index < si) last = e;
    if (last) {
      if (last->fn_like)
        r.fn = &last->fn;
      else if (last->define)
        r.object = &last->body;
      return r;
    }
    const auto& flags = use->cuda ? m.cuda_flag_macros : m.cpp_flag_macros;
    if (auto f = flags.find(name); f != flags.end()) {
      auto& toks = flag_toks_[{use->cuda, name}];
      toks = c_tokens(f->second);
      r.object = &toks;
    }
    return r;
  }
  if (ev == C.macro_events.end() || (ev->second.size() == 1 && ev->second[0].define)) {
    // Defined once and never #undef'd: the same macro at every use.
    if (auto m = C.macros.find(name); m != C.macros.end())
      r.object = &m->second;
    else if (auto f = C.fn_macros.find(name); f != C.fn_macros.end())
      r.fn = &f->second;
    return r;
  }
  // Defined more than once or #undef'd: the last directive before the use decides.
  const std::vector<CTok>* st = &T;
  size_t si = i;
  if (auto s = macro_site_.find(&T); s != macro_site_.end()) {
    st = s->second.first;
    si = s->second.second;
  }
  const auto& evs = ev->second;
  bool one_source = true;
  for (const auto& e : evs) one_source = one_source && e.toks == evs[0].toks;
  const int line = i < T.size() ? T[i].line : 0;
  if (!one_source || st != evs[0].toks)
    fail("unsupported_cuda", "the macro `" + name + "` (used at line " + std::to_string(line) +
                                 ") is defined more than once or #undef'd, and not all in the "
                                 "source of its use: which definition applies there is unknown");
  const Converter::MacroEvent* last = nullptr;
  for (const auto& e : evs)
    if (e.index < si) last = &e;
  if (!last) {
    if (!evs[0].define)
      fail("unsupported_cuda", "the macro `" + name + "` (used at line " + std::to_string(line) +
                                   ") is #undef'd before the source defines it");
    return r;  // not yet defined: not a macro here
  }
  if (!last->define) return r;  // #undef'd
  if (last->fn_like)
    r.fn = &last->fn;
  else
    r.object = &last->body;
  return r;
}

std::shared_ptr<std::vector<CTok>> Interp::macro_tokens(
    const std::string& name, const Converter::FnMacro& m, const std::vector<CTok>& T, size_t at,
    const std::vector<std::pair<size_t, size_t>>& args) {
  const std::string where =
      "the macro `" + name + "` (used at line " + std::to_string(T[at].line) + ")";
  if (m.variadic)
    fail("unsupported_cuda", where +
                                 " takes variable arguments (`...`), which kernrl does not "
                                 "expand");
  if (args.size() != m.params.size() &&
      !(m.params.empty() && args.size() == 1 && args[0].first == args[0].second))
    fail("unsupported_cuda", where + " is used with " + std::to_string(args.size()) +
                                 " arguments; it takes " + std::to_string(m.params.size()));
  // The body with each parameter replaced by its argument's tokens (no parentheses added: what
  // the preprocessor substitutes).
  auto out = std::make_shared<std::vector<CTok>>();
  for (const CTok& t : m.body) {
    if (is_punct(t, "#"))
      fail("unsupported_cuda", where +
                                   " stringises or pastes tokens (`#`, `##`), which kernrl "
                                   "does not expand");
    bool replaced = false;
    if (t.kind == CTok::Ident)
      for (size_t p = 0; p < m.params.size() && !replaced; ++p)
        if (m.params[p] == t.text) {
          out->insert(out->end(), T.begin() + static_cast<long>(args[p].first),
                      T.begin() + static_cast<long>(args[p].second));
          replaced = true;
        }
    if (!replaced) {
      CTok c = t;
      c.line = T[at].line;  // errors in the expansion name the line of the use
      out->push_back(c);
    }
  }
  auto s = macro_site_.find(&T);
  macro_site_[out.get()] = s != macro_site_.end() ? s->second : std::make_pair(&T, at);
  keep_alive_.push_back(out);
  return out;
}

void Interp::check_macro_unit(const Ex& x, size_t from, const std::string& name,
                              const std::vector<CTok>& E) {
  // Operators at the top level of the expansion (a leading sign or negation aside).
  bool op = false, comma = false;
  int depth = 0;
  bool leading = true;
  for (const CTok& t : E) {
    if (t.kind != CTok::Punct) {
      leading = false;
      continue;
    }
    if (t.text == "(" || t.text == "[" || t.text == "{") {
      ++depth;
      leading = false;
      continue;
    }
    if (t.text == ")" || t.text == "]" || t.text == "}") {
      --depth;
      continue;
    }
    if (depth > 0 || t.text == "::" || t.text == "." || t.text == "->") continue;
    if (leading && (t.text == "-" || t.text == "+" || t.text == "!" || t.text == "~")) continue;
    if (t.text == ",") comma = true;
    op = true;
  }
  const std::string what = "the macro `" + name + "` (used at line " +
                           std::to_string(x.T[from].line) + ") expands to `" +
                           snippet(E, 0, E.size()) + "`";
  if (comma) fail("unsupported_cuda", what + ", a comma-separated list, in an expression");
  if (!op) return;
  // Alone between delimiters, its operators cannot bind with the tokens around it.
  static const std::set<std::string> before = {"(",  "[",   ",",  "=",  ";",   "{",
                                               "}",  "<<<", "+=", "-=", "*=",  "/=",
                                               "%=", "&=",  "|=", "^=", "<<=", ">>="};
  static const std::set<std::string> after = {")", "]", ",", ";", "}", ">>>"};
  // At an edge of another macro's expansion, its neighbours are that macro's (unknown here).
  const bool nested = macro_site_.count(&x.T) > 0;
  const bool lone_before =
      (from == 0 && !nested) ||
      (from > 0 && (is_ident(x.T[from - 1], "return") ||
                    (x.T[from - 1].kind == CTok::Punct && before.count(x.T[from - 1].text))));
  const bool lone_after =
      (x.i >= x.end && !nested) ||
      (x.i < x.end && x.T[x.i].kind == CTok::Punct && after.count(x.T[x.i].text));
  if (!lone_before || !lone_after)
    fail("unsupported_cuda", what +
                                 ", whose operators bind with the code around its use as "
                                 "the preprocessor splices it; kernrl evaluates a macro in "
                                 "an expression as one value (parenthesize the macro's body)");
}

Val Interp::expand_object_macro(Ex& x, size_t from, const std::string& name,
                                const std::vector<CTok>& body) {
  if (++macro_depth_ > kMaxMacroDepth)
    fail("unsupported_cuda", "the macro `" + name + "` expands too deeply");
  check_macro_unit(x, from, name, body);
  auto E = std::make_shared<std::vector<CTok>>(body);
  for (CTok& t : *E) t.line = x.T[from].line;
  auto s = macro_site_.find(&x.T);
  macro_site_[E.get()] = s != macro_site_.end() ? s->second : std::make_pair(&x.T, from);
  keep_alive_.push_back(E);
  Val v = E->empty() ? Val{} : eval(x.fr, *E, 0, E->size());
  --macro_depth_;
  return v;
}

Val Interp::expand_fn_macro(Ex& x, size_t from, const std::string& name,
                            const Converter::FnMacro& m,
                            const std::vector<std::pair<size_t, size_t>>& args) {
  if (++macro_depth_ > kMaxMacroDepth)
    fail("unsupported_cuda", "the macro `" + name + "` expands too deeply");
  auto E = macro_tokens(name, m, x.T, from, args);
  check_macro_unit(x, from, name, *E);
  Val v = E->empty() ? Val{} : eval(x.fr, *E, 0, E->size());
  --macro_depth_;
  return v;
}

}  // namespace kernrl::kbimport::host
