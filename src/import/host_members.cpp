// The host side (host_interp.h): members of tensors and other values.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "core/expr.h"
#include "import/host_interp.h"
#include "protocol/tensor_accessor.h"

namespace kernrl::kbimport::host {

Val Interp::field(Ex& x, const Val& v, const std::string& member, const std::string& what) {
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
  if (v.kind == Val::Struct) {  // a data member of a struct of the source
    if (const StructDecl* d = struct_decl(v.name))
      for (size_t k = 0; k < d->fields.size() && k < v.items.size(); ++k)
        if (d->fields[k].name == member) {
          // A `float` field holds its value rounded to a float's precision: kernrl rounds
          // constants (and integers up to 2^24 are exact); other values it cannot read back.
          if (d->fields[k].type == "f32") {
            std::vector<Val> leaves =
                d->fields[k].count ? v.items[k].items : std::vector<Val>{v.items[k]};
            for (const Val& leaf : leaves) {
              if (leaf.kind == Val::Unknown ||
                  (leaf.kind == Val::Float && leaf.f && leaf.e.empty() && leaf.scalar.empty()))
                continue;
              auto p = leaf.kind == Val::Int ? C.per_set(leaf) : std::nullopt;
              if (p && std::all_of(p->begin(), p->end(), [](int64_t n) {
                    return n >= -(int64_t{1} << 24) && n <= (int64_t{1} << 24);
                  }))
                continue;
              fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what +
                                     "` reads back the `float` field `" + member +
                                     "`, whose value kernrl cannot round to a float's precision");
            }
          }
          return v.items[k];
        }
    fail("host_logic", "host logic in `" + x.fr.fn + "`: `" + what + "` reads `" + member +
                           "`, which is not a data member of `" + v.name + "`");
  }
  if (v.kind == Val::Unknown) fail_value(v, "a value", what, x.fr);
  fail("host_logic", "host logic in `" + x.fr.fn + "`: cannot follow `" + what + "`");
}

std::string Interp::shape_text(const TensorInfo& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + int_text(t.shape[i]);
  return s + "]";
}

Val Interp::numel(const TensorInfo& t, const std::string& what, Frame& fr) {
  Val n = make_int(1);
  for (const Val& d : t.shape) n = arith("*", n, d, what, fr);
  return n;
}

Val Interp::list_of(const std::vector<Val>& items) {
  Val l;
  l.kind = Val::List;
  l.items = items;
  return l;
}

int64_t Interp::dim_index(const Val& idx, size_t rank, const std::string& what, Frame& fr) {
  if (idx.kind != Val::Int || !idx.k)
    fail("host_logic", "`" + what + "` in `" + fr.fn + "` picks a dimension kernrl cannot compute");
  int64_t k = *idx.k;
  if (k < 0) k += static_cast<int64_t>(rank);
  if (k < 0 || k >= static_cast<int64_t>(rank))
    fail("mismatch", "`" + what + "` in `" + fr.fn + "` asks for dimension " +
                         std::to_string(*idx.k) + " of a tensor with " + std::to_string(rank) +
                         " dimensions in this problem");
  return k;
}

std::vector<Val> Interp::eval_args(Frame& fr, const std::vector<CTok>& T,
                                   const std::vector<std::pair<size_t, size_t>>& args) {
  std::vector<Val> out;
  for (auto [a, b] : args) out.push_back(b > a ? eval(fr, T, a, b) : Val{});
  return out;
}

Val Interp::method(Ex& x, const Val& v, const std::string& m, const std::string& targs,
                   const std::vector<std::pair<size_t, size_t>>& args, const std::string& what) {
  Frame& fr = x.fr;
  // A `c10::optional<torch::Tensor>` parameter holds the tensor forward passes, or nothing (None):
  // `has_value()`, `value()` and `value_or(t)` as c10::optional answers them. (Only an optional
  // has these members: a wrapper calling them on a plain tensor does not compile.)
  if ((v.kind == Val::Tensor || v.kind == Val::Void) && v.optional &&
      (m == "has_value" || m == "value" || m == "value_or")) {
    bool has = v.kind == Val::Tensor;
    if (m == "has_value" && args.empty()) return make_bool(has);
    if (m == "value" && args.empty()) {
      if (!has)
        fail("mismatch", "`" + what + "` in `" + fr.fn +
                             "` reads an empty optional (forward passes None), which throws");
      Val t = v;
      t.optional = false;
      return t;
    }
    if (m == "value_or" && args.size() == 1)
      return has ? v : eval(fr, x.T, args[0].first, args[0].second);
  }
  if (v.kind == Val::Tensor) {
    // A copy: evaluating an argument may add tensors and move C.tensors.
    const TensorInfo t = C.tensors[static_cast<size_t>(v.tensor)];
    auto a = [&](size_t k) {
      if (k >= args.size())
        fail("host_logic",
             "`" + what + "` in `" + fr.fn + "` leaves out an argument of `" + m + "`");
      return eval(fr, x.T, args[k].first, args[k].second);
    };
    // w.t() (a suite's weight for torch::matmul(x, w.t())): a mark the product reads; the
    // tensor's memory is unchanged, so nothing else may use it.
    if (!C.P.torchscript.empty() && t.shape.size() == 2 && m == "t" && args.empty()) {
      Val r = v;
      r.elem = r.elem == "transposed" ? "" : "transposed";
      return r;
    }
    if (v.elem == "transposed" && m != "contiguous")
      fail("library_call",
           "`" + what + "` in `" + fr.fn + "` uses a transposed tensor other than in a product");
    // On a suite: weight.permute({1, 2, 0}) / x.transpose(0, 1), a view as in forward (a torch
    // step copies it where .contiguous() or .clone() asks for a copy), never a kernel's pointer.
    if (!C.P.torchscript.empty() && (m == "permute" || m == "transpose")) {
      std::vector<Val> dims;
      for (size_t k = 0; k < args.size(); ++k) dims.push_back(a(k));
      return C.reorder_view(m, v, dims, what, "library_call");
    }
    if (v.elem == "lazy" && m == "contiguous") {
      auto c = C.contiguous(v.tensor);
      if (!c)
        fail("host_logic", "`" + what + "` in `" + fr.fn +
                               "`: a view contiguous at some size sets only, or whose layout "
                               "kernrl does not know");
      // PyTorch returns a contiguous view itself: a narrow of a buffer is that buffer's memory
      // from an offset (its data pointer, below); any other is refused.
      if (*c && (C.offset_in_storage(v.tensor) || C.reordered_strides(v.tensor))) return v;
      if (*c)
        fail("library_call", "`" + what + "` in `" + fr.fn +
                                 "`: a view that is already contiguous, which PyTorch returns "
                                 "itself (its pointer into the viewed tensor)");
      return C.copy_of(v, what, "library_call");
    }
    const bool pointer =
        m == "data_ptr" || m == "data" || m == "const_data_ptr" || m == "mutable_data_ptr";
    // A transpose or permute of a buffer: its memory, read through PyTorch's strides.
    const std::optional<std::vector<Val>> reordered =
        v.elem == "lazy" ? C.reordered_strides(v.tensor) : std::nullopt;
    if (reordered && (m == "stride" || m == "strides")) {
      if (args.empty()) return list_of(*reordered);
      return (*reordered)[static_cast<size_t>(
          dim_index(to_int(a(0), what, fr), t.shape.size(), what, fr))];
    }
    if (reordered && m == "is_contiguous" && args.empty()) {
      auto c = C.contiguous(v.tensor);
      if (!c)
        fail("host_logic", "`" + what + "` in `" + fr.fn +
                               "`: a view contiguous at some size sets of the problem only");
      return make_bool(*c);
    }
    if (v.elem == "lazy" && m != "size" && m != "sizes" && m != "dim" && m != "numel" &&
        m != "scalar_type" && m != "dtype" && m != "options" && m != "is_cuda" && m != "device" &&
        !(pointer && (C.offset_in_storage(v.tensor) || reordered)))
      fail("library_call", "`" + what + "` in `" + fr.fn +
                               "` uses a view (permute, transpose) other than through "
                               ".contiguous(): in PyTorch its memory is laid out by its strides "
                               "(and .clone() keeps them)");
    if (m == "size" || m == "sizes" || m == "sym_size" || m == "sym_sizes") {
      if (args.empty()) return list_of(t.shape);
      return t
          .shape[static_cast<size_t>(dim_index(to_int(a(0), what, fr), t.shape.size(), what, fr))];
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
    if (pointer) {
      Val p;
      p.kind = Val::Ptr;
      p.tensor = v.tensor;
      // A transpose or permute of a buffer: the buffer's pointer (its memory as PyTorch's).
      if (reordered) p.tensor = C.storage_of(v.tensor);
      // A contiguous narrow of a buffer: the buffer's pointer advanced to its first element.
      if (v.elem == "lazy" && !reordered)
        if (auto off = C.offset_in_storage(v.tensor)) {
          p.tensor = C.storage_of(v.tensor);
          if (!(off->k && *off->k == 0)) p.items = {*off};
        }
      std::string ty = strip_std(resolve_type(fr, targs));
      if (!targs.empty()) {
        std::string want = dtype_of_c(ty);
        if (want.empty())
          fail("unsupported_cuda",
               "`" + what + "` in `" + fr.fn + "` reads a tensor as `" + targs + "`");
        if (want != t.dtype)
          fail("mismatch", "`" + what + "` in `" + fr.fn + "` reads the " + t.dtype + " tensor `" +
                               t.name + "` as " + ty + " (PyTorch would refuse it)");
        p.elem = ty == "at::Half" || ty == "Half" ? "__half" : ty;
      }
      return p;
    }
    // x.view(torch::kFloat64): the same bytes read as another dtype (PyTorch raises where the
    // sizes do not divide), not a view kernrl follows.
    if (m == "view" && args.size() == 1) {
      Val d = a(0);
      if (d.kind == Val::DType || d.kind == Val::Opts)
        fail("unsupported_cuda",
             "`" + what + "` in `" + fr.fn + "` views a tensor's bytes as another dtype");
    }
    if (!C.P.torchscript.empty() && (m == "view" || m == "reshape") && !args.empty()) {
      // On a suite: x.view({n, -1}) as in forward, a view of x's buffer in that shape (its sizes
      // are the view's; a torch step reads a copy in that shape). PyTorch raises where the
      // element count differs.
      std::vector<Val> dims;
      for (size_t k = 0; k < args.size(); ++k) dims.push_back(a(k));
      if (auto shape = C.view_shape(t.shape, dims, what)) {
        Val n = make_int(1);
        for (const Val& d : *shape) n = arith("*", n, d, what, fr);
        auto have = C.per_set(n), want = C.per_set(numel(t, what, fr));
        if (!have || !want)
          fail("host_logic", "`" + what + "` in `" + fr.fn + "`: a shape that depends on the GPU");
        if (*have != *want)
          fail("mismatch", "`" + what + "` in `" + fr.fn +
                               "` views a tensor in a shape of another element count at some "
                               "size set (PyTorch raises)");
        return C.shaped(v, *shape, m == "view", what, "library_call");
      }
    }
    if (m == "contiguous" || m == "cuda" || m == "view" || m == "reshape" || m == "view_as" ||
        m == "flatten" || m == "squeeze" || m == "unsqueeze" || m == "detach" ||
        m == "clone_if_needed") {
      if (m != "contiguous" && m != "cuda" && m != "detach" && m != "clone_if_needed") {
        // A view of the same data, whose shape the wrapper does not follow: a torch step, which
        // sees shapes, refuses it (Converter::torch_step), and so does an accessor.
        Val r = v;
        if (!C.P.torchscript.empty()) r.elem = "reshaped";
        r.reshaped = true;
        return r;
      }
      return v;
    }
    if (m == "to" || m == "type_as") {
      for (size_t k = 0; k < args.size(); ++k) {
        Val o = a(k);
        if ((o.kind == Val::DType || o.kind == Val::Opts) && !o.dtype.empty() && o.dtype != t.dtype)
          fail("library_call", "PyTorch op `Tensor::to` converts `" + t.name + "` from " + t.dtype +
                                   " to " + o.dtype + " in the host wrapper `" + fr.fn + "`");
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
    if (m == "packed_accessor32" || m == "packed_accessor64" || m == "packed_accessor" ||
        m == "generic_packed_accessor")
      return packed_accessor(fr, v, t, m, targs, what);
    if (m == "accessor")
      fail("unsupported_cuda", "`" + what + "` in `" + fr.fn +
                                   "` makes a host TensorAccessor (`Tensor::accessor`), whose "
                                   "sizes live in host memory; a kernel takes a packed one");
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
    if (m == "size") {  // a size_t: unsigned in comparisons and arithmetic
      Val n = make_int(static_cast<int64_t>(v.items.size()));
      n.uns = true;
      return n;
    }
    if ((m == "push_back" || m == "emplace_back") && args.size() == 1 && !x.obj_name.empty()) {
      // A list variable grows by one item (`out_shape.push_back(x.size(d))`).
      Val grown = v;
      grown.items.push_back(eval(fr, x.T, args[0].first, args[0].second));
      grown.items.back().c32 = false;  // the vector's element type is not followed
      store(fr, x.obj_name, x.obj_path, grown, what);
      return Val{};
    }
    if (m == "push_back" || m == "emplace_back")
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` builds a list on the host");
    if (m == "data" || m == "vec") return v;
    if ((m == "begin" || m == "end" || m == "cbegin" || m == "cend") && args.empty()) {
      // An iterator over the list: `std::vector<int64_t> s(x.sizes().begin(), x.sizes().end())`.
      Val it = v;
      it.elem = m == "begin" || m == "cbegin" ? "list begin" : "list end";
      return it;
    }
  }
  if (v.kind == Val::Unknown) fail_value(v, "a value", what, fr);
  fail("host_logic", "host logic in `" + fr.fn + "`: cannot follow `" + what + "`");
}

std::vector<std::string> Interp::template_args(const std::string& text) {
  std::vector<std::string> out;
  auto toks = c_tokens(text);
  size_t start = 0;
  int depth = 0;
  for (size_t k = 0; k <= toks.size(); ++k) {
    if (k < toks.size() && toks[k].kind == CTok::Punct) {
      const std::string& p = toks[k].text;
      if (p == "<" || p == "(" || p == "[" || p == "{") ++depth;
      if (p == ">" || p == ")" || p == "]" || p == "}") --depth;
      if (p == ">>") depth -= 2;
      if (!(p == "," && depth == 0)) continue;
    } else if (k < toks.size()) {
      continue;
    }
    out.push_back(c_text(toks, start, k));
    start = k + 1;
  }
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

std::string Interp::ptr_traits(const std::string& text) {
  std::string t = strip_std(text);
  if (t.empty() || t == "DefaultPtrTraits") return "DefaultPtrTraits";
  if (t == "RestrictPtrTraits") return "RestrictPtrTraits";
  return "";
}

Val Interp::packed_accessor(Frame& fr, const Val& v, const TensorInfo& t, const std::string& m,
                            const std::string& targs, const std::string& what) {
  const std::string in = "`" + what + "` in `" + fr.fn + "`";
  // Only a plain buffer, or a view of forward (x.view(...): its own shape, checked against its
  // buffer's when the launch block is written): kernrl gives the kernel the buffer's shape and
  // row-major strides.
  bool forward_view = v.elem == "reshaped" && t.base >= 0;
  if (v.reshaped || (!v.elem.empty() && !forward_view) || !t.layout.empty() || t.layout_unknown ||
      t.view_src >= 0)
    fail("unsupported_cuda", in + " makes an accessor of a view or of a tensor laid out by "
                                  "strides kernrl does not give an accessor (it gives a plain "
                                  "buffer's shape and row-major strides)");
  auto parts = template_args(targs);
  if (parts.size() < 2 || parts.size() > 4 ||
      (parts.size() == 4 && m != "packed_accessor" && m != "generic_packed_accessor"))
    fail("unsupported_cuda", in + " makes an accessor without the template arguments <T, N>");
  Val a;
  a.kind = Val::Accessor;
  a.tensor = v.tensor;
  std::string ty = strip_std(resolve_type(fr, parts[0]));
  std::string want = dtype_of_c(ty);
  if (want.empty()) fail("unsupported_cuda", in + " reads a tensor as `" + parts[0] + "`");
  if (want != t.dtype)
    fail("mismatch", in + " reads the " + t.dtype + " tensor `" + t.name + "` as " + ty +
                         " (PyTorch would refuse it)");
  a.elem = ty == "Half" ? "__half" : ty;
  std::string rank = resolve_type(fr, parts[1]);
  if (rank.empty() || rank.size() > 2 || rank.find_first_not_of("0123456789") != std::string::npos)
    fail("unsupported_cuda", in + " makes an accessor of `" + parts[1] +
                                 "` dimensions; kernrl needs a number written out");
  a.k = std::stoll(rank);
  if (*a.k != static_cast<int64_t>(t.shape.size()))
    fail("mismatch", in + " makes a " + rank + "-dimensional accessor of `" + t.name +
                         "`, which has " + std::to_string(t.shape.size()) +
                         " dimensions in this problem (PyTorch would refuse it)");
  if (*a.k < 1 || *a.k > kMaxAccessorRank)
    fail("unsupported_cuda", in + " makes an accessor of " + rank +
                                 " dimensions; kernrl passes 1 to " +
                                 std::to_string(kMaxAccessorRank));
  a.name = ptr_traits(parts.size() > 2 ? parts[2] : "");
  if (a.name.empty())
    fail("unsupported_cuda", in + " makes an accessor with the pointer traits `" + parts[2] + "`");
  a.text = m == "packed_accessor32" ? "32" : "64";
  if (parts.size() == 4) {
    std::string index = strip_std(resolve_type(fr, parts[3]));
    if (index == "int32_t" || index == "int")
      a.text = "32";
    else if (index != "int64_t" && index != "long" && index != "long long")
      fail("unsupported_cuda", in + " makes an accessor indexed by `" + parts[3] +
                                   "`; kernrl gives int32_t or int64_t sizes and strides");
  }
  a.items = t.shape;
  return a;
}

}  // namespace kernrl::kbimport::host
