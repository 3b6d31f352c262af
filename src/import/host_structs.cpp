// The host side (host_interp.h): plain structs of the source that the wrapper fills and passes to a
// kernel by value, as `struct(...)` arguments (docs/kernel-format.md, "Arguments").
#include <algorithm>
#include <cstdint>
#include <functional>

#include "core/expr.h"
#include "import/host_interp.h"

namespace kernrl::kbimport::host {

namespace {

// The launch block's field type of a C++ scalar type (without const/volatile), "" for none kernrl
// passes: signed integers of 1, 2, 4 and 8 bytes (x86-64 and CUDA: long is 8), float, double.
std::string field_type_of_c(const std::string& t) {
  static const std::map<std::string, std::string> types = {
      {"int8_t", "i8"},
      {"signed char", "i8"},
      {"int16_t", "i16"},
      {"short", "i16"},
      {"short int", "i16"},
      {"signed short", "i16"},
      {"int32_t", "i32"},
      {"int", "i32"},
      {"signed", "i32"},
      {"signed int", "i32"},
      {"int64_t", "i64"},
      {"long", "i64"},
      {"long int", "i64"},
      {"long long", "i64"},
      {"long long int", "i64"},
      {"signed long", "i64"},
      {"signed long long", "i64"},
      {"float", "f32"},
      {"double", "f64"},
  };
  auto it = types.find(t);
  return it == types.end() ? "" : it->second;
}

}  // namespace

std::string Interp::struct_type_name(const std::string& written) {
  std::string t = strip_std(written);
  for (const std::string kw : {"struct ", "class "})
    if (t.rfind(kw, 0) == 0) t = t.substr(kw.size());
  return t;
}

const Interp::StructDecl* Interp::struct_decl(const std::string& written) {
  const std::string name = struct_type_name(written);
  if (!source_struct(name)) return nullptr;
  auto known = struct_decls_.find(name);
  if (known != struct_decls_.end()) return &known->second;
  StructDecl& d = struct_decls_[name];
  d.name = name;
  auto refuse = [&](const std::string& why) -> const StructDecl* {
    d.fields.clear();
    d.why = why;
    return &d;
  };
  // Its definition: `struct NAME {` ... `};` at the top level (or in a namespace).
  const std::vector<CTok>* T = nullptr;
  const CItem* item = nullptr;
  size_t open = 0;
  std::function<void(const std::vector<CItem>&, const std::vector<CTok>&)> find =
      [&](const std::vector<CItem>& items, const std::vector<CTok>& toks) {
        for (const CItem& it : items) {
          if (it.kind == CItem::Block) find(it.children, toks);
          if (it.kind != CItem::Type || item) continue;
          const size_t last = std::min(it.last, toks.size());
          for (size_t k = it.first; k + 1 < last; ++k)
            if ((toks[k].text == "struct" || toks[k].text == "class" || toks[k].text == "union") &&
                toks[k + 1].text == name) {
              size_t b = k + 2;
              while (b < last && !is_punct(toks[b], "{") && !is_punct(toks[b], ";")) ++b;
              if (b >= last || !is_punct(toks[b], "{")) continue;  // a declaration only
              T = &toks;
              item = &it;
              open = b;
              // What stands between the name and `{`: bases, `final`.
              if (b != k + 2)
                return void(refuse("`" + name + "` has base classes or specifiers (`" +
                                   c_text(toks, k + 2, b) + "`)"));
              if (toks[k].text == "union") return void(refuse("`" + name + "` is a union"));
              if (toks[it.first].text == "template")
                return void(refuse("`" + name + "` is a template"));
              return;
            }
        }
      };
  for (const auto& s : C.exts[ext_].sources)
    if (!item) find(s.items, s.toks);
  if (!item)
    return refuse("`" + name + "` is not defined as `struct " + name +
                  " { ... };` in the source (a typedef'd or forward-declared struct)");
  if (!d.why.empty()) return &d;
  // Another definition of the name anywhere in the sources (another namespace, nested in a
  // struct, local to a function, an enum): which one a use means depends on C++'s scopes, which
  // kernrl does not resolve. `#pragma pack` changes the layout of the structs after it.
  int definitions = 0;
  for (const auto& s : C.exts[ext_].sources) {
    const auto& toks = s.toks;
    for (size_t k = 0; k + 1 < toks.size(); ++k) {
      if (toks[k].kind == CTok::Directive) {
        std::string dir = toks[k].text;
        dir.erase(
            std::remove_if(dir.begin(), dir.end(), [](char c) { return c == ' ' || c == '\t'; }),
            dir.end());
        if (dir.rfind("#pragmapack", 0) == 0)
          return refuse("the source has `" + toks[k].text +
                        "`, which changes how structs are laid out; kernrl lays out a struct "
                        "argument as the default alignment does");
        continue;
      }
      if (toks[k].kind == CTok::Ident && (toks[k].text == "_Pragma" || toks[k].text == "__pragma"))
        return refuse("the source has `" + toks[k].text +
                      "`, which may change how structs are laid out");
      if (!(toks[k].kind == CTok::Ident &&
            (toks[k].text == "struct" || toks[k].text == "class" || toks[k].text == "union" ||
             toks[k].text == "enum") &&
            toks[k + 1].text == name))
        continue;
      size_t b = k + 2;
      while (b < toks.size() && !is_punct(toks[b], "{") && !is_punct(toks[b], ";") &&
             !is_punct(toks[b], "(") && !is_punct(toks[b], ")") && !is_punct(toks[b], "=") &&
             !is_punct(toks[b], ","))
        ++b;
      if (b < toks.size() && is_punct(toks[b], "{")) ++definitions;
    }
  }
  if (definitions > 1)
    return refuse("`" + name +
                  "` is defined more than once in the source (in other namespaces, "
                  "structs or functions); kernrl does not resolve which definition a use of the "
                  "name means");
  const size_t close = c_match(*T, open, item->last);
  if (close >= item->last) return refuse("the definition of `" + name + "` cannot be read");
  // Attributes after the definition (`} __attribute__((packed));`) change its layout.
  for (size_t k = close + 1; k < item->last && k < T->size(); ++k)
    if ((*T)[k].kind == CTok::Ident &&
        ((*T)[k].text == "__attribute__" || (*T)[k].text == "__declspec" ||
         (*T)[k].text == "alignas" || (*T)[k].text == "__align__"))
      return refuse("the definition of `" + name + "` has `" + (*T)[k].text +
                    "` after it, which may change its layout; kernrl lays out plain structs "
                    "with the default alignment only");
  // Its members, one declaration per `;`.
  size_t flat = 0;
  for (size_t i = open + 1; i < close;) {
    size_t e = i;
    int depth = 0;
    while (e < close && !(depth == 0 && is_punct((*T)[e], ";"))) {
      if (is_punct((*T)[e], "(") || is_punct((*T)[e], "[") || is_punct((*T)[e], "{")) ++depth;
      if (is_punct((*T)[e], ")") || is_punct((*T)[e], "]") || is_punct((*T)[e], "}")) --depth;
      ++e;
    }
    const std::string member = c_text(*T, i, e);
    const std::string in = "the member `" + member + "` of `" + name + "`";
    // Only data members of scalar and pointer types (arrays of them): no functions, constructors,
    // bitfields, references, default values, nested or static members, access labels.
    for (size_t k = i; k < e; ++k) {
      const CTok& t = (*T)[k];
      if (t.kind == CTok::Directive) return refuse(in + " is under a preprocessor directive");
      if (is_punct(t, "(") || is_punct(t, "~"))
        return refuse(in +
                      " is a function or constructor: kernrl passes plain structs of data "
                      "members only");
      if (is_punct(t, ":")) return refuse(in + " is a bitfield or access label");
      if (is_punct(t, "&") || is_punct(t, "&&")) return refuse(in + " is a reference");
      if (is_punct(t, "=") || is_punct(t, "{"))
        return refuse(in + " has a default value (kernrl follows plain structs without them)");
      if (t.kind == CTok::Ident &&
          (t.text == "static" || t.text == "struct" || t.text == "class" || t.text == "union" ||
           t.text == "enum" || t.text == "typedef" || t.text == "using" || t.text == "template" ||
           t.text == "virtual" || t.text == "friend" || t.text == "operator" ||
           t.text == "alignas" || t.text == "__align__" || t.text == "mutable"))
        return refuse(in + " is not a plain data member (`" + t.text + "`)");
    }
    if (e >= close) return refuse(in + " does not end with `;`");
    // Type words up to the first declarator; then declarators split at top-level commas.
    std::vector<std::string> words;
    size_t k = i;
    auto qualifier = [](const std::string& w) {
      return w == "const" || w == "volatile" || w == "__restrict__" || w == "__restrict";
    };
    while (k < e && (*T)[k].kind == CTok::Ident) {
      // A name followed by `;`, `,` or `[` ends the type: it is the first declarator.
      const bool ends = k + 1 >= e || is_punct((*T)[k + 1], ",") || is_punct((*T)[k + 1], "[");
      if (ends && !words.empty()) break;
      if (!qualifier((*T)[k].text)) words.push_back((*T)[k].text);
      ++k;
      while (k + 1 < e && is_punct((*T)[k], "::") && (*T)[k + 1].kind == CTok::Ident) {
        words.back() += "::" + (*T)[k + 1].text;
        k += 2;
      }
    }
    std::string ctype;
    for (const auto& w : words) ctype += (ctype.empty() ? "" : " ") + w;
    ctype = strip_std(ctype);
    while (k < e) {
      bool pointer = false;
      while (k < e &&
             (is_punct((*T)[k], "*") || ((*T)[k].kind == CTok::Ident && qualifier((*T)[k].text)))) {
        pointer = pointer || is_punct((*T)[k], "*");
        ++k;
      }
      if (k >= e || (*T)[k].kind != CTok::Ident) return refuse(in + " cannot be read");
      StructDecl::Field f;
      f.name = (*T)[k].text;
      f.ctype = ctype + (pointer ? "*" : "");
      ++k;
      f.type = pointer ? "ptr" : field_type_of_c(ctype);
      if (f.type.empty())
        return refuse(in + " has the type `" + ctype +
                      "`; kernrl passes struct fields of the types int8_t, short, int, "
                      "long long (int64_t), float, double and pointers");
      // Arrays, of one or more dimensions, of a length the same at every size set.
      int64_t count = 1;
      bool array = false;
      while (k < e && is_punct((*T)[k], "[")) {
        size_t c = c_match(*T, k, e);
        if (c >= e) return refuse(in + " cannot be read");
        Val n;
        try {
          n = to_int(eval(globals_, *T, k + 1, c), in, globals_);
        } catch (const ImportError&) {
          return refuse(in + " has an array length kernrl cannot compute");
        }
        if (!n.k || *n.k < 1 || *n.k > 1024)
          return refuse(in + " has an array length kernrl cannot compute, or not 1 to 1024");
        count *= *n.k;
        array = true;
        k = c + 1;
      }
      if (count > 1024) return refuse(in + " has more than 1024 elements");
      f.count = array ? static_cast<size_t>(count) : 0;
      flat += array ? static_cast<size_t>(count) : 1;
      if (flat > 1024) return refuse("`" + name + "` has more than 1024 fields and elements");
      for (const auto& other : d.fields)
        if (other.name == f.name) return refuse(in + " declares `" + f.name + "` twice");
      d.fields.push_back(f);
      if (k < e && is_punct((*T)[k], ",")) {
        ++k;
        continue;
      }
      if (k < e) return refuse(in + " cannot be read");
    }
    i = e + 1;
  }
  if (d.fields.empty()) return refuse("`" + name + "` has no data members");
  return &d;
}

Val Interp::new_struct(const StructDecl& d, const std::string& var, bool zero) {
  Val s;
  s.kind = Val::Struct;
  s.name = d.name;
  for (const auto& f : d.fields) {
    auto leaf = [&](const std::string& path) {
      if (!zero) return make_unknown("`" + var + "." + path + "` (not set)");
      if (f.type == "ptr") {
        Val p;
        p.kind = Val::Ptr;
        return p;
      }
      if (f.type == "f32" || f.type == "f64") return make_float(0);
      return make_int(0);
    };
    if (f.count == 0) {
      s.items.push_back(leaf(f.name));
      continue;
    }
    Val l;
    l.kind = Val::List;
    for (size_t k = 0; k < f.count; ++k)
      l.items.push_back(leaf(f.name + "[" + std::to_string(k) + "]"));
    s.items.push_back(l);
  }
  return s;
}

Val Interp::struct_field_value(const StructDecl::Field& f, const Val& v, const std::string& what,
                               Frame& fr) {
  if (f.type == "ptr") {
    if (v.kind == Val::Ptr) return v;
    if ((v.kind == Val::Int && v.k && *v.k == 0)) {
      Val p;
      p.kind = Val::Ptr;
      return p;
    }
    fail_value(v, "a tensor's data pointer", what, fr);
  }
  if (f.type == "f32" || f.type == "f64")
    return narrow_float(to_float(v, what, fr), f.type == "f32");
  // As C++ converts it to the field's type: a constant wraps around, a value of the sizes must
  // fit at every size set.
  return narrow_int(to_int(v, what, fr), c_int(f.ctype).value_or(CInt{8, true}), f.ctype, true,
                    what, fr);
}

}  // namespace kernrl::kbimport::host
