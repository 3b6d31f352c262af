// The host side (host_interp.h): calls of the source's functions, and kernel launches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "core/expr.h"
#include "import/host_interp.h"
#include "parse/launch_block.h"

namespace kernrl::kbimport::host {

Val Interp::bind_param(const CParam& p, const Val& v, const std::string& fn, Frame& fr,
                       bool from_python) {
  std::string base = strip_std(p.base);
  std::string what = "the argument `" + p.name + "` of `" + fn + "`";
  if (contains(base, "optional")) {
    Val o = v;
    if (o.kind == Val::Tensor || o.kind == Val::Void) o.optional = true;
    return o;
  }
  if (contains(base, "Tensor") && !contains(base, "vector") && !contains(base, "List")) {
    if (v.kind != Val::Tensor) {
      if (v.kind == Val::Void) fail("mismatch", "`" + fn + "` is called without " + what);
      fail("mismatch", what + " is a tensor, but forward passes something else");
    }
    return v;
  }
  if (p.pointer) return v;
  if (int_type(base) && from_python) {
    // pybind11 takes a Python int (or bool, an int) for an integer parameter and refuses a
    // float with a TypeError, whatever its value; an int beyond the type's range is refused too.
    if (v.kind == Val::Float || v.kind == Val::Ratio || (v.kind == Val::Int && v.floaty))
      fail("mismatch",
           what + " (`" + p.type + "`) is given a Python float by forward: pybind11 refuses it");
    if (v.kind != Val::Int && v.kind != Val::Bool) fail_value(v, "an integer", what, fr);
    Val r = to_int(v, what, fr);
    if (auto c = c_int(base)) r = narrow_int(r, *c, plain_type(base), false, what, fr);
    return r;
  }
  // As C++ converts an argument: narrowed to the parameter's type.
  if (int_type(base)) return to_c_int(v, base, p.type + " " + p.name, fr);
  if (float_type(base)) return to_float(v, what, fr);
  if (base == "bool") {
    if (auto b = truth(v)) return make_bool(*b);
    return v;
  }
  // A list from forward (`lo = []; lo.append(k)`, `[a] * n`, a shape) given to a
  // std::vector<T> of an integer, floating or bool type, or an IntArrayRef: each item as
  // pybind11 converts it to T (any spelling of T: `std::int64_t`, `long int`, `unsigned`), a
  // refusal where pybind11 raises a TypeError.
  std::string elem;
  if (base == "IntArrayRef")
    elem = "int64_t";
  else if (base.rfind("vector<", 0) == 0 && base.back() == '>')
    elem = plain_type(base.substr(7, base.size() - 8));
  else if (strip_std(base).rfind("ArrayRef<", 0) == 0 && base.back() == '>')
    elem = plain_type(strip_std(base).substr(9, strip_std(base).size() - 10));
  if (!elem.empty() && v.kind == Val::List) {
    Val out = v;
    const auto cint = c_int(elem);
    const bool real = elem == "float" || elem == "double";
    if (!cint && !real && elem != "bool") {
      if (contains(elem, "Tensor")) return v;
      fail("host_logic", what + " is a `" + p.type +
                             "`; kernrl passes a Python list to a std::vector of integers, "
                             "float, double or bool only");
    }
    for (size_t k = 0; k < out.items.size(); ++k) {
      Val& item = out.items[k];
      const std::string of = "item " + std::to_string(k) + " of " + what;
      if (item.kind == Val::Unknown) fail_value(item, "a number", of, fr);
      if (elem == "bool") {
        // pybind11 converts what Python's bool() converts: True, False, numbers.
        std::optional<bool> b;
        if (item.kind == Val::Bool || item.kind == Val::Int) b = truth(item);
        if (item.kind == Val::Float && item.f && item.e.empty()) b = *item.f != 0;
        if (!b)
          fail("host_logic",
               of + " (`" + p.type + "`) is not a bool or a number kernrl knows the truth of");
        item = make_bool(*b);
        continue;
      }
      if (item.kind == Val::Bool) item = to_int(item, of, fr);  // a bool is an int: 0 or 1
      if (real) {
        // pybind11 takes an int or a float, as a C++ double, then converted to T.
        if (item.kind != Val::Int && item.kind != Val::Float && item.kind != Val::Ratio)
          fail("mismatch", of + " (`" + p.type + "`) is not a number: pybind11 refuses it");
        item = to_float(item, of, fr);
        if (elem == "float") {
          if (item.kind == Val::Float && item.f && item.e.empty()) {
            item = narrow_float(item, true);
          } else if (item.kind == Val::Int && !item.k) {
            auto p24 = C.per_set(item);
            if (!p24 || std::any_of(p24->begin(), p24->end(), [](int64_t n) {
                  return n < -(int64_t{1} << 24) || n > (int64_t{1} << 24);
                }))
              fail("host_logic", of + " (`" + p.type +
                                     "`) is an integer of the sizes that kernrl cannot tell a "
                                     "float holds exactly");
          } else if (!(item.kind == Val::Float && item.f) && !(item.kind == Val::Int && item.k)) {
            fail("host_logic", of + " (`" + p.type +
                                   "`) is a value of the sizes that kernrl cannot round to a "
                                   "float's precision");
          }
        }
        continue;
      }
      if (item.kind != Val::Int || item.floaty)
        fail("mismatch", of + " (`" + p.type + "`) is not an integer: pybind11 refuses it");
      item = narrow_int(item, *cint, elem, false, of + " (`" + p.type + "`)", fr);
    }
    return out;
  }
  if (contains(base, "IntArrayRef") || contains(base, "vector")) return v;
  return v;
}

Val Interp::call(const FnRef& f, std::vector<Val> args, const std::vector<std::string>& targ_types,
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
  fr.tensors0 = C.tensors.size();
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
    if (k >= args.size())
      fail("mismatch", "`" + it.name + "` is called with " + std::to_string(args.size()) +
                           " arguments; it takes " + std::to_string(it.params.size()));
    if (v.kind == Val::Void && !contains(p.base, "optional"))
      fail("mismatch", "`" + it.name + "` is called with None for its parameter `" +
                           (p.name.empty() ? std::to_string(k + 1) : p.name) + "` (`" + p.type +
                           "`), which is not optional");
    // A struct given by reference or pointer: what the callee sets in it would be lost on a copy.
    if (v.kind == Val::Struct && (p.reference || p.pointer) && !contains(p.type, "const"))
      fail("host_logic", "`" + it.name + "` takes the struct `" + v.name + "` by " +
                             (p.pointer ? "pointer" : "reference") + " (`" + p.type + " " + p.name +
                             "`); kernrl follows structs passed by value");
    if (!p.name.empty()) declare(fr, p.name, bind_param(p, v, it.name, fr, caller == nullptr));
    // A reference parameter: an assignment to it would change the caller's variable too.
    if (!p.name.empty() && p.reference && !contains(p.type, "const"))
      lookup(fr, p.name)->ref =
          "a reference parameter of `" + it.name + "` (`" + p.type + " " + p.name + "`)";
  }
  exec_range(fr, it.body_open + 1, it.body_close);
  --call_depth_;
  return fr.ret ? convert_return(it, *fr.ret, fr) : Val{};
}

Val Interp::convert_return(const CItem& it, const Val& v, Frame& fr) {
  if (v.kind != Val::Int && v.kind != Val::Bool && v.kind != Val::Float && v.kind != Val::Ratio)
    return v;
  // The declared type without its specifiers (`static inline int64_t`, `__host__ int`).
  std::string type;
  for (const CTok& t : c_tokens(it.return_type)) {
    if (t.kind == CTok::Punct &&
        (t.text == "*" || t.text == "&" || t.text == "&&" || t.text == "<" || t.text == "->"))
      return v;  // a pointer, a reference, a template's
    if (t.kind == CTok::Ident &&
        (t.text == "static" || t.text == "inline" || t.text == "constexpr" ||
         t.text == "__host__" || t.text == "__device__" || t.text == "__forceinline__" ||
         t.text == "__inline__" || t.text == "extern" || t.text == "const" ||
         t.text == "volatile" || t.text == "[[nodiscard]]"))
      continue;
    type += (type.empty() || t.kind == CTok::Punct || type.back() == ':' ? "" : " ") + t.text;
  }
  type = strip_std(resolve_type(fr, type));
  const std::string what = "return of " + type + " " + it.name + "(...)";
  if (int_type(type)) return to_c_int(v, type, what, fr);
  if (float_type(type)) return to_float(v, what, fr);
  if (type == "bool") {
    if (auto b = truth(v)) return make_bool(*b);
  }
  return v;
}

std::optional<Interp::AccessorParam> Interp::accessor_param(const CParam& p) {
  size_t open = p.base.find('<');
  if (open == std::string::npos || p.base.back() != '>') return std::nullopt;
  std::string name = strip_std(p.base.substr(0, open));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  AccessorParam a;
  size_t most = 3;
  if (name == "PackedTensorAccessor32")
    a.bits = 32;
  else if (name == "PackedTensorAccessor64")
    a.bits = 64;
  else if (name == "PackedTensorAccessor" || name == "GenericPackedTensorAccessor")
    a.bits = 64, most = 4;
  else
    return std::nullopt;
  auto parts = template_args(p.base.substr(open + 1, p.base.size() - open - 2));
  if (parts.size() < 2 || parts.size() > most) return std::nullopt;
  a.elem = parts[0];
  a.rank = parts[1];
  a.traits = ptr_traits(parts.size() > 2 ? parts[2] : "");
  if (a.traits.empty()) return std::nullopt;
  if (parts.size() == 4) {
    std::string index = strip_std(parts[3]);
    if (index == "int32_t" || index == "int")
      a.bits = 32;
    else if (index != "int64_t" && index != "long" && index != "long long")
      return std::nullopt;
  }
  return a;
}

std::string Interp::kernel_param_problem(const CParam& p) {
  std::string b = strip_std(p.base);
  if (contains(p.base, "Accessor") || contains(p.base, "PtrTraits")) {
    if (p.pointer || p.reference || !accessor_param(p))
      return "takes `" + p.type +
             "`; kernrl gives a kernel a PackedTensorAccessor32/64<T, N[, PtrTraits]> by value "
             "(docs/import-kernelbench.md)";
    return "";
  }
  if (contains(p.base, "Tensor")) return "takes a torch::Tensor";
  if ((p.pointer || p.reference) && source_struct(struct_type_name(p.base)))
    return "takes a struct of the source by " + std::string(p.pointer ? "pointer" : "reference") +
           " (`" + p.type + " " + p.name + "`); kernrl passes a plain struct by value only";
  return "";
}

Val Interp::launch(Ex& x, const std::string& name, size_t targ_open, size_t targ_close,
                   size_t from) {
  Frame& fr = x.fr;
  FnRef k = find_function(name, true);
  if (!k.item) {
    if (Var* v = lookup(fr, name); v && v->v.kind == Val::Func) k = find_function(v->v.name, true);
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
               "the template argument `" + c_text(x.T, a, b) + "` of `" + what + "` in `" + fr.fn +
                   "` depends on the sizes; a kernel is compiled once for all size sets");
        targs.push_back(std::to_string(*iv.k));
      }
    }
  }
  for (size_t q = 0; q < kern.params.size(); ++q) {
    const CParam& p = kern.params[q];
    if (std::string why = kernel_param_problem(p); !why.empty())
      fail("unsupported_cuda", "the kernel `" + name + "` " + why);
    if (auto ap = accessor_param(p); ap && kern.is_template && vals[q].kind == Val::Accessor)
      for (const CTemplateParam& tp : kern.tparams)
        if (tp.is_type && strip_std(ap->elem) == tp.name && !tbind.count(tp.name))
          tbind[tp.name] = vals[q].elem;
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
  // The name the launch block will hold must be one the launch-block parser takes (template
  // arguments written oddly in the source, `T~`, are not).
  if (std::string why = kernel_name_problem(L.kernel); !why.empty())
    fail("unsupported_cuda", "`" + what + "` launches a kernel kernrl cannot name: " + why);

  for (size_t q = 0; q < kern.params.size(); ++q) {
    const CParam& p = kern.params[q];
    const Val& v = vals[q];
    std::string where = "argument " + std::to_string(q + 1) + " (`" +
                        c_text(x.T, arg_ranges[q].first, arg_ranges[q].second) +
                        "`) of the launch of `" + name + "` in `" + fr.fn + "`";
    std::string ptype = strip_std(p.base);
    if (auto b = tbind.find(ptype); b != tbind.end()) ptype = strip_std(b->second);
    LaunchArgOut out;
    if (auto ap = accessor_param(p)) {
      if (v.kind != Val::Accessor)
        fail("unsupported_cuda", where +
                                     " passes something other than a tensor's packed accessor "
                                     "(`x.packed_accessor32<T, N>()`) to `" +
                                     p.type + " " + p.name + "`");
      std::string elem = strip_std(ap->elem);
      if (auto b = tbind.find(elem); b != tbind.end()) elem = strip_std(b->second);
      if (elem == "Half") elem = "__half";
      std::string given = "PackedTensorAccessor" + v.text + "<" + v.elem + ", " +
                          std::to_string(*v.k) + ", " + v.name + ">";
      std::string takes = "PackedTensorAccessor" + std::to_string(ap->bits) + "<" + elem + ", " +
                          ap->rank + ", " + ap->traits + ">";
      if (given != takes)
        fail("mismatch", where + " passes a " + given + " to `" + p.type + " " + p.name + "` (a " +
                             takes + "): PyTorch would not compile it");
      out.tensor = v.tensor;
      out.accessor_bits = ap->bits;
      out.accessor_shape = v.items;
    } else if (v.kind == Val::Accessor) {
      fail("unsupported_cuda", where + " passes a packed accessor to `" + p.type + " " + p.name +
                                   "`, which is not one");
    } else if (p.pointer) {
      if (v.kind == Val::Ptr) {
        if (v.tensor < 0)
          out.text = "null";  // an optional tensor the kernel does not get (`nullptr`)
        else
          out.tensor = v.tensor;
        if (v.tensor >= 0 && has_offset(v)) out.offset = int_text(ptr_offset(v));
      } else if (v.kind == Val::Tensor) {
        fail("unsupported_cuda",
             where + " passes a tensor object where the kernel takes a pointer");
      } else {
        fail_value(v, "a tensor's data pointer", where, fr);
      }
    } else if (int_type(ptype) || ptype == "bool") {
      int bytes = ptype == "bool" ? 1 : c_type_bytes(ptype);
      if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
        fail("unsupported_cuda",
             where + ": the parameter `" + p.type + " " + p.name + "` is " + std::to_string(bytes) +
                 " bytes; kernrl passes integers as 1-, 2-, 4- or 8-byte values");
      Val iv = v.kind == Val::Bool && v.k ? make_int(*v.k ? 1 : 0) : to_int(v, where, fr);
      // A signed parameter gets the value as C++ converts it: a constant wraps around to its
      // type, a value of the sizes must fit it at every size set kernrl can evaluate.
      if (auto c = ptype == "bool" ? std::nullopt : c_int(ptype); c && c->is_signed)
        iv = narrow_int(iv, *c, ptype, true, where, fr, true);
      if (bytes < 4 && !iv.scalar.empty()) iv.scalar.clear();  // a scalar goes as 4 or 8 bytes
      out.text = !iv.scalar.empty() ? iv.scalar : int_text(iv);
      if (ptype == "bool")  // C++ converts any nonzero value to true (1)
        out.text =
            iv.k ? (*iv.k != 0 ? "1" : "0") : "min(max(" + out.text + ", -(" + out.text + ")), 1)";
    } else if (const StructDecl* d = !p.pointer && !p.reference ? struct_decl(ptype) : nullptr) {
      // A plain struct of the source passed by value: its fields, each as it was set, in the
      // order and types of its declaration (`struct(...)`, docs/kernel-format.md).
      if (!d->why.empty())
        fail("unsupported_cuda", where + ": the parameter `" + p.type + " " + p.name +
                                     "` is a struct kernrl does not pass: " + d->why);
      if (v.kind != Val::Struct || v.name != d->name) {
        if (v.kind == Val::Unknown)
          fail_value(v, "a `" + d->name + "` kernrl can follow", where, fr);
        fail("unsupported_cuda", where + " passes something other than a `" + d->name + "` to `" +
                                     p.type + " " + p.name + "`");
      }
      bool first = true;
      for (size_t f = 0; f < d->fields.size(); ++f) {
        const StructDecl::Field& field = d->fields[f];
        std::vector<Val> leaves = field.count ? v.items[f].items : std::vector<Val>{v.items[f]};
        for (size_t e = 0; e < leaves.size(); ++e) {
          const Val& leaf = leaves[e];
          const std::string member =
              field.name + (field.count ? "[" + std::to_string(e) + "]" : "");
          const std::string of = where + ", its field `" + member + "`";
          if (leaf.kind == Val::Unknown)
            fail("host_logic", "host logic in `" + fr.fn + "`: " + where + " passes a `" + d->name +
                                   "` whose field `" + member +
                                   "` kernrl cannot compute before the launch: " + leaf.why);
          LaunchArgOut fo;
          fo.field = field.type;
          fo.struct_first = first;
          first = false;
          if (field.type == "ptr") {
            if (leaf.kind != Val::Ptr) fail_value(leaf, "a tensor's data pointer", of, fr);
            if (leaf.tensor < 0)
              fo.text = "null";
            else
              fo.tensor = leaf.tensor;
            if (leaf.tensor >= 0 && has_offset(leaf)) fo.offset = int_text(ptr_offset(leaf));
          } else if (field.type == "f32" || field.type == "f64") {
            if (leaf.kind == Val::Float && (!leaf.scalar.empty() || !leaf.text.empty() || leaf.f))
              fo.text = !leaf.scalar.empty() ? leaf.scalar
                        : !leaf.text.empty() ? leaf.text
                                             : float_literal(*leaf.f);
            else if (auto t = real_text(leaf))
              fo.text = *t;
            else
              fail_value(leaf, "a number", of, fr);
          } else {
            // In the field's range at every size set, as C++ converts it (store narrowed it).
            Val iv = narrow_int(to_int(leaf, of, fr), c_int(field.ctype).value_or(CInt{8, true}),
                                field.ctype, true, of, fr);
            fo.text = !iv.scalar.empty() ? iv.scalar : int_text(iv);
          }
          L.args.push_back(fo);
        }
      }
      continue;
    } else if (float_type(ptype)) {
      if (v.kind == Val::Float && (!v.scalar.empty() || !v.text.empty() || v.f)) {
        out.text = !v.scalar.empty() ? v.scalar : (!v.text.empty() ? v.text : float_literal(*v.f));
      } else if (auto t = real_text(v)) {
        // A value computed from the sizes (`1.0f / (float)n`): a real expression, evaluated
        // at each size set.
        out.text = *t;
      } else {
        fail_value(v, "a number", where, fr);
      }
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
  // Each tensor a kernel is given may be written by it: a view copied before now no longer shows
  // it (Converter::materialized copies again).
  for (const auto& a : L.args)
    if (a.tensor >= 0) ++C.writes[C.storage_of(a.tensor)];
  C.launches.push_back(std::move(L));
  return Val{};
}

}  // namespace kernrl::kbimport::host
