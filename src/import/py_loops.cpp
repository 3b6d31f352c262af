// Loops in forward: `for` and `while` statements and list comprehensions, unrolled over what they
// iterate. A loop over the layers of an nn.Sequential or nn.ModuleList (`for lin in self.layers`,
// `[m for m in self.net if isinstance(m, nn.Linear)]`) needs their classes, which a suite built
// from KernelBench records in problem.yaml's `modules`.
#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "import/py_side.h"

namespace kernrl::kbimport::py {

void PySide::count_iteration(int line) {
  if (++unrolled_ > kMaxUnrolled)
    fail("host_logic", "forward's loops run more than " + std::to_string(kMaxUnrolled) +
                           " iterations in all (line " + std::to_string(line) +
                           "); kernrl unrolls them");
}

namespace {

// The line of `class NAME`'s `def __init__` (the first one in its body), if any.
std::optional<size_t> init_def(const std::vector<PyLine>& lines, const std::string& cls) {
  for (size_t c = 0; c < lines.size(); ++c) {
    const auto& t = lines[c].toks;
    if (lines[c].indent != 0 || !tok_is(t[0], "class") || t.size() < 2 || t[1].text != cls)
      continue;
    Block body = body_of(lines, c);
    for (size_t d = body.begin; d < body.end; ++d) {
      const auto& h = lines[d].toks;
      if (tok_is(h[0], "def") && h.size() >= 2 && h[1].text == "__init__") return d;
    }
  }
  return std::nullopt;
}

// The statements of `class NAME`'s __init__ (docstrings and the super().__init__ call left out):
// each its indentation inside the body and its token texts. Empty when there is none.
std::vector<std::pair<int, std::vector<std::string>>> init_statements(
    const std::vector<PyLine>& lines, const std::string& cls) {
  std::vector<std::pair<int, std::vector<std::string>>> out;
  std::optional<size_t> d = init_def(lines, cls);
  if (!d) return out;
  Block init = body_of(lines, *d);
  int base = init.begin < init.end ? lines[init.begin].indent : 0;
  for (size_t i = init.begin; i < init.end; ++i) {
    const auto& s = lines[i].toks;
    if (s.size() == 1 && s[0].kind == PyTok::String) continue;  // a docstring
    std::string joined;
    for (const auto& x : s) joined += x.text == cls ? std::string("<class>") : x.text;
    // The base class's constructor, written as super() or as nn.Module's own.
    if (joined == "super().__init__()" || joined == "super(<class>,self).__init__()" ||
        joined == "nn.Module.__init__(self)" || joined == "torch.nn.Module.__init__(self)")
      continue;
    std::vector<std::string> texts;
    for (size_t k = 0; k < s.size(); ++k) {
      // A trailing comma changes nothing: `f(a, b,)` is `f(a, b)`.
      if (s[k].text == "," && k + 1 < s.size() && (s[k + 1].text == ")" || s[k + 1].text == "]"))
        continue;
      // `torch.nn.Linear` is `nn.Linear` (both are checked to be torch's).
      if (s[k].text == "torch" && k + 3 < s.size() && s[k + 1].text == "." &&
          s[k + 2].text == "nn" && s[k + 3].text == ".") {
        texts.push_back("nn");
        k += 2;
        continue;
      }
      texts.push_back(s[k].text == cls ? std::string("<class>") : s[k].text);
    }
    out.push_back({lines[i].indent - base, texts});
  }
  return out;
}

// The header of `class NAME`'s __init__ from `(` to `)` (the parameters and their defaults), as
// token texts, trailing comma dropped; empty when there is none.
std::vector<std::string> init_header(const std::vector<PyLine>& lines, const std::string& cls) {
  std::optional<size_t> d = init_def(lines, cls);
  if (!d) return {};
  const auto& h = lines[*d].toks;
  // Type annotations (`input_size: int`) change nothing at run time: left out.
  std::vector<std::string> out;
  int depth = 0;
  bool annotation = false;
  for (size_t k = 2; k < h.size(); ++k) {
    const std::string& x = h[k].text;
    if (x == "(" || x == "[" || x == "{") ++depth;
    if (x == ")" || x == "]" || x == "}") --depth;
    if (depth == 1 && x == ":") annotation = true;
    if (annotation && ((depth == 1 && (x == "," || x == "=")) || depth == 0)) annotation = false;
    if (annotation) continue;
    if (x == "," && k + 1 < h.size() && h[k + 1].text == ")" && depth == 1) continue;
    out.push_back(x);
    if (depth == 0) break;
  }
  return out;
}

// The parameter names of an __init__ header (init_header): the names after `(`, `,`, `*` or
// `**` at the top level of the parentheses, outside defaults.
std::set<std::string> header_params(const std::vector<std::string>& h) {
  std::set<std::string> out;
  int depth = 0;
  bool in_default = false;
  for (size_t k = 0; k < h.size(); ++k) {
    const std::string& x = h[k];
    if (x == "(" || x == "[" || x == "{") ++depth;
    if (x == ")" || x == "]" || x == "}") --depth;
    if (depth == 1 && (x == "," || x == "(")) in_default = false;
    if (depth == 1 && (x == "=" || x == ":")) in_default = true;
    bool name = !x.empty() && (std::isalpha(static_cast<unsigned char>(x[0])) || x[0] == '_');
    if (depth == 1 && name && !in_default && k > 0 &&
        (h[k - 1] == "(" || h[k - 1] == "," || h[k - 1] == "*" || h[k - 1] == "**"))
      out.insert(x);
  }
  return out;
}

// A list of layers __init__ builds from a container of its own, after the reference's statements:
//   NAME = []
//   for V in self.A:
//       if isinstance(V, nn.Sequential):      (or only `NAME.append(V)`)
//           NAME.extend(list(V))
//       else:
//           NAME.append(V)
//   self.B = NAME
// Its statements' count from stmts[i] (0: none such), with NAME, A, B and whether nn.Sequential
// children are flattened.
struct LayerListBlock {
  std::string name, container, attr;
  bool flatten = false;
};
size_t layer_list_block(const std::vector<std::pair<int, std::vector<std::string>>>& s, size_t i,
                        LayerListBlock* out) {
  using T = std::vector<std::string>;
  auto at = [&](size_t k, int indent, const T& t) {
    return i + k < s.size() && s[i + k].first == indent && s[i + k].second == t;
  };
  if (i + 3 >= s.size() || s[i].first != 0 || s[i].second.size() != 4) return 0;
  const std::string name = s[i].second[0];
  if (!at(0, 0, {name, "=", "[", "]"})) return 0;
  const T& f = s[i + 1].second;
  if (s[i + 1].first != 0 || f.size() != 7 || f[0] != "for" || f[2] != "in" || f[3] != "self" ||
      f[4] != "." || f[6] != ":")
    return 0;
  const std::string v = f[1], a = f[5];
  size_t n = 0;
  bool flatten = false;
  // Indentations in columns: the loop's body deeper than the loop, the branches' deeper still.
  const int in1 = i + 2 < s.size() ? s[i + 2].first : 0;
  const int in2 = i + 3 < s.size() ? s[i + 3].first : 0;
  if (in1 <= 0) return 0;
  if (in2 > in1 &&
      at(2, in1, {"if", "isinstance", "(", v, ",", "nn", ".", "Sequential", ")", ":"}) &&
      at(3, in2, {name, ".", "extend", "(", "list", "(", v, ")", ")"}) &&
      at(4, in1, {"else", ":"}) && at(5, in2, {name, ".", "append", "(", v, ")"})) {
    n = 6;
    flatten = true;
  } else if (at(2, in1, {name, ".", "append", "(", v, ")"})) {
    n = 3;
  } else {
    return 0;
  }
  if (i + n >= s.size() || s[i + n].first != 0 || s[i + n].second.size() != 5) return 0;
  const T& set = s[i + n].second;
  if (set[0] != "self" || set[1] != "." || set[3] != "=" || set[4] != name) return 0;
  // Names only, two locals of their own (not `self`, nor the names the block calls).
  if (name == v) return 0;
  for (const std::string& x : {name, v, a, set[2]})
    if (x.empty() || !(std::isalpha(static_cast<unsigned char>(x[0])) || x[0] == '_') ||
        x == "self" || x == "nn" || x == "list" || x == "isinstance")
      return 0;
  *out = {name, a, set[2], flatten};
  return n + 1;
}

}  // namespace

std::optional<Val> PySide::listed_layers(const std::string& attr) {
  if (!self_path_.empty()) return std::nullopt;
  auto stmts = init_statements(lines_, "ModelNew");
  for (size_t i = 0; i < stmts.size(); ++i) {
    LayerListBlock b;
    if (!layer_list_block(stmts, i, &b) || b.attr != attr) continue;
    const std::string text = "self." + attr;
    // The layers' classes come from the reference (problem.yaml's modules), and list and
    // isinstance must be Python's.
    if (std::string why = layers_built_as_reference(); !why.empty())
      fail("host_logic", "forward reads `" + text + "`, a list of the layers of `self." +
                             b.container +
                             "` ModelNew's __init__ builds, which kernrl knows from the "
                             "reference's module only: " +
                             why);
    for (const char* builtin : {"list", "isinstance"})
      if (module_vars_.count(builtin) || module_defs_.count(builtin) ||
          module_rebound_.count(builtin))
        fail("host_logic", "forward reads `" + text + "`, which ModelNew's __init__ builds with `" +
                               builtin + "`, a name the module binds itself");
    Val container;
    container.kind = Val::Layer;
    container.name = b.container;
    container.elem = "Module";
    Val out;
    out.kind = Val::List;
    out.seq = 'l';
    for (const Val& child : layer_children(container, text)) {
      std::vector<std::string> classes = module_classes(child);
      bool sequential = std::find(classes.begin(), classes.end(), "Sequential") != classes.end();
      if (b.flatten && sequential) {
        // list(m) of an nn.Sequential: its children in order (a subclass may iterate otherwise).
        if (classes.front() != "Sequential")
          fail("host_logic", "forward reads `" + text + "`, which lists the layers of `self." +
                                 child.name + "`, a subclass of nn.Sequential (" + classes.front() +
                                 ")");
        for (const Val& g : layer_children(child, text)) out.items.push_back(g);
      } else {
        out.items.push_back(child);
      }
    }
    return out;
  }
  return std::nullopt;
}

std::string PySide::plain_module() const {
  // torch and nn are torch's, ModelNew is an nn.Module with one undecorated __init__ and no
  // attribute hooks, and nothing at the module's top level rebinds them or patches ModelNew.
  if (resolve("nn") != "torch.nn" || resolve("torch") != "torch" || module_vars_.count("nn") ||
      module_vars_.count("torch") || module_defs_.count("nn") || module_defs_.count("torch"))
    return "the generation binds `nn` or `torch` to something else than torch's";
  int inits = 0;
  for (size_t i = 0; i < lines_.size(); ++i) {
    const auto& t = lines_[i].toks;
    if (lines_[i].indent == 0 && assign_at(t) > 0 &&
        (t[0].text == "nn" || t[0].text == "torch" || t[0].text == "ModelNew"))
      return "the generation assigns to `" + t[0].text + "` at the module's top level";
    if (lines_[i].indent == 0 && tok_is(t[0], "class") && t.size() > 1 && t[1].text == "ModelNew") {
      std::string header;
      for (const auto& x : t) header += x.text;
      if (header != "classModelNew(nn.Module):" && header != "classModelNew(torch.nn.Module):")
        return "ModelNew derives from something else than nn.Module";
      Block body = body_of(lines_, i);
      for (size_t d = body.begin; d < body.end; ++d) {
        const auto& h = lines_[d].toks;
        if (lines_[d].indent != lines_[body.begin].indent) continue;
        if (tok_is(h[0], "def") && h.size() > 1 && h[1].text == "__init__") {
          ++inits;
          if (d > body.begin && tok_is(lines_[d - 1].toks[0], "@"))
            return "ModelNew's __init__ is decorated";
          for (const auto& x : h)
            if (x.text == "nn" || x.text == "torch")
              return "__init__ takes a parameter `" + x.text + "`";
        }
        if (tok_is(h[0], "def") && h.size() > 1 &&
            (h[1].text == "__setattr__" || h[1].text == "__getattr__" || h[1].text == "__new__"))
          return "ModelNew defines " + h[1].text;
      }
    }
  }
  if (inits != 1) return "ModelNew does not define __init__ once";
  return "";
}

std::string PySide::own_params_drawn_as_reference() const {
  // KernelBench seeds (42) before building Model and again before building ModelNew: ModelNew's
  // own weights get the reference's values only when both draw the same numbers in the same
  // order. So: the reference's __init__ builds only Linear and convolution layers (each drawing
  // its weight with kaiming_uniform_(a=sqrt(5))) and sets plain attributes; ModelNew's creates
  // its weights with torch.empty and draws each with that call, in order, and sets plain
  // attributes; nothing else runs in either.
  auto plain = [](const std::vector<std::string>& t) {  // self.x = <no call>, assert <no call>
    bool assign = t.size() > 4 && t[0] == "self" && t[1] == "." && t[3] == "=";
    bool check = !t.empty() && t[0] == "assert";
    if (!assign && !check) return false;
    // A `(` after a name, `)` or `]` is a call (after a keyword, an operator or `=`, a tuple or
    // a grouping: `self.shape = (a, b)`).
    static const std::set<std::string> keywords = {"and", "or", "not",  "in",
                                                   "is",  "if", "else", "assert"};
    for (size_t k = 1; k < t.size(); ++k) {
      if (t[k] != "(") continue;
      const std::string& b = t[k - 1];
      bool name = !b.empty() && (std::isalnum(static_cast<unsigned char>(b[0])) || b[0] == '_');
      if ((name && !keywords.count(b)) || b == ")" || b == "]") return false;
    }
    return true;
  };
  // Layers whose construction draws only kaiming_uniform_ weights (and biases, which the mapping
  // refuses), or nothing at all (normalisation layers: ones and zeros).
  std::vector<std::pair<int, std::vector<std::string>>> ref;
  try {
    ref = init_statements(py_lines(C.P.torch), "Model");
  } catch (const ImportError&) {
    return "the reference's module cannot be read";
  }
  for (const auto& [indent, t] : ref) {
    if (indent != 0) return "the reference's __init__ has blocks";
    bool layer = t.size() > 8 && t[0] == "self" && t[1] == "." && t[3] == "=" && t[4] == "nn" &&
                 t[5] == "." && (kaiming_layers().count(t[6]) || norm_layers().count(t[6])) &&
                 t[7] == "(";
    if (!layer && !plain(t)) return "the reference's __init__ does more than build layers";
  }
  // ModelNew is a plain nn.Module (a base class of the file's could draw in its constructor).
  if (std::string why = plain_module(); !why.empty()) return why;
  for (const auto& [indent, t] : init_statements(lines_, "ModelNew")) {
    if (indent != 0) return "ModelNew's __init__ has blocks";
    bool param = t.size() > 5 && t[0] == "self" && t[1] == "." && t[3] == "=" &&
                 std::find(own_params_.begin(), own_params_.end(), t[2]) != own_params_.end();
    bool kaiming = t.size() > 6 && t[0] == "nn" && t[1] == "." && t[2] == "init" && t[3] == "." &&
                   t[4] == "kaiming_uniform_";
    bool module_ref = t.size() == 6 && t[0] == "self" && t[3] == "=" && ext_by_var_.count(t[4]);
    if (!param && !kaiming && !module_ref && !plain(t))
      return "ModelNew's __init__ does more than create and draw its weights";
  }
  // The weights created with torch.empty are drawn, each once, in order; those created with
  // torch.ones or torch.zeros are not.
  std::vector<std::string> empties;
  for (const auto& w : own_params_) {
    std::string how = own_param_init(w);
    if (how.empty())
      return "ModelNew creates `self." + w +
             "` otherwise than with torch.empty, "
             "torch.ones or torch.zeros";
    if (how == "empty") empties.push_back(w);
  }
  if (other_inits_ || kaiming_inits_ != empties)
    return "ModelNew does not draw each torch.empty weight once with kaiming_uniform_(a=sqrt(5)), "
           "in order, and nothing else";
  return "";
}

std::string PySide::own_param_by_name(const std::string& attr) {
  // KernelBench seeds torch before building Model and again before building ModelNew: the
  // problem's tensor is what the reference's __init__ creates for `self.<attr>`, ModelNew's is
  // what its own __init__ creates. They are the same only where both create it the same way
  // (`nn.Parameter(torch.<f>(shape))`, f one of randn, rand, zeros, ones, no keyword arguments,
  // the same shape at every size set; or the reference's text of torch.tensor or torch.full)
  // and, for a drawn one, at the same place in the random stream: every statement before it
  // that could draw (any call) is the reference's, in order.
  if (std::string why = plain_module(); !why.empty()) return why;
  const std::string self_attr = "`self." + attr + "`";
  std::vector<PyLine> ref_lines;
  try {
    ref_lines = py_lines(C.P.torch);
  } catch (const ImportError&) {
    return "the reference's module cannot be read";
  }
  if (init_header(ref_lines, "Model") != init_header(lines_, "ModelNew"))
    return "ModelNew's __init__ takes other parameters than the reference's";
  const auto ref = init_statements(ref_lines, "Model");
  const auto mine = init_statements(lines_, "ModelNew");
  // The one statement of each __init__ that names `self.<attr>` (one that reads it again, or
  // reaches the parameters otherwise, could change its values).
  static const std::set<std::string> reaching = {"parameters",  "named_parameters",
                                                 "modules",     "named_modules",
                                                 "children",    "apply",
                                                 "state_dict",  "load_state_dict",
                                                 "_parameters", "__dict__",
                                                 "setattr",     "register_parameter",
                                                 "vars",        "data",
                                                 "copy_"};
  auto place = [&](const std::vector<std::pair<int, std::vector<std::string>>>& stmts,
                   const std::string& who, size_t* at) -> std::string {
    std::optional<size_t> found;
    for (size_t i = 0; i < stmts.size(); ++i) {
      const auto& t = stmts[i].second;
      bool names = false;
      for (size_t k = 0; k < t.size(); ++k) {
        if (k + 2 < t.size() && t[k] == "self" && t[k + 1] == "." && t[k + 2] == attr) names = true;
        if (reaching.count(t[k]))
          return who + "'s __init__ reaches its parameters otherwise than by creating them (`" +
                 t[k] + "`)";
      }
      if (!names) continue;
      if (found || stmts[i].first != 0 || t.size() < 5 || t[0] != "self" || t[2] != attr ||
          t[3] != "=")
        return who + "'s __init__ sets " + self_attr +
               " otherwise than by one assignment at its top level";
      found = i;
    }
    if (!found) return who + "'s __init__ does not create " + self_attr;
    *at = *found;
    return "";
  };
  size_t ref_at = 0, my_at = 0;
  if (std::string why = place(ref, "the reference", &ref_at); !why.empty()) return why;
  if (std::string why = place(mine, "ModelNew", &my_at); !why.empty()) return why;
  if (init_setattr_) return "ModelNew's __init__ calls setattr";
  // The creating expressions: the reference's parsed from its line.
  PyExprP ref_rhs;
  if (std::optional<size_t> d = init_def(ref_lines, "Model")) {
    Block body = body_of(ref_lines, *d);
    for (size_t i = body.begin; i < body.end && !ref_rhs; ++i) {
      const auto& lt = ref_lines[i].toks;
      if (ref_lines[i].indent == ref_lines[body.begin].indent && lt.size() > 4 &&
          tok_is(lt[0], "self") && tok_is(lt[1], ".") && lt[2].text == attr && tok_is(lt[3], "="))
        ref_rhs = try_parse_expr(lt, 4, lt.size());
    }
  }
  auto my_rhs = init_attrs_.find(attr);
  // `nn.Parameter(torch.<f>(dims))` (requires_grad changes no value): f, or "" when not so.
  auto creation = [](const PyExprP& v, bool resolved, const PySide& side) -> std::string {
    if (!v || v->kind != PyExpr::Call || v->kids.size() != 2) return "";
    for (const auto& kw : v->kwargs)
      if (kw.first != "requires_grad") return "";
    auto name = [&](const PyExprP& e) {
      std::string d = py_dotted(e);
      return resolved ? side.resolve(d) : d;
    };
    std::string p = name(v->kids[0]);
    if (p != "torch.nn.Parameter" && p != "nn.Parameter" && p != "torch.nn.parameter.Parameter" &&
        !(resolved && p == "Parameter"))
      return "";
    const PyExprP& t = v->kids[1];
    if (t->kind != PyExpr::Call || t->kids.size() < 2 || !t->kwargs.empty()) return "";
    std::string f = name(t->kids[0]);
    for (const char* ok : {"randn", "rand", "zeros", "ones"})
      if (f == std::string("torch.") + ok) return ok;
    if (f == "torch.tensor" || f == "torch.full") return f.substr(6);
    return "";
  };
  const std::string ref_how = creation(ref_rhs, false, *this);
  const std::string my_how =
      my_rhs == init_attrs_.end() ? "" : creation(my_rhs->second, true, *this);
  // `torch.tensor(v)`, `torch.full(shape, v)` (no draw) written as the reference writes it, of
  // numbers and the constructor's parameters, which neither __init__ rebinds: the same values.
  if ((my_how == "tensor" || my_how == "full") && my_how == ref_how) {
    const PyExprP &x = my_rhs->second->kids[1], &y = ref_rhs->kids[1];
    std::set<std::string> names;
    std::function<void(const PyExprP&)> collect = [&](const PyExprP& e) {
      if (e->kind == PyExpr::Name) names.insert(e->text);
      for (const auto& k : e->kids) collect(k);
      for (const auto& kw : e->kwargs) collect(kw.second);
    };
    for (size_t k = 1; k < x->kids.size(); ++k) collect(x->kids[k]);
    for (const auto& kw : x->kwargs) collect(kw.second);
    const std::set<std::string> params = header_params(init_header(lines_, "ModelNew"));
    bool same = x->kids.size() == y->kids.size() && x->kwargs.size() == y->kwargs.size() &&
                py_text(x).substr(py_text(x).find('(')) == py_text(y).substr(py_text(y).find('('));
    for (const auto& n : names) {
      bool rebound = false;
      for (const auto* stmts : {&ref, &mine})
        for (const auto& [indent, s] : *stmts)
          for (size_t k = 0; k + 1 < s.size(); ++k)
            rebound = rebound || (s[k] == n && (k == 0 || s[k - 1] != ".") &&
                                  (s[k + 1] == "=" || s[k + 1] == "in" || s[k + 1] == ","));
      if (n != "torch" && (!params.count(n) || rebound)) same = false;
    }
    if (same) return "";
    return "ModelNew creates " + self_attr + " otherwise than the reference (`" +
           py_text(my_rhs->second) + "` against `" + py_text(ref_rhs) + "`)";
  }
  if (ref_how.empty())
    return "the reference creates " + self_attr +
           " otherwise than as nn.Parameter(torch.randn/rand/zeros/ones(shape)), which kernrl "
           "does not compare";
  if (my_how.empty())
    return "ModelNew creates " + self_attr +
           " otherwise than as nn.Parameter(torch.randn/rand/zeros/ones(shape)), which kernrl "
           "does not compare";
  if (my_how != ref_how)
    return "ModelNew creates " + self_attr + " with torch." + my_how +
           ", the reference with torch." + ref_how;
  // Of the problem's shape at every size set.
  const TensorSpec* want = nullptr;
  for (const auto& p : C.P.parameters)
    if (p.name == attr) want = &p;
  if (!want) return "the problem has no parameter `" + attr + "`";
  bool same_text = false;  // the shape is known the same only from its text
  std::set<std::string> shape_names;
  {
    const PyExprP& t = my_rhs->second->kids[1];
    bool same = creates_shape(t, *want);
    // Else the reference's text, of names the statements before it bind as the reference's do
    // (compared below, then also for a tensor that draws nothing).
    const PyExprP& r = ref_rhs->kids[1];
    same_text = t->kids.size() == r->kids.size();
    for (size_t k = 1; same_text && k < t->kids.size(); ++k) {
      same_text = py_text(t->kids[k]) == py_text(r->kids[k]);
      std::function<void(const PyExprP&)> collect = [&](const PyExprP& e) {
        if (e->kind == PyExpr::Name) shape_names.insert(e->text);
        for (const auto& x : e->kids) collect(x);
        for (const auto& kw : e->kwargs) collect(kw.second);
      };
      collect(t->kids[k]);
    }
    if (!same && !same_text)
      return "ModelNew creates " + self_attr + " of another shape than the reference";
    if (same) same_text = false;
  }
  // No draw: its place does not matter.
  if ((my_how == "zeros" || my_how == "ones") && !same_text) return "";
  // A drawn one: the statements before it, but for asserts and attributes set without a call
  // or with tensors of zeros, ones or values (torch.tensor, torch.full), are the reference's, in
  // order, token for token; and what they call is torch's or a builtin's.
  auto skippable = [&](const std::pair<int, std::vector<std::string>>& s) {
    const auto& t = s.second;
    bool check = s.first == 0 && !t.empty() && t[0] == "assert";
    if (std::find(t.begin(), t.end(), ":=") != t.end()) return false;
    if (!check && (s.first != 0 || t.size() < 5 || t[0] != "self" || t[1] != "." || t[3] != "="))
      return false;
    for (size_t k = 1; k < t.size(); ++k) {
      if (t[k] != "(") continue;
      const std::string& b = t[k - 1];
      bool name = !b.empty() && (std::isalnum(static_cast<unsigned char>(b[0])) || b[0] == '_');
      static const std::set<std::string> keywords = {"and", "or", "not",  "in",
                                                     "is",  "if", "else", "assert"};
      // `nn.Parameter(torch.zeros(...))`, `torch.ones(...)`, `torch.tensor(...)`: no draw.
      bool no_draw = k >= 3 && t[k - 2] == "." &&
                     ((b == "Parameter" && t[k - 3] == "nn") ||
                      ((b == "zeros" || b == "ones" || b == "tensor" || b == "full") &&
                       t[k - 3] == "torch")) &&
                     (k < 4 || t[k - 4] != ".");
      if (((name && !keywords.count(b)) || b == ")" || b == "]") && !no_draw) return false;
    }
    return true;
  };
  std::vector<const std::pair<int, std::vector<std::string>>*> a, b;
  for (size_t i = 0; i < my_at; ++i)
    if (!skippable(mine[i])) a.push_back(&mine[i]);
  for (size_t i = 0; i < ref_at; ++i)
    if (!skippable(ref[i])) b.push_back(&ref[i]);
  const std::string before =
      "a random draw before " + self_attr +
      " in ModelNew's __init__ is not the reference's (KernelBench's seeding gives it other "
      "values)";
  if (a.size() != b.size()) return before;
  // Their names: the constructor's parameters, locals they bind, or torch's and builtins (which
  // the generation must not rebind).
  std::set<std::string> bound = header_params(init_header(lines_, "ModelNew"));
  static const std::set<std::string> builtins = {"self",  "nn",    "torch", "range", "len", "int",
                                                 "float", "tuple", "list",  "min",   "max", "abs",
                                                 "True",  "False", "None",  "in",    "for", "if",
                                                 "else",  "not",   "and",   "or",    "is"};
  for (size_t i = 0; i < a.size(); ++i) {
    if (*a[i] != *b[i]) return before;
    const auto& t = a[i]->second;
    if (t.size() > 1 && t[1] == "=") bound.insert(t[0]);
    if (!t.empty() && t[0] == "for")
      for (size_t k = 1; k < t.size() && t[k] != "in"; ++k) bound.insert(t[k]);
  }
  for (const auto* s : a) {
    const auto& t = s->second;
    for (size_t k = 0; k < t.size(); ++k) {
      const std::string& x = t[k];
      bool name = !x.empty() && (std::isalpha(static_cast<unsigned char>(x[0])) || x[0] == '_');
      bool attr_or_kw =
          (k > 0 && t[k - 1] == ".") ||
          (k + 1 < t.size() && t[k + 1] == "=" && k > 0 && (t[k - 1] == "(" || t[k - 1] == ","));
      // `self.x` read (set by a statement the comparison skips, or a method of the class's own):
      // only `self.<name> = ...` is compared.
      if (x == "self" && !(k == 0 && t.size() > 3 && t[1] == "." && t[3] == "="))
        return "a statement before " + self_attr + " in ModelNew's __init__ reads `self`, which " +
               "kernrl does not compare with the reference's";
      if (!name || attr_or_kw || bound.count(x)) continue;
      if (!builtins.count(x))
        return "a statement before " + self_attr + " in ModelNew's __init__ reads `" + x +
               "`, which kernrl does not compare with the reference's";
      if (x != "self" && x != "nn" && x != "torch" &&
          (module_vars_.count(x) || module_defs_.count(x)))
        return "the generation binds `" + x + "` at its top level, which __init__ reads";
    }
  }
  for (const auto& n : shape_names)
    if (!bound.count(n))
      return "ModelNew creates " + self_attr + " of a shape of `" + n +
             "`, which kernrl does not compare with the reference's";
  return "";
}

std::string PySide::layers_built_as_reference() const {
  if (!layers_built_) layers_built_ = compare_init_with_reference();
  return *layers_built_;
}

std::string PySide::compare_init_with_reference() const {
  // The classes of a container's layers are the reference's (problem.yaml's modules) only if
  // ModelNew builds them as the reference does: its __init__ holds the reference's __init__
  // statements, in order, and otherwise only sets new attributes of its own (at the top level of
  // __init__) from names the reference's __init__ does not use, changing no container.
  std::vector<std::pair<int, std::vector<std::string>>> ref;
  try {
    ref = init_statements(py_lines(C.P.torch), "Model");
  } catch (const ImportError&) {
    return "the reference's module cannot be read";
  }
  if (ref.empty()) return "the reference's Model.__init__ is not found";
  auto mine = init_statements(lines_, "ModelNew");
  // KernelBench binds the constructor's arguments by position: the parameters, their order and
  // defaults must be the reference's.
  std::vector<std::string> ref_header = init_header(py_lines(C.P.torch), "Model");
  std::vector<std::string> my_header = init_header(lines_, "ModelNew");
  if (ref_header != my_header)
    return "ModelNew's __init__ takes other parameters than the reference's";
  const std::set<std::string> params = header_params(ref_header);
  // What the statements mean must be what the reference's mean.
  if (std::string why = plain_module(); !why.empty()) return why;
  std::set<std::string> ref_locals, ref_attrs, my_locals;
  auto locals_of = [](const std::vector<std::pair<int, std::vector<std::string>>>& stmts,
                      std::set<std::string>& out) {
    for (const auto& [indent, t] : stmts) {
      if (t.size() > 1 && t[1] == "=") out.insert(t[0]);
      if (!t.empty() && t[0] == "for")
        for (size_t k = 1; k < t.size() && t[k] != "in"; ++k)
          if (t[k] != "," && t[k] != "(" && t[k] != ")") out.insert(t[k]);
    }
  };
  locals_of(ref, ref_locals);
  locals_of(mine, my_locals);
  // A parameter is never renamed (its value is the argument at its position), even where the
  // body assigns to it.
  for (const auto& n : params) {
    ref_locals.erase(n);
    my_locals.erase(n);
  }
  // The names the reference's __init__ reads that are neither its parameters nor its locals
  // (`nn`, `range`, `zip`, a module constant) mean the same in ModelNew's module only if it does
  // not bind them at its top level.
  for (const auto& [indent, t] : ref)
    for (size_t k = 0; k < t.size(); ++k) {
      const std::string& x = t[k];
      bool name = !x.empty() && (std::isalpha(static_cast<unsigned char>(x[0])) || x[0] == '_');
      if (!name || (k > 0 && t[k - 1] == ".") || params.count(x) || ref_locals.count(x)) continue;
      if (x == "nn" || x == "torch") continue;  // checked to be torch's above
      auto alias = aliases_.find(x);
      bool foreign_import = alias != aliases_.end() && alias->second != x &&
                            alias->second.compare(0, 6, "torch.") != 0;
      if (module_vars_.count(x) || module_defs_.count(x) || foreign_import)
        return "the generation binds `" + x +
               "` at its top level, which the reference's __init__ uses";
    }
  for (const auto& [indent, t] : ref)
    if (t.size() > 3 && t[0] == "self" && t[1] == ".") ref_attrs.insert(t[2]);
  // A statement of ModelNew is the reference's with its local names renamed one to one
  // (`for k in range(n)` for `for i in range(n)`), the renaming kept across statements.
  std::map<std::string, std::string> to_ref, from_ref;
  auto same_statement = [&](const std::pair<int, std::vector<std::string>>& a,
                            const std::pair<int, std::vector<std::string>>& b) {
    if (a.first != b.first || a.second.size() != b.second.size()) return false;
    auto fwd = to_ref, bwd = from_ref;
    for (size_t k = 0; k < a.second.size(); ++k) {
      const std::string &x = a.second[k], &y = b.second[k];
      // `self.x`: an attribute; `f(x=...)`: a keyword argument's name. Neither is renamed.
      bool attr = (k > 0 && a.second[k - 1] == ".") ||
                  (k > 0 && k + 1 < a.second.size() && a.second[k + 1] == "=" &&
                   (a.second[k - 1] == "(" || a.second[k - 1] == ","));
      bool lx = !attr && my_locals.count(x), ly = !attr && ref_locals.count(y);
      if (!lx && !ly) {
        if (x != y) return false;
        continue;
      }
      if (!lx || !ly) return false;  // a local against anything but a local
      auto f = fwd.find(x);
      auto r = bwd.find(y);
      if ((f != fwd.end() && f->second != y) || (r != bwd.end() && r->second != x)) return false;
      fwd[x] = y;
      bwd[y] = x;
    }
    to_ref = std::move(fwd);
    from_ref = std::move(bwd);
    return true;
  };
  // An own attribute's value may call only these (and may not reach private attributes), and
  // `torch.empty`, `torch.zeros`, `torch.ones`: a plain tensor attribute, which is in no state
  // dict and draws no random numbers (`nn.Parameter(...)`, `register_buffer` and `torch.randn`
  // are calls of anything else).
  static const std::set<std::string> callable = {"isinstance", "len", "list",  "tuple", "range",
                                                 "enumerate",  "int", "float", "sum",   "zip"};
  static const std::set<std::string> tensor_ctors = {"empty", "zeros", "ones"};
  // A tensor set as an attribute of the name of a buffer replaces the buffer (and None one of a
  // parameter or submodule): an own attribute names none of the reference's parameters, buffers
  // or submodules (the suite's, by module path), nor a string of the reference's module (a
  // buffer registered by name, persistent or not).
  std::set<std::string> ref_names;
  for (const auto& t : C.P.parameters) ref_names.insert(t.name.substr(0, t.name.find('.')));
  for (const auto& m : C.P.modules) ref_names.insert(m.first.substr(0, m.first.find('.')));
  for (const auto& line : py_lines(C.P.torch))
    for (const auto& x : line.toks)
      if (x.kind == PyTok::String) ref_names.insert(x.text);
  size_t r = 0;
  for (size_t si = 0; si < mine.size(); ++si) {
    const auto& stmt = mine[si];
    if (r < ref.size() && same_statement(stmt, ref[r])) {
      ++r;
      continue;
    }
    // A list of layers of a container (listed_layers), built after all of the reference's
    // statements (its names rebound then change none of them) into an attribute of its own.
    LayerListBlock block;
    if (r == ref.size())
      if (size_t n = layer_list_block(mine, si, &block);
          n && ref_attrs.count(block.container) && !ref_attrs.count(block.attr)) {
        bool reused = false;  // the list's name read later (it is the attribute's list)
        for (size_t k = si + n; k < mine.size(); ++k)
          for (const auto& x : mine[k].second) reused = reused || x == block.name;
        if (!reused) {
          si += n - 1;
          continue;
        }
      }
    const auto& t = stmt.second;
    bool own_attr = stmt.first == 0 && t.size() > 4 && t[0] == "self" && t[1] == "." &&
                    t[3] == "=" && !ref_attrs.count(t[2]) && !ref_names.count(t[2]);
    bool quiet = own_attr;
    for (size_t k = 4; quiet && k < t.size(); ++k) {
      const std::string& x = t[k];
      if (ref_locals.count(x) || my_locals.count(x) || x == "=" || x == "**" || x == ":=" ||
          (x.size() > 1 && x[0] == '_' && k > 0 && t[k - 1] == "."))
        quiet = false;
      if (x == "(") {
        // A call (after a name, `)` or `]`) must be of an allowed builtin; else it groups.
        const std::string& prev = t[k - 1];
        bool call = prev == ")" || prev == "]" ||
                    std::isalnum(static_cast<unsigned char>(prev[0])) || prev[0] == '_';
        bool builtin = callable.count(prev) && t[k - 2] != "." && !module_vars_.count(prev) &&
                       !module_defs_.count(prev);
        // `torch.zeros(` with `torch` itself not an attribute (checked to be torch's above).
        bool tensor = k >= 7 && tensor_ctors.count(prev) && t[k - 2] == "." &&
                      t[k - 3] == "torch" && t[k - 4] != ".";
        if (call && !builtin && !tensor) quiet = false;
      }
    }
    if (!quiet) {
      std::string text;
      for (const auto& x : t) text += (text.empty() ? "" : " ") + x;
      return "ModelNew's __init__ builds its layers otherwise than the reference's (`" +
             text.substr(0, 80) + "`)";
    }
  }
  if (r != ref.size()) return "ModelNew's __init__ does not build all of the reference's layers";
  return "";
}

std::vector<std::string> PySide::module_classes(const Val& layer) const {
  for (const auto& [path, classes] : C.P.modules)
    if (path == layer.name) {
      // A layer inside a container: known only when ModelNew builds the layers as the reference,
      // or builds this one itself as the reference's class, in place in a container it sets
      // once and never changes (`self.shortcut = nn.Sequential(nn.Conv2d(...), ...)`).
      // (Within a submodule of a class of the file, its own attributes are built by its
      // __init__, read with its constructor's arguments; a layer inside a container of it is
      // known only where that __init__ builds it in place.)
      auto rel = relative(path);
      if (!rel)
        fail("host_logic", "forward needs the class of `self." + path + "` outside " + self_name() +
                               ", whose forward runs");
      if (!self_path_.empty() && rel->find('.') != std::string::npos &&
          !(!classes.empty() && built_in_place(path, classes.front())))
        fail("host_logic", "forward needs the class of `self." + path + "`, which " + self_name() +
                               "'s __init__ does not build in place");
      if (self_path_.empty() && path.find('.') != std::string::npos) {
        std::string why = layers_built_as_reference();
        if (!why.empty() && !classes.empty() && built_in_place(path, classes.front()))
          return classes;
        if (!why.empty())
          fail("host_logic", "forward needs the class of `self." + path +
                                 "`, which kernrl knows from the reference's module only: " + why);
      }
      // ModelNew builds it itself (`self.act = nn.ReLU6()`): the class must be the reference's.
      if (!layer.elem.empty() && layer.elem != "Module" && !classes.empty() &&
          layer.elem != classes.front())
        fail("mismatch", "ModelNew builds `self." + layer.name + "` as nn." + layer.elem +
                             " where the reference module has " + classes.front());
      return classes;
    }
  if (!C.P.modules.empty() && layer.name != "self" &&
      std::any_of(C.P.modules.begin(), C.P.modules.end(), [&](const auto& m) {
        return m.first.compare(0, layer.name.size() + 1, layer.name + ".") == 0;
      }))
    return {};  // a container of the reference that modules does not list itself: unknown
  if (layer.elem.empty() || layer.elem == "Module") return {};
  return {layer.elem};
}

bool PySide::built_in_place(const std::string& full, const std::string& cls) const {
  auto rel = relative(full);
  if (!rel) return false;
  const std::string& path = *rel;
  const std::string top = path.substr(0, path.find('.'));
  if (init_setattr_ || !init_attrs_.count(top) || init_attrs_changed_.count(top) ||
      init_attrs_mutated_.count(top))
    return false;
  PyExprP call = rel_layer_ctor(path);
  if (!call || call->kind != PyExpr::Call || call->kids.empty()) return false;
  std::string named = resolve(py_dotted(call->kids[0]));
  return named == "torch.nn." + cls || named == "nn." + cls;
}

std::string PySide::module_class(const Val& layer) const {
  auto classes = module_classes(layer);
  return classes.empty() ? "" : classes.front();
}

std::vector<Val> PySide::layer_children(const Val& layer, const std::string& text) const {
  if (!self_path_.empty())
    fail("host_logic", "the forward of " + self_name() + " iterates over the layers of `self." +
                           layer.name + "` (`" + text +
                           "`); kernrl iterates over ModelNew's own containers only");
  if (C.P.modules.empty())
    fail("host_logic", "forward iterates over the layers of `self." + layer.name + "` (`" + text +
                           "`): kernrl knows them on suites built from KernelBench only "
                           "(problem.yaml's modules; a suite built before kernrl recorded them "
                           "needs building again)");
  if (std::string why = layers_built_as_reference(); !why.empty())
    fail("host_logic", "forward iterates over the layers of `self." + layer.name + "` (`" + text +
                           "`), which kernrl knows from the reference's module only: " + why);
  bool known = std::any_of(C.P.modules.begin(), C.P.modules.end(),
                           [&](const auto& m) { return m.first == layer.name; });
  if (!known)
    fail("host_logic", "forward iterates over `self." + layer.name + "` (`" + text +
                           "`), which is not a module of the reference: kernrl knows the layers "
                           "of the reference's modules only");
  std::string cls = module_class(layer);
  if (cls != "Sequential" && cls != "ModuleList")
    fail("host_logic", "forward iterates over `self." + layer.name + "` (" +
                           (cls.empty() ? std::string("a module") : cls) + ", `" + text +
                           "`); kernrl iterates over nn.Sequential and nn.ModuleList only");
  std::vector<Val> out;
  const std::string prefix = layer.name + ".";
  for (const auto& [path, classes] : C.P.modules) {
    if (path.compare(0, prefix.size(), prefix) != 0) continue;
    if (path.find('.', prefix.size()) != std::string::npos) continue;
    Val child = layer;
    child.name = path;
    child.elem = classes.empty() ? "Module" : classes.front();
    out.push_back(child);
  }
  return out;
}

std::vector<Val> PySide::items_of(const Val& v, const std::string& text) const {
  if (v.kind == Val::List) return v.items;
  if (v.kind == Val::Layer && v.name != "self") return layer_children(v, text);
  if (v.kind == Val::Unknown) fail("host_logic", "forward iterates over " + v.why);
  fail("host_logic", "forward iterates over a value kernrl does not know (`" + text + "`)");
}

Val PySide::sliced(Env& env, const Val& obj, const PyExprP& slice, const std::string& text) {
  if (obj.kind != Val::List && !(obj.kind == Val::Layer && obj.name != "self"))
    fail("host_logic",
         "host logic in forward: a slice of a value kernrl does not know (`" + text + "`)");
  std::optional<int64_t> bound[3];
  for (int k = 0; k < 3; ++k) {
    const PyExprP& part = slice->kids[static_cast<size_t>(k)];
    if (part->kind == PyExpr::Const && part->text == "None") continue;
    Val v = eval(env, part);
    if (v.kind == Val::Bool && v.k) v = make_int(*v.k);
    if (v.kind != Val::Int || !v.k)
      fail("host_logic", "host logic in forward: the bounds of `" + text +
                             "` are not the same at every size set of the problem");
    bound[k] = *v.k;
  }
  std::vector<Val> items = items_of(obj, text);
  const int64_t n = static_cast<int64_t>(items.size());
  const int64_t step = bound[2].value_or(1);
  if (step == 0) fail("mismatch", "`" + text + "` in forward has a slice step of zero");
  // Python's slice.indices(n): bounds clamped to the sequence, negative ones counted from its end.
  auto clamp = [&](std::optional<int64_t> b, int64_t dflt) {
    if (!b) return dflt;
    int64_t v = *b < 0 ? *b + n : *b;
    if (step > 0) return std::min(std::max<int64_t>(v, 0), n);
    return std::min(std::max<int64_t>(v, -1), n - 1);
  };
  int64_t start = clamp(bound[0], step > 0 ? 0 : n - 1);
  int64_t stop = clamp(bound[1], step > 0 ? n : -1);
  Val out;
  out.kind = Val::List;
  out.seq = obj.kind == Val::List ? obj.seq : 0;  // a slice of a Sequential is a Sequential
  // As Python counts them: start, start + step, ... while before stop (no overflow for any step).
  const int64_t mag = step > 0 ? step : (step == INT64_MIN ? INT64_MAX : -step);
  int64_t count = 0;
  if (step > 0 && start < stop) count = (stop - start - 1) / mag + 1;
  if (step < 0 && start > stop) count = (start - stop - 1) / mag + 1;
  for (int64_t k = 0; k < count; ++k)
    out.items.push_back(items[static_cast<size_t>(start + k * step)]);
  return out;
}

bool PySide::loop_body(Env& env, size_t i, size_t next) {
  const PyLine& l = lines_[i];
  size_t colon = header_colon(l.toks);
  if (colon + 1 < l.toks.size())
    exec_inline(env, l, colon + 1);
  else
    exec_lines(env, i + 1, next);
  env.cont = false;
  if (env.brk) {
    env.brk = false;
    return false;
  }
  return !env.ret;
}

size_t PySide::exec_for(Env& env, size_t i, size_t next) {
  const PyLine& l = lines_[i];
  const auto& t = l.toks;
  size_t colon = header_colon(t);
  // for TARGET in ITERABLE:  (the first top-level `in`)
  size_t in = 0;
  int d = 0;
  for (size_t k = 1; k < colon && !in; ++k) {
    if (t[k].kind == PyTok::Op && (t[k].text == "(" || t[k].text == "[")) ++d;
    if (t[k].kind == PyTok::Op && (t[k].text == ")" || t[k].text == "]")) --d;
    if (d == 0 && t[k].kind == PyTok::Name && t[k].text == "in") in = k;
  }
  if (!in || colon == 0)
    fail("host_logic", "host logic in forward: a `for` loop kernrl cannot read (line " +
                           std::to_string(l.line) + ")");
  PyExprP target = py_parse_expr(t, 1, in);
  PyExprP iterable = py_parse_expr(t, in + 1, colon);
  Val over = eval(env, iterable);
  std::vector<Val> items = items_of(over, py_text(iterable));
  size_t after = next;
  bool broke = false;
  // A list the body appends to would be iterated further (append_statement refuses it): the
  // list iterated and every list the iterable reads, which `enumerate(lo)`, `zip(lo, hi)` or
  // `reversed(lo)` iterate lazily in Python (a list within one included).
  std::set<int> read;
  std::function<void(const Val&)> lists = [&](const Val& v) {
    if (v.kind == Val::List && v.list_id) read.insert(v.list_id);
    for (const Val& k : v.items) lists(k);
  };
  lists(over);
  std::function<void(const PyExprP&)> names = [&](const PyExprP& e) {
    if (!e) return;
    if (e->kind == PyExpr::Name) {
      if (auto it = env.locals.find(e->text); it != env.locals.end()) lists(it->second);
    } else if (e->kind == PyExpr::Attr && e->kids.size() == 1 && e->kids[0]->kind == PyExpr::Name &&
               e->kids[0]->text == "self") {
      if (auto it = self_overrides_.find(e->text); it != self_overrides_.end()) lists(it->second);
    }
    for (const auto& k : e->kids) names(k);
    for (const auto& kw : e->kwargs) names(kw.second);
  };
  names(iterable);
  std::vector<int> marked;
  for (int id : read)
    if (env.iterating.insert(id).second) marked.push_back(id);
  for (const Val& item : items) {
    count_iteration(l.line);
    bind(env, target, item, l.line);
    if (!loop_body(env, i, next)) {
      broke = true;
      break;
    }
  }
  for (int id : marked) env.iterating.erase(id);
  // for ... else: the else clause runs when the loop was not ended by a break.
  if (after < lines_.size() && lines_[after].indent == l.indent &&
      tok_is(lines_[after].toks[0], "else")) {
    size_t else_end = after + 1;
    while (else_end < lines_.size() && lines_[else_end].indent > l.indent) ++else_end;
    // Its break or continue belongs to an enclosing loop: the flags stay set for it.
    if (!broke && !env.ret) {
      size_t else_colon = header_colon(lines_[after].toks);
      if (else_colon + 1 < lines_[after].toks.size())
        exec_inline(env, lines_[after], else_colon + 1);
      else
        exec_lines(env, after + 1, else_end);
    }
    after = else_end;
  }
  return after;
}

size_t PySide::exec_while(Env& env, size_t i, size_t next) {
  const PyLine& l = lines_[i];
  size_t colon = header_colon(l.toks);
  if (colon == 0)
    fail("host_logic", "host logic in forward: a `while` loop kernrl cannot read (line " +
                           std::to_string(l.line) + ")");
  PyExprP cond = py_parse_expr(l.toks, 1, colon);
  for (;;) {
    auto b = truth(eval(env, cond));
    if (!b)
      fail("host_logic", "host logic in forward: `" + py_text(cond) +
                             "` decides how often a `while` loop runs and is not the same at "
                             "every size set of the problem (line " +
                             std::to_string(l.line) + ")");
    if (!*b) break;
    count_iteration(l.line);
    if (!loop_body(env, i, next)) break;
  }
  if (next < lines_.size() && lines_[next].indent == l.indent &&
      tok_is(lines_[next].toks[0], "else"))
    fail("host_logic", "host logic in forward: `while ... else` (line " +
                           std::to_string(lines_[next].line) + ")");
  return next;
}

Val PySide::comprehension(Env& env, const PyExprP& e, std::optional<bool> stop_at,
                          const std::string& text) {
  // kids: the element, the target, the iterable, the condition (optional).
  Val iterable = eval(env, e->kids[2]);
  std::vector<Val> items = items_of(iterable, py_text(e->kids[2]));
  Env inner = env;  // the comprehension's own scope: its target does not leak
  Val out;
  out.kind = Val::List;
  out.seq = 'l';
  for (const Val& item : items) {
    count_iteration(e->line);
    bind(inner, e->kids[1], item, e->line);
    if (e->kids.size() > 3) {
      auto keep = truth(eval(inner, e->kids[3]));
      if (!keep)
        fail("host_logic", "host logic in forward: `" + py_text(e->kids[3]) +
                               "` in a list comprehension is not the same at every size set");
      if (!*keep) continue;
    }
    out.items.push_back(eval(inner, e->kids[0]));
    if (stop_at) {
      auto t = truth(out.items.back());
      if (!t)
        fail("host_logic",
             "host logic in forward: an item of `" + text + "` is not the same at every size set");
      if (*t == *stop_at) break;  // any() and all() take no further item
    }
  }
  return out;
}

Val PySide::builtin_isinstance(const std::vector<Val>& args, const std::string& text) const {
  // Decided for a layer whose classes kernrl knows (its class and torch.nn bases) against torch.nn
  // classes, and for a tensor against torch.Tensor; anything else is refused.
  if (args.size() != 2) fail("host_logic", "host logic in forward: `" + text + "`");
  std::vector<std::string> wanted;
  auto add = [&](const Val& c) {
    if (c.kind != Val::Func) fail("host_logic", "host logic in forward: `" + text + "`");
    wanted.push_back(c.name);
  };
  if (args[1].kind == Val::List)
    for (const auto& c : args[1].items) add(c);
  else
    add(args[1]);
  const Val& v = args[0];
  if (v.kind == Val::Tensor &&
      std::all_of(wanted.begin(), wanted.end(), [](const auto& w) { return w == "torch.Tensor"; }))
    return make_bool(true);
  // A value of a Python type kernrl knows against builtin types (a bool is an int).
  static const std::set<std::string> builtins = {"int", "float", "bool", "tuple", "list", "str"};
  if (std::all_of(wanted.begin(), wanted.end(), [](const auto& w) { return builtins.count(w); })) {
    std::set<std::string> is;
    if (v.kind == Val::Int) is = {v.floaty ? "float" : "int"};
    if (v.kind == Val::Float) is = {"float"};
    if (v.kind == Val::Bool) is = {"bool", "int"};
    if (v.kind == Val::Str) is = {"str"};
    if (v.kind == Val::List && v.seq) is = {v.seq == 't' ? "tuple" : "list"};
    if (v.kind == Val::Tensor || v.kind == Val::Layer || v.kind == Val::Void) is = {"-"};
    if (!is.empty())
      return make_bool(std::any_of(wanted.begin(), wanted.end(),
                                   [&](const auto& w) { return is.count(w) > 0; }));
  }
  // ModelNew itself (an item of self.modules()): a class of nn.Module's own, no other torch.nn
  // class.
  if (v.kind == Val::Layer && v.name == "self" && self_path_.empty() && plain_module().empty() &&
      std::all_of(wanted.begin(), wanted.end(), [](const std::string& w) {
        return w.compare(0, 9, "torch.nn.") == 0 && w.find('.', 9) == std::string::npos;
      }))
    return make_bool(std::find(wanted.begin(), wanted.end(), "torch.nn.Module") != wanted.end());
  if (v.kind == Val::Layer && v.name != "self") {
    std::vector<std::string> has = module_classes(v);
    bool from_modules = std::any_of(C.P.modules.begin(), C.P.modules.end(),
                                    [&](const auto& m) { return m.first == v.name; });
    bool all_nn = std::all_of(wanted.begin(), wanted.end(), [](const std::string& w) {
      return w.compare(0, 9, "torch.nn.") == 0 && w.find('.', 9) == std::string::npos;
    });
    if (!has.empty() && all_nn) {
      for (const auto& w : wanted)
        if (w == "torch.nn.Module" || std::find(has.begin(), has.end(), w.substr(9)) != has.end())
          return make_bool(true);
      // ModelNew's own layer: its class is known, its bases are not.
      if (from_modules) return make_bool(false);
    }
  }
  fail("host_logic", "host logic in forward: `" + text + "` (a type kernrl cannot decide)");
}

}  // namespace kernrl::kbimport::py
