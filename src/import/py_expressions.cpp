// The Python side (py_side.h): forward()'s expressions and calls.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>

#include "core/expr.h"
#include "import/nesting.h"
#include "import/py_side.h"

namespace kernrl::kbimport::py {

namespace {

// An integral double as Python's int() gives it, refused beyond 64 bits (and NaN or infinity,
// Python's errors) where a C++ cast is undefined.
int64_t float_to_int64(double f, const std::string& text) {
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
    throw ImportError("host_logic", "`" + text + "` is an integer beyond 64 bits or not a number");
  return static_cast<int64_t>(f);
}

}  // namespace

Val PySide::eval(Env& env, const PyExprP& e) {
  switch (e->kind) {
    case PyExpr::Num:
      return number(e->text);
    case PyExpr::Str: {
      Val s;
      s.kind = Val::Str;
      s.text = e->text;
      s.fstring = e->fstring;
      if (s.fstring)
        if (auto v = formatted(env, e->text)) {
          s.text = *v;
          s.fstring = false;
        }
      return s;
    }
    case PyExpr::Const:
      if (e->text == "True" || e->text == "False") return make_bool(e->text == "True");
      return Val{};
    case PyExpr::Name: {
      auto it = env.locals.find(e->text);
      if (it != env.locals.end()) return it->second;
      if (e->text == "self") {
        Val s;
        s.kind = Val::Layer;
        s.name = "self";
        return s;
      }
      return module_value(e->text);
    }
    case PyExpr::Attr:
      return attr(env, e);
    case PyExpr::Call:
      return call(env, e);
    case PyExpr::Index: {
      // `self.gru(x, h0)[0]`: the result of an nn.LSTM / nn.GRU call forward uses (rnn_call).
      const bool picks = e->kids[0]->kind == PyExpr::Call && e->kids[1]->kind == PyExpr::Num &&
                         std::all_of(e->kids[1]->text.begin(), e->kids[1]->text.end(),
                                     [](char c) { return c >= '0' && c <= '9'; });
      if (picks) {
        rnn_use_ = RnnUse{};
        rnn_use_.call = e->kids[0];
        rnn_use_.index = e->kids[1]->text.size() < 4 ? std::stoi(e->kids[1]->text) : 9999;
      }
      Val obj = eval(env, e->kids[0]);
      if (picks) rnn_use_ = RnnUse{};
      if (obj.kind == Val::Tensor) return tensor_index(env, obj, e->kids[1], py_text(e));
      if (e->kids[1]->kind == PyExpr::Other && e->kids[1]->text == "slice" &&
          e->kids[1]->kids.size() == 3)
        return sliced(env, obj, e->kids[1], py_text(e));
      Val idx = eval(env, e->kids[1]);
      // `self.features[0]`: a submodule of an nn.Sequential or nn.ModuleList, by module path.
      if (obj.kind == Val::Layer && file_instance(obj))
        fail("host_logic", "forward indexes `self." + obj.name +
                               "`, an instance of a class of the file (`" + py_text(e) + "`)");
      if (obj.kind == Val::Layer && obj.name != "self" && idx.kind == Val::Int && idx.k) {
        int64_t k = *idx.k;
        if (k < 0 && !C.P.modules.empty())
          k += static_cast<int64_t>(layer_children(obj, py_text(e)).size());
        if (k >= 0) {
          Val sub = obj;
          sub.name = obj.name + "." + std::to_string(k);
          sub.elem = "Module";  // its class, where needed, from module_classes()
          return sub;
        }
      }
      if (obj.kind == Val::List && idx.kind == Val::Int && idx.k) {
        int64_t k = *idx.k;
        if (k < 0) k += static_cast<int64_t>(obj.items.size());
        if (k < 0 || k >= static_cast<int64_t>(obj.items.size()))
          fail("mismatch", "`" + py_text(e) + "` in forward indexes past the end for this problem");
        return obj.items[static_cast<size_t>(k)];
      }
      if (obj.kind == Val::Unknown) fail("host_logic", "forward uses " + obj.why);
      fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
    }
    case PyExpr::BinOp: {
      Val a = eval(env, e->kids[0]);
      // `i + 1 < len(mods) and isinstance(mods[i + 1], nn.ReLU)`: the right side only when needed.
      // As Python: `a and b` is a when a is false, else b; `a or b` is a when a is true, else b.
      if (e->text == "and" || e->text == "or") {
        if (a.kind == Val::Tensor) torch_op("Tensor.__bool__", py_text(e));
        if (auto x = truth(a)) return *x == (e->text == "or") ? a : eval(env, e->kids[1]);
      }
      Val b = eval(env, e->kids[1]);
      if (e->text == "@") return matmul(a, b, py_text(e));
      // `[x] * n`, `n * [x]` (n an integer kernrl knows), `a + b` of lists: a new list of this
      // function's own (its items the same objects).
      if (e->text == "*" && (a.kind == Val::List) != (b.kind == Val::List) &&
          (a.kind == Val::List ? a : b).seq == 'l') {
        const Val& list = a.kind == Val::List ? a : b;
        Val n = a.kind == Val::List ? b : a;
        if (n.kind == Val::Bool && n.k) n = make_int(*n.k);  // a bool is an int: 0 or 1
        if (n.kind == Val::Float || (n.kind == Val::Int && n.floaty))
          fail("mismatch", "`" + py_text(e) +
                               "` in forward multiplies a list by a float: Python raises a "
                               "TypeError");
        if ((n.kind != Val::Int && n.kind != Val::Bool) || !n.k)
          fail("host_logic", "host logic in forward: `" + py_text(e) +
                                 "` repeats a list a number of times kernrl does not know at "
                                 "every size set");
        Val out = list;
        out.items.clear();
        for (int64_t r = 0; r < *n.k && !list.items.empty(); ++r) {
          if (out.items.size() + list.items.size() > static_cast<size_t>(kMaxUnrolled))
            fail("host_logic", "`" + py_text(e) + "` is longer than kernrl follows");
          out.items.insert(out.items.end(), list.items.begin(), list.items.end());
        }
        return own_list(env, out);
      }
      if (e->text == "+" && a.kind == Val::List && b.kind == Val::List && a.seq == 'l' &&
          b.seq == 'l') {
        Val out = a;
        out.items.insert(out.items.end(), b.items.begin(), b.items.end());
        if (out.items.size() > static_cast<size_t>(kMaxUnrolled))
          fail("host_logic", "`" + py_text(e) + "` is longer than kernrl follows");
        return own_list(env, out);
      }
      return binop(e->text, a, b, py_text(e));
    }
    case PyExpr::Unary: {
      Val v = eval(env, e->kids[0]);
      if (v.kind == Val::Tensor) torch_op(e->text, py_text(e));
      if (e->text == "-" && v.kind == Val::Int) return int_binop("-", make_int(0), v, py_text(e));
      if (e->text == "-" && v.kind == Val::Float && v.f) return make_float(-*v.f);
      if (e->text == "+") return v;
      if (e->text == "not") {
        auto b = truth(v);
        if (b) return make_bool(!*b);
      }
      fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
    }
    case PyExpr::Tuple:
    case PyExpr::List: {
      Val l;
      l.kind = Val::List;
      l.seq = e->kind == PyExpr::Tuple ? 't' : 'l';
      for (const auto& k : e->kids) l.items.push_back(eval(env, k));
      return e->kind == PyExpr::List ? own_list(env, l) : l;
    }
    case PyExpr::Other:
      // `a if c else b` with a condition kernrl knows: only the branch taken is evaluated.
      if (e->text == "conditional expression" && e->kids.size() == 3) {
        Val cond = eval(env, e->kids[1]);
        if (auto c = truth(cond)) return eval(env, e->kids[*c ? 0 : 2]);
        if (cond.kind == Val::Unknown)
          fail("host_logic", "forward uses " + cond.why + " in `" + py_text(e) + "`");
      }
      if (e->text == "list comprehension" && e->kids.size() >= 3) return comprehension(env, e);
      if (e->text == "generator expression")  // lazy and single-use: see eval_args in call()
        fail("host_logic", "host logic in forward: a generator expression (`" + py_text(e) +
                               "`) other than as the argument of any(), all(), tuple() or list()");
      if (e->text == "dims" || e->text == "slice")
        fail("host_logic", "host logic in forward: the index `" + py_text(e) + "`");
      fail("host_logic", "host logic in forward: a " + e->text);
  }
  fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
}

std::optional<std::string> PySide::formatted(Env& env, const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') return std::nullopt;  // a lone `}`: Python rejects the f-string
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = text.find('}', i + 1);
    if (close == std::string::npos) return std::nullopt;
    const std::string field = text.substr(i + 1, close - i - 1);
    // A format spec, a conversion, `=`, a nested field, a string or an index: not followed.
    if (field.find_first_of("{!:=\"'[\\") != std::string::npos) return std::nullopt;
    PyExprP fe;
    try {
      std::vector<PyLine> ls = py_lines(field);
      if (ls.size() != 1 || ls[0].toks.empty()) return std::nullopt;
      fe = py_parse_expr(ls[0].toks, 0, ls[0].toks.size());
    } catch (const ImportError&) {
      return std::nullopt;
    }
    // Names, numbers and integer arithmetic only; every name is read (a pure look-up) and must
    // be an integer kernrl knows before any arithmetic runs, so that nothing is computed on
    // a tensor. A plain string only as the whole field.
    bool ok = true;
    std::function<void(const PyExprP&)> check = [&](const PyExprP& x) {
      if (!ok) return;
      if (x->kind == PyExpr::Name) {
        Val v = x->text == "self" ? Val{} : eval(env, x);
        ok = (v.kind == Val::Int && v.k && !v.floaty) ||
             (v.kind == Val::Str && !v.fstring && x == fe);
        return;
      }
      if (x->kind == PyExpr::Num) {
        Val v = number(x->text);
        ok = v.kind == Val::Int && v.k;
        return;
      }
      if (x->kind == PyExpr::Unary && (x->text == "-" || x->text == "+")) return check(x->kids[0]);
      if (x->kind == PyExpr::BinOp && (x->text == "+" || x->text == "-" || x->text == "*" ||
                                       x->text == "//" || x->text == "%")) {
        check(x->kids[0]);
        check(x->kids[1]);
        return;
      }
      ok = false;
    };
    Val v;
    try {
      check(fe);
      if (!ok) return std::nullopt;
      v = eval(env, fe);
    } catch (const ImportError&) {
      return std::nullopt;
    }
    if (v.kind == Val::Int && v.k && !v.floaty)
      out += std::to_string(*v.k);
    else if (v.kind == Val::Str && !v.fstring)
      out += v.text;
    else
      return std::nullopt;
    i = close;
  }
  return out;
}

Val PySide::builtin_getattr(Env& env, const PyExprP& e) {
  const std::string text = py_text(e);
  // With a default: where kernrl knows the layer has the attribute, what it is (the default is
  // evaluated, as Python does, and not used); anywhere else whether it has it is not decided.
  const bool with_default = e->kids.size() == 4 && e->kwargs.empty();
  if (with_default) {
    // The object is read twice (here and as obj.name): it must be a plain attribute path.
    std::function<bool(const PyExprP&)> plain = [&](const PyExprP& x) {
      if (x->kind == PyExpr::Name) return true;
      if (x->kind == PyExpr::Attr) return plain(x->kids[0]);
      if (x->kind == PyExpr::Index) return x->kids[1]->kind == PyExpr::Num && plain(x->kids[0]);
      return false;
    };
    Val obj = plain(e->kids[1]) ? eval(env, e->kids[1]) : Val{};
    Val n = eval(env, e->kids[2]);
    eval(env, e->kids[3]);
    std::optional<bool> has;
    if (obj.kind == Val::Layer && obj.name != "self" && n.kind == Val::Str && !n.fstring)
      has = has_setting(obj, n.text);
    if (!has || !*has)
      fail("host_logic", "forward calls `getattr` with a default (`" + text +
                             "`); kernrl follows it where it knows the layer has that attribute "
                             "(a layer a composite builds inside it, or a setting of nn.Linear, "
                             "nn.LayerNorm, nn.Dropout, nn.MultiheadAttention, "
                             "nn.TransformerEncoderLayer or nn.TransformerEncoder), else "
                             "`getattr(obj, name)` only, as `obj.name`");
  }
  if (e->kids.size() != 3 + (with_default ? 1 : 0) || !e->kwargs.empty())
    fail("host_logic", "forward calls `getattr` with other than two arguments (`" + text + "`)");
  Val n = eval(env, e->kids[2]);
  if (n.kind != Val::Str || n.fstring)
    fail("host_logic", "forward calls `getattr` with a name kernrl cannot compute (`" + text +
                           "`); kernrl follows a string literal, an f-string of integers it "
                           "knows, or a concatenation of those");
  // obj.<name> only where <name> could be written so: an identifier (getattr also finds
  // attributes no expression can name, which kernrl does not follow).
  bool ident = !n.text.empty() && !std::isdigit(static_cast<unsigned char>(n.text[0]));
  for (char c : n.text) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ident)
    fail("host_logic", "forward calls `getattr` with the name '" + n.text +
                           "', which is not an identifier (`" + text + "`)");
  // Python mangles a private name written in a class (`self.__div` is `self._ModelNew__div`)
  // but not a name getattr is given: neither the one nor the other is obj.<name> as kernrl
  // reads it (a name as written in the class).
  const bool dunder = n.text.size() > 4 && n.text.compare(0, 2, "__") == 0 &&
                      n.text.compare(n.text.size() - 2, 2, "__") == 0;
  if (!dunder && n.text[0] == '_' && n.text.find("__") != std::string::npos)
    fail("host_logic", "forward calls `getattr` with the private name '" + n.text + "' (`" + text +
                           "`): Python mangles a private name written in a class "
                           "(`self.__x` is `self._ModelNew__x`) but not one getattr is given, "
                           "which kernrl does not follow");
  auto a = std::make_shared<PyExpr>();
  a->kind = PyExpr::Attr;
  a->text = n.text;
  a->kids = {e->kids[1]};
  a->line = e->line;
  return attr(env, a);
}

Val PySide::attr(Env& env, const PyExprP& e) {
  const PyExprP& obj_e = e->kids[0];
  // A private name (`__div`): Python mangles it by the class it is written in (`_ModelNew__div`),
  // so `self.__div` in a method is the attribute its class's __init__ sets as `self.__div`, and
  // is followed so; written anywhere else (a function of the module, another object) or by its
  // mangled name, it is another attribute than kernrl's by that name.
  const std::string& n = e->text;
  const bool dunder =
      n.size() > 4 && n.compare(0, 2, "__") == 0 && n.compare(n.size() - 2, 2, "__") == 0;
  const bool self_in_method =
      obj_e->kind == PyExpr::Name && obj_e->text == "self" && !env.locals.count("self");
  if (!dunder && n.compare(0, 2, "__") == 0 && !self_in_method)
    fail("host_logic", "forward reads the private attribute `" + py_text(e) +
                           "` outside a method of its class (Python mangles a private name by "
                           "the class it is written in)");
  if (!dunder && n.size() > 1 && n[0] == '_' && n[1] != '_' && n.find("__") != std::string::npos)
    fail("host_logic", "forward reads `" + py_text(e) +
                           "`, a private attribute by its mangled name, which kernrl does not "
                           "follow");
  if (self_in_method) return self_attr(e->text);
  Val obj = eval(env, obj_e);
  switch (obj.kind) {
    case Val::Tensor: {
      const TensorInfo& t = C.tensors[static_cast<size_t>(obj.tensor)];
      if (obj.elem == "transposed" && e->text != "T" && e->text != "mT")
        torch_op("Tensor." + e->text + " of a transposed tensor", py_text(e));
      if (e->text == "shape") {
        Val l;
        l.kind = Val::List;
        l.seq = 't';
        l.items = t.shape;
        return l;
      }
      if (e->text == "dtype") {
        Val d;
        d.kind = Val::DType;
        d.dtype = t.dtype;
        return d;
      }
      if (e->text == "is_cuda") return make_bool(true);  // kernrl's tensors are on the GPU
      if (e->text == "device") {
        Val d;
        d.kind = Val::Device;
        return d;
      }
      if (e->text == "ndim") return make_int(static_cast<int64_t>(t.shape.size()));
      if ((e->text == "T" || e->text == "mT") &&
          (obj.elem == "lazy" || obj.elem == "permuted" || obj.elem == "reshaped") &&
          t.shape.size() >= 2) {
        std::vector<std::pair<std::string, Val>> none;
        int64_t r = static_cast<int64_t>(t.shape.size());
        if (e->text == "T" && r != 2)
          torch_op("Tensor.T of a tensor that is not a matrix", py_text(e));
        return view_op(obj, "transpose", {make_int(r - 2), make_int(r - 1)}, none, py_text(e));
      }
      if ((e->text == "T" || e->text == "mT") && t.shape.size() == 2) {
        Val tr = obj;
        tr.elem = tr.elem == "transposed" ? "" : "transposed";
        return tr;
      }
      Val m;
      m.kind = Val::Func;
      m.name = "Tensor." + e->text;
      m.tensor = obj.tensor;
      return m;
    }
    case Val::Ext: {
      Val f;
      f.kind = Val::ExtFn;
      f.ext = obj.ext;
      f.name = e->text;
      return f;
    }
    case Val::Layer: {
      if (obj.name == "self") return self_attr(e->text);
      // An instance of a class of the file: its attributes are followed within its own forward
      // only (what its __init__ sets is read there, with its constructor's arguments).
      if (!relative(obj.name))
        fail("host_logic", "the forward of " + self_name() + " reads `" + py_text(e) +
                               "` of `self." + obj.name +
                               "`, a layer outside it; kernrl follows a submodule's own layers");
      if (std::string holder = held_by_file_instance(obj.name); !holder.empty())
        fail("host_logic", "forward reads `" + py_text(e) + "` of `self." + obj.name +
                               "`, a layer of `self." + holder +
                               "` (an instance of a class of the file), outside that class's "
                               "forward; kernrl follows such layers in its own forward only");
      if (file_instance(obj))
        fail("host_logic", "forward reads `" + py_text(e) + "`, an attribute of `self." + obj.name +
                               "` (an instance of a class of the file) outside that class's "
                               "forward; kernrl follows such attributes in its own forward only");
      // A suite built from KernelBench names parameters by module path (`conv.weight`).
      std::string path = obj.name + "." + e->text;
      if (stale_.count(path))
        fail("host_logic", "forward reads `" + py_text(e) +
                               "` after updating it in place; kernrl does not follow a layer's "
                               "running statistics across a forward");
      // A layer built without a bias, affine parameters or running statistics has None for
      // them, whatever the problem holds: the constructor's `bias=False` is not the attribute.
      static const std::map<std::string, std::vector<const char*>> flags = {
          {"bias", {"bias", "affine", "elementwise_affine"}},
          {"weight", {"affine", "elementwise_affine"}},
          {"running_mean", {"track_running_stats"}},
          {"running_var", {"track_running_stats"}},
          {"num_batches_tracked", {"track_running_stats"}},
          // nn.MultiheadAttention: a packed projection where kdim == vdim == embed_dim, its bias
          // where built with one (py_composites.cpp).
          {"in_proj_weight", {"#qkv_same"}},
          {"in_proj_bias", {"#bias"}}};
      if (auto fl = flags.find(e->text); fl != flags.end())
        if (auto cfg = layer_config(obj))
          for (const char* k : fl->second) {
            auto c = cfg->find(k);
            if (c == cfg->end()) continue;
            auto on = truth(c->second);
            if (!on && c->second.kind == Val::Unknown && k[0] == '#')
              fail("host_logic", "`" + py_text(e) + "` depends on " + c->second.why);
            if (!on)
              fail("host_logic", "`" + py_text(e) + "` depends on the layer's `" + k +
                                     "`, which kernrl cannot decide");
            if (!*on) return Val{};
          }
      for (const auto& p : C.P.parameters)
        if (p.name == path) return problem_param(path, "self." + path);
      // A submodule of a submodule (`self.block.conv`, `self.features[0]`): a Layer by path.
      for (const auto& p : C.P.parameters)
        if (p.name.size() > path.size() && p.name.compare(0, path.size() + 1, path + ".") == 0) {
          Val sub = obj;
          sub.name = path;
          sub.elem = "Module";
          return sub;
        }
      // A layer a composite torch.nn module builds inside itself (`self.t.layers[0].dropout`,
      // which has no parameter): a Layer by path, its class the one torch builds.
      if (!layer_ctor(path))
        if (auto in = built_inside(path)) {
          if (!in->why.empty())
            fail("host_logic",
                 "forward reads `" + py_text(e) + "`, which " + in->owner +
                     " builds inside itself; kernrl does not know its settings: " + in->why);
          Val sub = obj;
          sub.name = path;
          sub.elem = in->non_dynamic ? "Module" : in->cls;
          return sub;
        }
      // kernrl's own problems name such parameters with underscores (`conv_weight`,
      // `features_0_weight`).
      std::string full = path;
      std::replace(full.begin(), full.end(), '.', '_');
      // (On a suite, named by module path, a layer's own weight or bias is never a top-level
      // parameter of that name.)
      for (const auto& p : C.P.parameters)
        if (p.name == full || (p.name == e->text && (C.P.torchscript.empty() ||
                                                     (e->text != "weight" && e->text != "bias"))))
          return problem_param(p.name, "self." + path);
      // A constructor setting of a layer (`self.conv.stride`, `self.ln.eps`).
      if (auto cfg = layer_config(obj)) {
        if (e->text == "bias" || e->text == "weight") return problem_param(path, "self." + path);
        auto c = cfg->find(e->text);
        if (c != cfg->end()) return c->second;
      }
      if (e->text == "training") return training_mode("self." + path);
      // A layer a torch.nn module builds inside itself (`transformer.layers.0.dropout` of an
      // nn.TransformerEncoderLayer): no constructor call of the file gives its settings.
      if (!layer_ctor(obj.name) && std::none_of(C.P.parameters.begin(), C.P.parameters.end(),
                                                [&](const auto& p) { return p.name == e->text; })) {
        // One of a composite whose constructor kernrl follows (nn.TransformerEncoder, ...): a
        // setting it does not model, or a composite it cannot follow.
        if (auto in = built_inside(obj.name))
          fail("host_logic",
               "forward reads `" + py_text(e) + "` of `self." + obj.name + "`, a layer that " +
                   in->owner + " builds inside itself; " +
                   (in->why.empty() ? "kernrl does not know that setting of it (docs/"
                                      "import-kernelbench.md lists those it knows)"
                                    : "kernrl does not know its settings: " + in->why));
        for (std::string up = obj.name; up.find('.') != std::string::npos;) {
          up = up.substr(0, up.rfind('.'));
          auto m = std::find_if(C.P.modules.begin(), C.P.modules.end(),
                                [&](const auto& x) { return x.first == up; });
          if (m == C.P.modules.end() || m->second.empty()) continue;
          const std::string& cls = m->second.front();
          if (cls == "Sequential" || cls == "ModuleList" || cls == "ModuleDict" ||
              cls.find(':') != std::string::npos)
            continue;
          fail("host_logic", "forward reads `" + py_text(e) + "` of `self." + obj.name +
                                 "`, a layer that nn." + cls + " `self." + up +
                                 "` builds inside itself; kernrl does not know the settings of "
                                 "the layers torch.nn modules build inside them");
        }
      }
      // A layer of the reference's modules that no constructor call of the file kernrl reads
      // builds (one built in a loop into a list, then `nn.Sequential(*layers)`).
      if (!layer_ctor(obj.name) &&
          std::none_of(C.P.parameters.begin(), C.P.parameters.end(),
                       [&](const auto& p) { return p.name == e->text; }) &&
          std::any_of(C.P.modules.begin(), C.P.modules.end(),
                      [&](const auto& x) { return x.first == obj.name; })) {
        std::string top = obj.name.substr(0, obj.name.find('.'));
        auto w = self_path_.empty() ? init_list_why_.find(top) : init_list_why_.end();
        fail("host_logic",
             "forward reads `" + py_text(e) + "` of `self." + obj.name +
                 "`, which ModelNew's __init__ does not build by a constructor call "
                 "kernrl reads (an attribute's, or an argument of nn.Sequential(...) "
                 "or nn.ModuleList([...]) written in place), so kernrl does not know "
                 "its settings" +
                 (w != init_list_why_.end() ? " (`self." + top + "` is set from " + w->second + ")"
                                            : std::string()));
      }
      return problem_param(e->text, "self." + path);
    }
    case Val::Func: {
      Val f = obj;
      f.name = obj.name + "." + e->text;
      return f;
    }
    case Val::DType:
    case Val::Device:
      return obj;
    default:
      break;
  }
  if (obj.kind == Val::Unknown) fail("host_logic", "forward uses " + obj.why);
  fail("host_logic", "host logic in forward: `" + py_text(e) + "`");
}

std::vector<Val> PySide::shape_args(Env& env, const PyExprP& call, size_t first,
                                    std::string* dtype) {
  std::vector<Val> shape;
  for (size_t i = first; i < call->kids.size(); ++i) {
    Val v = eval(env, call->kids[i]);
    if (v.kind == Val::List) {
      for (const auto& d : v.items) shape.push_back(as_int(d, py_text(call)));
    } else {
      shape.push_back(as_int(v, py_text(call)));
    }
  }
  for (const auto& [k, v] : call->kwargs) {
    if (k == "dtype") {
      std::string d = dtype_of_torch(resolve(py_dotted(v)));
      if (d.empty() && (v->kind == PyExpr::Attr || v->kind == PyExpr::Name)) {
        Val dv = eval(env, v);  // `x.dtype`, a dtype held by a name
        if (dv.kind == Val::DType) d = dv.dtype;
      }
      if (d.empty()) fail("host_logic", "forward allocates with dtype `" + py_text(v) + "`");
      *dtype = d;
    }
    if (k == "size") {
      Val s = eval(env, v);
      if (s.kind == Val::List)
        for (const auto& d : s.items) shape.push_back(as_int(d, py_text(call)));
    }
  }
  return shape;
}

Val PySide::as_int(const Val& v, const std::string& text) {
  if (v.kind == Val::Int) return v;
  if (v.kind == Val::Float && v.f && std::floor(*v.f) == *v.f)
    return make_int(float_to_int64(*v.f, text));
  if (v.kind == Val::Unknown) fail("host_logic", "forward uses " + v.why + " in `" + text + "`");
  fail("host_logic", "host logic in forward: `" + text + "` needs an integer kernrl can compute");
}

Val PySide::call_def(Env& caller, size_t header, bool method, const PyExprP& e) {
  std::vector<Val> args;
  std::vector<std::pair<std::string, Val>> kwargs;
  for (size_t i = 1; i < e->kids.size(); ++i) args.push_back(eval(caller, e->kids[i]));
  for (const auto& kw : e->kwargs)
    kwargs.push_back({kw.first, kw.first == "*" ? Val{} : eval(caller, kw.second)});
  return run_def(header, method, args, kwargs);
}

Val PySide::run_def(size_t header, bool method, const std::vector<Val>& args,
                    const std::vector<std::pair<std::string, Val>>& kwargs) {
  const auto& t = lines_[header].toks;
  const std::string fn = (method ? "self." : "") + t[1].text;
  const std::string where = "`" + fn + "` (line " + std::to_string(lines_[header].line) + ")";
  if (def_depth_ >= 16)
    fail("host_logic", "forward calls " + where + " more than 16 calls deep (recursion)");
  bool static_method = false;
  // Its decorators (the lines just above it that start with `@`): only a lone @staticmethod.
  for (size_t d = header;
       d > 0 && !lines_[d - 1].toks.empty() && tok_is(lines_[d - 1].toks[0], "@") &&
       lines_[d - 1].indent == lines_[header].indent;
       --d) {
    std::string deco;
    for (const auto& x : lines_[d - 1].toks) deco += x.text;
    if (method && deco == "@staticmethod" && !static_method && d == header)
      static_method = true;
    else
      fail("host_logic", "forward calls " + where + ", which is decorated (`" + deco + "`)");
  }
  // The parameters: name, and the tokens of its default (empty: none).
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> params;
  if (t.size() < 4 || !tok_is(t[2], "("))
    fail("host_logic", "forward calls " + where + ", whose parameters kernrl cannot read");
  int d = 0;
  size_t close = 2;
  for (size_t k = 2; k < t.size(); ++k) {
    if (t[k].kind == PyTok::Op && (t[k].text == "(" || t[k].text == "[" || t[k].text == "{")) ++d;
    if (t[k].kind == PyTok::Op && (t[k].text == ")" || t[k].text == "]" || t[k].text == "}") &&
        --d == 0) {
      close = k;
      break;
    }
  }
  for (size_t k = 3; k < close;) {
    size_t end = k;
    int dd = 0;
    for (; end < close; ++end) {
      const PyTok& x = t[end];
      if (x.kind == PyTok::Op && (x.text == "(" || x.text == "[" || x.text == "{")) ++dd;
      if (x.kind == PyTok::Op && (x.text == ")" || x.text == "]" || x.text == "}")) --dd;
      if (dd == 0 && tok_is(x, ",")) break;
    }
    if (t[k].kind != PyTok::Name)  // *args, **kwargs, a bare `*` or `/`
      fail("host_logic", "forward calls " + where + ", which takes `" + t[k].text +
                             "` parameters; kernrl binds arguments by position and name only");
    size_t def_at = end;
    for (size_t c = k; c < end; ++c)
      if (tok_is(t[c], "=")) {
        def_at = c;
        break;
      }
    params.push_back({t[k].text, {def_at < end ? def_at + 1 : end, end}});
    k = end + 1;
  }
  if (method && !static_method) {
    if (params.empty()) fail("host_logic", "forward calls " + where + ", a method without `self`");
    params.erase(params.begin());
  }
  Env local;
  if (args.size() > params.size())
    fail("mismatch", "forward calls " + where + " with " + std::to_string(args.size()) +
                         " arguments; it takes " + std::to_string(params.size()));
  for (size_t i = 0; i < args.size(); ++i) local.locals[params[i].first] = args[i];
  for (const auto& [k, v] : kwargs) {
    bool known = false;
    for (const auto& p : params) known = known || p.first == k;
    if (!known || local.locals.count(k))
      fail("host_logic", "forward calls " + where + " with the keyword argument `" + k +
                             "`, which kernrl cannot bind");
    local.locals[k] = v;
  }
  for (const auto& [pname, def] : params) {
    if (local.locals.count(pname)) continue;
    if (def.first >= def.second)
      fail("mismatch", "forward calls " + where + " without its argument `" + pname + "`");
    // Python evaluated the default where the function was defined (a class body's names, a
    // module constant's value then): only a default that reads no name is followed.
    PyExprP dv = py_parse_expr(t, def.first, def.second);
    bool reads_names = false;
    std::function<void(const PyExprP&)> scan = [&](const PyExprP& x) {
      if (x->kind == PyExpr::Name) reads_names = true;
      for (const auto& k : x->kids) scan(k);
      for (const auto& kw : x->kwargs) scan(kw.second);
    };
    scan(dv);
    if (reads_names)
      fail("host_logic", "forward calls " + where + " without its argument `" + pname +
                             "`, whose default `" + py_text(dv) +
                             "` reads names (Python evaluated it where the function was defined)");
    Env module_scope;
    local.locals[pname] = eval(module_scope, dv);
  }
  Block b = body_of(lines_, header);
  {
    Nesting nest(def_depth_);
    exec_lines(local, b.begin, b.end);
  }
  if (local.brk || local.cont)
    fail("host_logic", "`break` or `continue` outside a loop in " + where);
  return local.ret ? *local.ret : Val{};
}

void PySide::exec_init_assert(Env& env, const PyLine& l) {
  const auto& t = l.toks;
  size_t comma = t.size();
  int d = 0;
  for (size_t k = 1; k < t.size(); ++k) {
    if (t[k].kind == PyTok::Op && (t[k].text == "(" || t[k].text == "[" || t[k].text == "{")) ++d;
    if (t[k].kind == PyTok::Op && (t[k].text == ")" || t[k].text == "]" || t[k].text == "}")) --d;
    if (d == 0 && tok_is(t[k], ",")) {
      comma = k;
      break;
    }
  }
  PyExprP cond = py_parse_expr(t, 1, comma);
  const std::string what = "`assert " + py_text(cond) + "` (line " + std::to_string(l.line) + ")";
  std::optional<bool> c;
  try {
    c = truth(eval(env, cond));
  } catch (const ImportError&) {
  }
  if (!c) fail("host_logic", "ModelNew.__init__ runs " + what + ", which kernrl cannot decide");
  if (!*c)
    fail("mismatch", "ModelNew.__init__ runs " + what +
                         ", which fails for this problem: PyTorch raises when it builds ModelNew");
}

Val PySide::module_walk(const PyExprP& e, const std::string& m) {
  const std::string text = py_text(e);
  if (e->kids.size() != 1 || !e->kwargs.empty())
    fail("host_logic",
         "forward calls `" + text + "` with arguments; kernrl follows `self." + m + "()` only");
  if (e.get() != walk_ok_)
    fail("host_logic", "forward calls `" + text +
                           "` other than as what a generator passed to any() or all() iterates "
                           "over: it yields a module registered under two names once, which "
                           "kernrl's list of the reference's modules does not tell");
  if (!self_path_.empty())
    fail("host_logic", "the forward of " + self_name() + " calls `" + text +
                           "`; kernrl follows ModelNew's own only");
  if (C.P.modules.empty())
    fail("host_logic", "forward calls `" + text +
                           "`: kernrl knows the modules on suites built from KernelBench only "
                           "(problem.yaml's modules; a suite built before kernrl recorded them "
                           "needs building again)");
  if (std::string why = layers_built_as_reference(); !why.empty())
    fail("host_logic",
         "forward calls `" + text +
             "`, whose modules kernrl knows from the reference's module only: " + why);
  if (m == "named_modules" || m == "named_children")
    fail("host_logic",
         "forward calls `" + text +
             "`: it names a module registered under two names "
             "once, by its first name, which kernrl's list of the reference's modules "
             "does not tell; kernrl follows self.modules() and self.children()");
  Val out;
  out.kind = Val::List;
  if (m == "modules") {
    Val self;
    self.kind = Val::Layer;
    self.name = "self";
    out.items.push_back(self);
  }
  for (const auto& [path, classes] : C.P.modules) {
    if (m == "children" && path.find('.') != std::string::npos) continue;
    Val layer;
    layer.kind = Val::Layer;
    layer.name = path;
    layer.elem = classes.empty() ? "Module" : classes.front();
    out.items.push_back(layer);
  }
  return out;
}

Val PySide::call(Env& env, const PyExprP& e) {
  const PyExprP& callee_e = e->kids[0];
  std::string text = py_text(e);
  // self.modules() and the like of ModelNew, unless ModelNew defines or sets that name itself.
  if (callee_e->kind == PyExpr::Attr && callee_e->kids[0]->kind == PyExpr::Name &&
      callee_e->kids[0]->text == "self" && !env.locals.count("self")) {
    const std::string& m = callee_e->text;
    if ((m == "modules" || m == "children" || m == "named_modules" || m == "named_children") &&
        !class_defs_.count(m) && !init_attrs_.count(m) && !init_attrs_changed_.count(m) &&
        !init_attrs_undecided_.count(m) && !init_setattr_)
      return module_walk(e, m);
  }
  // The same methods of anything else (`self.net.modules()`, `model.modules()` in a function of
  // the module): kernrl knows the modules of ModelNew itself only, as its methods reach them.
  if (callee_e->kind == PyExpr::Attr &&
      (callee_e->text == "modules" || callee_e->text == "children" ||
       callee_e->text == "named_modules" || callee_e->text == "named_children") &&
      !(callee_e->kids[0]->kind == PyExpr::Name && callee_e->kids[0]->text == "self" &&
        !env.locals.count("self")))
    fail("host_logic", "forward calls `" + text + "`; kernrl follows only `self." + callee_e->text +
                           "()` of ModelNew written in its own methods (as what a generator "
                           "passed to any() or all() iterates over)");
  // Methods of tensors.
  if (callee_e->kind == PyExpr::Attr) {
    Val obj;
    bool self_obj = callee_e->kids[0]->kind == PyExpr::Name && callee_e->kids[0]->text == "self";
    if (!self_obj) obj = eval(env, callee_e->kids[0]);
    if (!self_obj && obj.kind == Val::Tensor) return tensor_method(env, obj, callee_e->text, e);
  }
  Val f = eval(env, callee_e);
  std::vector<Val> args;
  auto eval_args = [&]() {
    args.clear();
    // A generator expression as the only argument of a builtin that consumes it at once and in
    // full (any, all, tuple, list): the items it yields, for any() and all() up to the first
    // that decides (Python takes no further item). Anywhere else it is refused (eval).
    if (e->kids.size() == 2 && e->kids[1]->kind == PyExpr::Other &&
        e->kids[1]->text == "generator expression" && e->kids[1]->kids.size() >= 3 &&
        f.kind == Val::Func &&
        (f.name == "any" || f.name == "all" || f.name == "tuple" || f.name == "list")) {
      // any() and all() do not depend on how often an item comes: self.modules() is followed.
      const PyExpr* walk = walk_ok_;
      if (f.name == "any" || f.name == "all") walk_ok_ = e->kids[1]->kids[2].get();
      try {
        args.push_back(f.name == "any" || f.name == "all"
                           ? comprehension(env, e->kids[1], f.name == "any", text)
                           : comprehension(env, e->kids[1]));
      } catch (...) {
        walk_ok_ = walk;
        throw;
      }
      walk_ok_ = walk;
      return;
    }
    for (size_t i = 1; i < e->kids.size(); ++i) args.push_back(eval(env, e->kids[i]));
  };
  if (f.kind == Val::ExtFn) {
    eval_args();
    std::vector<std::pair<std::string, Val>> kwargs;
    for (const auto& [k, v] : e->kwargs) {
      if (k == "*") fail("host_logic", "forward passes *args to the extension (`" + text + "`)");
      kwargs.push_back({k, eval(env, v)});
    }
    C.exts[static_cast<size_t>(f.ext)].used = true;
    host_calls.push_back(f.name);
    // A view reaches no kernel, wherever it is in the arguments.
    std::function<void(const Val&)> no_view = [&](const Val& a) {
      // (A contiguous narrow of a buffer is that buffer from an offset, as in PyTorch: its
      // data pointer, Converter::offset_in_storage.)
      if (a.kind == Val::Tensor && a.elem == "lazy" && C.offset_in_storage(a.tensor)) return;
      // (A transpose or permute of a buffer is that buffer's memory read through PyTorch's
      // strides, Converter::reordered_strides: what the wrapper reads of it is followed.)
      if (a.kind == Val::Tensor && a.elem == "lazy" && C.reordered_strides(a.tensor)) return;
      if (a.kind == Val::Tensor && (a.elem == "lazy" || a.elem == "permuted"))
        fail("torch_op_in_forward",
             "forward passes a view (transpose, permute, narrow, split or chunk, or an operator's "
             "result laid out as one, `" +
                 C.tensors[static_cast<size_t>(a.tensor)].origin + "`) to `" + f.name +
                 "`: in PyTorch its data pointer is into memory laid out by its strides; kernrl "
                 "gives kernels whole, contiguous buffers (.contiguous() of a view that is not "
                 "contiguous copies it)");
      for (const Val& i : a.items) no_view(i);
    };
    for (const Val& a : args) no_view(a);
    for (const auto& kv : kwargs) no_view(kv.second);
    for (Val& a : args) {
      if (a.kind == Val::Unknown)
        fail("host_logic", "forward passes " + a.why + " to `" + f.name + "`");
      if (a.kind == Val::Tensor && a.elem == "transposed")
        fail("torch_op_in_forward", "forward passes a transposed tensor (`.t()`, `.T`) to `" +
                                        f.name + "`; kernrl passes each tensor as it is");
    }
    note_stat_reads(args);
    for (const auto& kv : kwargs) note_stat_reads({kv.second});
    // A BatchNorm's running statistics given to the extension (whose kernels may update them, as
    // nn.BatchNorm does in training mode): on a suite, the kernels get a copy made before the
    // call, since kernrl's inputs stay unchanged; in training mode the output does not depend
    // on them. Passing a statistic to two calls (one could read what the other wrote) is refused.
    auto give_copy = [&](Val& a) {
      if (C.P.torchscript.empty() || !is_running_stat(a)) return;
      const std::string stat = C.tensors[static_cast<size_t>(a.tensor)].name;
      if (!stats_copied_.insert(stat).second)
        fail("host_logic", "forward passes the running statistic `" + stat +
                               "` to the extension twice; kernrl gives each call a copy of it, "
                               "so one call would not see what another wrote");
      a = C.copy_of(a, text, "torch_op_in_forward");
      note_once("forward passes BatchNorm's running statistics to `" + f.name +
                "`: its kernels get a copy made before the call (a reshape step, timed), which "
                "they may update as nn.BatchNorm does; kernrl's inputs stay unchanged, and in "
                "training mode the output does not depend on them");
    };
    for (Val& a : args) give_copy(a);
    for (auto& kv : kwargs) give_copy(kv.second);
    Val r = C.call_host(f.ext, f.name, args, kwargs);
    return r;
  }
  if (f.kind == Val::Layer) {
    if (f.name == "self") fail("host_logic", "forward calls the model itself");
    // An instance of a class of the file that ModelNew's __init__ (or the submodule's) builds
    // in place: its forward runs, with `self` that submodule.
    std::string why;
    if (auto built = file_class_ctor(f.name, &why))
      return submodule_call(env, f, built->first, built->second, e);
    if (!why.empty()) fail("host_logic", "forward calls " + why + " (`" + text + "`)");
    return layer_call(env, f, e);
  }
  if (f.kind == Val::Unknown) fail("host_logic", "forward calls " + f.why);
  if (f.kind != Val::Func) fail("host_logic", "host logic in forward: `" + text + "`");
  std::string name = f.name;
  if (starts_with(name, "self.")) {
    auto m = method_headers_.find(name.substr(5));
    if (m != method_headers_.end() && m->first != "__init__" && m->first != "forward")
      return call_def(env, m->second, true, e);
    fail("host_logic", "forward calls the method `" + name +
                           "`; kernrl follows forward, the extension and "
                           "ModelNew's own methods only");
  }
  if (module_defs_.count(name)) {
    auto d = module_def_headers_.find(name);
    if (d != module_def_headers_.end()) return call_def(env, d->second, false, e);
    fail("host_logic", "forward calls the Python function `" + name + "` of the module");
  }
  // getattr(obj, 'name'), as obj.name: Python's where the file only ever calls it (binds it
  // nowhere: no `getattr = ...`, `def getattr`, `import ... as getattr`, nor by its name in a
  // string, as `globals()['getattr']` would).
  if (name == "getattr" && !module_vars_.count(name) && !module_rebound_.count(name)) {
    for (const auto& l : lines_)
      for (size_t k = 0; k < l.toks.size(); ++k) {
        const PyTok& t = l.toks[k];
        if (t.text != "getattr" || t.kind == PyTok::Op || t.kind == PyTok::Number) continue;
        const bool called =
            t.kind == PyTok::Name && k + 1 < l.toks.size() && tok_is(l.toks[k + 1], "(") &&
            !(k > 0 && (tok_is(l.toks[k - 1], "def") || tok_is(l.toks[k - 1], "class") ||
                        tok_is(l.toks[k - 1], ".")));
        if (!called)
          fail("host_logic",
               "forward calls `getattr`, which the file names otherwise than "
               "by calling it (line " +
                   std::to_string(l.line) +
                   "), so kernrl does not take it for "
                   "Python's (`" +
                   text + "`)");
      }
    return builtin_getattr(env, e);
  }
  // Builtins.
  if (name == "int" || name == "float" || name == "bool" || name == "len" || name == "min" ||
      name == "max" || name == "tuple" || name == "list" || name == "isinstance" ||
      name == "math.ceil" || name == "math.floor" || name == "abs" || name == "enumerate" ||
      name == "range" || name == "reversed" || name == "zip" || name == "math.sqrt" ||
      name == "math.exp" || name == "math.log" || name == "math.log2" || name == "any" ||
      name == "all" || name == "round") {
    eval_args();
    // Keyword arguments change what a builtin does: only enumerate's start is followed.
    for (const auto& [k, v] : e->kwargs) {
      if (name == "enumerate" && k == "start" && args.size() == 1) {
        args.push_back(eval(env, v));
        continue;
      }
      fail("host_logic", "host logic in forward: `" + text + "` (a keyword argument)");
    }
    if (name == "isinstance") return builtin_isinstance(args, text);
    if ((name == "any" || name == "all") && args.size() == 1) {
      // Each item's truth decided at every size set, as Python decides it (empty: all is true).
      bool result = name == "all";
      for (const Val& item : items_of(args[0], text)) {
        auto t = truth(item);
        if (!t)
          fail("host_logic", "host logic in forward: an item of `" + text +
                                 "` is not the same at every size set");
        if (*t == (name == "any")) {
          result = !result;
          break;
        }
      }
      return make_bool(result);
    }
    if (name == "len" && args.size() == 1 &&
        (args[0].kind == Val::List || (args[0].kind == Val::Layer && args[0].name != "self")))
      return make_int(static_cast<int64_t>(items_of(args[0], text).size()));
    if ((name == "tuple" || name == "list") && args.size() == 1 &&
        (args[0].kind == Val::Int || args[0].kind == Val::Float))
      return args[0];  // `tuple(self.conv.stride)`: a setting kernrl holds as one value
    if ((name == "tuple" || name == "list" || name == "reversed") && args.size() == 1) {
      Val l;
      l.kind = Val::List;
      l.items = items_of(args[0], text);
      l.seq = name == "tuple" ? 't' : name == "list" ? 'l' : 0;
      if (name == "reversed") std::reverse(l.items.begin(), l.items.end());
      return l;
    }
    if (name == "zip" && !args.empty()) {
      // As Python: tuples of the i-th items, as many as the shortest argument has.
      std::vector<std::vector<Val>> seqs;
      for (const Val& a : args) seqs.push_back(items_of(a, text));
      size_t n = seqs[0].size();
      for (const auto& s : seqs) n = std::min(n, s.size());
      Val l;
      l.kind = Val::List;
      for (size_t i = 0; i < n; ++i) {
        Val t;
        t.kind = Val::List;
        t.seq = 't';
        for (const auto& s : seqs) t.items.push_back(s[i]);
        l.items.push_back(t);
      }
      return l;
    }
    if (name == "enumerate" && (args.size() == 1 || args.size() == 2)) {
      int64_t start = 0;
      if (args.size() == 2) {
        if (args[1].kind != Val::Int || !args[1].k)
          fail("host_logic", "host logic in forward: `" + text + "`");
        start = *args[1].k;
      }
      Val l;
      l.kind = Val::List;
      for (const Val& item : items_of(args[0], text)) {
        Val pair;
        pair.kind = Val::List;
        pair.items = {make_int(start++), item};
        l.items.push_back(pair);
      }
      return l;
    }
    if (name == "range" && !args.empty() && args.size() <= 3) {
      std::vector<int64_t> v;
      for (const Val& a : args) {
        if (a.kind != Val::Int || !a.k)
          fail("host_logic", "host logic in forward: `" + text +
                                 "` (a range kernrl can unroll has the same bounds at every size "
                                 "set)");
        v.push_back(*a.k);
      }
      int64_t lo = v.size() > 1 ? v[0] : 0, hi = v.size() > 1 ? v[1] : v[0];
      int64_t step = v.size() > 2 ? v[2] : 1;
      if (step == 0) fail("host_logic", "`" + text + "`: a range with step 0");
      Val l;
      l.kind = Val::List;
      for (int64_t x = lo; step > 0 ? x < hi : x > hi;) {
        if (l.items.size() >= static_cast<size_t>(kMaxUnrolled))
          fail("host_logic", "`" + text + "` is longer than kernrl unrolls");
        l.items.push_back(make_int(x));
        if (__builtin_add_overflow(x, step, &x)) break;  // past 64 bits: past hi too
      }
      return l;
    }
    if (name == "int" && args.size() == 1) {
      if (args[0].kind == Val::Bool && args[0].k) return make_int(*args[0].k);
      if (args[0].kind == Val::Ratio)
        return int_binop("/", args[0].items[0], args[0].items[1], text);
      if (args[0].kind == Val::Float && args[0].f)
        return make_int(float_to_int64(std::trunc(*args[0].f), text));
      return as_int(args[0], text);
    }
    if (name == "bool" && args.size() == 1 && args[0].kind != Val::Tensor)
      if (auto b = truth(args[0])) return make_bool(*b);
    if (name == "float" && args.size() == 1) {
      if (args[0].kind == Val::Int && args[0].k) return make_float(static_cast<double>(*args[0].k));
      if (args[0].kind == Val::Float) return args[0];
      // A size that has one value at every size set (a constant of the module kept as a size).
      if (args[0].kind == Val::Int)
        if (auto one = C.one_value(args[0])) return make_float(static_cast<double>(*one));
      // A size that differs between size sets: a real expression, evaluated at each
      // (docs/kernel-format.md), for a float argument.
      if (args[0].kind == Val::Int && !args[0].e.empty() && C.per_set(args[0])) {
        Val real;
        real.kind = Val::Float;
        real.e = "1.0 * (" + args[0].e + ")";
        return real;
      }
    }
    // math.sqrt(hs) and the like of a known number, or of a size with one value at every size
    // set (a head size the suite keeps).
    if ((name == "math.sqrt" || name == "math.exp" || name == "math.log" || name == "math.log2") &&
        args.size() == 1 && e->kwargs.empty()) {
      std::optional<double> x;
      if (args[0].kind == Val::Float) x = args[0].f;
      if (args[0].kind == Val::Int)
        if (auto one = C.one_value(args[0])) x = static_cast<double>(*one);
      if (!x)
        fail("host_logic", "`" + text +
                               "` in forward computes with a size that differs between size "
                               "sets in floating point");
      double r = name == "math.sqrt"  ? std::sqrt(*x)
                 : name == "math.exp" ? std::exp(*x)
                 : name == "math.log" ? std::log(*x)
                                      : std::log2(*x);
      if (!std::isfinite(r)) fail("host_logic", "`" + text + "` is not a finite number");
      return make_float(r);
    }
    if ((name == "math.ceil" || name == "math.floor") && args.size() == 1 &&
        args[0].kind == Val::Ratio) {
      if (name == "math.ceil")
        return make_int_expr("cdiv(" + int_text(args[0].items[0]) + ", " +
                             int_text(args[0].items[1]) + ")");
      return int_binop("/", args[0].items[0], args[0].items[1], text);
    }
    // round() of an int is that int.
    if (name == "round" && args.size() == 1 && e->kwargs.empty() && args[0].kind == Val::Int)
      return args[0];
    if ((name == "min" || name == "max") && args.size() == 2 && args[0].kind == Val::Int &&
        args[1].kind == Val::Int) {
      if (args[0].k && args[1].k)
        return make_int(name == "min" ? std::min(*args[0].k, *args[1].k)
                                      : std::max(*args[0].k, *args[1].k));
      return make_int_expr(name + "(" + int_text(args[0]) + ", " + int_text(args[1]) + ")");
    }
    fail("host_logic", "host logic in forward: `" + text + "`");
  }
  // Allocations in forward: torch.empty(...), torch.zeros_like(x), ...
  static const std::set<std::string> allocs = {
      "torch.empty",      "torch.zeros",      "torch.ones",      "torch.full",
      "torch.empty_like", "torch.zeros_like", "torch.ones_like", "torch.full_like"};
  if (allocs.count(name)) {
    std::string kind = name.substr(6);
    bool like = contains(kind, "_like");
    std::string dtype = "float32";
    std::vector<Val> shape;
    std::string fill = starts_with(kind, "zeros") ? "0" : starts_with(kind, "ones") ? "1" : "";
    Val src;  // the _like argument
    if (like) {
      if (e->kids.size() < 2) fail("host_logic", "`" + text + "` without a tensor");
      src = eval(env, e->kids[1]);
      if (src.kind != Val::Tensor)
        fail("host_logic", "`" + text + "`: the _like argument is not a tensor kernrl follows");
      shape = C.tensors[static_cast<size_t>(src.tensor)].shape;
      dtype = C.tensors[static_cast<size_t>(src.tensor)].dtype;
      std::string d2 = dtype;
      shape_args(env, e, e->kids.size(), &d2);  // dtype= only
      dtype = d2;
    } else if (starts_with(kind, "full")) {
      if (e->kids.size() < 3) fail("host_logic", "`" + text + "` without a fill value");
      Val s = eval(env, e->kids[1]);
      if (s.kind == Val::List)
        for (const auto& d : s.items) shape.push_back(as_int(d, text));
      else
        shape.push_back(as_int(s, text));
      Val fv = eval(env, e->kids[2]);
      if (fv.kind == Val::Int && fv.k)
        fill = std::to_string(*fv.k);
      else if (fv.kind == Val::Float && fv.f)
        fill = float_literal(*fv.f);
      else
        fail("host_logic", "`" + text + "` fills with a value kernrl cannot compute");
      shape_args(env, e, e->kids.size(), &dtype);
    } else {
      shape = shape_args(env, e, 1, &dtype);
    }
    Val made = C.alloc(shape, dtype, fill, text, "");
    // empty_like & co. keep a dense tensor's layout (preserve_format), as clone does.
    if (like && (src.elem == "lazy" || src.elem == "permuted"))
      made = C.laid_out_as(made, src.tensor);
    return made;
  }
  if (auto v = torch_call(env, name, e)) return *v;
  if (starts_with(name, "torch.") || starts_with(name, "F.") || starts_with(name, "nn.") ||
      starts_with(name, "math.") || starts_with(name, "numpy.") || starts_with(name, "np."))
    torch_op(name, text);
  if (contains(name, "triton"))
    fail("not_kernelbench", "forward calls a Triton kernel (`" + text + "`)");
  fail("host_logic", "forward calls `" + name + "`, which kernrl does not follow (`" + text + "`)");
}

Val PySide::tensor_method(Env& env, const Val& obj, const std::string& m, const PyExprP& e) {
  const TensorInfo t = C.tensors[static_cast<size_t>(obj.tensor)];  // a copy: C.tensors may grow
  // A transposed tensor (w.t(), w.T) is only the weight of a product: it has no memory of its own.
  if (obj.elem == "transposed" && m != "contiguous" && m != "t")
    torch_op("Tensor." + m + " of a transposed tensor", py_text(e));
  std::string text = py_text(e);
  std::vector<Val> args;
  for (size_t i = 1; i < e->kids.size(); ++i) args.push_back(eval(env, e->kids[i]));
  // .clone() keeps a dense tensor's layout (PyTorch's preserve_format); .contiguous() of a tensor
  // that is not contiguous copies it in order; each copy is the caller's own.
  if ((obj.elem == "lazy" || obj.elem == "permuted") && (m == "contiguous" || m == "clone")) {
    auto c = C.contiguous(obj.tensor);
    if (!c && !(m == "clone" && obj.elem == "permuted"))
      fail("host_logic", "`" + text +
                             "`: a view contiguous at some size sets only, or an operator's "
                             "result on a view whose layout kernrl does not know");
    if (m == "contiguous" && *c) return obj;  // PyTorch returns the tensor itself
    Val copy = C.copy_of(obj, text, "torch_op_in_forward");
    return m == "clone" ? C.laid_out_as(copy, obj.tensor) : copy;
  }
  // clone() on a suite: a copy of its own (a kernel writing it leaves the original).
  if (m == "clone" && (obj.elem.empty() || obj.elem == "reshaped") && !C.P.torchscript.empty())
    return C.copy_of(obj, text, "torch_op_in_forward");
  if (m == "contiguous" || m == "cuda" || m == "detach" || m == "clone" || m == "requires_grad_")
    return obj;
  if (m == "view" || m == "reshape" || m == "view_as" || m == "flatten" || m == "squeeze" ||
      m == "unsqueeze") {
    if (obj.elem == "transposed") torch_op("Tensor." + m + " of a transposed tensor", text);
    return reshaped(env, obj, m, args, e, text);
  }
  if (m == "t" && args.empty() && t.shape.size() == 2 &&
      (obj.elem == "lazy" || obj.elem == "permuted" || obj.elem == "reshaped")) {
    std::vector<std::pair<std::string, Val>> none;
    return view_op(obj, "transpose", {make_int(0), make_int(1)}, none, text);
  }
  if (m == "t" && args.empty() && t.shape.size() == 2) {
    Val tr = obj;
    tr.elem = tr.elem == "transposed" ? "" : "transposed";
    return tr;
  }
  if (m == "transpose" || m == "swapaxes" || m == "permute" || m == "narrow" || m == "split" ||
      m == "chunk" || m == "select" || m == "unfold") {
    std::vector<std::pair<std::string, Val>> kwargs;
    for (const auto& [k, v] : e->kwargs) kwargs.push_back({k, eval(env, v)});
    return view_op(obj, m, args, kwargs, text);
  }
  if (m == "to" || m == "type") {
    for (const auto& [k, v] : e->kwargs)
      if (k == "dtype") {
        std::string d = dtype_of_torch(resolve(py_dotted(v)));
        if (!d.empty() && d != t.dtype) torch_op("Tensor.to", text);
      }
    for (const Val& a : args)
      if (a.kind == Val::DType && a.dtype != t.dtype) torch_op("Tensor.to", text);
    for (size_t i = 1; i < e->kids.size(); ++i) {
      std::string d = dtype_of_torch(resolve(py_dotted(e->kids[i])));
      if (!d.empty() && d != t.dtype && py_dotted(e->kids[i]).find("torch") != std::string::npos)
        torch_op("Tensor.to", text);
    }
    return obj;
  }
  if (m == "float" || m == "double" || m == "half" || m == "int" || m == "long") {
    std::string d = m == "float"    ? "float32"
                    : m == "double" ? "float64"
                    : m == "half"   ? "float16"
                    : m == "int"    ? "int32"
                                    : "int64";
    if (d != t.dtype) torch_op("Tensor." + m, text);
    return obj;
  }
  if (m == "size") {
    if (args.empty()) {
      Val l;
      l.kind = Val::List;
      l.seq = 't';
      l.items = t.shape;
      return l;
    }
    Val i = as_int(args[0], text);
    if (!i.k)
      fail("host_logic", "`" + text + "` in forward picks a dimension kernrl cannot compute");
    int64_t k = *i.k < 0 ? *i.k + static_cast<int64_t>(t.shape.size()) : *i.k;
    if (k < 0 || k >= static_cast<int64_t>(t.shape.size()))
      fail("mismatch", "`" + text + "` in forward asks for dimension " + std::to_string(*i.k) +
                           " of a tensor with " + std::to_string(t.shape.size()) +
                           " dimensions in this problem");
    return t.shape[static_cast<size_t>(k)];
  }
  if (m == "dim" || m == "ndimension") return make_int(static_cast<int64_t>(t.shape.size()));
  if (m == "numel") {
    Val n = make_int(1);
    for (const Val& d : t.shape) n = int_binop("*", n, d, text);
    return n;
  }
  if (m == "is_contiguous" && (obj.elem == "lazy" || obj.elem == "permuted")) {
    auto c = C.contiguous(obj.tensor);
    if (!c) fail("host_logic", "`" + text + "`: a view contiguous at some size sets only");
    return make_bool(*c);
  }
  if (m == "is_contiguous" || m == "is_cuda") return make_bool(true);
  if (m == "new_empty" || m == "new_zeros" || m == "new_ones") {
    std::string dtype = t.dtype;
    std::vector<Val> shape = shape_args(env, e, 1, &dtype);
    return C.alloc(shape, dtype, m == "new_zeros" ? "0" : m == "new_ones" ? "1" : "", text, "");
  }
  if (m == "item" || m == "cpu" || m == "tolist" || m == "numpy")
    fail("data_dependent_host", "forward reads a GPU result on the host (`" + text + "`)");
  torch_op("Tensor." + m, text);
}

Val PySide::reshaped(Env& env, const Val& obj, const std::string& m, const std::vector<Val>& args,
                     const PyExprP& e, const std::string& text) {
  const std::vector<Val> old = C.tensors[static_cast<size_t>(obj.tensor)].shape;
  const int64_t rank = static_cast<int64_t>(old.size());
  auto cannot = [&]() -> Val {
    fail("host_logic", "`" + text + "` in forward: a shape kernrl cannot compute");
  };
  auto dim_arg = [&](const Val& v, int64_t r) -> int64_t {
    if (v.kind != Val::Int || !v.k) cannot();
    int64_t d = *v.k < 0 ? *v.k + r : *v.k;
    if (d < 0 || d >= r) cannot();
    return d;
  };
  auto kwarg_val = [&](const char* k) -> std::optional<PyExprP> {
    for (const auto& [n, v] : e->kwargs)
      if (n == k) return v;
    return std::nullopt;
  };
  std::vector<Val> shape;
  if (m == "view" || m == "reshape") {
    auto s = Converter::view_shape(old, args, text);
    if (!s) cannot();
    shape = *s;
  } else if (m == "view_as") {
    if (args.size() != 1 || args[0].kind != Val::Tensor) cannot();
    shape = C.tensors[static_cast<size_t>(args[0].tensor)].shape;
  } else if (m == "flatten") {
    Val s = args.size() > 0 ? args[0] : make_int(0), f = args.size() > 1 ? args[1] : make_int(-1);
    if (auto k = kwarg_val("start_dim")) s = eval(env, *k);
    if (auto k = kwarg_val("end_dim")) f = eval(env, *k);
    if (rank == 0) return obj;
    int64_t a = dim_arg(s, rank), b = dim_arg(f, rank);
    if (a > b) cannot();
    // The dimensions before a, the product of a..b, those after b.
    std::vector<Val> ordered(old.begin(), old.begin() + a);
    Val prod = make_int(1);
    for (int64_t i = a; i <= b; ++i) prod = int_binop("*", prod, old[static_cast<size_t>(i)], text);
    ordered.push_back(prod);
    ordered.insert(ordered.end(), old.begin() + b + 1, old.end());
    shape = ordered;
  } else if (m == "squeeze") {
    if (args.empty()) {
      for (const Val& d : old)
        if (!(d.kind == Val::Int && d.k && *d.k == 1)) {
          auto values = d.k ? std::nullopt : C.per_set(d);
          if (values &&
              std::any_of(values->begin(), values->end(), [](int64_t v) { return v == 1; }))
            cannot();  // 1 at some size sets only
          shape.push_back(d);
        }
    } else {
      int64_t d = dim_arg(args[0], rank);
      shape = old;
      const Val& v = old[static_cast<size_t>(d)];
      if (v.kind == Val::Int && v.k && *v.k == 1)
        shape.erase(shape.begin() + d);
      else if (!v.k)
        cannot();
    }
  } else {  // unsqueeze
    if (args.size() != 1) cannot();
    int64_t d = dim_arg(args[0], rank + 1);
    shape = old;
    shape.insert(shape.begin() + d, make_int(1));
  }
  // The same shape: the same tensor. Another: a view of its buffer with that shape.
  return C.shaped(obj, shape, m == "view" || m == "view_as", text, "torch_op_in_forward");
}

}  // namespace kernrl::kbimport::py
