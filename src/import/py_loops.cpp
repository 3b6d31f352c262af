// Loops in forward: `for` and `while` statements and list comprehensions, unrolled over what they
// iterate. A loop over the layers of an nn.Sequential or nn.ModuleList (`for lin in self.layers`,
// `[m for m in self.net if isinstance(m, nn.Linear)]`) needs their classes, which a suite built
// from KernelBench records in problem.yaml's `modules`.
#include <algorithm>
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

std::string PySide::module_class(const Val& layer) const {
  for (const auto& [path, cls] : C.P.modules)
    if (path == layer.name) return cls;
  if (layer.elem.empty() || layer.elem == "Module") return "";
  return layer.elem;
}

std::vector<Val> PySide::layer_children(const Val& layer, const std::string& text) const {
  if (C.P.modules.empty())
    fail("host_logic", "forward iterates over the layers of `self." + layer.name + "` (`" + text +
                           "`): kernrl knows them on suites built from KernelBench only "
                           "(problem.yaml's modules; a suite built before kernrl recorded them "
                           "needs building again)");
  std::string cls = module_class(layer);
  if (cls != "Sequential" && cls != "ModuleList")
    fail("host_logic", "forward iterates over `self." + layer.name + "` (nn." +
                           (cls.empty() ? std::string("Module") : cls) + ", `" + text +
                           "`); kernrl iterates over nn.Sequential and nn.ModuleList only");
  std::vector<Val> out;
  const std::string prefix = layer.name + ".";
  for (const auto& [path, c] : C.P.modules) {
    if (path.compare(0, prefix.size(), prefix) != 0) continue;
    if (path.find('.', prefix.size()) != std::string::npos) continue;
    Val child = layer;
    child.name = path;
    child.elem = c;
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
  std::vector<Val> items = items_of(eval(env, iterable), py_text(iterable));
  size_t after = next;
  bool broke = false;
  for (const Val& item : items) {
    count_iteration(l.line);
    bind(env, target, item, l.line);
    if (!loop_body(env, i, next)) {
      broke = true;
      break;
    }
  }
  // for ... else: the else clause runs when the loop was not ended by a break.
  if (after < lines_.size() && lines_[after].indent == l.indent &&
      tok_is(lines_[after].toks[0], "else")) {
    size_t else_end = after + 1;
    while (else_end < lines_.size() && lines_[else_end].indent > l.indent) ++else_end;
    if (!broke && !env.ret) loop_body(env, after, else_end);
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

Val PySide::comprehension(Env& env, const PyExprP& e) {
  // kids: the element, the target, the iterable, the condition (optional).
  Val iterable = eval(env, e->kids[2]);
  std::vector<Val> items = items_of(iterable, py_text(e->kids[2]));
  Env inner = env;  // the comprehension's own scope: its target does not leak
  Val out;
  out.kind = Val::List;
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
  }
  return out;
}

Val PySide::builtin_isinstance(const std::vector<Val>& args, const std::string& text) const {
  if (args.size() != 2) fail("host_logic", "host logic in forward: `" + text + "`");
  std::vector<std::string> classes;
  auto add = [&](const Val& c) {
    if (c.kind != Val::Func) fail("host_logic", "host logic in forward: `" + text + "`");
    classes.push_back(c.name.substr(c.name.rfind('.') + 1));
  };
  if (args[1].kind == Val::List)
    for (const auto& c : args[1].items) add(c);
  else
    add(args[1]);
  auto is = [&](const char* name) {
    return std::find(classes.begin(), classes.end(), name) != classes.end();
  };
  const Val& v = args[0];
  if (v.kind == Val::Tensor && is("Tensor")) return make_bool(true);
  if (v.kind == Val::Layer && v.name != "self") {
    std::string cls = module_class(v);
    if (!cls.empty()) return make_bool(is(cls.c_str()) || is("Module"));
  }
  if (v.kind == Val::Int && (is("int") || is("float"))) return make_bool(is("int"));
  if (v.kind == Val::Float && (is("int") || is("float"))) return make_bool(is("float"));
  fail("host_logic", "host logic in forward: `" + text + "` (a type kernrl does not know)");
}

}  // namespace kernrl::kbimport::py
