// The converter's torch steps, shared by its Python side (forward's operators) and its C++ side
// (torch::matmul in a host wrapper): docs/kernel-format.md, "PyTorch operators".
#include <algorithm>
#include <set>

#include "import/converter.h"

namespace kernrl::kbimport {

Val Converter::torch_step(const std::string& op, const std::vector<Val>& args,
                          std::vector<Val> shape, std::string dtype, const std::string& text,
                          const std::string& category) {
  if (!repeat_var_.empty())
    fail(category, "`" + text +
                       "` inside a loop whose length depends on the sizes: a torch step "
                       "is not repeated");
  LaunchOut L;
  L.torch = op;
  // PyTorch lays an elementwise operator's result out as its input (a dense transposed view
  // gives a transposed result: "permuted", its strides kept in TensorInfo::layout); products and
  // the copies below are contiguous; a convolution's result is a new tensor in the memory format
  // suggest_memory_format gives its input and weight: contiguous unless one of them is
  // channels-last (a conv1d's input is made contiguous first); the layout of another operator's
  // result on a tensor that is not contiguous is not known.
  static const std::set<std::string> contiguous_results = {
      "linear",  "mm",     "bmm",    "matmul", "addmm", "baddbmm", "reshape", "transpose",
      "permute", "narrow", "select", "unfold", "cat",   "lstm",    "gru"};
  static const std::set<std::string> elementwise = {"relu",    "gelu",        "sigmoid", "tanh",
                                                    "softmax", "log_softmax", "mul",     "div"};
  static const std::set<std::string> convolutions = {
      "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"};
  const bool convolution = convolutions.count(op) > 0;
  const bool one_d = op == "conv1d" || op == "conv_transpose1d";
  int like = -1;  // the first tensor argument, whose layout the result may take
  bool unknown = false;
  // A 1-d convolution makes its input contiguous (a copy with dense strides when it is not) and
  // views input and weight as 4-dimensional, where a size-1 dimension's stride can read as
  // channels-last: the result is known contiguous when, at every size set, the input is dense or
  // not contiguous (then copied densely), and the weight dense, size-1 dimensions included.
  auto dense_1d = [&](int t, bool input) {
    const TensorInfo& i = tensors[static_cast<size_t>(t)];
    if (i.layout_unknown) return false;
    if (i.view_src < 0 && i.layout.empty()) return true;
    auto strides = strides_of(t);
    if (!strides) return false;
    for (size_t s = 0; s < size_sets.size(); ++s) {
      int64_t want = 1;
      bool dense = true, loose = true;  // loose: contiguous as PyTorch says (size-1 ignored)
      for (size_t d = i.shape.size(); d-- > 0;) {
        auto n = per_set(i.shape[d]);
        if (!n) return false;
        if ((*strides)[s][d] != want) {
          dense = false;
          if ((*n)[s] != 1) loose = false;
        }
        want *= (*n)[s];
      }
      if (!dense && (!input || loose)) return false;
    }
    return true;
  };
  for (size_t k = 0; convolution && k < 2 && k < args.size(); ++k) {
    if (args[k].kind != Val::Tensor) continue;
    if (one_d ? !dense_1d(args[k].tensor, k == 0) : channels_last_like(args[k].tensor) != false)
      unknown = true;
  }
  for (Val a : args) {
    LaunchArgOut o;
    if (a.kind == Val::Tensor && like < 0 && (a.elem == "lazy" || a.elem == "permuted")) {
      if (elementwise.count(op))
        like = a.tensor;
      else if (!contiguous_results.count(op) && !convolution && contiguous(a.tensor) != true)
        unknown = true;
    }
    if (a.kind == Val::Tensor && a.elem == "permuted") a.elem.clear();
    // A view of forward (x.view(...), reshape, flatten...) is copied into a buffer of its shape
    // first: the operator sees each buffer in its own shape.
    if (a.kind == Val::Tensor && (a.elem == "reshaped" || a.elem == "lazy"))
      a = materialized(a, text, category);
    if (a.kind == Val::Tensor) {
      // A transposed weight goes only into a product (which clears the mark); a C++ view keeps
      // its buffer's shape: neither is what the operator would see.
      if (!a.elem.empty())
        fail(category, "`" + text + "`: a " + a.elem +
                           " tensor as an argument of a PyTorch operator kernrl does not map");
      o.tensor = a.tensor;
    } else if (a.kind == Val::Void) {
      o.text = "none";
    } else if (a.kind == Val::Int) {
      o.text = int_text(a);
    } else if (a.kind == Val::Float && a.f) {
      o.text = float_literal(*a.f);
    } else if (a.kind == Val::Float && !a.e.empty()) {
      o.text = a.e;  // a real expression of the sizes (`1.0 / (depth)`), evaluated per size set
    } else if (a.kind == Val::Bool && a.k) {
      o.text = *a.k ? "true" : "false";
    } else if (a.kind == Val::List && !a.items.empty() && a.items[0].kind == Val::Tensor) {
      // A list of tensors (`cat`'s): each a buffer, views copied first.
      for (Val t : a.items) {
        if (t.kind != Val::Tensor)
          fail(category, "`" + text + "`: a list of tensors and other values");
        if (t.elem == "reshaped" || t.elem == "lazy") t = materialized(t, text, category);
        if (!t.elem.empty())
          fail(category, "`" + text + "`: a " + t.elem +
                             " tensor as an argument of a PyTorch operator kernrl does not map");
        o.tensors.push_back(t.tensor);
      }
    } else if (a.kind == Val::List) {
      std::string items;
      for (const Val& d : a.items) {
        if (d.kind != Val::Int)
          fail(category, "`" + text + "`: a list argument kernrl cannot compute");
        items += (items.empty() ? "" : ", ") + int_text(d);
      }
      o.text = "[" + items + "]";
    } else {
      fail(category, "`" + text + "`: an argument kernrl cannot compute" +
                         (a.why.empty() ? "" : ": " + a.why));
    }
    L.args.push_back(o);
  }
  Val out = alloc(shape, dtype, "", text, "");
  L.out = out.tensor;
  launches.push_back(L);
  if (like >= 0) out = laid_out_as(out, like);
  if (unknown) {
    tensors[static_cast<size_t>(out.tensor)].layout_unknown = true;
    out.elem = "permuted";
  }
  return out;
}

namespace {

Val tensor_val_of(int t, std::string elem = "") {
  Val v;
  v.kind = Val::Tensor;
  v.tensor = t;
  v.elem = std::move(elem);
  return v;
}

}  // namespace

int Converter::storage_of(int t) const {
  while (t >= 0) {
    const TensorInfo& i = tensors[static_cast<size_t>(t)];
    if (i.base >= 0)
      t = i.base;
    else if (i.view_src >= 0)
      t = i.view_src;
    else
      break;
  }
  return t;
}

std::optional<Val> Converter::offset_in_storage(int t) const {
  if (t < 0) return std::nullopt;
  const TensorInfo& v = tensors[static_cast<size_t>(t)];
  // A select (`x[0]`, `x[:, i]` where the dimensions before it have size 1) is the narrow of one
  // element with that dimension dropped: the same memory from the same offset.
  const bool select = v.view_op == "select" && v.view_args.size() == 2;
  if (v.view_src < 0 || ((v.view_op != "narrow" || v.view_args.size() != 3) && !select))
    return std::nullopt;
  const TensorInfo& src = tensors[static_cast<size_t>(v.view_src)];
  // The viewed tensor: a buffer laid out in order (a reshaped view of one too), not a view.
  if (src.view_src >= 0 || !src.layout.empty() || src.layout_unknown) return std::nullopt;
  auto dense = contiguous(t);
  if (!dense || !*dense) return std::nullopt;
  const Val& dim = v.view_args[0];
  const Val& start = v.view_args[1];
  if (dim.kind != Val::Int || !dim.k || *dim.k < 0 ||
      static_cast<size_t>(*dim.k) >= src.shape.size() || start.kind != Val::Int)
    return std::nullopt;
  // Within the dimension at every size set (Tensor.narrow counts a negative start from the end).
  auto st = per_set(start), len = per_set(select ? make_int(1) : v.view_args[2]);
  auto whole = per_set(src.shape[static_cast<size_t>(*dim.k)]);
  if (!st || !len || !whole || st->size() != whole->size() || len->size() != whole->size())
    return std::nullopt;
  for (size_t i = 0; i < st->size(); ++i)
    if ((*st)[i] < 0 || (*len)[i] < 0 || (*st)[i] + (*len)[i] > (*whole)[i]) return std::nullopt;
  if (start.k && *start.k == 0) return make_int(0);
  Val offset = start;
  for (size_t q = static_cast<size_t>(*dim.k) + 1; q < src.shape.size(); ++q)
    offset = int_binop("*", offset, src.shape[q], "a narrow's offset");
  return offset;
}

std::optional<std::vector<Val>> Converter::reordered_strides(int t) const {
  if (t < 0) return std::nullopt;
  const TensorInfo& v = tensors[static_cast<size_t>(t)];
  if (v.view_src < 0 || (v.view_op != "transpose" && v.view_op != "permute")) return std::nullopt;
  const TensorInfo& src = tensors[static_cast<size_t>(v.view_src)];
  // The viewed tensor: a buffer of its own, laid out in order (not a view, not reshaped).
  if (src.view_src >= 0 || src.base >= 0 || !src.layout.empty() || src.layout_unknown)
    return std::nullopt;
  const size_t rank = src.shape.size();
  std::vector<Val> dense(rank, make_int(1));
  for (size_t d = rank; d-- > 1;) dense[d - 1] = int_binop("*", dense[d], src.shape[d], "a stride");
  std::vector<size_t> order(rank);
  for (size_t d = 0; d < rank; ++d) order[d] = d;
  if (v.view_op == "transpose") {
    if (v.view_args.size() != 2 || !v.view_args[0].k || !v.view_args[1].k) return std::nullopt;
    const int64_t a = *v.view_args[0].k, b = *v.view_args[1].k;
    if (a < 0 || b < 0 || static_cast<size_t>(a) >= rank || static_cast<size_t>(b) >= rank)
      return std::nullopt;
    std::swap(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
  } else {
    if (v.view_args.size() != 1 || v.view_args[0].items.size() != rank) return std::nullopt;
    for (size_t d = 0; d < rank; ++d) {
      const Val& k = v.view_args[0].items[d];
      if (!k.k || *k.k < 0 || static_cast<size_t>(*k.k) >= rank) return std::nullopt;
      order[d] = static_cast<size_t>(*k.k);
    }
  }
  std::vector<Val> out;
  for (size_t d = 0; d < rank; ++d) out.push_back(dense[order[d]]);
  // The same strides as the view's own (per size set), as a check of the reading above.
  auto per = strides_of(t);
  if (!per) return std::nullopt;
  for (size_t d = 0; d < rank; ++d) {
    auto values = per_set(out[d]);
    if (!values || values->size() != per->size()) return std::nullopt;
    for (size_t s = 0; s < per->size(); ++s)
      if ((*per)[s].size() != rank || (*per)[s][d] != (*values)[s]) return std::nullopt;
  }
  return out;
}

std::optional<std::vector<std::vector<int64_t>>> Converter::strides_of(int t) const {
  const TensorInfo& i = tensors[static_cast<size_t>(t)];
  if (i.view_src >= 0) return i.strides;
  if (i.layout_unknown) return std::nullopt;
  if (!i.layout.empty()) return i.layout;
  std::vector<std::vector<int64_t>> out(size_sets.size());
  std::vector<int64_t> acc(size_sets.size(), 1);
  for (size_t d = i.shape.size(); d-- > 0;) {
    auto n = per_set(i.shape[d]);
    if (!n) return std::nullopt;
    for (size_t s = 0; s < size_sets.size(); ++s) {
      out[s].insert(out[s].begin(), acc[s]);
      acc[s] *= (*n)[s];
    }
  }
  return out;
}

std::optional<bool> Converter::contiguous(int t) const {
  const TensorInfo& i = tensors[static_cast<size_t>(t)];
  if (i.layout_unknown) return std::nullopt;
  if (i.view_src < 0 && i.layout.empty()) return true;
  auto strides = strides_of(t);
  if (!strides) return std::nullopt;
  std::set<bool> answers;
  for (size_t s = 0; s < size_sets.size(); ++s) {
    int64_t want = 1;
    bool ok = true;
    for (size_t d = i.shape.size(); d-- > 0;) {
      auto n = per_set(i.shape[d]);
      if (!n) return std::nullopt;
      if ((*n)[s] != 1 && (*strides)[s][d] != want) ok = false;
      want *= (*n)[s];
    }
    answers.insert(ok);
  }
  if (answers.size() != 1) return std::nullopt;
  return *answers.begin();
}

std::optional<bool> Converter::channels_last_like(int t) const {
  const TensorInfo& i = tensors[static_cast<size_t>(t)];
  const size_t rank = i.shape.size();
  if (rank != 4 && rank != 5) return false;
  auto strides = strides_of(t);
  if (!strides) return std::nullopt;
  // c10's is_channels_last_strides_2d_s4 / _3d_s5: the strides increase over the dimensions in
  // channels-last order (C, then the spatial ones from the last, then N), size-1 dimensions and
  // ambiguous cases read as contiguous.
  const std::vector<size_t> order =
      rank == 4 ? std::vector<size_t>{1, 3, 2, 0} : std::vector<size_t>{1, 4, 3, 2, 0};
  for (size_t s = 0; s < size_sets.size(); ++s) {
    const std::vector<int64_t>& st = (*strides)[s];
    std::vector<int64_t> size;
    for (size_t d = 0; d < rank; ++d) {
      auto n = per_set(i.shape[d]);
      if (!n) return std::nullopt;
      size.push_back((*n)[s]);
    }
    bool like = st[1] != 0;
    int64_t min = 0;
    for (size_t d : order) {
      if (!like) break;
      if (size[d] == 0 || st[d] < min || (d == 0 && min == st[1])) {
        like = false;
        break;
      }
      min = st[d];
      if (size[d] > 1) min *= size[d];
    }
    if (like) return true;
  }
  return false;
}

std::vector<std::vector<int64_t>> Converter::layout_like(int t, bool* unknown) const {
  *unknown = false;
  auto c = contiguous(t);
  if (c && *c) return {};
  auto strides = strides_of(t);
  if (!strides) {
    *unknown = true;
    return {};
  }
  const TensorInfo& i = tensors[static_cast<size_t>(t)];
  std::vector<std::vector<int64_t>> out;
  bool all_dense = true;
  for (size_t s = 0; s < size_sets.size(); ++s) {
    // Dense: ordered by stride (size-1 dimensions aside), each stride the product of the sizes
    // before it. PyTorch then keeps that order with no gaps.
    std::vector<size_t> order;
    std::vector<int64_t> size;
    for (size_t d = 0; d < i.shape.size(); ++d) {
      size.push_back((*per_set(i.shape[d]))[s]);
      order.push_back(d);
    }
    const auto& st = (*strides)[s];
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return st[a] < st[b]; });
    int64_t want = 1;
    bool dense = true;
    std::vector<int64_t> layout(i.shape.size(), 0);
    for (size_t d : order) {
      if (size[d] != 1 && st[d] != want) dense = false;
      layout[d] = want;
      want *= size[d];
    }
    all_dense = all_dense && dense;
    out.push_back(layout);
  }
  if (!all_dense) {
    // A tensor with gaps or overlaps: PyTorch keeps the order of its dimensions by stride
    // (TensorIterator's output, infer_dense_strides for empty_like and clone), densely. That is
    // contiguous where the strides of the dimensions of more than one element decrease (a narrow,
    // a select); another order (an unfold's window dimension, whose stride is the unfolded
    // dimension's) or equal strides (overlapping windows) give a layout kernrl does not model.
    for (size_t s = 0; s < size_sets.size(); ++s) {
      int64_t last = -1;
      for (size_t d = 0; d < i.shape.size(); ++d) {
        if ((*per_set(i.shape[d]))[s] <= 1) continue;
        const int64_t st = (*strides)[s][d];
        if (st <= 0 || (last >= 0 && st >= last)) {
          *unknown = true;
          return {};
        }
        last = st;
      }
    }
    return {};
  }
  return out;
}

Val Converter::laid_out_as(Val v, int like) {
  bool unknown = false;
  auto layout = layout_like(like, &unknown);
  TensorInfo& t = tensors[static_cast<size_t>(v.tensor)];
  t.layout = layout;
  t.layout_unknown = unknown;
  if (!layout.empty() || unknown) v.elem = "permuted";
  return v;
}

std::optional<std::vector<std::vector<int64_t>>> Converter::view_strides(
    int t, const std::vector<Val>& shape) const {
  auto old_strides = strides_of(t);
  if (!old_strides) return std::nullopt;
  const TensorInfo& i = tensors[static_cast<size_t>(t)];
  std::vector<std::vector<int64_t>> out;
  for (size_t s = 0; s < size_sets.size(); ++s) {
    std::vector<int64_t> old_shape, new_shape;
    for (const Val& d : i.shape) {
      auto n = per_set(d);
      if (!n) return std::nullopt;
      old_shape.push_back((*n)[s]);
    }
    for (const Val& d : shape) {
      auto n = per_set(d);
      if (!n) return std::nullopt;
      new_shape.push_back((*n)[s]);
    }
    const std::vector<int64_t>& old_stride = (*old_strides)[s];
    // PyTorch's computeStride: each run of the view's dimensions must split or merge a run of the
    // old dimensions that lie one after the other in memory.
    std::vector<int64_t> stride(new_shape.size(), 1);
    int64_t numel = 1;
    for (int64_t n : old_shape) numel *= n;
    if (numel == 0 || old_shape.empty()) {
      int64_t acc = 1;
      for (size_t d = new_shape.size(); d-- > 0;) {
        stride[d] = acc;
        acc *= std::max<int64_t>(new_shape[d], 1);
      }
      out.push_back(stride);
      continue;
    }
    int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
    int64_t chunk_base_stride = old_stride.back();
    int64_t tensor_numel = 1, view_numel = 1;
    for (int64_t td = static_cast<int64_t>(old_shape.size()) - 1; td >= 0; --td) {
      size_t u = static_cast<size_t>(td);
      tensor_numel *= old_shape[u];
      if (td == 0 ||
          (old_shape[u - 1] != 1 && old_stride[u - 1] != tensor_numel * chunk_base_stride)) {
        while (view_d >= 0 &&
               (view_numel < tensor_numel || new_shape[static_cast<size_t>(view_d)] == 1)) {
          stride[static_cast<size_t>(view_d)] = view_numel * chunk_base_stride;
          view_numel *= new_shape[static_cast<size_t>(view_d)];
          --view_d;
        }
        if (view_numel != tensor_numel) return std::nullopt;
        if (td > 0) {
          chunk_base_stride = old_stride[u - 1];
          tensor_numel = 1;
          view_numel = 1;
        }
      }
    }
    if (view_d != -1) return std::nullopt;
    out.push_back(stride);
  }
  return out;
}

Val Converter::copy_of(const Val& v, const std::string& text, const std::string& category) {
  if (v.elem == "lazy" || v.elem == "reshaped") return materialized(v, text, category, true);
  const TensorInfo& t = tensors[static_cast<size_t>(v.tensor)];
  Val plain = v;  // a buffer (one with a layout holds its values in order)
  plain.elem.clear();
  Val dims;
  dims.kind = Val::List;
  dims.items = t.shape;
  return torch_step("reshape", {plain, dims}, t.shape, t.dtype, text, category);
}

Val Converter::lazy_view(const std::string& op, const Val& x, const std::vector<Val>& args,
                         std::vector<Val> shape, const std::string& text,
                         const std::string& category) {
  if (x.kind != Val::Tensor ||
      (!x.elem.empty() && x.elem != "reshaped" && x.elem != "lazy" && x.elem != "permuted"))
    fail(category, "`" + text + "`: " + op + " of a value kernrl does not follow as a tensor");
  const TensorInfo src = tensors[static_cast<size_t>(x.tensor)];
  if (x.elem == "reshaped" && src.base < 0)
    fail(category, "`" + text + "`: " + op + " of a view made in the C++ wrapper");
  auto from = strides_of(x.tensor);
  if (!from)
    fail(category, "`" + text +
                       "`: a view of a tensor whose shape depends on the GPU, or whose layout "
                       "(an operator's result on a view) kernrl does not know");
  std::vector<std::vector<int64_t>> strides;
  if (op == "view") {
    auto v = view_strides(x.tensor, shape);
    if (!v)
      fail(category, "`" + text +
                         "`: PyTorch cannot view this tensor in that shape at every size set "
                         "(its memory is not laid out for it; reshape would copy)");
    strides = *v;
  } else if (op == "narrow") {
    // 0 <= start, start + length <= the dimension, at every size set (else PyTorch raises).
    auto dim = per_set(src.shape[static_cast<size_t>(*args[0].k)]);
    auto start = per_set(args[1]), length = per_set(args[2]);
    bool in_range = dim && start && length;
    for (size_t s = 0; in_range && s < dim->size(); ++s)
      in_range = (*start)[s] >= 0 && (*length)[s] >= 0 && (*start)[s] + (*length)[s] <= (*dim)[s];
    if (!in_range) fail(category, "`" + text + "`: a range outside the dimension at some size set");
    strides = *from;
  } else if (op == "select") {
    // aten::select(dim, index): the dimension dropped, the index (0 <= index < the dimension, at
    // every size set; the caller counts a negative one from the end, as PyTorch does) moving the
    // view's start; the other dimensions keep their strides.
    const size_t d = static_cast<size_t>(*args[0].k);
    auto dim = per_set(src.shape[d]), index = per_set(args[1]);
    bool in_range = dim && index && index->size() == dim->size();
    for (size_t s = 0; in_range && s < dim->size(); ++s)
      in_range = (*index)[s] >= 0 && (*index)[s] < (*dim)[s];
    if (!in_range)
      fail(category, "`" + text + "`: an index outside the dimension at some size set");
    for (auto st : *from) {
      st.erase(st.begin() + static_cast<std::ptrdiff_t>(d));
      strides.push_back(st);
    }
  } else if (op == "unfold") {
    // aten::unfold(dimension, size, step): windows of `size` every `step` elements along the
    // dimension, (dim - size) / step + 1 of them, each a new last dimension of `size`; PyTorch's
    // strides: the dimension's stride times step, and the dimension's stride for the new one
    // (windows overlap where step < size). 1 <= size <= the dimension and step >= 1 at every size
    // set (PyTorch raises otherwise; an empty window is refused).
    const size_t d = static_cast<size_t>(*args[0].k);
    auto dim = per_set(src.shape[d]), size = per_set(args[1]), step = per_set(args[2]);
    bool ok = dim && size && step && size->size() == dim->size() && step->size() == dim->size();
    for (size_t s = 0; ok && s < dim->size(); ++s)
      ok = (*size)[s] >= 1 && (*size)[s] <= (*dim)[s] && (*step)[s] >= 1;
    if (!ok)
      fail(category, "`" + text +
                         "`: a window size outside 1 to the dimension, or a step below 1, at some "
                         "size set");
    for (size_t s = 0; s < from->size(); ++s) {
      std::vector<int64_t> st = (*from)[s];
      st.push_back(st[d]);
      st[d] *= (*step)[s];
      strides.push_back(st);
    }
  } else {  // transpose / permute: the dimensions' strides in the new order
    std::vector<int64_t> order;
    if (op == "transpose") {
      for (size_t d = 0; d < src.shape.size(); ++d) order.push_back(static_cast<int64_t>(d));
      std::swap(order[static_cast<size_t>(*args[0].k)], order[static_cast<size_t>(*args[1].k)]);
    } else {
      for (const Val& d : args[0].items) order.push_back(*d.k);
    }
    for (const auto& st : *from) {
      std::vector<int64_t> p;
      for (int64_t d : order) p.push_back(st[static_cast<size_t>(d)]);
      strides.push_back(p);
    }
  }
  TensorInfo t;
  t.role = "view";
  t.name = src.name;
  t.dtype = src.dtype;
  t.shape = std::move(shape);
  t.origin = text;
  t.view_src = x.tensor;
  t.view_op = op;
  t.view_args = args;
  t.strides = std::move(strides);
  return tensor_val_of(add_tensor(t), "lazy");
}

std::optional<std::vector<Val>> Converter::view_shape(const std::vector<Val>& old,
                                                      std::vector<Val> dims,
                                                      const std::string& text) {
  Val numel = make_int(1);
  for (const Val& d : old) numel = int_binop("*", numel, d, text);
  if (dims.size() == 1 && dims[0].kind == Val::List) dims = dims[0].items;
  int infer = -1;
  Val known = make_int(1);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].kind != Val::Int) return std::nullopt;
    if (dims[i].k && *dims[i].k == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
      continue;
    }
    known = int_binop("*", known, dims[i], text);
  }
  if (infer >= 0) dims[static_cast<size_t>(infer)] = int_binop("/", numel, known, text);
  return dims;
}

Val Converter::shaped(const Val& x, std::vector<Val> shape, bool view_only, const std::string& text,
                      const std::string& category) {
  const std::vector<Val>& old = tensors[static_cast<size_t>(x.tensor)].shape;
  bool same = shape.size() == old.size();
  for (size_t i = 0; same && i < shape.size(); ++i) same = int_text(shape[i]) == int_text(old[i]);
  if (same) return x;
  // A view of a lazy view: a view too where PyTorch can make one (view refuses otherwise; reshape,
  // flatten and the rest copy, here into a buffer of which it is then a view).
  if (x.elem == "lazy" || x.elem == "permuted") {
    if (view_only || view_strides(x.tensor, shape))
      return lazy_view("view", x, {}, shape, text, category);
    return shaped(materialized(x, text, category, true), shape, false, text, category);
  }
  TensorInfo v = tensors[static_cast<size_t>(x.tensor)];
  int root = x.tensor;
  while (tensors[static_cast<size_t>(root)].base >= 0)
    root = tensors[static_cast<size_t>(root)].base;
  v.base = root;
  v.shape = std::move(shape);
  v.origin = text;
  return tensor_val_of(add_tensor(v), "reshaped");  // a torch step reads a copy in this shape
}

int64_t Converter::dimension(const Val& v, int64_t rank, const std::string& text,
                             const std::string& category) {
  auto cannot = [&](const std::string& why) { fail(category, "`" + text + "`: " + why); };
  if (v.kind != Val::Int || !v.k) cannot("a dimension kernrl cannot compute");
  int64_t d = *v.k < 0 ? *v.k + rank : *v.k;
  if (d < 0 || d >= rank)
    cannot("dimension " + std::to_string(*v.k) + " of a tensor of rank " + std::to_string(rank));
  return d;
}

Val Converter::reorder_view(const std::string& op, const Val& x, std::vector<Val> dims,
                            const std::string& text, const std::string& category) {
  const std::vector<Val> shape0 = tensors[static_cast<size_t>(x.tensor)].shape;
  const int64_t rank = static_cast<int64_t>(shape0.size());
  auto cannot = [&](const std::string& why) { fail(category, "`" + text + "`: " + why); };
  auto dim_of = [&](const Val& v) { return dimension(v, rank, text, category); };
  std::vector<Val> shape = shape0;
  if (op == "transpose") {
    if (dims.size() != 2) cannot("transpose takes two dimensions");
    int64_t a = dim_of(dims[0]), b = dim_of(dims[1]);
    if (a == b) return x;
    std::swap(shape[static_cast<size_t>(a)], shape[static_cast<size_t>(b)]);
    return lazy_view("transpose", x, {make_int(a), make_int(b)}, shape, text, category);
  }
  if (dims.size() == 1 && dims[0].kind == Val::List) dims = dims[0].items;
  if (static_cast<int64_t>(dims.size()) != rank) cannot("a permutation of another rank");
  Val perm;
  perm.kind = Val::List;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t q = 0; q < dims.size(); ++q) {
    int64_t k = dim_of(dims[q]);
    if (seen[static_cast<size_t>(k)]) cannot("a dimension twice in a permutation");
    seen[static_cast<size_t>(k)] = true;
    perm.items.push_back(make_int(k));
    shape[q] = shape0[static_cast<size_t>(k)];
  }
  return lazy_view("permute", x, {perm}, shape, text, category);
}

Val Converter::materialized(const Val& view, const std::string& text, const std::string& category,
                            bool fresh) {
  const TensorInfo t = tensors[static_cast<size_t>(view.tensor)];
  if (view.elem == "lazy") {
    // Copied where it is read, so that the copy holds what the view shows now; the copy is kept
    // while no kernel was given the view's storage.
    int storage = storage_of(view.tensor);
    int w = writes.count(storage) ? writes.at(storage) : 0;
    if (!fresh && t.copy >= 0 && t.copy_writes == w) return tensor_val_of(t.copy);
    const TensorInfo& src = tensors[static_cast<size_t>(t.view_src)];
    Val from =
        tensor_val_of(t.view_src, src.view_src >= 0 ? "lazy" : (src.base >= 0 ? "reshaped" : ""));
    from = materialized(from, text, category);
    std::vector<Val> args = {from};
    if (t.view_op == "view") {
      Val l;
      l.kind = Val::List;
      l.items = t.shape;
      args.push_back(l);
    } else {
      args.insert(args.end(), t.view_args.begin(), t.view_args.end());
    }
    Val out = torch_step(t.view_op == "view" ? "reshape" : t.view_op, args, t.shape, t.dtype, text,
                         category);
    if (!fresh) {
      TensorInfo& m = tensors[static_cast<size_t>(view.tensor)];
      m.copy = out.tensor;
      m.copy_writes = w;
    }
    const bool select = t.view_op == "select" || t.view_op == "unfold";
    const std::string note =
        std::string(select ? "forward's integer indexes and unfold views (select, unfold)"
                           : "forward's view operators (transpose, permute, narrow, split, chunk "
                             "and views of them)") +
        " are copied by torch steps where an operator reads them; the copies' time counts in this "
        "file's time, where PyTorch's operators read the views in place";
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
    return out;
  }
  if (view.elem != "reshaped") {  // a buffer (one with a layout holds its values in order)
    Val v = view;
    v.elem.clear();
    return v;
  }
  // A C++ view (x.view(...) in the wrapper) keeps its buffer's shape: not what an operator
  // would see.
  if (t.base < 0)
    fail(category, "`" + text +
                       "`: a view made in the C++ wrapper as an argument of a PyTorch operator, "
                       "which kernrl does not map");
  Val shape;
  shape.kind = Val::List;
  shape.items = t.shape;
  return torch_step("reshape", {tensor_val_of(t.base), shape}, t.shape, t.dtype, text, category);
}

Val Converter::product(const Val& a, const Val& b, const std::string& text,
                       const std::string& category) {
  if (a.kind != Val::Tensor || b.kind != Val::Tensor)
    fail(category, "`" + text + "`: a product of values that are not tensors kernrl follows");
  auto known = [](const Val& v) {
    return v.elem.empty() || v.elem == "reshaped" || v.elem == "lazy" || v.elem == "permuted";
  };
  if (!known(a) || (!known(b) && b.elem != "transposed"))
    fail(category, "`" + text +
                       "`: a product of a transposed or reshaped tensor kernrl does not "
                       "map (only x @ W.t())");
  const TensorInfo ta = tensors[static_cast<size_t>(a.tensor)];
  // x @ W.transpose(0, 1) of a matrix that is a buffer: as x @ W.t().
  if (b.elem == "lazy") {
    const TensorInfo& v = tensors[static_cast<size_t>(b.tensor)];
    const TensorInfo& w = tensors[static_cast<size_t>(v.view_src)];
    bool swapped = v.view_op == "transpose" ||
                   (v.view_op == "permute" && v.view_args[0].items[0].k == int64_t{1});
    if (swapped && v.shape.size() == 2 && w.view_src < 0 && w.base < 0) {
      Val plain;
      plain.kind = Val::Tensor;
      plain.tensor = v.view_src;
      return linear(a, plain, Val{}, text, category);
    }
  }
  if (b.elem == "transposed") {  // x @ W.t(): nn.Linear's product
    Val w = b;
    w.elem.clear();
    return linear(a, w, Val{}, text, category);
  }
  const TensorInfo tb = tensors[static_cast<size_t>(b.tensor)];
  if (ta.shape.size() == 2 && tb.shape.size() == 2)
    return torch_step("mm", {a, b}, {ta.shape[0], tb.shape[1]}, ta.dtype, text, category);
  if (ta.shape.size() >= 2 && tb.shape.size() == 2) {
    std::vector<Val> shape(ta.shape.begin(), ta.shape.end() - 1);
    shape.push_back(tb.shape[1]);
    return torch_step("matmul", {a, b}, shape, ta.dtype, text, category);
  }
  // A matrix times a batch of matrices: the matrix broadcast over the batch.
  if (ta.shape.size() == 2 && tb.shape.size() >= 3) {
    std::vector<Val> shape(tb.shape.begin(), tb.shape.end() - 2);
    shape.push_back(ta.shape[0]);
    shape.push_back(tb.shape.back());
    return torch_step("matmul", {a, b}, shape, ta.dtype, text, category);
  }
  if (ta.shape.size() == 3 && tb.shape.size() == 3)
    return torch_step("bmm", {a, b}, {ta.shape[0], ta.shape[1], tb.shape[2]}, ta.dtype, text,
                      category);
  // A batch of products with the same batch dimensions (attention's [B, heads, T, d]).
  if (ta.shape.size() == tb.shape.size() && ta.shape.size() > 3) {
    size_t r = ta.shape.size();
    bool same = true;
    for (size_t i = 0; i + 2 < r; ++i)
      same = same && int_text(ta.shape[i]) == int_text(tb.shape[i]);
    if (same) {
      std::vector<Val> shape(ta.shape.begin(), ta.shape.end() - 1);
      shape.push_back(tb.shape[r - 1]);
      return torch_step("matmul", {a, b}, shape, ta.dtype, text, category);
    }
  }
  fail(category, "`" + text + "`: a product of these shapes kernrl does not map");
}

Val Converter::linear(const Val& x, const Val& w, const Val& bias, const std::string& text,
                      const std::string& category) {
  for (const Val* t : {&x, &w, &bias})
    if (t != &bias || bias.kind != Val::Void)
      if (t->kind != Val::Tensor)
        fail(category, "`" + text + "`: linear of values that are not tensors kernrl follows");
  const TensorInfo tx = tensors[static_cast<size_t>(x.tensor)];
  const TensorInfo tw = tensors[static_cast<size_t>(w.tensor)];
  if (tx.shape.empty() || tw.shape.size() != 2)
    fail(category, "`" + text + "`: linear of tensors of these shapes kernrl does not map");
  std::vector<Val> shape(tx.shape.begin(), tx.shape.end() - 1);
  shape.push_back(tw.shape[0]);
  std::vector<Val> args = {x, w};
  if (bias.kind != Val::Void) args.push_back(bias);
  return torch_step("linear", args, shape, tx.dtype, text, category);
}

}  // namespace kernrl::kbimport
