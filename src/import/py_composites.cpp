// The layers torch.nn's composite modules build inside themselves (nn.TransformerEncoder,
// nn.TransformerEncoderLayer, nn.MultiheadAttention), and their settings, from the constructor
// call that builds the composite: each inner layer as a constructor call of its own, with the
// arguments torch passes it, so that PySide::layer_config reads its settings as it reads those of
// a layer the file builds itself.
//
// The constructors, as torch 1.13 and 2.x both build them (torch/nn/modules/transformer.py,
// activation.py); a setting where they differ (TransformerEncoderLayer's `bias`, 2.1 on) is
// refused:
//   TransformerEncoder(encoder_layer, num_layers, norm=None, enable_nested_tensor=True, ...):
//     layers = ModuleList(deepcopy(encoder_layer) for each of num_layers); norm = norm
//   TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
//                           layer_norm_eps=1e-5, batch_first=False, norm_first=False):
//     self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first)
//     linear1 = Linear(d_model, dim_feedforward); linear2 = Linear(dim_feedforward, d_model)
//     dropout, dropout1, dropout2 = Dropout(dropout)
//     norm1, norm2 = LayerNorm(d_model, eps=layer_norm_eps)
//     norm_first = norm_first; activation = F.relu / F.gelu for "relu" / "gelu", else as given
//   MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
//                      add_zero_attn=False, kdim=None, vdim=None, batch_first=False):
//     out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias) (a Linear);
//     kdim, vdim = embed_dim where None; in_proj_weight where kdim == vdim == embed_dim, else
//     None; in_proj_bias where bias, else None; head_dim = embed_dim // num_heads
#include <algorithm>
#include <cctype>

#include "import/py_side.h"

namespace kernrl::kbimport::py {

namespace {

const char* const kNonDynamic = "torch.nn.modules.linear:NonDynamicallyQuantizableLinear";

// Each composite's constructor parameters kernrl binds, in order (a keyword outside them is
// refused where the layers inside depend on the call).
const std::vector<std::string>& composite_params(const std::string& cls) {
  static const std::map<std::string, std::vector<std::string>> params = {
      {"TransformerEncoder", {"encoder_layer", "num_layers", "norm", "enable_nested_tensor"}},
      {"TransformerEncoderLayer",
       {"d_model", "nhead", "dim_feedforward", "dropout", "activation", "layer_norm_eps",
        "batch_first", "norm_first"}},
      {"MultiheadAttention",
       {"embed_dim", "num_heads", "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim",
        "batch_first"}},
  };
  static const std::vector<std::string> none;
  auto it = params.find(cls);
  return it == params.end() ? none : it->second;
}

PyExprP literal(PyExpr::Kind kind, const std::string& text, int line) {
  auto e = std::make_shared<PyExpr>();
  e->kind = kind;
  e->text = text;
  e->line = line;
  return e;
}

// A constructor call of torch.nn's `cls` with these arguments: what kernrl reads an inner layer's
// settings from.
PyExprP ctor_call(const std::string& cls, const std::vector<PyExprP>& args,
                  const std::vector<std::pair<std::string, PyExprP>>& kwargs, int line) {
  auto c = literal(PyExpr::Call, "", line);
  c->kids.push_back(literal(PyExpr::Name, cls, line));
  for (const auto& a : args) c->kids.push_back(a);
  c->kwargs = kwargs;
  return c;
}

bool is_none(const PyExprP& e) {
  return e && e->kind == PyExpr::Const && e->text == "None";
}

}  // namespace

std::string PySide::torch_class_of(const PyExprP& call) const {
  if (!call || call->kind != PyExpr::Call || call->kids.empty()) return "";
  // The callee's first name must be the import's: not a class, function or constant of the file.
  PyExprP head = call->kids[0];
  while (head->kind == PyExpr::Attr) head = head->kids[0];
  if (head->kind != PyExpr::Name || module_defs_.count(head->text) ||
      module_vars_.count(head->text) || module_rebound_.count(head->text))
    return "";
  for (const auto& l : lines_)
    if (l.indent == 0 && l.toks.size() > 1 && tok_is(l.toks[0], "class") &&
        l.toks[1].text == head->text)
      return "";
  const std::string named = resolve(py_dotted(call->kids[0]));
  for (const char* prefix : {"torch.nn.", "nn."})
    if (starts_with(named, prefix)) {
      std::string cls = named.substr(std::string(prefix).size());
      if (!cls.empty() && cls.find('.') == std::string::npos) return cls;
    }
  return "";
}

std::optional<std::map<std::string, PyExprP>> PySide::composite_args(const std::string& cls,
                                                                     const PyExprP& call,
                                                                     std::string* why) const {
  const auto& params = composite_params(cls);
  const std::string what = "`" + py_text(call) + "`";
  std::map<std::string, PyExprP> bound;
  if (call->kids.size() > params.size() + 1) {
    *why = what + " passes more arguments by position than kernrl binds";
    return std::nullopt;
  }
  for (size_t i = 1; i < call->kids.size(); ++i) bound[params[i - 1]] = call->kids[i];
  for (const auto& [k, v] : call->kwargs) {
    if (k == "*") {
      *why = what + " unpacks arguments (`*`, `**`)";
      return std::nullopt;
    }
    if (std::find(params.begin(), params.end(), k) == params.end()) {
      *why = what + " passes `" + k + "`, which kernrl does not model" +
             (k == "bias" && cls == "TransformerEncoderLayer"
                  ? " (torch 2.1 added it; torch 1.13, which builds the suite's references, "
                    "has no such argument)"
                  : "");
      return std::nullopt;
    }
    if (bound.count(k)) {
      *why = what + " passes `" + k + "` twice";
      return std::nullopt;
    }
    bound[k] = v;
  }
  return bound;
}

std::string PySide::composite_untouched(const std::string& top) const {
  // Inside the composite, settings are those its constructor gave only where nothing changes them
  // after: __init__ must not read the attribute again (`self.t.layers[0].norm_first = True`,
  // `t = self.t`), hand `self` on, or call a method of its own (which could do either).
  const std::string attr = "`self." + scoped(top) + "`";
  if (init_setattr_) return self_name() + "'s __init__ calls setattr";
  if (init_attrs_changed_.count(top) || init_attrs_mutated_.count(top))
    return self_name() + "'s __init__ sets " + attr + " more than once or changes it in place";
  if (std::string why = init_change_why(top); !why.empty()) return why;
  auto init = method_headers_.find("__init__");
  if (init == method_headers_.end()) return "";
  const Block b = body_of(lines_, init->second);
  bool built = false;
  for (size_t i = b.begin; i < b.end; ++i) {
    const auto& lt = lines_[i].toks;
    const std::string at = " (line " + std::to_string(lines_[i].line) + ")";
    for (size_t k = 0; k < lt.size(); ++k) {
      if (!tok_is(lt[k], "self") || lt[k].kind != PyTok::Name) continue;
      const bool member =
          k + 2 < lt.size() && tok_is(lt[k + 1], ".") && lt[k + 2].kind == PyTok::Name;
      if (!member) {
        // `super(ModelNew, self).__init__()`
        const bool in_super = k >= 4 && tok_is(lt[k - 1], ",") && tok_is(lt[k - 3], "(") &&
                              tok_is(lt[k - 4], "super") && k + 1 < lt.size() &&
                              tok_is(lt[k + 1], ")");
        if (!in_super)
          return self_name() + "'s __init__ passes `self` on" + at +
                 ", which could change the settings of the layers inside " + attr;
        continue;
      }
      const std::string& name = lt[k + 2].text;
      if (name == top) {
        if (k == 0 && !built && assign_at(lt) == 3) {
          built = true;
          continue;
        }
        return self_name() + "'s __init__ reads " + attr + " again after building it" + at +
               ", which could change the settings of the layers inside it";
      }
      if (k + 3 < lt.size() && tok_is(lt[k + 3], "(") && name != "register_buffer" &&
          name != "register_parameter")
        return self_name() + "'s __init__ calls `self." + name + "(...)`" + at +
               ", which could change the settings of the layers inside " + attr;
    }
  }
  return "";
}

std::optional<PySide::Inner> PySide::built_inside(const std::string& path, int depth) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || depth > 32) return std::nullopt;
  const std::string parent = path.substr(0, dot), leaf = path.substr(dot + 1);
  // The parent: a composite the file builds by a constructor call kernrl reads, or one built
  // inside another.
  Inner p;
  if (PyExprP c = layer_ctor(parent); c && c->kind == PyExpr::Call) {
    p.cls = torch_class_of(c);
    if (composite_params(p.cls).empty()) return std::nullopt;
    p.call = c;
    auto rel = relative(parent);
    if (!rel) return std::nullopt;
    p.why = composite_untouched(rel->substr(0, rel->find('.')));
  } else {
    auto in = built_inside(parent, depth + 1);
    if (!in) return std::nullopt;
    p = *in;
    // A layer inside that is no composite itself (`...dropout.p`): nothing is built inside it.
    if (p.why.empty() && p.cls != "ModuleList" && composite_params(p.cls).empty())
      return std::nullopt;
  }
  Inner r;
  r.owner = "nn." + (p.cls == "ModuleList" ? std::string("TransformerEncoder") : p.cls) +
            " `self." + (p.cls == "ModuleList" ? parent.substr(0, parent.rfind('.')) : parent) +
            "`";
  if (!p.why.empty()) {
    r.why = p.why;
    r.owner = p.owner.empty() ? r.owner : p.owner;
    return r;
  }
  const int line = p.call ? p.call->line : 0;
  auto fail_with = [&](const std::string& why) {
    r.why = why;
    return r;
  };
  // The ModuleList of a TransformerEncoder: its k-th layer a copy of the encoder layer.
  if (p.cls == "ModuleList") {
    if (leaf.empty() || !std::all_of(leaf.begin(), leaf.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        }))
      return std::nullopt;
    const int64_t k = leaf.size() < 9 ? std::stoll(leaf) : INT64_MAX;
    auto n = C.per_set(p.count);
    if (p.count.kind != Val::Int || !n || n->empty())
      return fail_with("its number of layers (`num_layers`) is not an integer kernrl knows");
    if (std::all_of(n->begin(), n->end(), [&](int64_t v) { return v <= k; }))
      return std::nullopt;  // no such layer
    if (!std::all_of(n->begin(), n->end(), [&](int64_t v) { return v > k; }))
      return fail_with("its number of layers (`num_layers`) is not the same at every size set");
    r.cls = "TransformerEncoderLayer";
    r.call = p.clones;
    return r;
  }
  std::string why;
  auto bound = composite_args(p.cls, p.call, &why);
  if (!bound) return fail_with(why);
  auto arg = [&](const char* name, PyExpr::Kind kind, const char* def) -> PyExprP {
    auto it = bound->find(name);
    if (it != bound->end()) return it->second;
    return def ? literal(kind, def, line) : nullptr;
  };
  if (p.cls == "TransformerEncoder") {
    if (leaf == "layers") {
      PyExprP layer = arg("encoder_layer", PyExpr::Other, nullptr);
      PyExprP count = arg("num_layers", PyExpr::Other, nullptr);
      if (!layer || !count) return fail_with("`" + py_text(p.call) + "` misses an argument");
      if (torch_class_of(layer) != "TransformerEncoderLayer")
        return fail_with("its encoder layer `" + py_text(layer) +
                         "` is not an nn.TransformerEncoderLayer(...) constructor call written "
                         "in place, which kernrl reads");
      r.cls = "ModuleList";
      r.clones = layer;
      r.count = init_expr(count);
      return r;
    }
    if (leaf == "norm") {
      PyExprP norm = arg("norm", PyExpr::Const, "None");
      if (is_none(norm)) return std::nullopt;  // no such layer: the attribute is None
      r.cls = torch_class_of(norm);
      if (r.cls.empty())
        return fail_with("its norm `" + py_text(norm) +
                         "` is not a torch.nn constructor call written in place");
      r.call = norm;
      return r;
    }
    return std::nullopt;
  }
  if (p.cls == "TransformerEncoderLayer") {
    PyExprP d_model = arg("d_model", PyExpr::Other, nullptr);
    PyExprP nhead = arg("nhead", PyExpr::Other, nullptr);
    if (!d_model || !nhead) return fail_with("`" + py_text(p.call) + "` misses an argument");
    PyExprP ff = arg("dim_feedforward", PyExpr::Num, "2048");
    PyExprP dropout = arg("dropout", PyExpr::Num, "0.1");
    PyExprP eps = arg("layer_norm_eps", PyExpr::Num, "1e-05");
    PyExprP batch_first = arg("batch_first", PyExpr::Const, "False");
    if (leaf == "self_attn") {
      r.cls = "MultiheadAttention";
      r.call = ctor_call(r.cls, {d_model, nhead},
                         {{"dropout", dropout}, {"batch_first", batch_first}}, line);
    } else if (leaf == "linear1" || leaf == "linear2") {
      r.cls = "Linear";
      r.call = ctor_call(
          r.cls,
          leaf == "linear1" ? std::vector<PyExprP>{d_model, ff} : std::vector<PyExprP>{ff, d_model},
          {}, line);
    } else if (leaf == "dropout" || leaf == "dropout1" || leaf == "dropout2") {
      r.cls = "Dropout";
      r.call = ctor_call(r.cls, {dropout}, {}, line);
    } else if (leaf == "norm1" || leaf == "norm2") {
      r.cls = "LayerNorm";
      r.call = ctor_call(r.cls, {d_model}, {{"eps", eps}}, line);
    } else if (leaf == "activation") {
      // A module given as the activation (`activation=nn.GELU()`) is registered as one.
      PyExprP act = arg("activation", PyExpr::Other, nullptr);
      r.cls = torch_class_of(act);
      if (r.cls.empty()) return std::nullopt;
      r.call = act;
    } else {
      return std::nullopt;
    }
    return r;
  }
  if (p.cls == "MultiheadAttention" && leaf == "out_proj") {
    PyExprP embed = arg("embed_dim", PyExpr::Other, nullptr);
    if (!embed) return fail_with("`" + py_text(p.call) + "` misses an argument");
    r.cls = "Linear";
    r.non_dynamic = true;
    r.call = ctor_call(r.cls, {embed, embed}, {{"bias", arg("bias", PyExpr::Const, "True")}}, line);
    return r;
  }
  return std::nullopt;
}

bool PySide::inner_class_matches(const Inner& in, const std::string& elem) {
  if (elem.empty() || elem == "Module" || elem == in.cls) return true;
  return in.non_dynamic && (elem == kNonDynamic || elem == "NonDynamicallyQuantizableLinear");
}

void PySide::composite_settings(const std::string& cls, const PyExprP& call,
                                const std::string& path, std::map<std::string, Val>& cfg) {
  std::string why;
  std::optional<std::map<std::string, PyExprP>> bound;
  if (cls != "MultiheadAttention") {
    bound = composite_args(cls, call, &why);
    auto rel = relative(path);
    if (bound && rel) why = composite_untouched(rel->substr(0, rel->find('.')));
    if (!why.empty()) bound.reset();
  }
  // Constructor arguments that are no attributes of the module: kept under names no attribute
  // has, for the layers inside (PySide::attr reads `#bias` for in_proj_bias).
  auto hide = [&](const char* name) {
    auto it = cfg.find(name);
    if (it == cfg.end()) return;
    cfg[std::string("#") + name] = it->second;
    cfg.erase(it);
  };
  if (cls == "MultiheadAttention") {
    hide("bias");
    hide("add_bias_kv");
    // kdim and vdim are embed_dim where None; the packed in_proj_weight exists where both are.
    const Val embed = cfg.count("embed_dim") ? cfg["embed_dim"] : Val{};
    Val same = make_bool(true);
    for (const char* k : {"kdim", "vdim"}) {
      auto it = cfg.find(k);
      if (it == cfg.end() || it->second.kind == Val::Void) {
        cfg[k] = embed;
        continue;
      }
      auto a = C.per_set(it->second), e = C.per_set(embed);
      if (it->second.kind != Val::Int || embed.kind != Val::Int || !a || !e || *a != *e)
        same = make_unknown("whether `self." + path + "` packs its projections (its " + k +
                            " is given)");
    }
    cfg["#qkv_same"] = same;
    return;
  }
  auto unknown_all = [&](const std::string& reason) {
    for (auto& [k, v] : cfg)
      if (k != "training") v = make_unknown("the settings of `self." + path + "`: " + reason);
  };
  if (cls == "TransformerEncoderLayer") {
    for (const char* k :
         {"d_model", "nhead", "dim_feedforward", "dropout", "layer_norm_eps", "batch_first"})
      hide(k);
    if (!bound) {
      cfg["activation"] = Val{};
      unknown_all(why);
      return;
    }
    // The activation: F.relu unless given; the strings "relu" and "gelu" are F.relu and F.gelu
    // (torch's _get_activation_fn); F.relu and F.gelu as themselves. Anything else (a module, a
    // callable of the file, torch.relu) is not followed.
    Val act;
    act.kind = Val::Func;
    act.name = "torch.nn.functional.relu";
    auto given = bound->find("activation");
    if (given != bound->end()) {
      const PyExprP& a = given->second;
      std::string fn;
      if (a->kind == PyExpr::Str && !a->fstring && (a->text == "relu" || a->text == "gelu"))
        fn = a->text;
      if (a->kind == PyExpr::Attr || a->kind == PyExpr::Name) {
        const std::string named = resolve(py_dotted(a));
        PyExprP head = a;
        while (head->kind == PyExpr::Attr) head = head->kids[0];
        const bool shadowed = head->kind != PyExpr::Name || init_params_.count(head->text) ||
                              init_locals_.count(head->text) || module_vars_.count(head->text) ||
                              module_defs_.count(head->text) || module_rebound_.count(head->text);
        if (!shadowed &&
            (named == "torch.nn.functional.relu" || named == "torch.nn.functional.gelu"))
          fn = named.substr(named.rfind('.') + 1);
      }
      if (fn.empty())
        act = make_unknown("the activation `" + py_text(a) + "` of `self." + path +
                           "` (kernrl knows \"relu\", \"gelu\", F.relu and F.gelu)");
      else
        act.name = "torch.nn.functional." + fn;
    }
    cfg["activation"] = act;
    return;
  }
  if (cls == "TransformerEncoder") {
    if (!bound) {
      cfg["norm"] = Val{};
      unknown_all(why);
      return;
    }
    auto norm = bound->find("norm");
    if (norm == bound->end() || is_none(norm->second))
      cfg["norm"] = Val{};  // None
    else
      cfg["norm"] = make_unknown("`self." + path + ".norm` (`" + py_text(norm->second) + "`)");
  }
}

std::optional<bool> PySide::has_setting(const Val& layer, const std::string& name) {
  // The classes whose settings (layer_config's keys) kernrl knows to be attributes of the module.
  static const std::set<std::string> exact = {
      "TransformerEncoder", "TransformerEncoderLayer", "MultiheadAttention", "Linear", "Dropout",
      "LayerNorm"};
  // (A parameter of the suite at that path is the reference's: ModelNew's layer may lack it.)
  const std::string path = layer.name + "." + name;
  if (auto in = built_inside(path); in && in->why.empty()) return true;
  std::string elem = layer.elem == "Module" ? module_class(layer) : layer.elem;
  if (elem == kNonDynamic) elem = "Linear";
  if (!exact.count(elem) || name.empty() || name[0] == '#') return std::nullopt;
  auto cfg = layer_config(layer);
  if (cfg && cfg->count(name)) return true;
  return std::nullopt;
}

}  // namespace kernrl::kbimport::py
