// The C++ host side (host_interp.h): conditions that differ between the problem's size sets, as
// arithmetic the launch block can hold. A comparison of integers is 0 or 1 as min(max(d, 0), 1)
// of their difference; a branch runs its launches that many times (repeat count 0 or 1) and an
// integer it sets takes the value of the branch that ran.
#include <algorithm>

#include "core/expr.h"
#include "import/host_interp.h"
#include "parse/launch_block.h"
#include "protocol/launch_plan.h"

namespace kernrl::kbimport::host {

std::string Interp::compare_expr(const std::string& op, const std::string& x,
                                 const std::string& y) {
  const std::string d = "(" + x + ") - (" + y + ")", r = "(" + y + ") - (" + x + ")";
  if (op == ">") return "min(max(" + d + ", 0), 1)";
  if (op == ">=") return "min(max(" + d + " + 1, 0), 1)";
  if (op == "<") return "min(max(" + r + ", 0), 1)";
  if (op == "<=") return "min(max(" + r + " + 1, 0), 1)";
  if (op == "!=") return "min(max(" + d + ", " + r + "), 1)";
  if (op == "==") return "1 - min(max(" + d + ", " + r + "), 1)";
  return "";
}

std::string Interp::cond_expr(const Val& v) {
  if (v.kind == Val::Bool && !v.k) return v.e;
  if ((v.kind == Val::Bool || v.kind == Val::Int) && v.k) return *v.k ? "1" : "0";
  if (v.kind == Val::Int && !v.e.empty()) return compare_expr("!=", v.e, "0");
  return "";
}

Val Interp::select_int(const std::string& cond, const Val& a, const Val& b) {
  if (a.k && b.k && *a.k == *b.k) return a;
  return make_int_expr("(" + int_text(b) + ") + ((" + int_text(a) + ") - (" + int_text(b) +
                       ")) * (" + cond + ")");
}

namespace {

// Whether two values of a variable are the same value.
bool same_value(const Val& a, const Val& b) {
  return a.kind == b.kind && a.k == b.k && a.e == b.e && a.f == b.f && a.tensor == b.tensor &&
         a.dtype == b.dtype && a.name == b.name && a.elem == b.elem && a.path == b.path &&
         a.per_set == b.per_set && a.items.size() == b.items.size() &&
         std::equal(a.items.begin(), a.items.end(), b.items.begin(), same_value);
}

bool evaluates_at(const std::string& e, const ProblemSpec& p, const std::vector<Vars>& sets,
                  const std::string& repeat_var) {
  for (const Vars& s : sets) {
    Vars v = plan_vars(p, s, 132);  // as the launch block sees them
    if (!repeat_var.empty()) v[repeat_var] = 0;
    try {
      eval_expr(e, v);
    } catch (const ExprError&) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool Interp::evaluates(const std::string& e) const {
  return evaluates_at(e, C.P, C.size_sets, C.repeat_var_);
}

bool Interp::exec_both_branches(Frame& fr, const std::string& cond, size_t then_begin,
                                size_t then_end, size_t else_begin, size_t else_end,
                                bool statements) {
  auto run = [&](Frame& f, size_t b, size_t e) {
    if (statements)
      exec_block(f, b, e);
    else
      exec_body(f, b, e);
  };
  const size_t launches0 = C.launches.size(), tensors0 = C.tensors.size();
  const std::vector<std::string> notes0 = C.notes;
  // The frames this one is nested in (a lambda's: an AT_DISPATCH body sees its function's
  // variables): a branch that changes one of them is not followed, and their values are put back.
  std::vector<std::pair<Frame*, std::vector<std::map<std::string, Var>>>> outer;
  for (Frame* p = fr.parent; p; p = p->parent) outer.emplace_back(p, p->scopes);
  auto outer_changed = [&] {
    bool changed = false;
    for (auto& [p, saved] : outer) {
      if (p->scopes.size() != saved.size()) {
        changed = true;
      } else {
        for (size_t s = 0; s < saved.size() && !changed; ++s) {
          if (p->scopes[s].size() != saved[s].size()) changed = true;
          for (const auto& [name, var] : saved[s]) {
            auto it = p->scopes[s].find(name);
            if (it == p->scopes[s].end() || !same_value(it->second.v, var.v)) changed = true;
          }
        }
      }
      p->scopes = saved;
    }
    return changed;
  };
  auto undo = [&] {
    C.launches.resize(launches0);
    C.tensors.resize(tensors0);
    C.notes = notes0;
    outer_changed();
  };
  Frame then_fr = fr, else_fr = fr;
  size_t then_launches = 0;
  try {
    run(then_fr, then_begin, then_end);
    then_launches = C.launches.size();
    if (outer_changed()) {
      undo();
      return false;
    }
    if (else_begin < else_end) run(else_fr, else_begin, else_end);
    if (outer_changed()) {
      undo();
      return false;
    }
  } catch (const ImportError&) {
    undo();
    return false;
  }
  // Allocations and returns inside such a branch are not followed.
  if (C.tensors.size() != tensors0 || then_fr.returned || else_fr.returned ||
      then_fr.scopes.size() != fr.scopes.size() || else_fr.scopes.size() != fr.scopes.size()) {
    undo();
    return false;
  }
  // Variables: the same in both, or integers chosen by the condition.
  for (size_t s = 0; s < fr.scopes.size(); ++s)
    for (auto& [name, var] : fr.scopes[s]) {
      const Val& a = then_fr.scopes[s].at(name).v;
      const Val& b = else_fr.scopes[s].at(name).v;
      if (same_value(a, b)) {
        var.v = a;
        continue;
      }
      if (a.kind != Val::Int || b.kind != Val::Int) {
        undo();
        return false;
      }
      var.v = select_int(cond, a, b);
      if (!var.v.k && !evaluates(var.v.e)) {
        undo();
        return false;
      }
    }
  // Launches: the then-branch's run `cond` times, the else-branch's `1 - cond` times.
  auto times = [](LaunchOut& L, const std::string& c) {
    if (!L.torch.empty()) return false;
    L.repeat_count = L.repeat_count.empty() ? c : "(" + L.repeat_count + ") * (" + c + ")";
    return true;
  };
  for (size_t l = launches0; l < C.launches.size(); ++l) {
    LaunchOut& L = C.launches[l];
    if (!times(L, l < then_launches ? cond : "1 - (" + cond + ")")) {
      undo();
      return false;
    }
    std::vector<std::string> exprs = L.grid;
    exprs.insert(exprs.end(), L.block.begin(), L.block.end());
    exprs.push_back(L.shared);
    exprs.push_back(L.repeat_count);
    // Integer arguments: not a scalar's name, not a float (a literal such as `1e-06`, a real
    // expression with `1.0`).
    for (const auto& a : L.args)
      if (a.tensor < 0 && a.tensors.empty() && !a.text.empty() && a.text != "null" &&
          !C.P.find_scalar(a.text) && a.text.find('.') == std::string::npos &&
          !is_float_literal(a.text))
        exprs.push_back(a.text);
    for (const auto& a : L.args)
      if (!a.offset.empty()) exprs.push_back(a.offset);
    const std::string& rv = L.repeat_var.empty() ? C.repeat_var_ : L.repeat_var;
    for (const auto& e : exprs)
      if (!e.empty() && !evaluates_at(e, C.P, C.size_sets, rv)) {
        undo();
        return false;
      }
  }
  return true;
}

}  // namespace kernrl::kbimport::host
