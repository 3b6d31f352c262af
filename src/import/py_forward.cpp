// The Python side (py_side.h): values of the problem and the module; forward()'s statements.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "core/expr.h"
#include "import/nesting.h"
#include "import/py_side.h"
#include "protocol/launch_plan.h"

namespace kernrl::kbimport::py {

namespace {

bool is_parameter(const ProblemSpec& p, const std::string& name) {
  for (const auto& t : p.parameters)
    if (t.name == name) return true;
  return false;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

Val PySide::tensor_val(int idx) {
  Val v;
  v.kind = Val::Tensor;
  v.tensor = idx;
  return v;
}

std::vector<Val> PySide::shape_of(const TensorSpec& t) {
  std::vector<Val> s;
  for (const auto& d : t.shape) {
    try {
      s.push_back(make_int(eval_expr(d, {})));
    } catch (const ExprError&) {
      s.push_back(make_int_expr(d));
    }
  }
  return s;
}

Val PySide::problem_param(const std::string& name, const std::string& as_written) {
  auto it = param_tensor_.find(name);
  if (it != param_tensor_.end()) return tensor_val(it->second);
  for (const auto& p : C.P.parameters)
    if (p.name == name) {
      TensorInfo t;
      t.role = "parameter";
      t.name = p.name;
      t.dtype = p.dtype.name;
      t.shape = shape_of(p);
      int idx = C.add_tensor(t);
      param_tensor_[name] = idx;
      return tensor_val(idx);
    }
  std::string names;
  for (const auto& p : C.P.parameters) names += (names.empty() ? "" : ", ") + p.name;
  fail("mismatch",
       "ModelNew uses the parameter `" + as_written +
           "`, which is not among the problem's parameters (" +
           (names.empty() ? "it has none" : names) + ")" +
           (own_params_why_.empty()
                ? std::string()
                : "; its own parameters are not the problem's by place: " + own_params_why_));
}

std::optional<std::string> PySide::positional_param(const std::string& attr, const PyExprP& call) {
  auto named = [&](const std::string& n) { return is_parameter(C.P, n); };
  // Only on suites built from KernelBench, whose parameters are the reference module's in order.
  if (C.P.torchscript.empty() || named(attr)) return std::nullopt;
  auto at = std::find(own_params_.begin(), own_params_.end(), attr);
  if (at == own_params_.end()) return std::nullopt;
  std::string why = own_params_by_place();
  if (!why.empty() || call->kids.size() != 2) {
    own_params_why_ = why;
    return std::nullopt;
  }
  const TensorSpec& target =
      C.P.parameters[reference_params()[static_cast<size_t>(at - own_params_.begin())]];
  note_once("ModelNew's own parameter `self." + attr + "` is the problem's `" + target.name +
            "`: the same place in the parameters' order, the same shape, initialised as the "
            "reference's layer initialises it");
  return target.name;
}

std::string PySide::own_params_by_place() {
  auto named = [&](const std::string& n) { return is_parameter(C.P, n); };
  // Only where every parameter of ModelNew is its own (none matches the problem's by name, no
  // layer of ModelNew holds problem parameters): then the k-th own parameter is the k-th.
  for (const auto& own : own_params_)
    if (named(own)) return "`self." + own + "` is a parameter of the problem by name";
  for (const auto& [name, v] : init_attrs_)
    for (const auto& p : C.P.parameters)
      if (p.name.compare(0, name.size() + 1, name + ".") == 0)
        return "ModelNew's layer `self." + name + "` holds the problem's `" + p.name + "`";
  // One own weight per parameter of the reference (nn.Module.parameters(): its buffers, the
  // running statistics of its normalisation layers, are not parameters), initialised as the
  // reference initialises it.
  const std::vector<size_t> ref = reference_params();
  if (own_params_.size() != ref.size())
    return "ModelNew has " + std::to_string(own_params_.size()) +
           " parameter(s) of its own, the reference " + std::to_string(ref.size());
  if (std::string why = own_params_drawn_as_reference(); !why.empty()) return why;
  // Each of the problem's parameters initialised as the own weight at its place is: the weight of
  // a Linear or a convolution without bias for a drawn one, a normalisation layer's weight (ones)
  // or bias (zeros) for one created so.
  auto class_of = [&](const std::string& layer) -> std::string {
    auto m = std::find_if(C.P.modules.begin(), C.P.modules.end(),
                          [&](const auto& x) { return x.first == layer; });
    return m == C.P.modules.end() || m->second.empty() ? "" : m->second.front();
  };
  for (size_t i = 0; i < own_params_.size(); ++i) {
    const TensorSpec& want = C.P.parameters[ref[i]];
    const std::string& n = want.name;
    const std::string& own = own_params_[i];
    const std::string how = own_param_init(own);
    const bool weight = ends_with(n, ".weight"), bias = ends_with(n, ".bias");
    const std::string layer = n.substr(0, n.size() - (weight ? 7 : bias ? 5 : 0));
    const std::string cls = class_of(layer);
    const std::string pair = "`self." + own + "` (torch." + how + ") and the problem's `" + n +
                             "`" + (cls.empty() ? "" : " (of an nn." + cls + ")");
    if (how == "empty") {
      if (!weight || named(layer + ".bias") || !kaiming_layers().count(cls))
        return pair + ": a drawn weight is the weight of a Linear or convolution without bias";
    } else if (!(how == "ones" ? weight : bias) || !norm_layers().count(cls)) {
      return pair + ": a parameter created with torch." + how + " is a normalisation layer's " +
             (how == "ones" ? "weight" : "bias");
    }
    // Of the parameter's shape at every size set (a weight of another size before it would draw
    // other numbers for it).
    if (!creates_shape(init_attrs_.at(own)->kids[1], want))
      return pair + ": not of the same shape at every size set";
  }
  return "";
}

bool PySide::creates_shape(const PyExprP& t, const TensorSpec& want) {
  std::vector<PyExprP> dims(t->kids.begin() + 1, t->kids.end());
  std::vector<Val> shape;
  if (dims.size() == 1) {
    Val one = init_expr(dims[0]);
    if (one.kind == Val::List) shape = one.items;
  }
  if (shape.empty())
    for (const auto& d : dims) shape.push_back(init_expr(d));
  std::vector<Vars> sets = C.P.tests;
  sets.push_back(C.P.bench);
  bool same = shape.size() == want.shape.size();
  for (size_t d = 0; same && d < shape.size(); ++d) {
    if (shape[d].kind != Val::Int) same = false;
    for (const Vars& s : sets) {
      if (!same) break;
      try {
        same = (shape[d].k ? *shape[d].k : eval_expr(shape[d].e, C.with_values(s))) ==
               eval_expr(want.shape[d], s);
      } catch (const ExprError&) {
        same = false;
      }
    }
  }
  return same;
}

const std::set<std::string>& PySide::kaiming_layers() {
  static const std::set<std::string> s = {"Linear",         "Conv1d",          "Conv2d",
                                          "Conv3d",         "ConvTranspose1d", "ConvTranspose2d",
                                          "ConvTranspose3d"};
  return s;
}

const std::set<std::string>& PySide::norm_layers() {
  static const std::set<std::string> s = {"LayerNorm",      "GroupNorm",     "BatchNorm1d",
                                          "BatchNorm2d",    "BatchNorm3d",   "InstanceNorm1d",
                                          "InstanceNorm2d", "InstanceNorm3d"};
  return s;
}

std::vector<size_t> PySide::reference_params() const {
  // The problem's tensors are the reference's state: parameters and buffers in module order. The
  // buffers a reference of layers has are its normalisation layers' running statistics.
  std::vector<size_t> out;
  for (size_t i = 0; i < C.P.parameters.size(); ++i) {
    const std::string& n = C.P.parameters[i].name;
    if (ends_with(n, ".running_mean") || ends_with(n, ".running_var") ||
        ends_with(n, ".num_batches_tracked"))
      continue;
    out.push_back(i);
  }
  return out;
}

std::string PySide::own_param_init(const std::string& attr) const {
  auto a = init_attrs_.find(attr);
  if (a == init_attrs_.end() || a->second->kind != PyExpr::Call || a->second->kids.size() != 2 ||
      !a->second->kwargs.empty())
    return "";
  const PyExprP& t = a->second->kids[1];
  if (t->kind != PyExpr::Call || t->kids.size() < 2 || !t->kwargs.empty()) return "";
  std::string f = resolve(py_dotted(t->kids[0]));
  if (f == "torch.empty") return "empty";
  if (f == "torch.ones") return "ones";
  if (f == "torch.zeros") return "zeros";
  return "";
}

Val PySide::training_mode(const std::string& what) {
  // Anything in the file that could change a module's mode: .eval(), .train(...), or an
  // assignment to a `training` attribute.
  for (const auto& l : lines_)
    for (size_t k = 0; k + 1 < l.toks.size(); ++k) {
      const PyTok& a = l.toks[k];
      const PyTok& b = l.toks[k + 1];
      bool call = a.kind == PyTok::Name && (a.text == "eval" || a.text == "train") &&
                  tok_is(b, "(") && k > 0 && tok_is(l.toks[k - 1], ".");
      // `self.training = False`, `self.training: bool = False`, `m.training = ...`: an attribute
      // assigned (not a keyword argument); `setattr(m, "training", ...)`.
      // (`if not self.training:` reads it: a `:` is an annotation only where an `=` follows.)
      bool annotated =
          tok_is(b, ":") && std::any_of(l.toks.begin() + static_cast<long>(k) + 2, l.toks.end(),
                                        [](const PyTok& t) { return tok_is(t, "="); });
      bool set = a.kind == PyTok::Name && a.text == "training" && (tok_is(b, "=") || annotated) &&
                 k > 0 && tok_is(l.toks[k - 1], ".");
      bool by_name = a.kind == PyTok::Name && (a.text == "setattr" || a.text == "__setattr__" ||
                                               a.text == "__dict__" || a.text == "vars");
      if (call || set || by_name)
        return make_unknown("`" + what + "` (the file changes a module's mode: `" + a.text +
                            "` at line " + std::to_string(l.line) +
                            "; kernrl follows modules in training mode only, as KernelBench runs "
                            "them)");
    }
  return make_bool(true);
}

Val PySide::from_problem_name(const std::string& n) {
  if (const ScalarSpec* s = C.P.find_scalar(n)) {
    if (s->is_float()) {
      Val v = make_float(s->value, n);
      v.scalar = n;
      return v;
    }
    Val v = make_int(static_cast<int64_t>(s->value));
    v.scalar = n;
    return v;
  }
  if (C.P.bench.count(n)) return make_int_expr(n);
  return make_unknown("the constructor argument `" + n + "` (not a scalar or size of " + C.P.id +
                      ")");
}

Val PySide::self_attr(const std::string& attr) {
  auto o = self_overrides_.find(attr);
  if (o != self_overrides_.end()) return o->second;
  auto e = self_path_.empty() ? ext_by_var_.find("self." + attr) : ext_by_var_.end();
  if (e != ext_by_var_.end()) {
    Val v;
    v.kind = Val::Ext;
    v.ext = e->second;
    return v;
  }
  auto it = init_attrs_.find(attr);
  if (init_setattr_)
    return make_unknown("`self." + scoped(attr) + "` (" + self_name() +
                        "'s __init__ calls setattr)");
  if (auto w = init_method_why_.find(attr); w != init_method_why_.end())
    return make_unknown("`self." + scoped(attr) + "`, which " + self_name() +
                        "'s __init__ sets from " + w->second);
  if (init_attrs_mutated_.count(attr) && it != init_attrs_.end()) {
    const PyExprP& v = it->second;
    std::string callee =
        v->kind == PyExpr::Call && !v->kids.empty() ? resolve(py_dotted(v->kids[0])) : "";
    if (!starts_with(callee, "torch.nn."))
      return make_unknown("`self." + scoped(attr) + "`, which " + self_name() +
                          "'s __init__ changes in place after setting it");
  }
  if (auto u = init_attrs_undecided_.find(attr);
      u != init_attrs_undecided_.end() && init_attrs_changed_.count(attr))
    return make_unknown("`self." + scoped(attr) + "`, which " + self_name() +
                        "'s __init__ sets under " + u->second +
                        " (kernrl follows the branch an `if` of __init__ takes where it can "
                        "decide its condition)");
  if (auto in = init_attrs_inside_.find(attr); in != init_attrs_inside_.end())
    return make_unknown("`self." + scoped(attr) + "`, which " + self_name() +
                        "'s __init__ changes by assigning inside it after setting it, " +
                        in->second + " (kernrl follows an attribute as its one assignment set it)");
  if (std::string why = init_change_why(attr); !why.empty()) return make_unknown(why);
  if (init_attrs_changed_.count(attr))
    return make_unknown("`self." + scoped(attr) + "`, which " + self_name() +
                        "'s __init__ sets more than once, under a condition or "
                        "by an augmented assignment (kernrl follows an attribute set once, at the "
                        "top of __init__)");
  // nn.Module's own flag: KernelBench never calls eval(), so ModelNew runs in training mode (as
  // kernrl's references do).
  if (it == init_attrs_.end() && attr == "training" && !class_defs_.count(attr))
    return training_mode("self.training");
  if (it == init_attrs_.end()) {
    if (class_defs_.count(attr)) {
      Val f;
      f.kind = Val::Func;
      f.name = "self." + attr;
      return f;
    }
    return make_unknown("`self." + scoped(attr) + "` (not set in __init__)");
  }
  if (it->second->kind == PyExpr::Name)
    if (auto listed = listed_layers(attr)) return *listed;
  return init_value(attr, it->second);
}

Val PySide::init_value(const std::string& attr, const PyExprP& v) {
  // (`attr` is an attribute of the current `self`; a layer's name is its module path.)
  // `self.linears = [m for m in self.net if isinstance(m, nn.Linear)]`: a list of layers.
  if (v->kind == PyExpr::Other && v->text == "list comprehension" && v->kids.size() >= 3) {
    // Only over what forward also sees: its target, self, torch and builtins (a name local to
    // __init__ would be read as something else).
    static const std::set<std::string> known = {
        "self",  "nn",       "torch", "isinstance", "len", "enumerate", "range", "list",
        "tuple", "reversed", "int",   "float",      "min", "max",       "abs",   "zip"};
    std::set<std::string> targets;
    std::function<void(const PyExprP&)> collect_targets = [&](const PyExprP& x) {
      if (x->kind == PyExpr::Name) targets.insert(x->text);
      for (const auto& k : x->kids) collect_targets(k);
    };
    collect_targets(v->kids[1]);
    std::string unknown;
    std::function<void(const PyExprP&)> names = [&](const PyExprP& x) {
      if (x->kind == PyExpr::Name && !known.count(x->text) && !targets.count(x->text))
        unknown = x->text;
      for (const auto& k : x->kids) names(k);
      for (const auto& kw : x->kwargs) names(kw.second);
    };
    names(v);
    if (!unknown.empty())
      return make_unknown("`self." + attr + "` (a list built from `" + unknown + "` of __init__)");
    Env env;
    return eval(env, v);
  }
  switch (v->kind) {
    case PyExpr::Num:
      return number(v->text);
    case PyExpr::Const:
      if (v->text == "True" || v->text == "False") return make_bool(v->text == "True");
      return Val{};
    case PyExpr::Name:
      if (auto local = init_local(v->text)) return *local;
      if (init_params_.count(v->text)) return init_param_value(v->text);
      return module_value(v->text);
    case PyExpr::Call: {
      std::string d = resolve(py_dotted(v->kids[0]));
      if (d == "torch.nn.Parameter" || d == "nn.Parameter" || d == "torch.nn.parameter.Parameter" ||
          d == "Parameter") {
        // A submodule's parameter: the problem's of its module path (`features.3.weight`).
        if (!self_path_.empty()) return problem_param(scoped(attr), "self." + scoped(attr));
        if (auto p = positional_param(attr, v)) return problem_param(*p, "self." + attr);
        // On a suite built from KernelBench, the problem's tensor of that name has the values the
        // reference's __init__ gives it: ModelNew's must be created the same way.
        if (!C.P.torchscript.empty() && is_parameter(C.P, attr)) {
          auto known = own_param_by_name_why_.find(attr);
          if (known == own_param_by_name_why_.end())
            known = own_param_by_name_why_.emplace(attr, own_param_by_name(attr)).first;
          if (!known->second.empty())
            fail("mismatch", "ModelNew's own parameter `self." + attr + "` is not the problem's `" +
                                 attr +
                                 "`: under KernelBench's seeding its values are not the "
                                 "reference's: " +
                                 known->second);
          note_once("ModelNew's own parameter `self." + attr + "` is the problem's `" + attr +
                    "`: created as the reference creates it, after the same random draws");
        }
        return problem_param(attr, "self." + attr);
      }
      if (d == "bool" && v->kids.size() == 2) {
        Val inner = init_value(attr, v->kids[1]);
        if (inner.kind == Val::Tensor)
          return make_unknown("`self." + attr + "` (" + py_text(v) + ")");
        if (auto b = truth(inner)) return make_bool(*b);
        return make_unknown("`self." + attr + "` (" + py_text(v) + ")");
      }
      if ((d == "int" || d == "float") && v->kids.size() == 2) {
        Val inner = init_value(attr, v->kids[1]);
        if (d == "float" && inner.kind == Val::Int && inner.k)
          return make_float(static_cast<double>(*inner.k));
        return inner;
      }
      if (starts_with(d, "torch.nn.") || starts_with(d, "nn.")) {
        Val l;
        l.kind = Val::Layer;
        l.name = scoped(attr);
        l.elem = d.substr(d.rfind('.') + 1);
        return l;
      }
      // An instance of a class of the file (`self.block = Block(c)`): a layer by module path,
      // its class, where needed, from module_classes(); a call of it runs its forward.
      if (v->kids[0]->kind == PyExpr::Name) {
        std::string why;
        if (file_class_ctor(scoped(attr), &why)) {
          Val l;
          l.kind = Val::Layer;
          l.name = scoped(attr);
          l.elem = "Module";
          return l;
        }
        if (!why.empty()) return make_unknown(why);
      }
      // A function of the module (`self.k = _as_int(kernel_size)`): its body runs.
      if (v->kids[0]->kind == PyExpr::Name && module_def_headers_.count(d) &&
          !init_params_.count(d) && !init_locals_.count(d))
        return init_computed(attr, v);
      return make_unknown("`self." + scoped(attr) + "` (" + py_text(v) + ")");
    }
    case PyExpr::Other:
    case PyExpr::BinOp:
    case PyExpr::Unary:
    case PyExpr::Tuple:
    case PyExpr::List:
    case PyExpr::Attr:
      return init_computed(attr, v);
    default:
      return make_unknown("`self." + attr + "` (" + py_text(v) + ")");
  }
}

Val PySide::init_computed(const std::string& attr, const PyExprP& v) {
  Val unknown = make_unknown("`self." + attr + "` (" + py_text(v) + ")");
  // Only arithmetic, comparisons and pure builtins: evaluating must not allocate or launch.
  static const std::set<std::string> pure = {"int", "float", "bool",  "min",   "max",
                                             "abs", "len",   "round", "tuple", "list"};
  bool ok = true;
  bool calls_def = false;  // calls a function of the module: its body runs as forward's does
  std::function<void(const PyExprP&)> check = [&](const PyExprP& x) {
    if (x->kind == PyExpr::Call) {
      std::string f = resolve(py_dotted(x->kids[0]));
      const bool module_fn = x->kids[0]->kind == PyExpr::Name && module_def_headers_.count(f) &&
                             !init_params_.count(f) && !init_locals_.count(f);
      calls_def = calls_def || module_fn;
      if (!pure.count(f) && !starts_with(f, "math.") && !module_fn) ok = false;
    }
    if (x->kind == PyExpr::Other && x->text != "conditional expression") ok = false;
    if (x->kind == PyExpr::BinOp && x->text == "@") ok = false;  // a product would be a step
    for (const auto& k : x->kids) check(k);
    for (const auto& kw : x->kwargs) check(kw.second);
  };
  check(v);
  if (!ok || init_depth_ > 16) return unknown;
  Nesting depth(init_depth_);
  // `a if cond else b`: the branch taken, followed as an attribute's value. The names it reads:
  // __init__'s arguments and the locals it binds.
  std::set<std::string> names;
  std::function<void(const PyExprP&)> collect = [&](const PyExprP& x) {
    if (x->kind == PyExpr::Name) names.insert(x->text);
    for (const auto& k : x->kids) collect(k);
    for (const auto& kw : x->kwargs) collect(kw.second);
  };
  collect(v);
  Env env;
  // What a function of the module does besides computing its value (allocate, compute with
  // PyTorch, call the extension) would be done at each read of the attribute: refused.
  const size_t tensors0 = C.tensors.size(), launches0 = C.launches.size(),
               calls0 = host_calls.size();
  auto pure_so_far = [&]() {
    if (C.tensors.size() != tensors0 || C.launches.size() != launches0 ||
        host_calls.size() != calls0)
      fail("host_logic", "ModelNew.__init__ computes `self." + attr + "` (" + py_text(v) +
                             ") with a function that allocates, computes with PyTorch or calls "
                             "the extension; kernrl follows only functions that compute values");
  };
  Val r;
  try {
    for (const auto& n : names) {
      if (auto l = init_local(n))
        env.locals[n] = *l;
      else if (init_params_.count(n))
        env.locals[n] = init_param_value(n);
    }
    if (v->kind == PyExpr::Other && v->kids.size() == 3) {
      auto c = truth(eval(env, v->kids[1]));
      pure_so_far();
      if (!c) return unknown;
      return init_value(attr, v->kids[*c ? 0 : 2]);
    }
    r = eval(env, v);
  } catch (const ImportError& e) {
    pure_so_far();
    // A function of the module that raises (a failed `assert`, a call with the wrong arguments)
    // raises when KernelBench builds ModelNew.
    if (calls_def && e.category == "mismatch") throw;
    return unknown;
  }
  pure_so_far();
  return r.kind == Val::Unknown || r.kind == Val::Void ? unknown : r;
}

Val PySide::module_value(const std::string& name) {
  // Python mangles a private name (`__scale`, not `__x__`) written in a class body, a plain name
  // too: ModelNew's methods read `_ModelNew__scale`, not the module's `__scale`. (A module
  // constant's own expression is outside any class.)
  if (module_depth_ == 0 && name.size() > 2 && name.compare(0, 2, "__") == 0 &&
      !(name.size() > 4 && name.compare(name.size() - 2, 2, "__") == 0))
    return make_unknown(
        "`" + name + "`, a private name, which Python mangles in a class body (as `_" + "ModelNew" +
        name + "`), so a method does not read the module's `" + name + "`");
  auto e = ext_by_var_.find(name);
  if (e != ext_by_var_.end()) {
    Val v;
    v.kind = Val::Ext;
    v.ext = e->second;
    return v;
  }
  if (auto rb = module_rebound_.find(name); rb != module_rebound_.end())
    return make_unknown("`" + name + "`, which the module " + rb->second +
                        " (kernrl reads a module-level name bound once, at the top level)");
  auto it = module_vars_.find(name);
  if (it != module_vars_.end()) {
    if (it->second->kind == PyExpr::Num) return number(it->second->text);
    if (it->second->kind == PyExpr::Const &&
        (it->second->text == "True" || it->second->text == "False"))
      return make_bool(it->second->text == "True");
    // `_SUPPORTED_K = (1, 3, 5)`, `BLOCK = 4 * 64`, `EPS = -1e-5`: computed as __init__'s
    // expressions are (numbers only).
    if (it->second->kind == PyExpr::Tuple || it->second->kind == PyExpr::List ||
        it->second->kind == PyExpr::BinOp || it->second->kind == PyExpr::Unary) {
      if (module_depth_ > 16) return make_unknown("`" + name + "` (defined through itself)");
      Val v;
      {
        Nesting nest(module_depth_);
        v = init_expr(it->second);  // in module scope: its names are the module's
      }
      bool numbers = v.kind == Val::Int || v.kind == Val::Float;
      if (v.kind == Val::List) {
        numbers = std::all_of(v.items.begin(), v.items.end(), [](const Val& i) {
          return (i.kind == Val::Int && i.k) || (i.kind == Val::Float && i.f);
        });
        v.seq = it->second->kind == PyExpr::Tuple ? 't' : 'l';
      }
      if (numbers) return v;
    }
  }
  if (module_defs_.count(name)) {
    Val f;
    f.kind = Val::Func;
    f.name = name;
    return f;
  }
  Val f;
  f.kind = Val::Func;
  f.name = resolve(name);
  return f;
}

Val PySide::number(const std::string& lit) {
  std::string s;
  for (char c : lit)
    if (c != '_') s += c;
  bool hex = starts_with(s, "0x") || starts_with(s, "0X");
  if (!hex && s.find_first_of(".eE") != std::string::npos)
    return make_float(std::strtod(s.c_str(), nullptr), s);
  if (!s.empty() && (s.back() == 'j' || s.back() == 'J')) return make_unknown("a complex literal");
  int base = hex                                              ? 16
             : (starts_with(s, "0o") || starts_with(s, "0O")) ? 8
             : (starts_with(s, "0b") || starts_with(s, "0B")) ? 2
                                                              : 10;
  errno = 0;
  const unsigned long long v = std::strtoull(base == 10 ? s.c_str() : s.c_str() + 2, nullptr, base);
  // Python's integers have no bound; kernrl's are 64-bit.
  if (errno == ERANGE || v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()))
    return make_unknown("the integer " + lit + ", beyond 64 bits");
  return make_int(static_cast<int64_t>(v));
}

PySide::Result PySide::run_forward() {
  const auto& t = lines_[forward_header_].toks;
  // def forward(self, a, b, ...):
  std::vector<std::string> params;
  int d = 0;
  bool in_default = false;
  for (size_t i = 2; i < t.size(); ++i) {
    const PyTok& k = t[i];
    if (k.kind == PyTok::Op && (k.text == "(" || k.text == "[" || k.text == "{")) ++d;
    if (k.kind == PyTok::Op && (k.text == ")" || k.text == "]" || k.text == "}")) {
      --d;
      if (d == 0) break;
    }
    if (d == 1 && k.kind == PyTok::Op && k.text == ",") in_default = false;
    if (d == 1 && k.kind == PyTok::Op && (k.text == "=" || k.text == ":")) in_default = true;
    if (d == 1 && k.kind == PyTok::Op && (k.text == "*" || k.text == "**"))
      fail("mismatch",
           "ModelNew.forward takes *args; kernrl maps forward's parameters to the problem's "
           "inputs by position");
    if (d == 1 && k.kind == PyTok::Name && !in_default && k.text != "self")
      params.push_back(k.text);
  }
  Env env;
  // What forward is given, in order: the inputs, or on a suite problem whose get_inputs passes
  // Python numbers too, the inputs and those numbers as scalars (reference.forward).
  std::vector<std::string> given = C.P.forward_args;
  if (given.empty())
    for (const auto& in : C.P.inputs) given.push_back(in.name);
  std::string names;
  for (const auto& n : given) names += (names.empty() ? "" : ", ") + n;
  if (params.size() != given.size())
    fail("mismatch", "ModelNew.forward takes " + std::to_string(params.size()) + " inputs; " +
                         C.P.id + " has " + std::to_string(given.size()) + " (" + names + ")");
  for (size_t i = 0; i < params.size(); ++i) {
    const TensorSpec* found = nullptr;
    for (const auto& in : C.P.inputs)
      if (in.name == given[i]) found = &in;
    if (!found) {  // a scalar of the problem
      env.locals[params[i]] = from_problem_name(given[i]);
      continue;
    }
    const TensorSpec& in = *found;
    TensorInfo ti;
    ti.role = "input";
    ti.name = in.name;
    ti.dtype = in.dtype.name;
    ti.shape = shape_of(in);
    env.locals[params[i]] = tensor_val(C.add_tensor(ti));
  }
  exec_lines(env, forward_.begin, forward_.end);
  Result r;
  r.ret = env.ret ? *env.ret : Val{};
  return r;
}

void PySide::torch_op(const std::string& what, const std::string& text) {
  fail("torch_op_in_forward", "PyTorch op `" + what + "` left in forward (`" + text +
                                  "`); kernrl grades CUDA kernels only, so forward may only call "
                                  "the load_inline extension");
}

void PySide::exec_lines(Env& env, size_t begin, size_t end) {
  size_t i = begin;
  while (i < end && !env.ret && !env.brk && !env.cont) {
    const PyLine& l = lines_[i];
    const auto& t = l.toks;
    size_t next = i + 1;
    while (next < end && lines_[next].indent > l.indent) ++next;
    const std::string& w = t[0].text;
    if (t[0].kind == PyTok::Name) {
      if (w == "del") {
        // `del name` forgets a local; deleting anything else (`del mods[1]`, `del self.net[1]`)
        // changes what forward reads, which kernrl does not follow.
        for (size_t k = 1; k < t.size(); ++k) {
          bool name = t[k].kind == PyTok::Name && (k + 1 == t.size() || t[k + 1].text == ",");
          bool comma = t[k].kind == PyTok::Op && t[k].text == ",";
          if (!name && !comma)
            fail("host_logic",
                 "host logic in forward: `del` of something other than a name "
                 "(line " +
                     std::to_string(l.line) + ")");
          if (name) env.locals.erase(t[k].text);
        }
        i = next;
        continue;
      }
      if (w == "assert" && init_depth_ > 0) {
        // In a function that __init__ calls: Python raises there when the condition is false.
        exec_init_assert(env, l);
        i = next;
        continue;
      }
      if (w == "pass" || w == "assert" || w == "global" || w == "nonlocal") {
        i = next;
        continue;
      }
      if (w == "if") {
        i = exec_if(env, i, end);
        continue;
      }
      std::vector<std::pair<size_t, size_t>> updated;  // (line, tokens before the statistic)
      // A `with torch.no_grad():` block, or one statement (`bn.num_batches_tracked.add_(1)`),
      // that only updates running statistics.
      if ((w == "with" || (next == i + 1 && with_depth_ == 0)) &&
          updates_running_stats_only(i, next, &updated)) {
        // What it updates is not read again in this forward: a read after it is refused.
        for (const auto& [li, k] : updated) {
          Val layer = eval(env, py_parse_expr(lines_[li].toks, 0, k - 1));
          std::string cls =
              layer.kind == Val::Layer && layer.name != "self" ? module_class(layer) : "";
          if (cls != "BatchNorm1d" && cls != "BatchNorm2d" && cls != "BatchNorm3d")
            fail("host_logic", "forward updates the running statistics of `" +
                                   py_text(py_parse_expr(lines_[li].toks, 0, k - 1)) +
                                   "`, which kernrl does not know as a BatchNorm layer (line " +
                                   std::to_string(lines_[li].line) + ")");
          // The statistic this line updates (the others of the layer may still be read).
          const std::string updated_stat = lines_[li].toks[k].text;
          for (const char* s : {"running_mean", "running_var", "num_batches_tracked"}) {
            if (updated_stat != s) continue;
            // Read before the update, or held by a name to be read after it (an alias): the
            // output would depend on how many forwards ran earlier.
            std::function<bool(const Val&)> holds = [&](const Val& v) {
              if (is_running_stat(v) && same_stat(v, layer.name, s)) return true;
              return std::any_of(v.items.begin(), v.items.end(), holds);
            };
            bool alias = std::any_of(env.locals.begin(), env.locals.end(),
                                     [&](const auto& local) { return holds(local.second); }) ||
                         std::any_of(self_overrides_.begin(), self_overrides_.end(),
                                     [&](const auto& o) { return holds(o.second); });
            bool read = std::any_of(stats_read_.begin(), stats_read_.end(), [&](const auto& n) {
              return same_stat_name(n, layer.name, s);
            });
            if (alias || read)
              fail("host_logic", "forward reads `" + layer.name + "." + s +
                                     "` and then updates it in place (line " +
                                     std::to_string(lines_[li].line) +
                                     "); kernrl does not follow a layer's running statistics "
                                     "across forwards");
            stale_.insert(layer.name + "." + s);
          }
        }
        note_once("forward updates BatchNorm's running statistics in place (line " +
                  std::to_string(l.line) +
                  "): kernrl skips the update (they are not read again in this forward, and in "
                  "training mode they do not change its output)");
        i = next;
        continue;
      }
      if (w == "with" || w == "try") {
        // (A statement updating running statistics inside another block is not skipped alone:
        // the block is, as a whole, or not at all.)
        Nesting in_with(with_depth_, w == "with" ? 1 : 0);
        size_t colon = header_colon(t);
        if (colon + 1 < t.size())
          exec_inline(env, l, colon + 1);
        else
          exec_lines(env, i + 1, next);
        i = next;
        // except/finally/else clauses of a try: skipped.
        while (i < end && lines_[i].indent == l.indent &&
               (tok_is(lines_[i].toks[0], "except") || tok_is(lines_[i].toks[0], "finally") ||
                (w == "try" && tok_is(lines_[i].toks[0], "else")))) {
          ++i;
          while (i < end && lines_[i].indent > l.indent) ++i;
        }
        continue;
      }
      if (w == "for") {
        i = exec_for(env, i, next);
        continue;
      }
      if (w == "while") {
        i = exec_while(env, i, next);
        continue;
      }
      if (w == "def" || w == "class" || w == "import" || w == "from") {
        i = next;
        continue;
      }
    }
    exec_simple(env, t, 0, l.line);  // also return, raise, break and continue
    i = next;
  }
}

bool PySide::updates_running_stats_only(size_t header, size_t next,
                                        std::vector<std::pair<size_t, size_t>>* updated) const {
  // `with torch.no_grad():` whose body only updates a BatchNorm layer's running statistics in
  // place (`bn.num_batches_tracked.add_(1)`, `bn.running_mean.mul_(1 - m).add_(mean, ...)`),
  // with local names it assigns for that alone. Anything else in the body: not skipped.
  const auto& h = lines_[header].toks;
  // One statement alone (its line is the update), or a `with torch.no_grad():` block's body.
  const bool bare = !tok_is(h[0], "with");
  size_t body = header + 1;
  if (bare) {
    if (next != header + 1) return false;
    body = header;
  } else {
    size_t colon = header_colon(h);
    std::string what;
    for (size_t k = 1; k < colon; ++k) what += h[k].text;
    if (what != "torch.no_grad()" || colon + 1 != h.size() || next == header + 1) return false;
  }
  static const std::set<std::string> stats = {"running_mean", "running_var", "num_batches_tracked"};
  // Nothing but the statistic's own chain of in-place calls changes anything: no other in-place
  // call (`y.mul_(2)` in an argument), no `:=`, no `out=`.
  // The statistics' own in-place methods (never set_, which would make them share another
  // tensor's storage), and calls that compute without changing anything.
  static const std::set<std::string> chain_methods = {"mul_",  "add_",  "sub_",  "div_",
                                                      "lerp_", "zero_", "fill_", "copy_"};
  static const std::set<std::string> pure = {"mean", "var",  "std",   "sum",    "float",
                                             "int",  "max",  "min",   "item",   "abs",
                                             "sqrt", "size", "numel", "detach", "pow"};
  auto no_side_effects = [&](const std::vector<PyTok>& t, size_t from, size_t chain_end) {
    int depth = 0;
    for (size_t k = from; k < t.size(); ++k) {
      const PyTok& x = t[k];
      if (x.kind == PyTok::Op && (x.text == "[" || x.text == "{")) ++depth;
      if (x.kind == PyTok::Op && (x.text == ")" || x.text == "]" || x.text == "}")) --depth;
      if (x.kind == PyTok::Op && (x.text == ":=" || x.text == "**")) return false;
      if (x.kind == PyTok::Name && k + 1 < t.size() && t[k + 1].text == "=" &&
          (x.text == "out" || x.text == "inplace" || x.text == "key"))
        return false;
      if (!(x.kind == PyTok::Op && x.text == "(")) continue;
      const PyTok* callee = k > from ? &t[k - 1] : nullptr;
      bool postfix = callee && (callee->kind == PyTok::Name || callee->text == ")" ||
                                callee->text == "]" || callee->kind == PyTok::String);
      if (!postfix || (callee->kind == PyTok::Name &&
                       (callee->text == "and" || callee->text == "or" || callee->text == "not" ||
                        callee->text == "in" || callee->text == "is" || callee->text == "if" ||
                        callee->text == "else" || callee->text == "return"))) {
        ++depth;  // a parenthesised expression, not a call
        continue;
      }
      // A call: by a name, and that name allowed where it stands.
      bool by_name = callee && callee->kind == PyTok::Name;
      bool method = by_name && k >= 2 && t[k - 2].text == ".";
      bool on_ext = method && k >= 3 && t[k - 3].kind == PyTok::Name &&
                    (ext_by_var_.count(t[k - 3].text) || module_vars_.count(t[k - 3].text));
      bool chain =
          by_name && method && chain_methods.count(callee->text) && depth == 0 &&
          (k - 1 < chain_end || (k >= 3 && (stats.count(t[k - 3].text) || t[k - 3].text == ")")));
      // A builtin (`float(...)`, `max(...)`) unless the module defines that name itself.
      bool builtin = by_name && !method && pure.count(callee->text) &&
                     !module_vars_.count(callee->text) && !module_defs_.count(callee->text) &&
                     !ext_by_var_.count(callee->text);
      bool ok = by_name && !on_ext && (chain || builtin || (pure.count(callee->text) && method));
      if (!ok) return false;
      ++depth;
    }
    return true;
  };
  std::set<std::string> locals;
  for (size_t i = body; i < next; ++i) {
    const auto& t = lines_[i].toks;
    if (bare && !(t.size() > 3 && t[0].kind == PyTok::Name)) return false;
    if (!bare && (tok_is(t[0], "if") || tok_is(t[0], "elif") || tok_is(t[0], "else"))) {
      if (header_colon(t) + 1 != t.size()) return false;  // a one-line body: not followed here
      if (!no_side_effects(t, 1, 0)) return false;
      continue;
    }
    if (!bare && t.size() > 2 && t[0].kind == PyTok::Name && t[1].kind == PyTok::Op &&
        t[1].text == "=") {
      if (!no_side_effects(t, 2, 0)) return false;
      locals.insert(t[0].text);
      continue;
    }
    // name(.name)* . <statistic> . method_( ...
    size_t k = 0;
    while (k + 2 < t.size() && t[k].kind == PyTok::Name && t[k + 1].kind == PyTok::Op &&
           t[k + 1].text == "." && !stats.count(t[k].text))
      k += 2;
    if (!(k > 0 && k + 3 < t.size() && stats.count(t[k].text) && t[k + 1].text == "." &&
          t[k + 2].kind == PyTok::Name && chain_methods.count(t[k + 2].text) &&
          t[k + 3].text == "("))
      return false;
    if (!no_side_effects(t, k + 2, k + 3)) return false;
    updated->push_back({i, k});
  }
  if (updated->empty()) return false;
  // The names it assigns are read nowhere else in forward (a loop around it would read them
  // again before it).
  for (size_t i = forward_.begin; i < forward_.end; ++i) {
    if (i >= header && i < next) continue;
    for (const auto& tok : lines_[i].toks)
      if (tok.kind == PyTok::Name && locals.count(tok.text)) return false;
  }
  return true;
}

bool PySide::is_running_stat(const Val& v) const {
  if (v.kind != Val::Tensor) return false;
  const std::string& n = C.tensors[static_cast<size_t>(v.tensor)].name;
  // A suite names it by module path (`bn.running_mean`), kernrl's own problems with underscores
  // (`bn_running_mean`).
  for (const char* s : {"running_mean", "running_var", "num_batches_tracked"}) {
    std::string suffix = s;
    if (n.size() > suffix.size() + 1 &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        (n[n.size() - suffix.size() - 1] == '.' || n[n.size() - suffix.size() - 1] == '_'))
      return true;
  }
  return false;
}

bool PySide::same_stat_name(const std::string& tensor, const std::string& layer,
                            const std::string& stat) {
  std::string flat = layer;
  std::replace(flat.begin(), flat.end(), '.', '_');
  return tensor == layer + "." + stat || tensor == flat + "_" + stat;
}

bool PySide::same_stat(const Val& v, const std::string& layer, const std::string& stat) const {
  return same_stat_name(C.tensors[static_cast<size_t>(v.tensor)].name, layer, stat);
}

void PySide::note_stat_reads(const std::vector<Val>& args) {
  for (const Val& a : args) {
    if (is_running_stat(a)) stats_read_.insert(C.tensors[static_cast<size_t>(a.tensor)].name);
    if (a.kind == Val::List) note_stat_reads(a.items);
  }
}

void PySide::note_once(const std::string& text) {
  if (std::find(C.notes.begin(), C.notes.end(), text) == C.notes.end()) C.notes.push_back(text);
}

void PySide::exec_inline(Env& env, const PyLine& l, size_t from) {
  exec_simple(env, l.toks, from, l.line);
}

size_t PySide::exec_if(Env& env, size_t i, size_t end) {
  // if / elif / else chain at one indentation.
  int indent = lines_[i].indent;
  bool taken = false;
  while (i < end) {
    const PyLine& l = lines_[i];
    const auto& t = l.toks;
    bool is_else = tok_is(t[0], "else");
    if (!(tok_is(t[0], "if") || tok_is(t[0], "elif") || is_else) || l.indent != indent) break;
    if (tok_is(t[0], "if") && i != 0 && taken) break;
    size_t colon = header_colon(t);
    size_t next = i + 1;
    while (next < end && lines_[next].indent > indent) ++next;
    if (!taken) {
      bool run = is_else;
      if (!is_else) {
        Val c = eval(env, py_parse_expr(t, 1, colon));
        auto b = truth(c);
        if (!b)
          fail("host_logic",
               "host logic in forward: `" + py_text(py_parse_expr(t, 1, colon)) +
                   "` decides what runs and is not the same at every size set of the problem");
        run = *b;
      }
      if (run) {
        taken = true;
        if (colon + 1 < t.size())
          exec_inline(env, l, colon + 1);
        else
          exec_lines(env, i + 1, next);
      }
    }
    i = next;
    if (i < end && !(tok_is(lines_[i].toks[0], "elif") || tok_is(lines_[i].toks[0], "else"))) break;
    if (is_else) break;
  }
  return i;
}

std::optional<bool> PySide::truth(const Val& v) {
  if ((v.kind == Val::Bool || v.kind == Val::Int) && v.k) return *v.k != 0;
  if (v.kind == Val::Bool && !v.per_set.empty()) {
    bool all = std::all_of(v.per_set.begin(), v.per_set.end(), [](char c) { return c; });
    bool none = std::none_of(v.per_set.begin(), v.per_set.end(), [](char c) { return c; });
    if (all || none) return all;
  }
  if (v.kind == Val::Float && v.f) return *v.f != 0;
  if (v.kind == Val::Void) return false;
  // Non-empty strings, lists and known layers are true, empty ones false.
  if (v.kind == Val::List) return !v.items.empty();
  if (v.kind == Val::Str && !v.fstring) return !v.text.empty();
  // A layer is true, but a container (Sequential, ModuleList, ...) is true only when not empty.
  if (v.kind == Val::Layer) {
    static const std::set<std::string> containers = {"Sequential",    "ModuleList",    "ModuleDict",
                                                     "ParameterList", "ParameterDict", "Module"};
    std::string cls = v.elem == "Module" && v.name != "self" ? module_class(v) : v.elem;
    if (v.name == "self" || cls.empty() || containers.count(cls)) return std::nullopt;
    return true;
  }
  if (v.kind == Val::DType || v.kind == Val::Device) return true;
  // A tensor's truth is its single element's (Python refuses a larger one): unknown here.
  return std::nullopt;
}

void PySide::exec_simple(Env& env, const std::vector<PyTok>& t, size_t from, int line) {
  // A one-line body's keyword statement (`if c: continue`, `for ...: break`, `if c: return x`).
  if (from < t.size() && t[from].kind == PyTok::Name) {
    const std::string& w = t[from].text;
    if ((w == "break" || w == "continue" || w == "pass") && t.size() == from + 1) {
      if (w != "pass") (w == "break" ? env.brk : env.cont) = true;
      return;
    }
    if (w == "return") {
      env.ret = t.size() > from + 1 ? eval(env, py_parse_expr(t, from + 1, t.size())) : Val{};
      return;
    }
    if (w == "raise")
      fail("mismatch",
           "forward raises an error for this problem (line " + std::to_string(line) + ")");
    static const std::set<std::string> keywords = {
        "break",  "continue", "pass",   "yield",  "del",   "raise", "global", "nonlocal",
        "assert", "import",   "from",   "with",   "for",   "while", "if",     "try",
        "def",    "class",    "lambda", "return", "async", "await"};
    if (keywords.count(w))
      fail("host_logic", "host logic in forward: `" + w +
                             "` on one line with its statement (line " + std::to_string(line) +
                             ")");
  }
  // Assignment targets = value; augmented assignment; or an expression.
  int d = 0;
  size_t eq = 0;
  std::string aug;
  for (size_t i = from; i < t.size(); ++i) {
    if (t[i].kind != PyTok::Op) continue;
    const std::string& x = t[i].text;
    if (x == "(" || x == "[" || x == "{") ++d;
    if (x == ")" || x == "]" || x == "}") --d;
    if (d != 0) continue;
    if (x == "=") eq = i;
    if (x.size() >= 2 && x.back() == '=' && x != "==" && x != "!=" && x != "<=" && x != ">=" &&
        eq == 0) {
      eq = i;
      aug = x.substr(0, x.size() - 1);
      break;
    }
    if (x == ";")
      fail("host_logic",
           "several statements on one line of forward (line " + std::to_string(line) + ")");
  }
  if (eq == 0) {
    PyExprP e = py_parse_expr(t, from, t.size());
    if (append_statement(env, e, line)) return;
    eval(env, e);
    return;
  }
  // Only the last '=' carries the value; earlier ones are more targets (a = b = v).
  PyExprP value_expr = py_parse_expr(t, eq + 1, t.size());
  size_t target_end = eq;
  // Strip an annotation: x: torch.Tensor = ...
  for (size_t i = from; i < eq; ++i)
    if (tok_is(t[i], ":")) {
      target_end = i;
      break;
    }
  // `out, _ = self.lstm(x, (h0, c0))`: the names of the call's results forward uses.
  if (aug.empty() && value_expr->kind == PyExpr::Call) {
    PyExprP unpacked;
    try {
      unpacked = py_parse_expr(t, from, target_end);
    } catch (const ImportError&) {
      // (refused below, as before)
    }
    if (unpacked) rnn_unpacking(t, from, target_end, line, unpacked, value_expr);
  }
  Val value = eval(env, value_expr);
  rnn_use_ = RnnUse{};
  PyExprP target = py_parse_expr(t, from, target_end);
  if (!aug.empty()) {
    Val old = eval(env, target);
    if (old.kind == Val::List && old.seq == 'l')
      return list_augmented(env, target, aug, value, line);
    // `w *= s` changes the tensor in place (every name, view or parameter that shares it sees
    // the change): not an out-of-place step.
    if (old.kind == Val::Tensor) torch_op(aug, py_text(target) + " " + aug + "= ...");
    value = binop(aug, old, value, py_text(target) + " " + aug + "= ...");
  }
  bind(env, target, value, line);
}

Val PySide::own_list(Env& env, Val list) {
  list.list_id = ++next_list_id_;
  env.own_lists.insert(list.list_id);
  return list;
}

int PySide::mutable_list(Env& env, const std::string& name, const std::string& what,
                         const char* verb) {
  const Val& list = env.locals.at(name);
  const int id = list.list_id;
  // Python's lists are shared, not copied: kernrl changes a list in place only where it knows
  // every name that holds it, a list made in this function.
  if (list.seq != 'l' || id == 0 || !env.own_lists.count(id))
    fail("host_logic", "host logic in forward: " + what + " " + verb + " `" + name +
                           "`, which is not a list made in the same function by a list display "
                           "(`[]`, `[a, b]`, `[a] * n`)");
  if (env.iterating.count(id))
    fail("host_logic", "host logic in forward: " + what + " " + verb + " `" + name +
                           "` while a `for` loop iterates over it (its iterable reads `" + name +
                           "`: Python would see the change)");
  return id;
}

void PySide::replace_list(Env& env, int id, const Val& now) {
  // Every value that is this list, in the function's names and in `self`'s attributes.
  std::function<void(Val&)> update = [&](Val& v) {
    if (v.kind == Val::List && v.list_id == id) {
      v = now;
      return;
    }
    for (Val& i : v.items) update(i);
  };
  for (auto& kv : env.locals) update(kv.second);
  for (auto& kv : self_overrides_) update(kv.second);
}

bool PySide::append_statement(Env& env, const PyExprP& e, int line) {
  if (e->kind != PyExpr::Call || e->kids.size() != 2 || !e->kwargs.empty() ||
      e->kids[0]->kind != PyExpr::Attr || e->kids[0]->text != "append" ||
      e->kids[0]->kids[0]->kind != PyExpr::Name)
    return false;
  const std::string name = e->kids[0]->kids[0]->text;
  auto it = env.locals.find(name);
  if (it == env.locals.end() || it->second.kind != Val::List) return false;
  const std::string what = "`" + py_text(e) + "` (line " + std::to_string(line) + ")";
  const int id = mutable_list(env, name, what, "appends to");
  Val item = eval(env, e->kids[1]);
  Val now = env.locals.at(name);  // (evaluating the item may have changed it)
  if (now.items.size() >= static_cast<size_t>(kMaxUnrolled))
    fail("host_logic", "host logic in forward: " + what +
                           " makes a list longer than kernrl "
                           "follows");
  now.items.push_back(item);
  replace_list(env, id, now);
  return true;
}

void PySide::list_augmented(Env& env, const PyExprP& target, const std::string& op,
                            const Val& value, int line) {
  const std::string what =
      "`" + py_text(target) + " " + op + "= ...` (line " + std::to_string(line) + ")";
  if (target->kind != PyExpr::Name || !env.locals.count(target->text))
    fail("host_logic", "host logic in forward: " + what +
                           " changes a list in place that is not a name of the same function");
  const int id = mutable_list(env, target->text, what, op == "+" ? "extends" : "repeats");
  Val now = env.locals.at(target->text);
  if (op == "+" && value.kind == Val::List && (value.seq == 'l' || value.seq == 't')) {
    now.items.insert(now.items.end(), value.items.begin(), value.items.end());
  } else if (op == "*" && value.kind == Val::Int && value.k && !value.floaty) {
    const std::vector<Val> once = now.items;
    now.items.clear();
    if (*value.k > 0 && static_cast<double>(*value.k) * static_cast<double>(once.size()) >
                            static_cast<double>(kMaxUnrolled))
      fail("host_logic", "host logic in forward: " + what +
                             " makes a list longer than kernrl "
                             "follows");
    for (int64_t k = 0; k < *value.k && !once.empty(); ++k)
      now.items.insert(now.items.end(), once.begin(), once.end());
  } else {
    fail("host_logic", "host logic in forward: " + what +
                           " on a list, with a value kernrl does not follow there");
  }
  if (now.items.size() > static_cast<size_t>(kMaxUnrolled))
    fail("host_logic",
         "host logic in forward: " + what + " makes a list longer than kernrl follows");
  replace_list(env, id, now);
}

void PySide::bind(Env& env, const PyExprP& target, const Val& value, int line) {
  if (target->kind == PyExpr::Name) {
    env.locals[target->text] = value;
    name_alloc(value, target->text);
    return;
  }
  if (target->kind == PyExpr::Attr && target->kids[0]->kind == PyExpr::Name &&
      target->kids[0]->text == "self") {
    // A submodule's attribute set by its forward would persist to its next call: not followed.
    if (!self_path_.empty())
      fail("host_logic", "the forward of " + self_name() + " assigns to `" + py_text(target) +
                             "` (line " + std::to_string(line) +
                             "); kernrl follows a submodule's forward that sets no attribute");
    self_overrides_[target->text] = value;
    return;
  }
  if (target->kind == PyExpr::Tuple || target->kind == PyExpr::List) {
    if (value.kind != Val::List || value.items.size() != target->kids.size())
      fail("host_logic", "forward unpacks `" + py_text(target) +
                             "` from a value kernrl cannot split (line " + std::to_string(line) +
                             ")");
    for (size_t i = 0; i < target->kids.size(); ++i)
      bind(env, target->kids[i], value.items[i], line);
    return;
  }
  if (target->kind == PyExpr::Index && target->kids[0]->kind == PyExpr::Name &&
      env.locals.count(target->kids[0]->text) &&
      env.locals.at(target->kids[0]->text).kind == Val::List &&
      !(target->kids[1]->kind == PyExpr::Other && target->kids[1]->text == "slice")) {
    // `pending[1] = v` (contract v1, an addition): the item of a list made in this function
    // replaced in place, in every name and attribute that holds the list, as in Python (which
    // evaluates the value, then the list, then the index).
    const std::string name = target->kids[0]->text;
    const std::string what = "`" + py_text(target) + " = ...` (line " + std::to_string(line) + ")";
    const int id = mutable_list(env, name, what, "changes an item of");
    Val idx = eval(env, target->kids[1]);
    if (idx.kind == Val::Bool && idx.k) idx = make_int(*idx.k);  // a bool is an int
    if (idx.kind != Val::Int || !idx.k || idx.floaty)
      fail("host_logic", "host logic in forward: " + what +
                             " with an index kernrl does not know at every size set");
    std::function<bool(const Val&)> holds = [&](const Val& v) {
      if (v.kind == Val::List && v.list_id == id) return true;
      return std::any_of(v.items.begin(), v.items.end(), holds);
    };
    if (holds(value))
      fail("host_logic", "host logic in forward: " + what + " puts `" + name + "` into itself");
    Val now = env.locals.at(name);  // (evaluating the index may have changed it)
    int64_t k = *idx.k;
    if (k < 0) k += static_cast<int64_t>(now.items.size());
    if (k < 0 || k >= static_cast<int64_t>(now.items.size()))
      fail("mismatch", "`" + py_text(target) +
                           "` in forward assigns past the end of the list "
                           "(Python raises an IndexError)");
    now.items[static_cast<size_t>(k)] = value;
    replace_list(env, id, now);
    return;
  }
  fail("host_logic",
       "forward assigns to `" + py_text(target) + "` (line " + std::to_string(line) + ")");
}

void PySide::name_alloc(const Val& v, const std::string& name) {
  if (v.kind == Val::Tensor) {
    TensorInfo& t = C.tensors[static_cast<size_t>(v.tensor)];
    if (t.role == "alloc" && t.name.empty()) t.name = name;
  }
}

Val PySide::binop(const std::string& op, const Val& a_in, const Val& b_in,
                  const std::string& text) {
  // `torch.float32` (a name of torch's) compares as the dtype it is.
  auto as_dtype = [](Val v) {
    if (v.kind == Val::Func) {
      std::string d = dtype_of_torch(v.name);
      if (!d.empty() && starts_with(v.name, "torch.")) {
        v = Val{};
        v.kind = Val::DType;
        v.dtype = d;
      }
    }
    return v;
  };
  const Val a = as_dtype(a_in), b = as_dtype(b_in);
  // `"weight_ih_l" + str_name`: two strings known as written (not f-strings kernrl could not
  // format) join.
  if (op == "+" && a.kind == Val::Str && b.kind == Val::Str && !a.fstring && !b.fstring) {
    Val s = a;
    s.text += b.text;
    return s;
  }
  // `(k,) * 3`: a tuple (or list) repeated a known integer number of times (a count below 1
  // gives an empty one, as in Python); `a + b` of two tuples (or two lists): joined. A range or
  // a layer list (seq 0) does neither. forward's lists are repeated and joined in eval, as new
  // lists of the function's own; one reaching here is a new list no name may change in place.
  if (op == "*" && ((a.kind == Val::List && a.seq && b.kind == Val::Int && b.k && !b.floaty) ||
                    (b.kind == Val::List && b.seq && a.kind == Val::Int && a.k && !a.floaty))) {
    const Val& seq = a.kind == Val::List ? a : b;
    const int64_t times = *(a.kind == Val::List ? b : a).k;
    Val r = seq;
    r.items.clear();
    if (times > 0 && static_cast<double>(times) * static_cast<double>(seq.items.size()) >
                         static_cast<double>(kMaxUnrolled))
      fail("host_logic", "`" + text + "` is longer than kernrl follows");
    for (int64_t k = 0; k < times && !seq.items.empty(); ++k)
      r.items.insert(r.items.end(), seq.items.begin(), seq.items.end());
    r.list_id = 0;
    return r;
  }
  if (op == "+" && a.kind == Val::List && b.kind == Val::List && a.seq && a.seq == b.seq) {
    Val r = a;
    r.items.insert(r.items.end(), b.items.begin(), b.items.end());
    r.list_id = 0;
    return r;
  }
  // A number known here: a float's value, a constant integer's.
  auto num = [](const Val& v) -> std::optional<double> {
    if (v.kind == Val::Float) return v.f;
    if (v.kind == Val::Int && v.k) return static_cast<double>(*v.k);
    return std::nullopt;
  };
  // `layer.activation is not F.relu`: torch.nn.functional's relu and gelu are two functions,
  // each one object however it is named (an nn.TransformerEncoderLayer's activation is one).
  auto torch_fn = [](const Val& v) {
    return v.kind == Val::Func &&
           (v.name == "torch.nn.functional.relu" || v.name == "torch.nn.functional.gelu");
  };
  if ((op == "is" || op == "is not") && torch_fn(a) && torch_fn(b))
    return make_bool((a.name == b.name) == (op == "is"));
  // `self.conv.bias is not None`, `stride is None`: a tensor, a number, a list or a layer is
  // never None (Void is Python's None here); anything kernrl does not know may be.
  auto not_none = [](const Val& v) {
    return v.kind == Val::Tensor || v.kind == Val::Int || v.kind == Val::Float ||
           v.kind == Val::Bool || v.kind == Val::List || v.kind == Val::Str ||
           v.kind == Val::DType || v.kind == Val::Layer;
  };
  if ((op == "is" || op == "is not") && (a.kind == Val::Void || b.kind == Val::Void) &&
      (not_none(a) || not_none(b) || (a.kind == Val::Void && b.kind == Val::Void)))
    return make_bool((a.kind == b.kind) == (op == "is"));
  // `hs in (32, 64)`: membership of a known integer in a list of known integers.
  // At every size set when `a` is a size expression; decided when the answer is the same at all.
  if ((op == "in" || op == "not in") && a.kind == Val::Int && b.kind == Val::List) {
    bool all_known = std::all_of(b.items.begin(), b.items.end(),
                                 [](const Val& v) { return v.kind == Val::Int && v.k; });
    auto values =
        a.k ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{*a.k}) : C.per_set(a);
    if (all_known && values && !values->empty()) {
      std::set<bool> answers;
      for (int64_t x : *values)
        answers.insert(std::any_of(b.items.begin(), b.items.end(),
                                   [&](const Val& v) { return *v.k == x; }) == (op == "in"));
      if (answers.size() == 1) return make_bool(*answers.begin());
    }
  }
  // `w * (1.0 / D_out)`, `0.5 * x`, `x / n`: a tensor by a number, a `mul` or `div` torch step
  // (on a suite built from KernelBench; else, and for any other operator, refused).
  if ((op == "*" || op == "/") && (a.kind == Val::Tensor) != (b.kind == Val::Tensor))
    return scalar_step(op, a.kind == Val::Tensor ? a : b, a.kind == Val::Tensor ? b : a,
                       b.kind == Val::Tensor, text);
  if (a.kind == Val::Tensor || b.kind == Val::Tensor) torch_op(op, text);
  if (auto r = real_binop(op, a, b, text)) return *r;
  if (op == "+" || op == "-" || op == "*" || op == "//" || op == "%") {
    if (a.kind == Val::Int && b.kind == Val::Int && (op == "//" || op == "%")) {
      // Python floors (-3 // 2 is -2, -1 % 3 is 2); kernrl's expressions truncate as C does.
      // They agree where neither side is negative: known values are computed here, and an
      // expression of the sizes must be non-negative at every size set.
      if (a.k && b.k) {
        if (*b.k == 0) fail("host_logic", "`" + text + "` divides by zero");
        if (*a.k == std::numeric_limits<int64_t>::min() && *b.k == -1)
          fail("host_logic", "`" + text + "` overflows a 64-bit integer");
        int64_t q = *a.k / *b.k, r = *a.k % *b.k;
        if (r != 0 && ((r < 0) != (*b.k < 0))) {
          --q;
          r += *b.k;
        }
        return make_int(op == "//" ? q : r);
      }
      auto pa = C.per_set(a), pb = C.per_set(b);
      bool non_negative = pa && pb &&
                          std::all_of(pa->begin(), pa->end(), [](int64_t v) { return v >= 0; }) &&
                          std::all_of(pb->begin(), pb->end(), [](int64_t v) { return v > 0; });
      if (!non_negative)
        fail("host_logic", "`" + text +
                               "` may take a negative operand at some size set, where "
                               "Python's floor division differs from kernrl's");
      return int_binop(op == "//" ? "/" : op, a, b, text);
    }
    if (a.kind == Val::Int && b.kind == Val::Int) return int_binop(op, a, b, text);
    if ((a.kind == Val::Int || a.kind == Val::Float) &&
        (b.kind == Val::Int || b.kind == Val::Float)) {
      auto x = num(a), y = num(b);
      if (x && y) {
        double r = op == "+"    ? *x + *y
                   : op == "-"  ? *x - *y
                   : op == "*"  ? *x * *y
                   : op == "//" ? (*y == 0 ? NAN : std::floor(*x / *y))
                                : (*y == 0 ? NAN : std::fmod(*x, *y));
        if (!std::isfinite(r)) fail("host_logic", "`" + text + "` is not a finite number");
        return make_float(r);
      }
    }
  }
  if (op == "/") {
    auto x = num(a), y = num(b);
    if (x && y && *y == 0) fail("host_logic", "`" + text + "` divides by zero");
    if (x && y) return make_float(*x / *y);
    if (a.kind == Val::Int && b.kind == Val::Int) {
      Val r;
      r.kind = Val::Ratio;
      r.items = {a, b};
      return r;
    }
  }
  if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=") {
    auto cmp = [&](auto x, auto y) {
      return op == "<"    ? x < y
             : op == ">"  ? x > y
             : op == "<=" ? x <= y
             : op == ">=" ? x >= y
             : op == "==" ? x == y
                          : x != y;
    };
    if (a.kind == Val::Int && b.kind == Val::Int) {
      auto pa = C.per_set(a), pb = C.per_set(b);
      if (pa && pb) {
        Val r;
        r.kind = Val::Bool;
        for (size_t s = 0; s < pa->size(); ++s) r.per_set.push_back(cmp((*pa)[s], (*pb)[s]));
        bool all = std::all_of(r.per_set.begin(), r.per_set.end(), [](char c) { return c; });
        bool none = std::none_of(r.per_set.begin(), r.per_set.end(), [](char c) { return c; });
        if (all || none) return make_bool(all);
        return r;
      }
    }
    if (a.kind == Val::DType && b.kind == Val::DType) return make_bool(cmp(a.dtype, b.dtype));
    // Two strings known as written (`self.conv.padding_mode == 'zeros'`; not an f-string).
    if (a.kind == Val::Str && b.kind == Val::Str && !a.fstring && !b.fstring &&
        (op == "==" || op == "!="))
      return make_bool((a.text == b.text) == (op == "=="));
    // Known numbers, one of them a float (`self.attn.dropout > 0.0`).
    if ((a.kind == Val::Float || b.kind == Val::Float) &&
        (a.kind == Val::Int || a.kind == Val::Float) &&
        (b.kind == Val::Int || b.kind == Val::Float)) {
      auto x = num(a), y = num(b);
      if (x && y) return make_bool(cmp(*x, *y));
    }
    // `tuple(t.shape) != tuple(u.shape[k:])`: sequences of integers, equal where every item is
    // (at each size set). As Python: a list never equals a tuple (torch.Size is a tuple); a
    // sequence kernrl does not know the kind of (range, reversed) is refused.
    if ((op == "==" || op == "!=") && a.kind == Val::List && b.kind == Val::List && a.seq &&
        b.seq && a.seq != b.seq)
      return make_bool(op == "!=");
    if ((op == "==" || op == "!=") && a.kind == Val::List && b.kind == Val::List && a.seq &&
        a.seq == b.seq) {
      bool ints = std::all_of(a.items.begin(), a.items.end(),
                              [](const Val& v) { return v.kind == Val::Int; }) &&
                  std::all_of(b.items.begin(), b.items.end(),
                              [](const Val& v) { return v.kind == Val::Int; });
      if (ints && a.items.size() != b.items.size()) return make_bool(op == "!=");
      std::vector<char> equal;  // per size set
      bool known = ints;
      for (size_t k = 0; known && k < a.items.size(); ++k) {
        auto pa = C.per_set(a.items[k]), pb = C.per_set(b.items[k]);
        if (!pa || !pb || pa->size() != pb->size()) {
          known = false;
          break;
        }
        if (equal.empty()) equal.assign(pa->size(), 1);
        for (size_t s = 0; s < pa->size(); ++s) equal[s] = equal[s] && (*pa)[s] == (*pb)[s];
      }
      if (known) {
        if (equal.empty()) return make_bool(op == "==");  // two empty sequences
        Val r;
        r.kind = Val::Bool;
        for (char e : equal) r.per_set.push_back(static_cast<char>((e != 0) == (op == "==")));
        bool all = std::all_of(r.per_set.begin(), r.per_set.end(), [](char c) { return c; });
        bool none = std::none_of(r.per_set.begin(), r.per_set.end(), [](char c) { return c; });
        if (all || none) return make_bool(all);
        return r;
      }
    }
  }
  if (op == "and" || op == "or") {  // (eval decides them first when a's truth is known)
    auto x = truth(a);
    if (x) return *x == (op == "or") ? a : b;
  }
  if (a.kind == Val::Unknown) fail("host_logic", "forward uses " + a.why + " in `" + text + "`");
  if (b.kind == Val::Unknown) fail("host_logic", "forward uses " + b.why + " in `" + text + "`");
  fail("host_logic", "host logic in forward: `" + text + "`");
}

std::optional<Val> PySide::real_binop(const std::string& op, const Val& a, const Val& b,
                                      const std::string& text) {
  auto number = [](const Val& v) {
    return v.kind == Val::Int || v.kind == Val::Float || v.kind == Val::Ratio;
  };
  if (!number(a) || !number(b)) return std::nullopt;
  // A float in Python: a Float, a true division of two integers, an integer made a float.
  auto real = [](const Val& v) { return v.kind != Val::Int || v.floaty; };
  auto known = [](const Val& v) {
    return (v.kind == Val::Float && v.f && v.e.empty()) || (v.kind == Val::Int && v.k);
  };
  if (!real(a) && !real(b)) return std::nullopt;  // integers: binop's integer arithmetic
  if (known(a) && known(b)) return std::nullopt;  // folded by binop
  if (op == "//" || op == "%")
    fail("host_logic", "`" + text +
                           "` floors a float computed from the sizes, which kernrl's real "
                           "expressions do not compute as Python does");
  if (op != "+" && op != "-" && op != "*" && op != "/") return std::nullopt;
  // Each operand parenthesised unless it is a name or an unsigned number.
  auto atom = [](const std::string& t) {
    bool simple = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    });
    return simple ? t : "(" + t + ")";
  };
  return real_value(atom(real_operand(a, text)) + " " + op + " " + atom(real_operand(b, text)),
                    text);
}

std::string PySide::real_operand(const Val& v, const std::string& text) {
  // An integer beside a float is converted to a double where the operation happens, as Python
  // converts an int operand of a float operation; its own arithmetic stays integer.
  if (v.kind == Val::Int && !v.floaty) return int_text(v);
  // -0.0 keeps its sign (`-0.0` in an expression is 0 - 0.0, which is +0.0).
  if (v.kind == Val::Float && v.f && v.e.empty() && *v.f == 0 && std::signbit(*v.f))
    return "-1.0 * 0.0";
  if (v.kind == Val::Ratio) {
    // Python divides two integers exactly rounded; C's double division of the two converted
    // agrees where both convert exactly (up to 2^53).
    for (const Val& part : v.items) {
      auto p = C.per_set(part);
      bool exact = p && std::all_of(p->begin(), p->end(), [](int64_t x) {
                     return x >= -(int64_t{1} << 53) && x <= (int64_t{1} << 53);
                   });
      if (!exact)
        fail("host_logic", "`" + text +
                               "` divides integers beyond 2^53 (or not known at every size set) "
                               "in floating point");
    }
  }
  auto t = real_text(v);
  if (!t) fail("host_logic", "host logic in forward: `" + text + "`");
  return *t;
}

Val PySide::real_value(const std::string& e, const std::string& text) {
  // Python computes the value when forward runs: a division by zero raises, an overflow of
  // kernrl's 64-bit integers is a value kernrl cannot compute.
  const RealVars reals = plan_reals(C.P);
  for (const Vars& s : C.size_sets) {
    double v = 0;
    try {
      v = eval_real_expr(e, plan_vars(C.P, s, 132), reals);
    } catch (const ExprError& x) {
      fail("host_logic", "`" + text + "` cannot be computed at some size set of " + C.P.id + " (" +
                             x.what() + ")");
    }
    if (!std::isfinite(v))
      fail("host_logic", "`" + text + "` is not a finite number at some size set of " + C.P.id);
  }
  Val r;
  r.kind = Val::Float;
  r.e = e;
  return r;
}

}  // namespace kernrl::kbimport::py
