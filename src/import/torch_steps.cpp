// The converter's torch steps, shared by its Python side (forward's operators) and its C++ side
// (torch::matmul in a host wrapper): docs/kernel-format.md, "PyTorch operators".
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
  for (Val a : args) {
    LaunchArgOut o;
    // A view of forward (x.view(...), reshape, flatten...) is copied into a buffer of its shape
    // first: the operator sees each buffer in its own shape.
    if (a.kind == Val::Tensor && a.elem == "reshaped") a = materialized(a, text, category);
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
    } else if (a.kind == Val::Bool && a.k) {
      o.text = *a.k ? "true" : "false";
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
  return out;
}

Val Converter::materialized(const Val& view, const std::string& text, const std::string& category) {
  const TensorInfo t = tensors[static_cast<size_t>(view.tensor)];
  if (t.base < 0) {
    Val v = view;
    v.elem.clear();
    return v;
  }
  Val base;
  base.kind = Val::Tensor;
  base.tensor = t.base;
  Val shape;
  shape.kind = Val::List;
  shape.items = t.shape;
  return torch_step("reshape", {base, shape}, t.shape, t.dtype, text, category);
}

Val Converter::view_step(const std::string& op, const Val& x, const std::vector<Val>& args,
                         std::vector<Val> shape, const std::string& text,
                         const std::string& category) {
  if (x.kind != Val::Tensor || (!x.elem.empty() && x.elem != "reshaped"))
    fail(category, "`" + text + "`: " + op + " of a value kernrl does not follow as a tensor");
  std::vector<Val> all = {x};
  all.insert(all.end(), args.begin(), args.end());
  return torch_step(op, all, std::move(shape), tensors[static_cast<size_t>(x.tensor)].dtype, text,
                    category);
}

Val Converter::product(const Val& a, const Val& b, const std::string& text,
                       const std::string& category) {
  if (a.kind != Val::Tensor || b.kind != Val::Tensor)
    fail(category, "`" + text + "`: a product of values that are not tensors kernrl follows");
  if ((!a.elem.empty() && a.elem != "reshaped") ||
      (!b.elem.empty() && b.elem != "transposed" && b.elem != "reshaped"))
    fail(category, "`" + text +
                       "`: a product of a transposed or reshaped tensor kernrl does not "
                       "map (only x @ W.t())");
  const TensorInfo ta = tensors[static_cast<size_t>(a.tensor)];
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
