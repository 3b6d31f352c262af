// The Python side (py_side.h): an attribute ModelNew's __init__ sets to `nn.Sequential(*NAME)` of
// a list of layers NAME that __init__ builds at its top level, in loops and through functions it
// defines inside itself (MobileNetV2's `features`), read as the same nn.Sequential built in place.
#include <algorithm>
#include <functional>
#include <set>

#include "import/py_side.h"

namespace kernrl::kbimport::py {

namespace {

PyExprP num_expr(int64_t v, int line) {
  auto n = std::make_shared<PyExpr>();
  n->kind = PyExpr::Num;
  n->text = std::to_string(v);
  n->line = line;
  return n;
}

}  // namespace

std::optional<PyExprP> PySide::init_list_sequential(const std::string& attr, std::string* why) {
  if (!self_path_.empty()) return std::nullopt;
  auto init_it = method_headers_.find("__init__");
  if (init_it == method_headers_.end()) return std::nullopt;
  const Block body = body_of(lines_, init_it->second);
  if (body.begin >= body.end) return std::nullopt;
  const int base = lines_[body.begin].indent;
  // `self.ATTR = nn.Sequential(*NAME)` at the top of __init__, once.
  auto starred_sequential = [&](const std::vector<PyTok>& t, size_t from) -> std::string {
    // Tokens [from, end): `nn . Sequential ( * NAME )` (or `torch . nn . ...`): NAME, else "".
    size_t n = t.size();
    if (n < from + 5 || !tok_is(t[n - 1], ")") || t[n - 2].kind != PyTok::Name ||
        !tok_is(t[n - 3], "*") || !tok_is(t[n - 4], "("))
      return "";
    std::string callee;
    for (size_t k = from; k + 4 < n; ++k) {
      if (t[k].kind != PyTok::Name && !tok_is(t[k], ".")) return "";
      callee += t[k].text;
    }
    return is_sequential(resolve(callee)) ? t[n - 2].text : "";
  };
  size_t at = 0;
  std::string list_name;
  int found = 0;
  // (Set anywhere else in __init__, by any assignment: not this attribute.)
  for (size_t i = body.begin; i < body.end; ++i) {
    const auto& t = lines_[i].toks;
    for (size_t k = 0; k + 3 < t.size(); ++k)
      if (tok_is(t[k], "self") && tok_is(t[k + 1], ".") && t[k + 2].text == attr &&
          t[k + 3].kind == PyTok::Op && t[k + 3].text.back() == '=' && t[k + 3].text != "==" &&
          t[k + 3].text != "!=" && t[k + 3].text != "<=" && t[k + 3].text != ">=")
        ++found;
    if (lines_[i].indent != base || t.size() < 4 || !tok_is(t[0], "self") || !tok_is(t[1], ".") ||
        t[2].text != attr || !tok_is(t[3], "="))
      continue;
    std::string n = starred_sequential(t, 4);
    if (n.empty()) return std::nullopt;
    at = i;
    list_name = n;
  }
  if (found != 1 || list_name.empty()) return std::nullopt;

  std::string failed;
  int failed_line = 0;
  auto stop = [&](const std::string& what, int line) {
    if (failed.empty()) {
      failed = what;
      failed_line = line;
    }
    return false;
  };
  auto refuse = [&]() -> std::optional<PyExprP> {
    *why = "a list of layers that __init__ builds " + failed + " (line " +
           std::to_string(failed_line) +
           "); kernrl follows a list of standard layers __init__ builds at its top, in loops it "
           "can unroll, under conditions it can decide and through functions it defines inside "
           "itself";
    return PyExprP{};
  };
  // Nothing in __init__ may change a layer after building it (`features[0].stride = 2`, `m.p =
  // 0` in a loop over self.modules()): a target other than `self.NAME` or a plain name.
  for (size_t i = body.begin; i < body.end; ++i) {
    const auto& t = lines_[i].toks;
    // The statement's targets end at its first top-level `=` or augmented operator.
    size_t end = 0, assigns = 0;
    int depth = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k].kind != PyTok::Op) continue;
      if (t[k].text == "(" || t[k].text == "[" || t[k].text == "{") ++depth;
      if (t[k].text == ")" || t[k].text == "]" || t[k].text == "}") --depth;
      bool op = t[k].text == "=" ||
                (t[k].text.size() >= 2 && t[k].text.back() == '=' && t[k].text != "==" &&
                 t[k].text != "<=" && t[k].text != ">=" && t[k].text != "!=");
      if (depth == 0 && op) {
        if (!end) end = k;
        ++assigns;
      }
    }
    bool name_target = end == 1 && t[0].kind == PyTok::Name;
    bool self_target =
        end == 3 && tok_is(t[0], "self") && tok_is(t[1], ".") && t[2].kind == PyTok::Name;
    bool for_target = true;
    if (tok_is(t[0], "for"))
      for (size_t k = 1; k < t.size() && !tok_is(t[k], "in"); ++k)
        for_target = for_target && (t[k].kind == PyTok::Name || tok_is(t[k], ","));
    if ((end && (assigns != 1 || (!name_target && !self_target))) || !for_target) {
      stop("while it assigns to something else than a name or an attribute of its own",
           lines_[i].line);
      return refuse();
    }
    for (const auto& x : t)
      if (tok_is(x, "setattr") || tok_is(x, "global") || tok_is(x, "nonlocal") ||
          tok_is(x, "lambda") || tok_is(x, "yield") || tok_is(x, ":=") || tok_is(x, "del") ||
          tok_is(x, "with") || tok_is(x, "exec") || tok_is(x, "eval") || tok_is(x, "apply") ||
          tok_is(x, "__dict__") || tok_is(x, "vars") || tok_is(x, "train")) {
        stop("while it uses `" + x.text + "`", lines_[i].line);
        return refuse();
      }
  }

  auto value_expr = [&](const PyExprP& x) { return init_value_expr(x); };
  auto layer_expr = [&](const PyExprP& x) { return init_layer_expr(x); };
  const auto parse = &try_parse_expr;

  // One function's (or __init__'s) state.
  struct Frame {
    std::map<std::string, PyExprP> env;                 // names bound to values
    std::map<std::string, std::vector<PyExprP>> lists;  // names bound to lists of layers
    std::set<std::string> binds;                        // every name the block binds
    std::optional<PyExprP> ret;                         // what it returned
    bool nested = false;
  };
  std::map<std::string, size_t> defs;  // the functions __init__ defines: their def lines
  std::set<std::string> init_binds;    // every name __init__ binds (its nested defs aside)
  // The names a block binds (by `=`, an augmented assignment or a loop; and by `def`).
  auto binds_of = [&](const Block& b, std::set<std::string>& out, bool with_defs = true) {
    for (size_t i = b.begin; i < b.end; ++i) {
      const auto& lt = lines_[i].toks;
      if (lt.size() > 1 && lt[0].kind == PyTok::Name && assign_at(lt) == 1) out.insert(lt[0].text);
      if (lt.size() > 1 && lt[0].kind == PyTok::Name && lt[1].kind == PyTok::Op &&
          lt[1].text.size() >= 2 && lt[1].text.back() == '=' && lt[1].text != "==" &&
          lt[1].text != "!=" && lt[1].text != "<=" && lt[1].text != ">=")
        out.insert(lt[0].text);
      if (lt.size() > 1 && tok_is(lt[0], "for"))
        for (size_t k = 1; k < lt.size() && !tok_is(lt[k], "in"); ++k)
          if (lt[k].kind == PyTok::Name) out.insert(lt[k].text);
      if (with_defs && lt.size() > 1 && tok_is(lt[0], "def")) out.insert(lt[1].text);
    }
  };
  binds_of(body, init_binds);
  // A function's name bound by its one def only.
  std::set<std::string> assigned;
  binds_of(body, assigned, false);
  std::map<std::string, int> def_count;
  for (size_t i = body.begin; i < body.end; ++i)
    if (tok_is(lines_[i].toks[0], "def") && lines_[i].toks.size() > 1)
      ++def_count[lines_[i].toks[1].text];
  int steps = 0;
  Frame top;
  std::string bad;
  // Names replaced by what they hold in `f`. A name `f` binds that holds nothing known, `self`, a
  // name a nested function reads from __init__ (bound there), or a list of layers is `bad`.
  std::function<PyExprP(Frame&, const PyExprP&)> subst = [&](Frame& f,
                                                             const PyExprP& x) -> PyExprP {
    if (x->kind == PyExpr::Name) {
      auto it = f.env.find(x->text);
      if (it != f.env.end()) return it->second;
      if (x->text == "self" || f.lists.count(x->text) || f.binds.count(x->text) ||
          (f.nested && init_binds.count(x->text)) || init_locals_.count(x->text))
        bad = x->text;
      return x;
    }
    auto y = std::make_shared<PyExpr>(*x);
    for (auto& k : y->kids) k = subst(f, k);
    for (auto& kw : y->kwargs) kw.second = subst(f, kw.second);
    return y;
  };
  std::function<bool(Frame&, size_t, size_t)> exec;
  // A call of a function __init__ defines: its body run with its parameters bound to the
  // arguments' values; what it returns (nullptr once refused).
  std::function<PyExprP(Frame&, const PyExprP&, int)> call_def = [&](Frame& f, const PyExprP& c,
                                                                     int line) -> PyExprP {
    const std::string fname = c->kids[0]->text;
    auto d = defs.find(fname);
    if (d == defs.end() || def_count[fname] != 1 || assigned.count(fname)) {
      stop("from a call of `" + fname + "`, which kernrl does not follow", line);
      return nullptr;
    }
    const size_t header = d->second;
    const auto& ht = lines_[header].toks;
    size_t close = ht.size();
    for (size_t k = 3; k < ht.size(); ++k)
      if (tok_is(ht[k], ")")) {
        close = k;
        break;
      }
    if (ht.size() < 4 || !tok_is(ht[2], "(") || close == ht.size() || close + 2 != ht.size()) {
      stop("from `" + fname + "`, whose parameters kernrl does not read", lines_[header].line);
      return nullptr;
    }
    std::vector<std::pair<std::string, PyExprP>> params;
    for (size_t k = 3; k < close;) {
      if (ht[k].kind != PyTok::Name) {
        stop("from `" + fname + "`, whose parameters kernrl does not read", lines_[header].line);
        return nullptr;
      }
      std::string name = ht[k].text;
      PyExprP dflt;
      ++k;
      if (k < close && tok_is(ht[k], "=")) {
        // A literal default (a number, True, False, None).
        if (k + 1 >= close ||
            (ht[k + 1].kind != PyTok::Number &&
             !(ht[k + 1].kind == PyTok::Name &&
               (ht[k + 1].text == "None" || ht[k + 1].text == "True" ||
                ht[k + 1].text == "False"))) ||
            (k + 2 < close && !tok_is(ht[k + 2], ","))) {
          stop("from `" + fname + "`, with a parameter default other than a literal",
               lines_[header].line);
          return nullptr;
        }
        dflt = parse(ht, k + 1, k + 2);
        if (!dflt) return nullptr;
        k += 2;
      }
      if (k < close && !tok_is(ht[k], ",")) {
        stop("from `" + fname + "`, whose parameters kernrl does not read", lines_[header].line);
        return nullptr;
      }
      ++k;
      params.push_back({name, dflt});
    }
    if (header > 0 && lines_[header - 1].indent == lines_[header].indent &&
        tok_is(lines_[header - 1].toks[0], "@")) {
      stop("from `" + fname + "`, which is decorated", lines_[header].line);
      return nullptr;
    }
    Frame callee;
    callee.nested = true;
    // The arguments: values, computed in the caller.
    auto value_of = [&](const PyExprP& a) -> PyExprP {
      PyExprP s = subst(f, a);
      if (!value_expr(s)) return nullptr;
      return s;
    };
    if (c->kids.size() - 1 > params.size()) {
      stop("from a call of `" + fname + "` with more arguments than it takes", line);
      return nullptr;
    }
    for (size_t a = 1; a < c->kids.size(); ++a) {
      PyExprP v = value_of(c->kids[a]);
      if (!v) {
        stop("from a call of `" + fname + "` with an argument kernrl does not compute", line);
        return nullptr;
      }
      callee.env[params[a - 1].first] = v;
    }
    for (const auto& kw : c->kwargs) {
      const std::string& k = kw.first;
      auto p =
          std::find_if(params.begin(), params.end(), [&](const auto& q) { return q.first == k; });
      PyExprP val = k == "*" ? nullptr : value_of(kw.second);
      if (p == params.end() || callee.env.count(k) || !val) {
        stop("from a call of `" + fname + "` with arguments kernrl cannot bind", line);
        return nullptr;
      }
      callee.env[k] = val;
    }
    for (const auto& [k, v] : params) {
      if (!callee.env.count(k) && !v) {
        stop("from a call of `" + fname + "` without a value for `" + k + "`", line);
        return nullptr;
      }
      if (!callee.env.count(k)) callee.env[k] = v;
    }
    Block fb = body_of(lines_, header);
    binds_of(fb, callee.binds);
    for (const auto& [k, v] : callee.env) callee.binds.erase(k);
    if (!exec(callee, fb.begin, fb.end)) return nullptr;
    if (!callee.ret) {
      stop("from `" + fname + "`, which returns nothing", lines_[header].line);
      return nullptr;
    }
    return *callee.ret;
  };
  // An expression's value in `f`, calls of __init__'s functions replaced by what they return
  // (nullptr once refused).
  std::function<PyExprP(Frame&, const PyExprP&, int)> eval = [&](Frame& f, const PyExprP& x,
                                                                 int line) -> PyExprP {
    if (x->kind == PyExpr::Call && x->kids[0]->kind == PyExpr::Name &&
        defs.count(x->kids[0]->text) && !f.env.count(x->kids[0]->text))
      return call_def(f, x, line);
    if (x->kind == PyExpr::Name) {
      PyExprP s = subst(f, x);
      return s;
    }
    auto y = std::make_shared<PyExpr>(*x);
    for (auto& k : y->kids) {
      k = eval(f, k, line);
      if (!k) return nullptr;
    }
    for (auto& kw : y->kwargs) {
      if (kw.first == "*") continue;
      kw.second = eval(f, kw.second, line);
      if (!kw.second) return nullptr;
    }
    return y;
  };
  // A value bound to a name: a number where kernrl knows it at every size set.
  auto bind_value = [&](Frame& f, const std::string& name, PyExprP s, int line) {
    if (!s || !value_expr(s) || !bad.empty()) {
      stop("with a value kernrl does not compute (`" + name + "`)", line);
      return false;
    }
    if (s->kind != PyExpr::List && s->kind != PyExpr::Tuple) {
      Val v = init_computed("<value>", s);
      if (v.kind == Val::Int && v.k && !v.floaty) s = num_expr(*v.k, line);
    }
    f.env[name] = s;
    f.binds.erase(name);
    return true;
  };
  // A layer for a list: a standard layer's constructor, or `g(...)[k]` of a function that
  // returns a tuple of them.
  auto layer_of = [&](Frame& f, const PyExprP& x, int line) -> PyExprP {
    PyExprP e = eval(f, x, line);
    if (!e) return nullptr;
    if (e->kind == PyExpr::Index && e->kids.size() == 2 &&
        (e->kids[0]->kind == PyExpr::Tuple || e->kids[0]->kind == PyExpr::List) &&
        e->kids[1]->kind == PyExpr::Num) {
      Val k = number(e->kids[1]->text);
      if (k.kind != Val::Int || !k.k || *k.k < 0 ||
          static_cast<size_t>(*k.k) >= e->kids[0]->kids.size()) {
        stop("from an item kernrl cannot pick", line);
        return nullptr;
      }
      e = e->kids[0]->kids[static_cast<size_t>(*k.k)];
    }
    if (!layer_expr(e) || !bad.empty()) {
      stop("from `" + py_text(x) + "`, which is not a standard layer's constructor", line);
      return nullptr;
    }
    return e;
  };
  exec = [&](Frame& f, size_t from, size_t to) -> bool {
    for (size_t i = from; i < to;) {
      const auto& lt = lines_[i].toks;
      const int line = lines_[i].line;
      size_t next = i + 1;
      while (next < to && lines_[next].indent > lines_[i].indent) ++next;
      if (f.ret) return true;
      if (++steps > 4096) return stop("in more steps than kernrl unrolls", line);
      // Only a compound statement's header has a block under it.
      if (next != i + 1 && !tok_is(lt[0], "for") && !tok_is(lt[0], "if") &&
          !tok_is(lt[0], "elif") && !tok_is(lt[0], "else") && !tok_is(lt[0], "def"))
        return stop("with a block kernrl does not read", line);
      if ((lt.size() == 1 && lt[0].kind == PyTok::String) ||
          (lt.size() == 1 && tok_is(lt[0], "pass"))) {
        i = next;
        continue;
      }
      std::string joined;
      for (const auto& x : lt) joined += x.text;
      if (!f.nested &&
          (joined == "super().__init__()" || joined == "super(ModelNew,self).__init__()" ||
           joined == "nn.Module.__init__(self)" || joined == "torch.nn.Module.__init__(self)")) {
        i = next;
        continue;
      }
      // `self.NAME = ...` of another attribute: binds no name; it may not read a list of layers
      // or call a function __init__ defines (which could change one).
      if (!f.nested && lt.size() > 4 && tok_is(lt[0], "self") && tok_is(lt[1], ".") &&
          tok_is(lt[3], "=")) {
        // (`self.B = nn.Sequential(*L)` copies the list: it changes nothing.)
        const std::string copied = starred_sequential(lt, 4);
        for (size_t k = 4; k < lt.size() && copied.empty(); ++k)
          if (lt[k].kind == PyTok::Name && (f.lists.count(lt[k].text) || defs.count(lt[k].text)))
            return stop("with `self." + lt[2].text + "` set from `" + lt[k].text + "`", line);
        i = next;
        continue;
      }
      if (tok_is(lt[0], "def")) {
        if (f.nested || lt.size() < 2)
          return stop("with a function defined inside a function", line);
        defs[lt[1].text] = i;
        f.binds.erase(lt[1].text);
        i = next;
        continue;
      }
      if (tok_is(lt[0], "return")) {
        if (!f.nested) return stop("with a return in __init__", line);
        // nn.Sequential(*L), or that and a value (a tuple), or a value.
        size_t comma = 0;
        int depth = 0;
        for (size_t k = 1; k < lt.size(); ++k) {
          if (tok_is(lt[k], "(") || tok_is(lt[k], "[") || tok_is(lt[k], "{")) ++depth;
          if (tok_is(lt[k], ")") || tok_is(lt[k], "]") || tok_is(lt[k], "}")) --depth;
          if (depth == 0 && tok_is(lt[k], ",") && !comma) comma = k;
        }
        std::vector<PyTok> first(lt.begin() + 1, comma ? lt.begin() + comma : lt.end());
        std::string l = starred_sequential(first, 0);
        PyExprP seq;
        if (!l.empty()) {
          if (!f.lists.count(l)) return stop("and returns a list it did not build", line);
          seq = std::make_shared<PyExpr>();
          seq->kind = PyExpr::Call;
          seq->line = line;
          auto callee = std::make_shared<PyExpr>();
          callee->kind = PyExpr::Name;
          callee->text = "nn.Sequential";
          callee->line = line;
          seq->kids.push_back(callee);
          for (const auto& item : f.lists[l]) seq->kids.push_back(item);
        }
        if (seq && !comma) {
          f.ret = seq;
        } else if (seq) {
          PyExprP rest = parse(lt, comma + 1, lt.size());
          PyExprP v = rest ? eval(f, rest, line) : nullptr;
          if (!v || !value_expr(v) || !bad.empty() || v->kind == PyExpr::Tuple)
            return stop("and returns something other than an nn.Sequential and a value", line);
          auto tup = std::make_shared<PyExpr>();
          tup->kind = PyExpr::Tuple;
          tup->line = line;
          tup->kids = {seq, v};
          f.ret = tup;
        } else {
          PyExprP e = parse(lt, 1, lt.size());
          PyExprP v = e ? eval(f, e, line) : nullptr;
          if (!v || !value_expr(v) || !bad.empty() || v->kind == PyExpr::List ||
              v->kind == PyExpr::Tuple)
            return stop("and returns something other than a number or an nn.Sequential", line);
          Val n = init_computed("<value>", v);
          if (n.kind == Val::Int && n.k && !n.floaty) v = num_expr(*n.k, line);
          f.ret = v;
        }
        return true;
      }
      if (tok_is(lt[0], "for")) {
        size_t colon = header_colon(lt);
        size_t in = 0;
        for (size_t k = 1; k < colon; ++k)
          if (tok_is(lt[k], "in")) {
            in = k;
            break;
          }
        std::vector<std::string> targets;
        bool names_only = in > 1;
        for (size_t k = 1; k < in; ++k) {
          if (k % 2 == 1 && lt[k].kind == PyTok::Name)
            targets.push_back(lt[k].text);
          else if (k % 2 == 1 || !tok_is(lt[k], ","))
            names_only = false;
        }
        if (!names_only || colon + 1 != lt.size() || targets.empty())
          return stop("in a loop kernrl does not unroll", line);
        PyExprP it = parse(lt, in + 1, colon);
        std::vector<PyExprP> values;
        if (it && it->kind == PyExpr::Call && resolve(py_dotted(it->kids[0])) == "range" &&
            !module_vars_.count("range") && !module_defs_.count("range") && it->kwargs.empty() &&
            it->kids.size() >= 2 && it->kids.size() <= 4) {
          std::vector<int64_t> b;
          for (size_t k = 1; k < it->kids.size(); ++k) {
            PyExprP a = eval(f, it->kids[k], line);
            Val v = a && value_expr(a) && bad.empty() ? init_computed("<loop bound>", a) : Val{};
            if (v.kind != Val::Int || !v.k || v.floaty)
              return stop("in a loop over `" + py_text(it) + "`, whose bounds kernrl cannot decide",
                          line);
            b.push_back(*v.k);
          }
          int64_t start = b.size() > 1 ? b[0] : 0, stopv = b.size() > 1 ? b[1] : b[0],
                  step = b.size() > 2 ? b[2] : 1;
          if (step == 0 || (stopv - start) / step > 1024)
            return stop("in a loop over `" + py_text(it) + "`, which kernrl does not unroll", line);
          for (int64_t v = start; step > 0 ? v < stopv : v > stopv; v += step)
            values.push_back(num_expr(v, line));
        } else if (it) {
          PyExprP seq = subst(f, it);
          if (!bad.empty() || (seq->kind != PyExpr::List && seq->kind != PyExpr::Tuple))
            return stop("in a loop kernrl does not unroll", line);
          values = seq->kids;
        } else {
          return stop("in a loop kernrl does not unroll", line);
        }
        for (const auto& v : values) {
          if (targets.size() == 1) {
            if (!bind_value(f, targets[0], v, line)) return false;
          } else {
            if ((v->kind != PyExpr::List && v->kind != PyExpr::Tuple) ||
                v->kids.size() != targets.size())
              return stop("in a loop whose items do not unpack into its names", line);
            for (size_t k = 0; k < targets.size(); ++k)
              if (!bind_value(f, targets[k], v->kids[k], line)) return false;
          }
          if (!exec(f, i + 1, next)) return false;
          if (f.ret) return true;
        }
        i = next;
        continue;
      }
      if (tok_is(lt[0], "if")) {
        const auto clauses = if_chain(lines_, i, to);
        for (const auto& [ch, ce] : clauses) {
          const auto& ct = lines_[ch].toks;
          size_t colon = header_colon(ct);
          if (colon + 1 != ct.size()) return stop("under a one-line `if`", lines_[ch].line);
          bool take = true;
          if (!tok_is(ct[0], "else")) {
            PyExprP c = parse(ct, 1, colon);
            PyExprP cs = c ? eval(f, c, lines_[ch].line) : nullptr;
            std::optional<bool> t;
            if (cs && value_expr(cs) && bad.empty()) t = truth(init_computed("<condition>", cs));
            if (!t)
              return stop("under `" + (c ? py_text(c) : std::string("?")) +
                              "`, a condition kernrl cannot decide",
                          lines_[ch].line);
            take = *t;
          }
          if (take) {
            if (!exec(f, ch + 1, ce)) return false;
            break;
          }
        }
        if (f.ret) return true;
        i = clauses.back().second;
        continue;
      }
      // L.append(layer), L.extend([layers]) of a list of layers.
      if (lt.size() > 4 && lt[0].kind == PyTok::Name && tok_is(lt[1], ".") &&
          (tok_is(lt[2], "append") || tok_is(lt[2], "extend")) && tok_is(lt[3], "(") &&
          f.lists.count(lt[0].text)) {
        PyExprP e = parse(lt, 0, lt.size());
        if (!e || e->kind != PyExpr::Call || e->kids.size() != 2 || !e->kwargs.empty())
          return stop("with a call kernrl does not follow", line);
        auto& l = f.lists[lt[0].text];
        if (tok_is(lt[2], "append")) {
          PyExprP item = layer_of(f, e->kids[1], line);
          if (!item) return false;
          l.push_back(item);
        } else {
          if (e->kids[1]->kind != PyExpr::List && e->kids[1]->kind != PyExpr::Tuple)
            return stop("extending by something other than a list of layers written out", line);
          for (const auto& x : e->kids[1]->kids) {
            PyExprP item = layer_of(f, x, line);
            if (!item) return false;
            l.push_back(item);
          }
        }
        i = next;
        continue;
      }
      size_t eq = assign_at(lt);
      if (eq == 1 && lt[0].kind == PyTok::Name && tok_is(lt[1], "=") && lt.size() > 2) {
        const std::string name = lt[0].text;
        if (f.lists.count(name)) return stop("rebinding `" + name + "`, a list of layers", line);
        PyExprP e = parse(lt, 2, lt.size());
        if (!e) return stop("with a statement kernrl does not read", line);
        // A list of layers written out (`[]` or `[nn.Conv2d(...), ...]`).
        bool layers = e->kind == PyExpr::List &&
                      std::all_of(e->kids.begin(), e->kids.end(),
                                  [](const PyExprP& k) { return k->kind == PyExpr::Call; });
        if (layers) {
          std::vector<PyExprP> items;
          for (const auto& x : e->kids) {
            PyExprP item = layer_of(f, x, line);
            if (!item) return false;
            items.push_back(item);
          }
          f.lists[name] = items;
          f.env.erase(name);
          f.binds.erase(name);
          i = next;
          continue;
        }
        if (!bind_value(f, name, eval(f, e, line), line)) return false;
        i = next;
        continue;
      }
      // NAME += value (and the other arithmetic augmented assignments).
      if (lt.size() > 2 && lt[0].kind == PyTok::Name && lt[1].kind == PyTok::Op &&
          (lt[1].text == "+=" || lt[1].text == "-=" || lt[1].text == "*=" || lt[1].text == "//=") &&
          f.env.count(lt[0].text) && !f.lists.count(lt[0].text)) {
        PyExprP e = parse(lt, 2, lt.size());
        PyExprP v = e ? eval(f, e, line) : nullptr;
        PyExprP old = f.env[lt[0].text];
        if (!v || old->kind == PyExpr::List || old->kind == PyExpr::Tuple ||
            v->kind == PyExpr::List || v->kind == PyExpr::Tuple)
          return stop("with an augmented assignment kernrl does not compute", line);
        auto b = std::make_shared<PyExpr>();
        b->kind = PyExpr::BinOp;
        b->text = lt[1].text.substr(0, lt[1].text.size() - 1);
        b->line = line;
        b->kids = {old, v};
        if (!bind_value(f, lt[0].text, b, line)) return false;
        i = next;
        continue;
      }
      std::string text;
      for (const auto& t : lt) text += (text.empty() ? "" : " ") + t.text;
      return stop("with `" + text.substr(0, 60) + "`, a statement kernrl does not follow", line);
    }
    return true;
  };
  top.binds = init_binds;
  for (const auto& p : init_params_) top.binds.erase(p);
  if (!exec(top, body.begin, at) || top.ret) return refuse();
  if (!bad.empty()) {
    stop("reading `" + bad + "`, which kernrl does not know there", lines_[at].line);
    return refuse();
  }
  auto l = top.lists.find(list_name);
  if (l == top.lists.end()) {
    stop("from `" + list_name + "`, which is not a list of layers built before", lines_[at].line);
    return refuse();
  }
  auto seq = std::make_shared<PyExpr>();
  seq->kind = PyExpr::Call;
  seq->line = lines_[at].line;
  auto callee = std::make_shared<PyExpr>();
  callee->kind = PyExpr::Name;
  callee->text = "nn.Sequential";
  callee->line = seq->line;
  seq->kids.push_back(callee);
  for (const auto& item : l->second) seq->kids.push_back(item);
  return seq;
}

}  // namespace kernrl::kbimport::py
