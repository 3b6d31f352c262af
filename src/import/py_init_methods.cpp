// The Python side (py_side.h): an attribute ModelNew's __init__ sets from a call of one of its
// methods or of a function of the module that returns an nn.Sequential of standard layers
// (`self.block = self._make_block(32, 16, 2)`), read as the same nn.Sequential built in place.
#include <algorithm>
#include <functional>
#include <set>

#include "import/py_side.h"

namespace kernrl::kbimport::py {

bool PySide::init_value_expr(const PyExprP& x) const {
  static const std::set<std::string> pure = {"int", "float", "bool", "min", "max", "abs", "round"};
  if (x->kind == PyExpr::Call) {
    std::string f = resolve(py_dotted(x->kids[0]));
    if ((!pure.count(f) && !starts_with(f, "math.")) || module_vars_.count(f) ||
        module_defs_.count(f) || !x->kwargs.empty())
      return false;
  }
  if (x->kind == PyExpr::Other && x->text != "conditional expression") return false;
  if (x->kind == PyExpr::Name && x->text == "self") return false;
  for (size_t k = x->kind == PyExpr::Call ? 1 : 0; k < x->kids.size(); ++k)
    if (!init_value_expr(x->kids[k])) return false;
  return true;
}

bool PySide::init_layer_expr(const PyExprP& x) const {
  if (x->kind != PyExpr::Call) return false;
  std::string f = resolve(py_dotted(x->kids[0]));
  if (!starts_with(f, "torch.nn.") && !starts_with(f, "nn.")) return false;
  std::string cls = f.substr(starts_with(f, "torch.nn.") ? 9 : 3);
  if (cls.empty() || cls.find('.') != std::string::npos ||
      !std::isupper(static_cast<unsigned char>(cls[0])) || cls == "Parameter" ||
      cls == "ModuleList" || cls == "ModuleDict" || cls == "ParameterList" ||
      cls == "ParameterDict" || cls == "Module")
    return false;
  if (is_sequential(f)) {
    if (!x->kwargs.empty()) return false;
    for (size_t k = 1; k < x->kids.size(); ++k)
      if (!init_layer_expr(x->kids[k])) return false;
    return true;
  }
  for (size_t k = 1; k < x->kids.size(); ++k)
    if (!init_value_expr(x->kids[k])) return false;
  for (const auto& kw : x->kwargs)
    if (kw.first == "*" || !init_value_expr(kw.second)) return false;
  return true;
}

std::optional<PyExprP> PySide::init_method_sequential(const PyExprP& call, std::string* why) {
  // Which function: `self.M(...)` (a method of the class) or `f(...)` (a function of the module).
  if (call->kind != PyExpr::Call || call->kids.empty()) return std::nullopt;
  const PyExprP& callee = call->kids[0];
  size_t header = 0;
  bool method = false;
  if (callee->kind == PyExpr::Attr && callee->kids[0]->kind == PyExpr::Name &&
      callee->kids[0]->text == "self") {
    auto m = method_headers_.find(callee->text);
    if (m == method_headers_.end() || m->first == "__init__" || m->first == "forward")
      return std::nullopt;
    header = m->second;
    method = true;
  } else if (callee->kind == PyExpr::Name && module_def_headers_.count(callee->text) &&
             !init_params_.count(callee->text) && !init_locals_.count(callee->text) &&
             resolve(callee->text) == callee->text) {
    header = module_def_headers_.at(callee->text);
  } else {
    return std::nullopt;
  }
  const std::string fname = (method ? "self." : "") + callee->text;
  const Block body = body_of(lines_, header);
  // Only a function that returns an nn.Sequential is read here; any other is left as before.
  bool returns_sequential = false;
  for (size_t i = body.begin; i < body.end; ++i) {
    const auto& lt = lines_[i].toks;
    if (lt.size() > 2 && tok_is(lt[0], "return")) {
      std::string d;
      for (size_t k = 1; k < lt.size() && (lt[k].kind == PyTok::Name || tok_is(lt[k], ".")); ++k)
        d += lt[k].text;
      returns_sequential = returns_sequential || is_sequential(resolve(d));
    }
  }
  if (!returns_sequential) return std::nullopt;
  const int def_line = lines_[header].line;
  auto refuse = [&](const std::string& what, int line) -> std::optional<PyExprP> {
    *why = "`" + fname + "` (line " + std::to_string(def_line) + "), which builds the layers " +
           what + (line ? " (line " + std::to_string(line) + ")" : "") +
           "; kernrl follows a function that returns an nn.Sequential of standard layers, built "
           "in straight-line code, in loops it can unroll and under conditions it can decide";
    return PyExprP{};
  };
  // A decorator other than @staticmethod changes what the call does.
  bool takes_self = method;
  if (header > 0 && lines_[header - 1].indent == lines_[header].indent &&
      tok_is(lines_[header - 1].toks[0], "@")) {
    const auto& dt = lines_[header - 1].toks;
    if (method && dt.size() == 2 && tok_is(dt[1], "staticmethod") &&
        !(header > 1 && lines_[header - 2].indent == lines_[header].indent &&
          tok_is(lines_[header - 2].toks[0], "@")))
      takes_self = false;
    else
      return refuse("under a decorator", lines_[header - 1].line);
  }
  // The parameters: plain names, each with an optional literal default.
  const auto& ht = lines_[header].toks;
  std::vector<std::pair<std::string, PyExprP>> params;
  {
    size_t close = ht.size();
    for (size_t k = 3; k < ht.size(); ++k)
      if (tok_is(ht[k], ")")) {
        close = k;
        break;
      }
    if (ht.size() < 4 || !tok_is(ht[2], "(") || close == ht.size())
      return refuse("with parameters kernrl does not read", def_line);
    size_t k = 3;
    while (k < close) {
      if (ht[k].kind != PyTok::Name)
        return refuse("with parameters kernrl does not read", def_line);
      std::string name = ht[k].text;
      PyExprP dflt;
      ++k;
      if (k < close && tok_is(ht[k], "=")) {
        size_t e = k + 1;
        while (e < close && !tok_is(ht[e], ",")) ++e;
        if (e != k + 2 || (ht[k + 1].kind != PyTok::Number && ht[k + 1].kind != PyTok::Name))
          return refuse("with a parameter default other than a literal", def_line);
        dflt = py_parse_expr(ht, k + 1, e);
        if (dflt->kind != PyExpr::Num && dflt->kind != PyExpr::Const)
          return refuse("with a parameter default other than a literal", def_line);
        k = e;
      }
      if (k < close && !tok_is(ht[k], ","))
        return refuse("with parameters kernrl does not read", def_line);
      ++k;
      params.push_back({name, dflt});
    }
  }
  if (takes_self) {
    if (params.empty() || params[0].first != "self") return refuse("without `self`", def_line);
    params.erase(params.begin());
  }
  // The call's arguments: expressions of __init__'s values only (no calls, nothing of `self`),
  // so that reading one where the function reads its parameter computes the same.
  std::function<bool(const PyExprP&)> plain = [&](const PyExprP& x) {
    if (x->kind == PyExpr::Call || x->kind == PyExpr::Other) return false;
    if (x->kind == PyExpr::Name && x->text == "self") return false;
    for (const auto& k : x->kids)
      if (!plain(k)) return false;
    return true;
  };
  std::map<std::string, PyExprP> env;
  if (call->kids.size() - 1 > params.size()) return refuse("from more arguments than it takes", 0);
  for (size_t a = 1; a < call->kids.size(); ++a) env[params[a - 1].first] = call->kids[a];
  for (const auto& kw : call->kwargs) {
    const std::string& k = kw.first;  // (a structured binding: lambdas cannot capture it)
    const PyExprP& v = kw.second;
    auto p =
        std::find_if(params.begin(), params.end(), [&](const auto& q) { return q.first == k; });
    if (k == "*" || p == params.end() || env.count(k))
      return refuse("from arguments kernrl cannot bind", 0);
    env[k] = v;
  }
  for (const auto& [k, v] : params) {
    if (!env.count(k) && !v) return refuse("without a value for its parameter `" + k + "`", 0);
    if (!env.count(k)) env[k] = v;
  }
  for (const auto& [k, v] : env)
    if (!plain(v))
      return refuse("from an argument kernrl does not substitute (`" + py_text(v) + "`)", 0);
  // Every name the function binds itself: read before it is bound, it is no module name.
  std::set<std::string> binds;
  for (const auto& [k, v] : env) binds.insert(k);
  for (size_t i = body.begin; i < body.end; ++i) {
    const auto& lt = lines_[i].toks;
    if (lt.size() > 1 && lt[0].kind == PyTok::Name && tok_is(lt[1], "=")) binds.insert(lt[0].text);
    if (lt.size() > 1 && tok_is(lt[0], "for")) binds.insert(lt[1].text);
  }
  std::string bad;
  // The function's expression with its names replaced by what they hold; a name it does not bind
  // is the module's, which must mean the same in __init__.
  std::function<PyExprP(const PyExprP&)> subst = [&](const PyExprP& x) -> PyExprP {
    if (x->kind == PyExpr::Name) {
      auto it = env.find(x->text);
      if (it != env.end()) return it->second;
      if (x->text == "self" || binds.count(x->text) || init_params_.count(x->text) ||
          init_locals_.count(x->text))
        bad = x->text;
      return x;
    }
    auto y = std::make_shared<PyExpr>(*x);
    for (auto& k : y->kids) k = subst(k);
    for (auto& kw : y->kwargs) kw.second = subst(kw.second);
    return y;
  };
  auto value_expr = [&](const PyExprP& x) { return init_value_expr(x); };
  auto layer_expr = [&](const PyExprP& x) { return init_layer_expr(x); };
  const auto parse = &try_parse_expr;
  std::map<std::string, std::vector<PyExprP>> lists;
  std::optional<std::vector<PyExprP>> result;
  PyExprP seq_callee;
  int steps = 0;
  std::string failed;
  int failed_line = 0;
  auto stop = [&](const std::string& what, int line) {
    if (failed.empty()) {
      failed = what;
      failed_line = line;
    }
  };
  // Runs the statements at lines [from, to) (one block); false once refused.
  std::function<bool(size_t, size_t, bool)> run = [&](size_t from, size_t to, bool top) -> bool {
    for (size_t i = from; i < to;) {
      const auto& lt = lines_[i].toks;
      const int line = lines_[i].line;
      size_t next = i + 1;
      while (next < to && lines_[next].indent > lines_[i].indent) ++next;
      if (result) {
        stop("with statements after its return", line);
        return false;
      }
      if (++steps > 4096) {
        stop("in more steps than kernrl unrolls", line);
        return false;
      }
      if ((lt.size() == 1 && lt[0].kind == PyTok::String) ||
          (lt.size() == 1 && tok_is(lt[0], "pass"))) {
        i = next;
        continue;
      }
      if (tok_is(lt[0], "return")) {
        PyExprP e = parse(lt, 1, lt.size());
        if (!top || next != to || !e || e->kind != PyExpr::Call ||
            !is_sequential(resolve(py_dotted(e->kids[0])))) {
          stop("and returns something other than one nn.Sequential", line);
          return false;
        }
        std::vector<PyExprP> items;
        if (!e->kwargs.empty()) {
          // `return nn.Sequential(*layers)` of a list it built.
          size_t n = lt.size();
          if (n < 5 || e->kids.size() != 1 || e->kwargs.size() != 1 || !tok_is(lt[n - 1], ")") ||
              lt[n - 2].kind != PyTok::Name || !tok_is(lt[n - 3], "*") || !tok_is(lt[n - 4], "(") ||
              !lists.count(lt[n - 2].text)) {
            stop("and returns an nn.Sequential of something other than a list it built", line);
            return false;
          }
          items = lists[lt[n - 2].text];
        } else {
          for (size_t k = 1; k < e->kids.size(); ++k) items.push_back(subst(e->kids[k]));
        }
        result = items;
        seq_callee = subst(e->kids[0]);
        i = next;
        continue;
      }
      if (tok_is(lt[0], "for")) {
        size_t colon = header_colon(lt);
        if (lt.size() < 5 || lt[1].kind != PyTok::Name || !tok_is(lt[2], "in") ||
            colon + 1 != lt.size()) {
          stop("in a loop kernrl does not unroll", line);
          return false;
        }
        PyExprP it = parse(lt, 3, colon);
        std::vector<PyExprP> values;
        if (it && it->kind == PyExpr::Call && resolve(py_dotted(it->kids[0])) == "range" &&
            !module_vars_.count("range") && it->kwargs.empty() && it->kids.size() >= 2 &&
            it->kids.size() <= 4) {
          std::vector<int64_t> b;
          for (size_t k = 1; k < it->kids.size(); ++k) {
            PyExprP a = subst(it->kids[k]);
            Val v = value_expr(a) ? init_computed("<loop bound>", a) : Val{};
            if (v.kind != Val::Int || !v.k) {
              stop("in a loop over `" + py_text(it) + "`, whose bounds kernrl cannot decide", line);
              return false;
            }
            b.push_back(*v.k);
          }
          int64_t start = b.size() > 1 ? b[0] : 0, stopv = b.size() > 1 ? b[1] : b[0],
                  step = b.size() > 2 ? b[2] : 1;
          if (step == 0 || (stopv - start) / step > 1024) {
            stop("in a loop over `" + py_text(it) + "`, which kernrl does not unroll", line);
            return false;
          }
          for (int64_t v = start; step > 0 ? v < stopv : v > stopv; v += step) {
            auto n = std::make_shared<PyExpr>();
            n->kind = PyExpr::Num;
            n->text = std::to_string(v);
            n->line = line;
            values.push_back(n);
          }
        } else if (it && (it->kind == PyExpr::List || it->kind == PyExpr::Tuple)) {
          for (const auto& k : it->kids) values.push_back(subst(k));
        } else {
          stop("in a loop kernrl does not unroll", line);
          return false;
        }
        for (const auto& v : values) {
          if (!plain(v)) {
            stop("in a loop over values kernrl does not substitute", line);
            return false;
          }
          env[lt[1].text] = v;
          if (!run(i + 1, next, false)) return false;
        }
        i = next;
        continue;
      }
      if (tok_is(lt[0], "if")) {
        // The chain's clauses: the first whose condition holds runs.
        const auto clauses = if_chain(lines_, i, to);
        bool ran = false;
        for (const auto& [ch, ce] : clauses) {
          const auto& ct = lines_[ch].toks;
          size_t colon = header_colon(ct);
          if (colon + 1 != ct.size()) {
            stop("under a one-line `if`", lines_[ch].line);
            return false;
          }
          bool take = true;
          if (!tok_is(ct[0], "else")) {
            PyExprP c = parse(ct, 1, colon);
            PyExprP cs = c ? subst(c) : nullptr;
            std::optional<bool> t;
            if (cs && value_expr(cs) && bad.empty()) t = truth(init_computed("<condition>", cs));
            if (!t) {
              stop("under `" + (c ? py_text(c) : std::string("?")) +
                       "`, a condition kernrl cannot decide from the constructor's arguments",
                   lines_[ch].line);
              return false;
            }
            take = *t;
          }
          if (take) {
            if (!run(ch + 1, ce, false)) return false;
            ran = true;
            break;
          }
        }
        (void)ran;
        i = clauses.back().second;
        continue;
      }
      size_t eq = assign_at(lt);
      if (lt.size() > 4 && lt[0].kind == PyTok::Name && tok_is(lt[1], ".") &&
          tok_is(lt[2], "append") && tok_is(lt[3], "(") && lists.count(lt[0].text)) {
        PyExprP e = parse(lt, 0, lt.size());
        if (!e || e->kind != PyExpr::Call || e->kids.size() != 2 || !e->kwargs.empty()) {
          stop("with a call kernrl does not follow", line);
          return false;
        }
        PyExprP l = subst(e->kids[1]);
        if (!layer_expr(l)) {
          stop("from `" + py_text(e->kids[1]) + "`, which is not a standard layer's constructor",
               line);
          return false;
        }
        lists[lt[0].text].push_back(l);
        i = next;
        continue;
      }
      if (eq == 1 && lt[0].kind == PyTok::Name && tok_is(lt[1], "=") && lt.size() > 2) {
        const std::string name = lt[0].text;
        if (lt.size() == 4 && tok_is(lt[2], "[") && tok_is(lt[3], "]")) {
          lists[name].clear();
          env.erase(name);
          i = next;
          continue;
        }
        PyExprP e = parse(lt, 2, lt.size());
        PyExprP s = e ? subst(e) : nullptr;
        if (!s || !value_expr(s) || lists.count(name)) {
          stop("with `" + py_text(e ? e : PyExprP(std::make_shared<PyExpr>())) +
                   "`, which kernrl does not read as a value",
               line);
          return false;
        }
        // A value known at every size set is substituted as its number.
        Val v = init_computed("<value>", s);
        if (v.kind == Val::Int && v.k) {
          auto n = std::make_shared<PyExpr>();
          n->kind = PyExpr::Num;
          n->text = std::to_string(*v.k);
          n->line = line;
          s = n;
        }
        env[name] = s;
        i = next;
        continue;
      }
      std::string text;
      for (const auto& t : lt) text += (text.empty() ? "" : " ") + t.text;
      stop("with `" + text + "`, a statement kernrl does not follow", line);
      return false;
    }
    return true;
  };
  bool ok = run(body.begin, body.end, true);
  if (ok && seq_callee && !is_sequential(resolve(py_dotted(seq_callee)))) ok = false;
  if (ok && !bad.empty()) {
    stop("from `" + bad + "`, a name that means something else where __init__ calls it", 0);
    ok = false;
  }
  if (ok && !result) {
    stop("without returning", 0);
    ok = false;
  }
  if (ok)
    for (const auto& item : *result)
      if (!layer_expr(item)) {
        stop("from `" + py_text(item) + "`, which is not a standard layer's constructor", 0);
        ok = false;
        break;
      }
  if (!ok) return refuse(failed, failed_line);
  // The same nn.Sequential built in place.
  auto seq = std::make_shared<PyExpr>();
  seq->kind = PyExpr::Call;
  seq->line = call->line;
  seq->kids.push_back(seq_callee);
  for (const auto& item : *result) seq->kids.push_back(item);
  return seq;
}

void PySide::read_init_methods() {
  for (auto& [attr, v] : init_attrs_) {
    std::string why;
    auto built = init_method_sequential(v, &why);
    if (!built) continue;
    if (*built)
      v = *built;
    else
      init_method_why_[attr] = why;
  }
  // `self.features = nn.Sequential(*features)` of a list __init__ builds: the same built in
  // place, where kernrl follows how (rel_layer_ctor; else the reason, for messages about its
  // layers' settings).
  for (const auto& [attr, v] : init_attrs_) {
    std::string why;
    auto built = init_list_sequential(attr, &why);
    if (!built) continue;
    if (*built)
      init_list_built_[attr] = *built;
    else
      init_list_why_[attr] = why;
  }
}

}  // namespace kernrl::kbimport::py
