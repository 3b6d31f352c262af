// The Python side (py_side.h): ModelNew's constructor arguments as KernelBench passes them, and
// the PyTorch operators forward keeps beside its CUDA kernels, as torch steps of the launch block
// (docs/kernel-format.md, "PyTorch operators"; allowed on suites built from KernelBench).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "import/py_side.h"

namespace kernrl::kbimport::py {

namespace {

// The reference's module-level constants and the items of get_init_inputs()'s list, from the
// problem's PyTorch text.
struct ReferenceInit {
  std::map<std::string, PyExprP> constants;
  std::vector<PyExprP> init_inputs;
  bool found = false;
};

ReferenceInit read_reference_init(const std::string& torch_text) {
  ReferenceInit r;
  std::vector<PyLine> lines;
  try {
    lines = py_lines(torch_text);
  } catch (const ImportError&) {
    return r;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& t = lines[i].toks;
    if (lines[i].indent != 0 || t.empty()) continue;
    if (t.size() > 2 && t[0].kind == PyTok::Name && tok_is(t[1], "=")) {
      try {
        r.constants[t[0].text] = py_parse_expr(t, 2, t.size());
      } catch (const ImportError&) {
      }
      continue;
    }
    if (t.size() > 1 && tok_is(t[0], "def") && t[1].text == "get_init_inputs") {
      for (size_t j = i + 1; j < lines.size() && lines[j].indent > 0; ++j) {
        const auto& b = lines[j].toks;
        if (b.empty() || !tok_is(b[0], "return")) continue;
        try {
          PyExprP e = py_parse_expr(b, 1, b.size());
          if (e->kind == PyExpr::List || e->kind == PyExpr::Tuple) {
            r.init_inputs = e->kids;
            r.found = true;
          }
        } catch (const ImportError&) {
        }
        break;
      }
    }
  }
  return r;
}

bool transposed(const Val& v) {
  return v.kind == Val::Tensor && v.elem == "transposed";
}

}  // namespace

void PySide::bind_init_args() {
  ReferenceInit ref = read_reference_init(C.P.torch);
  // A value of the reference's list: a size of the problem stays an expression (it shrinks at
  // the test sizes), a constant of the reference module is its value.
  std::function<Val(const PyExprP&, int)> ref_value = [&](const PyExprP& e, int depth) -> Val {
    if (depth > 8) return make_unknown("a constant kernrl cannot follow");
    switch (e->kind) {
      case PyExpr::Num:
        return number(e->text);
      case PyExpr::Const:
        if (e->text == "True" || e->text == "False") return make_bool(e->text == "True");
        return e->text == "None" ? Val{} : make_unknown(e->text);
      case PyExpr::Name: {
        if (C.P.bench.count(e->text)) return make_int_expr(e->text);
        if (const ScalarSpec* s = C.P.find_scalar(e->text)) {
          Val v = s->is_float() ? make_float(s->value, e->text)
                                : make_int(static_cast<int64_t>(s->value));
          v.scalar = e->text;
          return v;
        }
        auto it = ref.constants.find(e->text);
        // A tuple constant (`input_shape = (4096,)`): the suite's sizes `input_shape_0`, ... where
        // it has them (they shrink at the test sizes), else the values as written.
        if (it != ref.constants.end() &&
            (it->second->kind == PyExpr::Tuple || it->second->kind == PyExpr::List)) {
          Val l;
          l.kind = Val::List;
          l.seq = it->second->kind == PyExpr::Tuple ? 't' : 'l';  // what isinstance sees
          for (size_t k = 0; k < it->second->kids.size(); ++k) {
            std::string sz = e->text + "_" + std::to_string(k);
            l.items.push_back(C.P.bench.count(sz) ? make_int_expr(sz)
                                                  : ref_value(it->second->kids[k], depth + 1));
          }
          return l;
        }
        if (it != ref.constants.end()) return ref_value(it->second, depth + 1);
        return make_unknown("`" + e->text + "` of the reference");
      }
      case PyExpr::Unary: {
        Val v = ref_value(e->kids[0], depth + 1);
        if (e->text == "-" && v.kind == Val::Float && v.f) return make_float(-*v.f);
        if (e->text == "-" && v.kind == Val::Int) return int_binop("-", make_int(0), v, "-");
        return make_unknown("`" + py_text(e) + "` of the reference");
      }
      case PyExpr::Tuple:
      case PyExpr::List: {
        Val l;
        l.kind = Val::List;
        l.seq = e->kind == PyExpr::Tuple ? 't' : 'l';
        for (const auto& k : e->kids) l.items.push_back(ref_value(k, depth + 1));
        return l;
      }
      default:
        return make_unknown("`" + py_text(e) + "` of the reference");
    }
  };
  for (size_t i = 0; i < init_signature_.size(); ++i) {
    const auto& [name, def] = init_signature_[i];
    if (ref.found && i < ref.init_inputs.size()) {
      Val v = ref_value(ref.init_inputs[i], 0);
      // A size with one value at every size set (`reduce_dim`, kept as a size by the suite) is
      // that constant: a loop over it unrolls, a float() of it is a number.
      if (v.kind == Val::Int && !v.k)
        if (auto one = C.one_value(v)) v = make_int(*one);
      if (v.kind != Val::Unknown) init_args_[name] = v;
      continue;
    }
    if (def.empty()) continue;
    try {
      Val v = init_expr(py_parse_expr(def, 0, def.size()));
      // A default of None is None where KernelBench's list decides the arguments (a suite).
      if (v.kind == Val::Int || v.kind == Val::Float || v.kind == Val::Bool ||
          v.kind == Val::List || (v.kind == Val::Void && ref.found))
        init_args_[name] = v;
    } catch (const ImportError&) {
    }
  }
}

Val PySide::init_param_value(const std::string& name) {
  auto it = init_args_.find(name);
  if (it != init_args_.end()) return it->second;
  if (!self_path_.empty())  // (bind_submodule_args binds every parameter)
    return make_unknown("`" + name + "` of " + self_name() + "'s __init__");
  return from_problem_name(name);
}

std::optional<Val> PySide::init_local(const std::string& name, int depth) {
  auto it = init_locals_.find(name);
  if (it == init_locals_.end()) return std::nullopt;
  if (!it->second || depth > 16)
    return make_unknown("`" + name +
                        "`, which ModelNew's __init__ binds itself (kernrl follows a name __init__ "
                        "binds only where it binds it once, at its top, with `" +
                        name + " = value`)");
  Val v = init_expr(it->second, depth + 1);
  if (v.kind == Val::Void || v.kind == Val::Func)
    return make_unknown("`" + name + "` of ModelNew's __init__ (`" + py_text(it->second) + "`)");
  return v;
}

Val PySide::init_expr(const PyExprP& e, int depth) {
  switch (e->kind) {
    case PyExpr::Num:
      return number(e->text);
    case PyExpr::Const:
      if (e->text == "True" || e->text == "False") return make_bool(e->text == "True");
      return Val{};
    case PyExpr::Name:
      if (module_depth_ > 0) return module_value(e->text);  // a module constant's expression
      if (auto local = init_local(e->text, depth)) return *local;
      if (init_params_.count(e->text)) return init_param_value(e->text);
      return module_value(e->text);
    case PyExpr::Unary: {
      Val v = init_expr(e->kids[0], depth);
      if (e->text == "-" && v.kind == Val::Float && v.f) return make_float(-*v.f);
      if (e->text == "-" && v.kind == Val::Int) return int_binop("-", make_int(0), v, py_text(e));
      return make_unknown("`" + py_text(e) + "`");
    }
    case PyExpr::BinOp: {
      Val a = init_expr(e->kids[0], depth), b = init_expr(e->kids[1], depth);
      if (a.kind == Val::Int && b.kind == Val::Int && e->text == "//") {
        // Python floors; kernrl's expressions truncate: the same where neither side is negative.
        if (a.k && b.k) {
          if (*b.k == 0) return make_unknown("`" + py_text(e) + "` (a division by zero)");
          if (*a.k == std::numeric_limits<int64_t>::min() && *b.k == -1)
            return make_unknown("`" + py_text(e) + "` (a 64-bit overflow)");
          int64_t q = *a.k / *b.k;
          if ((*a.k % *b.k != 0) && ((*a.k < 0) != (*b.k < 0))) --q;
          return make_int(q);
        }
        auto pa = C.per_set(a), pb = C.per_set(b);
        bool non_negative = pa && pb &&
                            std::all_of(pa->begin(), pa->end(), [](int64_t x) { return x >= 0; }) &&
                            std::all_of(pb->begin(), pb->end(), [](int64_t x) { return x > 0; });
        if (!non_negative) return make_unknown("`" + py_text(e) + "`");
        return int_binop("/", a, b, py_text(e));
      }
      if (a.kind == Val::Int && b.kind == Val::Int &&
          (e->text == "+" || e->text == "-" || e->text == "*"))
        return int_binop(e->text, a, b, py_text(e));
      return make_unknown("`" + py_text(e) + "`");
    }
    case PyExpr::Tuple:
    case PyExpr::List: {
      Val l;
      l.kind = Val::List;
      for (const auto& k : e->kids) l.items.push_back(init_expr(k, depth));
      return l;
    }
    case PyExpr::Attr:
      if (e->kids[0]->kind == PyExpr::Name && e->kids[0]->text == "self") return self_attr(e->text);
      return make_unknown("`" + py_text(e) + "`");
    default:
      return make_unknown("`" + py_text(e) + "`");
  }
}

PyExprP PySide::layer_ctor(const std::string& full) const {
  // Only within the current `self` (ModelNew, or the submodule whose forward runs).
  auto rel = relative(full);
  if (!rel) return nullptr;
  return rel_layer_ctor(*rel);
}

PyExprP PySide::rel_layer_ctor(const std::string& path) const {
  // ModelNew's own attribute (`self.conv = nn.Conv2d(...)`), or a child of one built in place:
  // `nn.Sequential(a, b)`'s k-th argument, `nn.ModuleList([a, b])`'s k-th item.
  auto it = init_attrs_.find(path);
  if (it != init_attrs_.end()) {
    // `nn.Sequential(*layers)` of a list __init__ builds as the reference's does.
    auto built = self_path_.empty() ? init_list_built_.find(path) : init_list_built_.end();
    if (built != init_list_built_.end() && !init_setattr_ && !init_attrs_changed_.count(path) &&
        !init_attrs_mutated_.count(path) && layers_built_as_reference().empty())
      return built->second;
    return it->second;
  }
  size_t dot = path.rfind('.');
  if (dot == std::string::npos) return nullptr;
  PyExprP parent = rel_layer_ctor(path.substr(0, dot));
  const std::string idx = path.substr(dot + 1);
  if (!parent || parent->kind != PyExpr::Call || idx.empty() ||
      !std::all_of(idx.begin(), idx.end(), [](char c) { return std::isdigit(c); }))
    return nullptr;
  const size_t k = std::stoul(idx);
  const std::string f = resolve(py_dotted(parent->kids[0]));
  if (is_sequential(f) && parent->kwargs.empty()) {
    bool starred = std::any_of(parent->kids.begin() + 1, parent->kids.end(),
                               [](const PyExprP& a) { return a->kind != PyExpr::Call; });
    if (!starred && k + 1 < parent->kids.size()) return parent->kids[k + 1];
  }
  if ((f == "torch.nn.ModuleList" || f == "nn.ModuleList") && parent->kids.size() == 2 &&
      parent->kids[1]->kind == PyExpr::List && k < parent->kids[1]->kids.size())
    return parent->kids[1]->kids[k];
  return nullptr;
}

std::optional<std::map<std::string, Val>> PySide::layer_config(const Val& layer) {
  // Each class's constructor parameters and their defaults (torch.nn's).
  using Params = std::vector<std::pair<std::string, std::string>>;
  static const Params conv = {{"in_channels", ""}, {"out_channels", ""}, {"kernel_size", ""},
                              {"stride", "1"},     {"padding", "0"},     {"dilation", "1"},
                              {"groups", "1"},     {"bias", "True"}};
  static const Params conv_transpose = {
      {"in_channels", ""}, {"out_channels", ""}, {"kernel_size", ""},
      {"stride", "1"},     {"padding", "0"},     {"output_padding", "0"},
      {"groups", "1"},     {"bias", "True"},     {"dilation", "1"}};
  static const Params batch_norm = {{"num_features", ""},
                                    {"eps", "1e-05"},
                                    {"momentum", "0.1"},
                                    {"affine", "True"},
                                    {"track_running_stats", "True"}};
  static const Params instance_norm = {{"num_features", ""},
                                       {"eps", "1e-05"},
                                       {"momentum", "0.1"},
                                       {"affine", "False"},
                                       {"track_running_stats", "False"}};
  // Pooling: a stride left out (or None) is the kernel size, as torch sets it (below).
  static const Params max_pool = {
      {"kernel_size", ""},         {"stride", ""},        {"padding", "0"}, {"dilation", "1"},
      {"return_indices", "False"}, {"ceil_mode", "False"}};
  static const Params avg_pool = {{"kernel_size", ""},
                                  {"stride", ""},
                                  {"padding", "0"},
                                  {"ceil_mode", "False"},
                                  {"count_include_pad", "True"}};
  static const std::map<std::string, Params> classes = {
      {"Linear", {{"in_features", ""}, {"out_features", ""}, {"bias", "True"}}},
      {"Conv1d", conv},
      {"Conv2d", conv},
      {"Conv3d", conv},
      {"ConvTranspose1d", conv_transpose},
      {"ConvTranspose2d", conv_transpose},
      {"ConvTranspose3d", conv_transpose},
      {"LayerNorm", {{"normalized_shape", ""}, {"eps", "1e-05"}, {"elementwise_affine", "True"}}},
      {"BatchNorm1d", batch_norm},
      {"BatchNorm2d", batch_norm},
      {"BatchNorm3d", batch_norm},
      {"InstanceNorm1d", instance_norm},
      {"InstanceNorm3d", instance_norm},
      {"MaxPool1d", max_pool},
      {"MaxPool2d", max_pool},
      {"MaxPool3d", max_pool},
      {"AvgPool1d", avg_pool},
      {"AvgPool2d", avg_pool},
      {"AvgPool3d", avg_pool},
      // Adaptive pooling keeps its output size as given (an int, or a tuple or list that may
      // hold None).
      {"AdaptiveAvgPool1d", {{"output_size", ""}}},
      {"AdaptiveAvgPool2d", {{"output_size", ""}}},
      {"AdaptiveAvgPool3d", {{"output_size", ""}}},
      {"AdaptiveMaxPool1d", {{"output_size", ""}, {"return_indices", "False"}}},
      {"AdaptiveMaxPool2d", {{"output_size", ""}, {"return_indices", "False"}}},
      {"AdaptiveMaxPool3d", {{"output_size", ""}, {"return_indices", "False"}}},
      {"GroupNorm",
       {{"num_groups", ""}, {"num_channels", ""}, {"eps", "1e-05"}, {"affine", "True"}}},
      {"InstanceNorm2d", instance_norm},
      {"LeakyReLU", {{"negative_slope", "0.01"}}},
      {"Hardtanh", {{"min_val", "-1.0"}, {"max_val", "1.0"}}},
      {"ELU", {{"alpha", "1.0"}}},
      {"CELU", {{"alpha", "1.0"}}},
      {"Softplus", {{"beta", "1.0"}, {"threshold", "20.0"}}},
      {"Threshold", {{"threshold", ""}, {"value", ""}}},
      {"Softmax", {{"dim", ""}}},
      {"LogSoftmax", {{"dim", ""}}},
      {"Dropout", {{"p", "0.5"}}},
      {"MultiheadAttention",
       {{"embed_dim", ""},
        {"num_heads", ""},
        {"dropout", "0.0"},
        {"bias", "True"},
        {"add_bias_kv", "False"},
        {"add_zero_attn", "False"},
        {"kdim", ""},
        {"vdim", ""},
        {"batch_first", "False"}}},
      // (py_composites.cpp: "@" marks an argument composite_settings reads itself.)
      {"TransformerEncoderLayer",
       {{"d_model", ""},
        {"nhead", ""},
        {"dim_feedforward", "2048"},
        {"dropout", "0.1"},
        {"activation", "@"},
        {"layer_norm_eps", "1e-05"},
        {"batch_first", "False"},
        {"norm_first", "False"}}},
      {"TransformerEncoder", {{"encoder_layer", "@"}, {"num_layers", ""}, {"norm", "@"}}},
  };
  std::string elem = layer.elem;
  if (elem == "Module") elem = module_class(layer);
  PyExprP call = layer_ctor(layer.name);
  if (!call) {
    // A layer a composite torch.nn module builds inside itself (`transformer.layers.0.norm1`):
    // the constructor call torch makes, where the class problem.yaml's modules records is its.
    auto in = built_inside(layer.name);
    if (!in || !in->why.empty() || !in->call || !inner_class_matches(*in, elem))
      return std::nullopt;
    elem = in->cls;
    call = in->call;
  } else if (call->kind == PyExpr::Call) {
    // The constructor must be the class problem.yaml's modules record for that path (or, for
    // ModelNew's own attribute, the class its call names).
    std::string named = resolve(py_dotted(call->kids[0]));
    if (named != "torch.nn." + elem && named != "nn." + elem) return std::nullopt;
  }
  auto cls = classes.find(elem);
  if (cls == classes.end() || !call || call->kind != PyExpr::Call) return std::nullopt;
  // Arguments unpacked from a sequence or a dict (`nn.Conv2d(*args)`, `**kw`): kernrl cannot bind
  // them.
  for (const auto& kw : call->kwargs)
    if (kw.first == "*") return std::nullopt;
  std::map<std::string, Val> cfg;
  const auto& params = cls->second;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& [pname, def] = params[i];
    if (def == "@") continue;
    PyExprP given;
    if (i + 1 < call->kids.size()) given = call->kids[i + 1];
    for (const auto& [k, v] : call->kwargs)
      if (k == pname) given = v;
    if (given)
      cfg[pname] = init_expr(given);
    else if (def == "True" || def == "False")
      cfg[pname] = make_bool(def == "True");
    else if (starts_with(def, "-"))
      cfg[pname] = make_float(-*number(def.substr(1)).f, def);
    else if (!def.empty())
      cfg[pname] = number(def);
  }
  if (starts_with(elem, "MaxPool") || starts_with(elem, "AvgPool")) {
    auto st = cfg.find("stride");
    if ((st == cfg.end() || st->second.kind == Val::Void) && cfg.count("kernel_size"))
      cfg["stride"] = cfg["kernel_size"];
    // AvgPool1d keeps its sizes as 1-tuples (torch's _single); the others as given.
    if (elem == "AvgPool1d")
      for (const char* k : {"kernel_size", "stride", "padding"}) {
        auto it = cfg.find(k);
        if (it == cfg.end() || it->second.kind != Val::Int) continue;
        Val l;
        l.kind = Val::List;
        l.seq = 't';
        l.items = {it->second};
        it->second = l;
      }
  }
  if (elem == "MultiheadAttention" || elem == "TransformerEncoderLayer" ||
      elem == "TransformerEncoder")
    composite_settings(elem, call, layer.name, cfg);
  // Adaptive pooling keeps its output size as given: a tuple written as one stays a tuple, a list
  // a list (for isinstance).
  if (starts_with(elem, "Adaptive") && cfg.count("output_size") &&
      cfg["output_size"].kind == Val::List) {
    PyExprP given = call->kids.size() > 1 ? call->kids[1] : nullptr;
    for (const auto& [k, v] : call->kwargs)
      if (k == "output_size") given = v;
    if (given && (given->kind == PyExpr::Tuple || given->kind == PyExpr::List))
      cfg["output_size"].seq = given->kind == PyExpr::Tuple ? 't' : 'l';
  }
  if (elem == "MultiheadAttention" && cfg.count("num_heads")) {
    // The attributes torch sets from them: head_dim = embed_dim // num_heads.
    const Val& e = cfg["embed_dim"];
    const Val& h = cfg["num_heads"];
    if (e.kind == Val::Int && h.kind == Val::Int)
      cfg["head_dim"] = int_binop("/", e, h, "embed_dim // num_heads");
  }
  // A convolution's padding mode: a string ('zeros' unless given as one).
  if (starts_with(elem, "Conv")) {
    Val mode;
    mode.kind = Val::Str;
    mode.text = "zeros";
    for (const auto& [k, v] : call->kwargs)
      if (k == "padding_mode")
        mode = v->kind == PyExpr::Str ? mode
                                      : make_unknown("`padding_mode` of `self." + layer.name + "`");
    for (const auto& [k, v] : call->kwargs)
      if (k == "padding_mode" && v->kind == PyExpr::Str) mode.text = v->text;
    cfg["padding_mode"] = mode;
  }
  // A convolution keeps its sizes as tuples of its dimensions (torch's _single/_pair/_triple):
  // `self.conv.stride[0]`.
  if (starts_with(elem, "Conv") && elem.size() > 2 &&
      std::isdigit(static_cast<unsigned char>(elem[elem.size() - 2]))) {
    const size_t nd = static_cast<size_t>(elem[elem.size() - 2] - '0');
    for (const char* k : {"kernel_size", "stride", "padding", "dilation", "output_padding"}) {
      auto it = cfg.find(k);
      if (it == cfg.end() || it->second.kind != Val::Int) continue;
      Val l;
      l.kind = Val::List;
      l.seq = 't';
      l.items.assign(nd, it->second);
      it->second = l;
    }
  }
  // KernelBench runs the modules in training mode, and kernrl's references do the same.
  cfg["training"] = training_mode("self." + layer.name + ".training");
  return cfg;
}

const TensorInfo& PySide::tensor_of(const Val& v, const std::string& text) {
  if (v.kind != Val::Tensor)
    fail("torch_op_in_forward", "`" + text + "`: an argument is not a tensor kernrl follows");
  // A view (view, reshape, flatten...) is copied into a buffer of its shape by the step
  // (Converter::materialized).
  if (v.elem == "transposed")
    fail("torch_op_in_forward",
         "`" + text + "` takes a transposed tensor other than as the weight of x @ W.t()");
  return C.tensors[static_cast<size_t>(v.tensor)];
}

Val PySide::torch_step(const std::string& op, const std::vector<Val>& args, std::vector<Val> shape,
                       std::string dtype, const std::string& text) {
  // dtype and shape by value: they may name a tensor of C.tensors, which the step's buffer grows.
  note_stat_reads(args);
  return C.torch_step(op, args, std::move(shape), std::move(dtype), text, "torch_op_in_forward");
}

Val PySide::scalar_step(const std::string& op, const Val& tensor, const Val& number,
                        bool scalar_first, const std::string& text) {
  if (C.P.torchscript.empty()) torch_op(op, text);  // kernrl's own problems: kernels only
  if (number.kind == Val::Unknown)
    fail("host_logic", "forward uses " + number.why + " in `" + text + "`");
  // `s / x` is Tensor.__rtruediv__ (a reciprocal, then a product): another operator.
  if (op == "/" && scalar_first)
    fail("torch_op_in_forward", "`" + text +
                                    "`: a number divided by a tensor (Tensor.__rtruediv__), "
                                    "which kernrl does not map");
  // The number as Python holds it: an int (passed as an integer, as PyTorch takes it) or a float
  // (a double: a literal, a scalar of the problem, or a real expression of the sizes).
  Val n = number;
  if (n.kind == Val::Ratio || (n.kind == Val::Int && n.floaty))
    n = real_value(real_operand(n, text), text);
  const bool is_int = n.kind == Val::Int && !n.floaty;
  const bool is_float = n.kind == Val::Float && ((n.f && std::isfinite(*n.f)) || !n.e.empty());
  if (!is_int && !is_float)
    fail("torch_op_in_forward",
         "`" + text + "`: a tensor by " +
             (n.kind == Val::Bool ? std::string("a bool")
                                  : std::string("a value that is not a number kernrl computes")) +
             "; kernrl maps a tensor times or divided by an int or a float");
  const TensorInfo t = tensor_of(tensor, text);
  // A float tensor by a Python number keeps its dtype (a wrapped number does not promote within
  // its category); an integer or bool tensor is promoted by PyTorch's rules: not followed.
  static const std::set<std::string> floating = {"float16", "bfloat16", "float32", "float64"};
  if (!floating.count(t.dtype))
    fail("torch_op_in_forward",
         "`" + text + "`: a " + t.dtype +
             " tensor by a number; kernrl maps floating tensors only (PyTorch promotes integer "
             "and bool tensors by its own rules)");
  return torch_step(op == "*" ? "mul" : "div", {tensor, n}, t.shape, t.dtype, text);
}

Val PySide::matmul(const Val& a, const Val& b, const std::string& text) {
  if (C.P.torchscript.empty()) torch_op("@ (matmul)", text);  // kernrl's own problems
  tensor_of(a, text);
  if (!transposed(b)) tensor_of(b, text);
  return C.product(a, b, text, "torch_op_in_forward");
}

namespace {

// `v` as a list of `n` integers (an integer stands for n of it).
Val int_list(const Val& v, size_t n, const std::string& text) {
  Val l;
  l.kind = Val::List;
  if (v.kind == Val::Int) {
    l.items.assign(n, v);
    return l;
  }
  if (v.kind == Val::List && v.items.size() == n &&
      std::all_of(v.items.begin(), v.items.end(), [](const Val& d) { return d.kind == Val::Int; }))
    return v;
  fail("torch_op_in_forward",
       "`" + text +
           "`: a stride, padding or dilation kernrl cannot compute (a string padding "
           "such as 'same' is not mapped)");
}

// The output length of a convolution along one axis.
Val conv_out(const Val& in, const Val& k, const Val& s, const Val& p, const Val& d,
             const std::string& text) {
  // (in + 2p - d(k - 1) - 1) / s + 1
  Val span = int_binop("*", d, int_binop("-", k, make_int(1), text), text);
  Val num = int_binop("-", int_binop("+", in, int_binop("*", make_int(2), p, text), text),
                      int_binop("+", span, make_int(1), text), text);
  return int_binop("+", int_binop("/", num, s, text), make_int(1), text);
}

}  // namespace

Val PySide::tensor_index(Env& env, const Val& obj, const PyExprP& idx, const std::string& text) {
  std::vector<PyExprP> parts;
  if (idx->kind == PyExpr::Other && idx->text == "dims")
    parts = idx->kids;
  else if (!(idx->kind == PyExpr::Other && idx->text == "slice" && idx->kids.size() != 3))
    parts = {idx};  // one slice, integer or `...` (an opaque index stays empty: refused)
  auto is_slice = [](const PyExprP& p) {
    return p->kind == PyExpr::Other && p->text == "slice" && p->kids.size() == 3;
  };
  auto is_ellipsis = [](const PyExprP& p) {
    return p->kind == PyExpr::Const && p->text == "Ellipsis";
  };
  // Basic indexing: slices, integers (each a select, below) and one `...`; a list, a tensor, a
  // mask, None or a bool as an index (advanced indexing, a new dimension) is an operator kernrl
  // does not map. Python evaluates each part, and an integer part is decided below.
  size_t ellipses = 0;
  bool basic = !parts.empty();
  for (const auto& p : parts) {
    if (is_ellipsis(p)) ++ellipses;
    basic = basic &&
            !(p->kind == PyExpr::Const &&
              (p->text == "None" || p->text == "True" || p->text == "False")) &&
            p->kind != PyExpr::List &&
            !(p->kind == PyExpr::Other && p->text == "slice" && !is_slice(p));
  }
  if (!basic || ellipses > 1 || C.P.torchscript.empty()) torch_op("Tensor.__getitem__", text);
  const TensorInfo t = tensor_of(obj, text);
  if (parts.size() - ellipses > t.shape.size())
    fail("mismatch", "`" + text + "` in forward indexes more dimensions than the tensor has");
  auto cannot = [&](const std::string& why) {
    fail("torch_op_in_forward", "`" + text + "`: " + why);
  };
  Val v = obj;
  size_t d = 0;  // the dimension of `v` the next part indexes
  for (const auto& part : parts) {
    const Val whole = tensor_of(v, text).shape.size() > d ? tensor_of(v, text).shape[d] : Val{};
    if (is_ellipsis(part)) {  // the whole of as many dimensions as the other parts leave
      d += t.shape.size() - (parts.size() - 1);
      continue;
    }
    if (!is_slice(part)) {
      // An integer known at every size set (a constant or an expression of the sizes): a select,
      // the dimension dropped.
      Val x = eval(env, part);
      if (x.kind == Val::Bool || (x.kind == Val::Int && x.floaty) || x.kind == Val::Float ||
          x.kind == Val::Tensor || x.kind == Val::List)
        torch_op("Tensor.__getitem__", text);
      if (x.kind != Val::Int)
        cannot(
            "an index kernrl cannot compute at every size set (an integer of the sizes or a "
            "constant)");
      v = select_view(v, make_int(static_cast<int64_t>(d)), x, text);
      continue;
    }
    const auto& k = part->kids;
    auto value = [&](const PyExprP& b) -> std::optional<Val> {
      if (b->kind == PyExpr::Const && b->text == "None") return std::nullopt;
      Val x = eval(env, b);
      if (x.kind == Val::Bool && x.k) x = make_int(*x.k);
      if (x.kind != Val::Int) cannot("a slice bound kernrl cannot compute");
      return x;
    };
    std::optional<Val> step = value(k[2]);
    if (step && !(step->k && *step->k == 1))
      cannot("a slice with a step (only basic slices map onto narrow)");
    // A bound negative at every size set counts from the dimension's end, as in Python; one
    // negative at some only is refused below.
    auto bound = [&](const PyExprP& b) -> std::optional<Val> {
      std::optional<Val> x = value(b);
      if (!x) return x;
      auto ps = C.per_set(*x);
      if (ps && !ps->empty() &&
          std::all_of(ps->begin(), ps->end(), [](int64_t q) { return q < 0; }))
        x = int_binop("+", whole, *x, text);
      return x;
    };
    std::optional<Val> first = bound(k[0]), last = bound(k[1]);
    if (!first && !last) {  // `:`, the whole dimension
      ++d;
      continue;
    }
    Val start = first ? *first : make_int(0);
    Val len = int_binop("-", last ? *last : whole, start, text);
    auto st = C.per_set(start), ln = C.per_set(len), wh = C.per_set(whole);
    if (!st || !ln || !wh) cannot("slice bounds kernrl cannot compute at every size set");
    // PyTorch clamps a slice to the dimension (and an empty one gives an empty tensor); narrow
    // does not: the bounds must lie within the dimension, in order.
    for (size_t i = 0; i < st->size(); ++i)
      if ((*st)[i] < 0 || (*ln)[i] < 0 || (*st)[i] + (*ln)[i] > (*wh)[i])
        cannot(
            "a slice that is empty, or reaches beyond the dimension or before its start, at "
            "some size set (kernrl maps slices within the dimension)");
    v = view_op(v, "narrow", {make_int(static_cast<int64_t>(d)), start, len}, {}, text);
    ++d;
  }
  return v;
}

Val PySide::select_view(const Val& obj, const Val& dim, const Val& index, const std::string& text) {
  const TensorInfo t = tensor_of(obj, text);
  const int64_t rank = static_cast<int64_t>(t.shape.size());
  auto cannot = [&](const std::string& why) -> Val {
    fail("torch_op_in_forward", "`" + text + "`: " + why);
  };
  const int64_t d = C.dimension(dim, rank, text, "torch_op_in_forward");
  if (rank < 2) cannot("an index of a 1-dimensional tensor (a 0-dimensional result)");
  if (index.kind != Val::Int || index.floaty) cannot("an index kernrl cannot compute");
  const Val& whole = t.shape[static_cast<size_t>(d)];
  auto at = C.per_set(index), n = C.per_set(whole);
  if (!at || !n || at->empty())
    cannot(
        "an index kernrl cannot compute at every size set (an integer of the sizes or a "
        "constant)");
  // As PyTorch: an index in [-n, n), a negative one counted from the end; it must be negative at
  // every size set or at none (else the select is of another element at each).
  const bool negative = std::all_of(at->begin(), at->end(), [](int64_t q) { return q < 0; });
  for (size_t s = 0; s < at->size(); ++s) {
    if ((*at)[s] < -(*n)[s] || (*at)[s] >= (*n)[s])
      fail("mismatch", "`" + text + "` in forward: index " + std::to_string((*at)[s]) +
                           " is out of range for dimension " + std::to_string(d) + " of size " +
                           std::to_string((*n)[s]) +
                           " at a size set (PyTorch raises an "
                           "IndexError)");
    if (((*at)[s] < 0) != negative)
      cannot("an index negative at some size sets only (counted from the end there)");
  }
  Val i = !negative ? index
          : index.k ? int_binop("-", whole, make_int(-*index.k), text)
                    : int_binop("+", whole, index, text);
  std::vector<Val> shape = t.shape;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
  return C.lazy_view("select", obj, {make_int(d), i}, shape, text, "torch_op_in_forward");
}

Val PySide::view_op(const Val& obj, const std::string& m, std::vector<Val> args,
                    const std::vector<std::pair<std::string, Val>>& kwargs,
                    const std::string& text) {
  if (C.P.torchscript.empty()) torch_op("Tensor." + m, text);  // kernrl's own problems
  const TensorInfo t = tensor_of(obj, text);
  const int64_t rank = static_cast<int64_t>(t.shape.size());
  auto kw = [&](const char* k) -> std::optional<Val> {
    for (const auto& [n, v] : kwargs)
      if (n == k) return v;
    return std::nullopt;
  };
  auto cannot = [&](const std::string& why) -> Val {
    fail("torch_op_in_forward", "`" + text + "`: " + why);
  };
  auto dim_of = [&](const Val& v) { return C.dimension(v, rank, text, "torch_op_in_forward"); };
  if (m == "transpose" || m == "swapaxes" || m == "permute")
    return C.reorder_view(m == "permute" ? "permute" : "transpose", obj, args, text,
                          "torch_op_in_forward");
  if (m == "narrow") {
    if (args.size() != 3) cannot("narrow takes a dimension, a start and a length");
    int64_t d = dim_of(args[0]);
    if (args[1].kind != Val::Int || args[2].kind != Val::Int)
      cannot("a start kernrl cannot compute");
    std::vector<Val> shape = t.shape;
    shape[static_cast<size_t>(d)] = args[2];
    return C.lazy_view("narrow", obj, {make_int(d), args[1], args[2]}, shape, text,
                       "torch_op_in_forward");
  }
  if (m == "select") {  // Tensor.select(dim, index): x[:, index] for dim 1
    if (args.size() != 2 || !kwargs.empty()) cannot("select takes a dimension and an index");
    return select_view(obj, args[0], args[1], text);
  }
  if (m == "unfold") {
    // Tensor.unfold(dimension, size, step), by position or keyword: a view of windows.
    static const char* names[] = {"dimension", "size", "step"};
    std::vector<Val> a(3);
    if (args.size() > 3) cannot("unfold takes a dimension, a size and a step");
    for (size_t i = 0; i < args.size(); ++i) a[i] = args[i];
    for (const auto& [k, v] : kwargs) {
      auto at = std::find(std::begin(names), std::end(names), k);
      if (at == std::end(names)) cannot("the keyword argument `" + k + "`");
      const size_t i = static_cast<size_t>(at - std::begin(names));
      if (i < args.size())
        fail("mismatch", "`" + text + "` gives `" + k + "` twice (Python raises a TypeError)");
      a[i] = v;
    }
    for (const Val& x : a)
      if (x.kind != Val::Int || x.floaty)
        cannot(
            "unfold with a dimension, size or step kernrl cannot compute (integers of the "
            "sizes or constants)");
    const int64_t d = dim_of(a[0]);
    std::vector<Val> shape = t.shape;
    // (dim - size) / step + 1 windows (C++ division of a number not negative: the lazy view
    // checks 1 <= size <= dim and step >= 1 at every size set), and the window's size last.
    shape[static_cast<size_t>(d)] = int_binop(
        "+",
        int_binop("/", int_binop("-", t.shape[static_cast<size_t>(d)], a[1], text), a[2], text),
        make_int(1), text);
    shape.push_back(a[1]);
    return C.lazy_view("unfold", obj, {make_int(d), a[1], a[2]}, shape, text,
                       "torch_op_in_forward");
  }
  // split / chunk: the pieces, each a narrow of its own.
  Val dim_v = args.size() > 1 ? args[1] : kw("dim").value_or(make_int(0));
  int64_t d = dim_of(dim_v);
  const Val& whole = t.shape[static_cast<size_t>(d)];
  std::vector<Val> sizes;
  if (m == "split" && !args.empty() && args[0].kind == Val::List) {
    // The sizes must add up to the dimension at every size set (else PyTorch raises).
    sizes = args[0].items;
    Val sum = make_int(0);
    for (const Val& x : sizes) {
      if (x.kind != Val::Int) cannot("a piece size kernrl cannot compute");
      sum = int_binop("+", sum, x, text);
    }
    auto have = C.per_set(sum), want = C.per_set(whole);
    if (!have || !want || *have != *want)
      cannot("piece sizes that do not add up to the dimension at every size set");
  } else if (!args.empty() && args[0].kind == Val::Int) {
    // split(size): whole / size pieces of size; chunk(n): n pieces of whole / n. The count must be
    // the same at every size set and the pieces equal.
    Val n = m == "split" ? int_binop("/", whole, args[0], text) : args[0];
    Val piece = m == "split" ? args[0] : int_binop("/", whole, args[0], text);
    auto count = C.one_value(n);
    auto wholes = C.per_set(whole), pieces = C.per_set(piece);
    if (!count || !wholes || !pieces || *count < 1 || *count > 64)
      cannot("a number of pieces that is not the same at every size set");
    for (size_t i = 0; i < wholes->size(); ++i)
      if ((*pieces)[i] * *count != (*wholes)[i]) cannot("pieces of unequal size at some size set");
    sizes.assign(static_cast<size_t>(*count), piece);
  } else {
    cannot("a split kernrl cannot compute");
  }
  Val list;
  list.kind = Val::List;
  list.seq = 't';
  Val start = make_int(0);
  for (const Val& size : sizes) {
    if (size.kind != Val::Int) cannot("a piece size kernrl cannot compute");
    std::vector<Val> shape = t.shape;
    shape[static_cast<size_t>(d)] = size;
    list.items.push_back(
        C.lazy_view("narrow", obj, {make_int(d), start, size}, shape, text, "torch_op_in_forward"));
    start = int_binop("+", start, size, text);
  }
  return list;
}

std::optional<Val> PySide::torch_call(Env& env, const std::string& name, const PyExprP& e) {
  // View operators as functions: torch.transpose(x, 0, 1) is x.transpose(0, 1).
  static const std::map<std::string, std::string> views = {
      {"torch.transpose", "transpose"}, {"torch.swapaxes", "swapaxes"},
      {"torch.permute", "permute"},     {"torch.narrow", "narrow"},
      {"torch.split", "split"},         {"torch.chunk", "chunk"},
      {"torch.select", "select"}};
  if (auto v = views.find(name); v != views.end() && e->kids.size() >= 2) {
    std::vector<Val> args;
    for (size_t i = 2; i < e->kids.size(); ++i) args.push_back(eval(env, e->kids[i]));
    std::vector<std::pair<std::string, Val>> kwargs;
    for (const auto& [k, x] : e->kwargs) kwargs.push_back({k, eval(env, x)});
    return view_op(eval(env, e->kids[1]), v->second, args, kwargs, py_text(e));
  }
  static const std::map<std::string, std::string> aliases = {
      {"torch.mm", "mm"},
      {"torch.matmul", "matmul"},
      {"torch.bmm", "bmm"},
      {"torch.addmm", "addmm"},
      {"torch.nn.functional.linear", "linear"},
      {"torch.nn.functional.conv1d", "conv1d"},
      {"torch.nn.functional.conv2d", "conv2d"},
      {"torch.nn.functional.conv3d", "conv3d"},
      {"torch.conv1d", "conv1d"},
      {"torch.conv2d", "conv2d"},
      {"torch.conv3d", "conv3d"},
      {"torch.nn.functional.conv_transpose1d", "conv_transpose1d"},
      {"torch.nn.functional.conv_transpose2d", "conv_transpose2d"},
      {"torch.nn.functional.conv_transpose3d", "conv_transpose3d"},
      {"torch.conv_transpose1d", "conv_transpose1d"},
      {"torch.conv_transpose2d", "conv_transpose2d"},
      {"torch.conv_transpose3d", "conv_transpose3d"},
      {"torch.relu", "relu"},
      {"torch.nn.functional.relu", "relu"},
      {"torch.sigmoid", "sigmoid"},
      {"torch.tanh", "tanh"},
      {"torch.nn.functional.gelu", "gelu"},
      {"torch.cat", "cat"},
      {"torch.concat", "cat"},
      {"torch.concatenate", "cat"},
      {"torch.stack", "stack"},
  };
  auto it = aliases.find(name);
  if (it == aliases.end()) return std::nullopt;
  if (C.P.torchscript.empty()) torch_op(name, py_text(e));  // kernrl's own problems: kernels only
  const std::string& op = it->second;
  std::string text = py_text(e);
  std::vector<Val> args;
  for (size_t i = 1; i < e->kids.size(); ++i) args.push_back(eval(env, e->kids[i]));
  auto kw = [&](const std::string& k) -> std::optional<Val> {
    for (const auto& [n, v] : e->kwargs)
      if (n == k) return eval(env, v);
    return std::nullopt;
  };
  if (op == "mm" || op == "matmul" || op == "bmm") {
    if (args.size() != 2 || !e->kwargs.empty())
      fail("torch_op_in_forward", "`" + text + "`: kernrl maps it with two tensors only");
    if (op == "bmm" && transposed(args[1]))
      fail("torch_op_in_forward", "`" + text + "`: a transposed batch kernrl does not map");
    return matmul(args[0], args[1], text);
  }
  if (op == "addmm") {
    if (args.size() != 3 || !e->kwargs.empty() || !transposed(args[2]))
      fail("torch_op_in_forward", "`" + text + "`: kernrl maps torch.addmm(bias, x, W.t()) only");
    tensor_of(args[1], text);
    tensor_of(args[0], text);
    Val w = args[2];
    w.elem.clear();
    return C.linear(args[1], w, args[0], text, "torch_op_in_forward");
  }
  if (op == "linear") {
    if (args.size() < 2) fail("torch_op_in_forward", "`" + text + "`: linear without a weight");
    Val bias = args.size() > 2 ? args[2] : kw("bias").value_or(Val{});
    for (const Val& t : {args[0], args[1]}) tensor_of(t, text);
    if (bias.kind != Val::Void) tensor_of(bias, text);
    return C.linear(args[0], args[1], bias, text, "torch_op_in_forward");
  }
  if (op == "cat" || op == "stack") {
    // torch.cat([a, b, ...], dim): tensors of one rank and dtype whose other dimensions are equal
    // at every size set (else PyTorch raises); the result is a buffer of its own.
    Val list = !args.empty() ? args[0] : kw("tensors").value_or(Val{});
    Val dim_v = args.size() > 1 ? args[1] : kw("dim").value_or(kw("axis").value_or(make_int(0)));
    for (const auto& [k, v] : e->kwargs)
      if (k != "tensors" && k != "dim" && k != "axis")
        fail("torch_op_in_forward", "`" + text + "`: the keyword argument `" + k + "`");
    if (list.kind != Val::List || list.items.empty())
      fail("torch_op_in_forward",
           "`" + text + "`: kernrl maps torch." + op + " of a list of tensors");
    if (op == "stack") {
      // torch.stack(ts, dim) is torch.cat([t.unsqueeze(dim) for t in ts], dim) (PyTorch's
      // definition), of tensors of one shape at every size set (else PyTorch raises).
      const TensorInfo first = tensor_of(list.items[0], text);
      const int64_t rank = static_cast<int64_t>(first.shape.size()) + 1;
      if (dim_v.kind != Val::Int || !dim_v.k || *dim_v.k < -rank || *dim_v.k >= rank)
        fail("torch_op_in_forward", "`" + text + "`: a dimension kernrl cannot compute");
      const size_t d = static_cast<size_t>(*dim_v.k < 0 ? *dim_v.k + rank : *dim_v.k);
      for (Val& item : list.items) {
        const TensorInfo t = tensor_of(item, text);
        bool same = t.shape.size() == first.shape.size() && t.dtype == first.dtype;
        for (size_t q = 0; same && q < t.shape.size(); ++q) {
          auto a = C.per_set(t.shape[q]), b = C.per_set(first.shape[q]);
          same = a && b && *a == *b;
        }
        if (!same)
          fail("torch_op_in_forward",
               "`" + text + "`: tensors whose shapes or dtypes differ at some size set");
        std::vector<Val> shape = t.shape;
        shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), make_int(1));
        item = C.shaped(item, shape, false, text, "torch_op_in_forward");
      }
      dim_v = make_int(static_cast<int64_t>(d));
    }
    const TensorInfo first = tensor_of(list.items[0], text);
    const int64_t rank = static_cast<int64_t>(first.shape.size());
    if (dim_v.kind != Val::Int || !dim_v.k || *dim_v.k < -rank || *dim_v.k >= rank)
      fail("torch_op_in_forward", "`" + text + "`: a dimension kernrl cannot compute");
    const size_t d = static_cast<size_t>(*dim_v.k < 0 ? *dim_v.k + rank : *dim_v.k);
    std::vector<Val> shape = first.shape;
    for (size_t i = 1; i < list.items.size(); ++i) {
      const TensorInfo t = tensor_of(list.items[i], text);
      if (t.shape.size() != first.shape.size() || t.dtype != first.dtype)
        fail("torch_op_in_forward", "`" + text + "`: tensors of different ranks or dtypes");
      for (size_t q = 0; q < t.shape.size(); ++q) {
        if (q == d) continue;
        auto a = C.per_set(t.shape[q]), b = C.per_set(first.shape[q]);
        if (!a || !b || *a != *b)
          fail("torch_op_in_forward",
               "`" + text + "`: tensors whose other dimensions differ at some size set");
      }
      shape[d] = int_binop("+", shape[d], t.shape[d], text);
    }
    list.seq = 'l';
    return torch_step("cat", {list, make_int(static_cast<int64_t>(d))}, shape, first.dtype, text);
  }
  if (starts_with(op, "conv_transpose")) {
    // F.conv_transpose<N>d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
    // groups=1, dilation=1), by position or keyword.
    size_t nd = static_cast<size_t>(op[14] - '0');  // conv_transpose<N>d
    static const char* names[] = {"input",   "weight",         "bias",   "stride",
                                  "padding", "output_padding", "groups", "dilation"};
    for (const auto& [k, v] : e->kwargs)
      if (std::find(std::begin(names), std::end(names), k) == std::end(names))
        fail("torch_op_in_forward", "`" + text + "`: the keyword argument `" + k + "`");
    if (args.size() > 8)
      fail("torch_op_in_forward", "`" + text + "`: more arguments than " + op + " takes");
    std::vector<Val> a(8);
    for (size_t i = 0; i < 8; ++i) {
      auto v = kw(names[i]);
      if (i < args.size() && v)
        fail("mismatch",
             "`" + text + "` gives `" + names[i] + "` twice (Python raises a TypeError)");
      if (i < args.size())
        a[i] = args[i];
      else if (v)
        a[i] = *v;
    }
    if (a[3].kind == Val::Void) a[3] = make_int(1);
    if (a[4].kind == Val::Void) a[4] = make_int(0);
    if (a[5].kind == Val::Void) a[5] = make_int(0);
    if (a[6].kind == Val::Void) a[6] = make_int(1);
    if (a[7].kind == Val::Void) a[7] = make_int(1);
    return conv_transpose_step(nd, a, text);
  }
  if (starts_with(op, "conv")) {
    size_t nd = static_cast<size_t>(op[4] - '0');  // conv<N>d
    static const char* names[] = {"input",   "weight",   "bias",  "stride",
                                  "padding", "dilation", "groups"};
    std::vector<Val> a(7);
    for (size_t i = 0; i < 7; ++i) {
      if (i < args.size())
        a[i] = args[i];
      else if (auto v = kw(names[i]))
        a[i] = *v;
    }
    if (a[3].kind == Val::Void) a[3] = make_int(1);
    if (a[4].kind == Val::Void) a[4] = make_int(0);
    if (a[5].kind == Val::Void) a[5] = make_int(1);
    if (a[6].kind == Val::Void) a[6] = make_int(1);
    return conv_step(op, nd, a, text);
  }
  // Elementwise: the shape of the input.
  if (args.size() != 1 || !e->kwargs.empty())
    fail("torch_op_in_forward", "`" + text + "`: kernrl maps it on one tensor only");
  const TensorInfo& t = tensor_of(args[0], text);
  return torch_step(op, {args[0]}, t.shape, t.dtype, text);
}

Val PySide::conv_step(const std::string& op, size_t nd, std::vector<Val> a,
                      const std::string& text) {
  const TensorInfo& tx = tensor_of(a[0], text);
  const TensorInfo& tw = tensor_of(a[1], text);
  if (a[2].kind != Val::Void) tensor_of(a[2], text);
  if (tx.shape.size() != nd + 2 || tw.shape.size() != nd + 2)
    fail("torch_op_in_forward", "`" + text + "`: tensors of these shapes kernrl does not map");
  a[3] = int_list(a[3], nd, text);
  a[4] = int_list(a[4], nd, text);
  a[5] = int_list(a[5], nd, text);
  if (a[6].kind != Val::Int)
    fail("torch_op_in_forward", "`" + text + "`: groups kernrl cannot compute");
  std::vector<Val> shape = {tx.shape[0], tw.shape[0]};
  for (size_t i = 0; i < nd; ++i)
    shape.push_back(conv_out(tx.shape[2 + i], tw.shape[2 + i], a[3].items[i], a[4].items[i],
                             a[5].items[i], text));
  return torch_step(op, a, shape, tx.dtype, text);
}

Val PySide::conv_transpose_step(size_t nd, std::vector<Val> a, const std::string& text) {
  // aten::conv_transpose<N>d(input, weight, bias, stride, padding, output_padding, groups,
  // dilation); the weight is [in_channels, out_channels / groups, k...].
  const TensorInfo& tx = tensor_of(a[0], text);
  const TensorInfo& tw = tensor_of(a[1], text);
  if (a[2].kind != Val::Void) tensor_of(a[2], text);
  if (tx.shape.size() != nd + 2 || tw.shape.size() != nd + 2)
    fail("torch_op_in_forward", "`" + text + "`: tensors of these shapes kernrl does not map");
  for (size_t i : {3, 4, 5, 7}) a[i] = int_list(a[i], nd, text);
  if (a[6].kind != Val::Int)
    fail("torch_op_in_forward", "`" + text + "`: groups kernrl cannot compute");
  std::vector<Val> shape = {tx.shape[0], int_binop("*", tw.shape[1], a[6], text)};
  for (size_t i = 0; i < nd; ++i) {
    // (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1
    Val n = int_binop("*", int_binop("-", tx.shape[2 + i], make_int(1), text), a[3].items[i], text);
    n = int_binop("-", n, int_binop("*", make_int(2), a[4].items[i], text), text);
    n = int_binop(
        "+", n,
        int_binop("*", a[7].items[i], int_binop("-", tw.shape[2 + i], make_int(1), text), text),
        text);
    n = int_binop("+", n, int_binop("+", a[5].items[i], make_int(1), text), text);
    shape.push_back(n);
  }
  return torch_step("conv_transpose" + std::to_string(nd) + "d", a, shape, tx.dtype, text);
}

Val PySide::layer_call(Env& env, const Val& called, const PyExprP& e) {
  return layer_call_on(env, called, e, nullptr, py_text(e));
}

Val PySide::layer_call_on(Env& env, const Val& called, const PyExprP& e, const Val* input,
                          const std::string& text) {
  // A layer of a container (`self.net[0]`): its class from the reference's modules.
  Val layer = called;
  if (layer.elem == "Module")
    if (std::string cls = module_class(layer); !cls.empty()) layer.elem = cls;
  if (std::string holder = held_by_file_instance(layer.name); !holder.empty())
    fail("host_logic", "forward calls `self." + layer.name + "` (`" + text +
                           "`), a layer of `self." + holder +
                           "` (an instance of a class of the file), outside that class's forward; "
                           "kernrl follows such layers in its own forward only");
  // A submodule's own layer: the class problem.yaml's modules records at its path must be the
  // one its __init__ builds (module_classes refuses a mismatch).
  if (!self_path_.empty()) module_classes(layer);
  auto cfg = layer_config(layer);
  // A Linear layer built in a loop of __init__ (a child of an nn.Sequential or nn.ModuleList):
  // its only setting, the bias, is whether the suite has the parameter.
  if (!cfg && layer.elem == "Linear" && !C.P.modules.empty()) {
    cfg.emplace();
    (*cfg)["bias"] = make_bool(C.P.find_tensor(layer.name + ".bias") != nullptr);
  }
  // An instance of a module class of the reference's file that the generation does not build
  // with a constructor call kernrl reads (file_class_ctor): its forward is not followed.
  if (starts_with(layer.elem, "kernelbench_problem:"))
    fail("host_logic", "forward calls `self." + layer.name + "` (`" + text + "`), an instance of " +
                           layer.elem.substr(20) +
                           ", which kernrl follows only where the generation defines that class "
                           "and its __init__ builds the instance in place with a constructor call "
                           "(not in a loop or through a name)");
  // nn.Identity: its forward returns its one argument, the same object (a view stays that view);
  // the constructor's arguments are ignored by torch and not read here.
  if (layer.elem == "Identity") {
    if (input) return *input;  // a child of an nn.Sequential forward calls
    for (const auto& kw : e->kwargs)
      if (kw.first == "*")
        fail("host_logic", "`" + text + "`: nn.Identity called with unpacked arguments");
    const bool keyword = e->kwargs.size() == 1 && e->kwargs[0].first == "input";
    if (e->kids.size() + (keyword ? 1 : 0) != 2 || e->kwargs.size() != (keyword ? 1u : 0u))
      fail("mismatch", "`" + text + "`: nn.Identity's forward takes one argument, `input` " +
                           "(Python raises a TypeError)");
    return eval(env, keyword ? e->kwargs[0].second : e->kids[1]);
  }
  if (!C.P.torchscript.empty() && (layer.elem == "LSTM" || layer.elem == "GRU")) {
    if (input)
      fail("torch_op_in_forward", "forward calls `self." + layer.name + "` (nn." + layer.elem +
                                      "), a layer of an nn.Sequential it calls (`" + text +
                                      "`); kernrl follows an nn." + layer.elem +
                                      " called by forward itself");
    return rnn_call(env, layer, e);
  }
  // An nn.Sequential called (contract v1, an addition): its children called in turn, each as a
  // layer forward calls with the tensor the one before gave.
  if (!C.P.torchscript.empty() && layer.elem == "Sequential" && !C.P.modules.empty()) {
    if (module_classes(layer).front() != "Sequential")
      fail("torch_op_in_forward",
           "forward calls `self." + layer.name + "` (`" + text + "`), a subclass of nn.Sequential");
    if (!input && (e->kids.size() != 2 || !e->kwargs.empty()))
      fail("torch_op_in_forward", "`" + text + "`: a module called with one tensor only");
    Val x = input ? *input : eval(env, e->kids[1]);
    for (const Val& child : layer_children(layer, text)) x = layer_call_on(env, child, e, &x, text);
    return x;
  }
  // nn.Dropout with p 0 returns its input itself (torch's dropout does, in training mode too).
  if (!C.P.torchscript.empty() && layer.elem == "Dropout" && cfg && cfg->count("p")) {
    const Val& pv = cfg->at("p");
    bool zero = (pv.kind == Val::Float && pv.f && *pv.f == 0.0) ||
                (pv.kind == Val::Int && pv.k && *pv.k == 0);
    if (zero) {
      if (!input && (e->kids.size() != 2 || !e->kwargs.empty()))
        fail("torch_op_in_forward", "`" + text + "`: a module called with one tensor only");
      Val x = input ? *input : eval(env, e->kids[1]);
      tensor_of(x, text);
      return x;
    }
  }
  if (C.P.torchscript.empty() || !cfg ||
      (layer.elem != "Linear" && !starts_with(layer.elem, "Conv")))
    fail("torch_op_in_forward",
         "PyTorch module `self." + layer.name + "` (nn." + layer.elem + ") left in forward (`" +
             text + "`); " +
             (C.P.torchscript.empty()
                  ? "kernrl grades CUDA kernels only, so forward may only call the load_inline "
                    "extension"
                  : "kernrl maps nn.Linear, nn.Conv1d/2d/3d and nn.ConvTranspose1d/2d/3d "
                    "modules only"));
  if (!input && (e->kids.size() != 2 || !e->kwargs.empty()))
    fail("torch_op_in_forward", "`" + text + "`: a module called with one tensor only");
  // Settings kernrl's step does not carry: only their defaults are mapped.
  if (PyExprP ctor = layer_ctor(layer.name))
    for (const auto& [k, v] : ctor->kwargs)
      if ((k == "padding_mode" && !(v->kind == PyExpr::Str && v->text == "zeros")) ||
          k == "device" || k == "dtype")
        fail("torch_op_in_forward", "`self." + layer.name + "` is built with `" + k +
                                        "`, which kernrl does not map (`" + text + "`)");
  Val x = input ? *input : eval(env, e->kids[1]);
  Val w = problem_param(layer.name + ".weight", "self." + layer.name + ".weight");
  Val bias;
  auto b = cfg->find("bias");
  if (b == cfg->end() || b->second.kind != Val::Bool || !b->second.k || *b->second.k)
    bias = problem_param(layer.name + ".bias", "self." + layer.name + ".bias");
  if (layer.elem == "Linear") {
    tensor_of(x, text);
    return C.linear(x, w, bias, text, "torch_op_in_forward");
  }
  if (starts_with(layer.elem, "ConvTranspose")) {
    size_t nd = static_cast<size_t>(layer.elem[13] - '0');  // ConvTranspose<N>d
    return conv_transpose_step(nd,
                               {x, w, bias, (*cfg)["stride"], (*cfg)["padding"],
                                (*cfg)["output_padding"], (*cfg)["groups"], (*cfg)["dilation"]},
                               text);
  }
  size_t nd = static_cast<size_t>(layer.elem[4] - '0');  // Conv<N>d
  std::string op = "conv" + std::to_string(nd) + "d";
  return conv_step(
      op, nd,
      {x, w, bias, (*cfg)["stride"], (*cfg)["padding"], (*cfg)["dilation"], (*cfg)["groups"]},
      text);
}

}  // namespace kernrl::kbimport::py
