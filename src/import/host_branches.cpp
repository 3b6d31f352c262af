// The C++ host side (host_interp.h): conditions that differ between the problem's size sets, as
// arithmetic the launch block can hold. A comparison of integers is 0 or 1 as min(max(d, 0), 1)
// of their difference; a branch runs its launches that many times (repeat count 0 or 1) and an
// integer it sets takes the value of the branch that ran.
#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

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

// Why `e` does not evaluate at one of `sets` ("" where it evaluates at each).
std::string problem_at(const std::string& e, const Converter& c, const std::string& repeat_var) {
  for (const Vars& s : c.size_sets) {
    Vars v = c.with_values(plan_vars(c.P, s, 132));  // as the launch block sees them
    if (!repeat_var.empty()) v[repeat_var] = 0;
    try {
      eval_expr(e, v);
    } catch (const ExprError& x) {
      return x.what();
    }
  }
  return "";
}

}  // namespace

bool Interp::evaluates(const std::string& e) const {
  return expr_problem(e).empty();
}

std::string Interp::expr_problem(const std::string& e) const {
  return problem_at(e, C, C.repeat_var_);
}

bool Interp::non_negative(const std::string& e) const {
  for (const Vars& s : C.size_sets) {
    Vars v = C.with_values(plan_vars(C.P, s, 132));
    if (!C.repeat_var_.empty()) v[C.repeat_var_] = 0;
    try {
      if (eval_expr(e, v) < 0) return false;
    } catch (const ExprError&) {
      return false;
    }
  }
  return true;
}

bool Interp::exec_both_branches(Frame& fr, const std::string& cond, size_t then_begin,
                                size_t then_end, size_t else_begin, size_t else_end,
                                bool statements, size_t rest_begin, size_t rest_end) {
  auto run = [&](Frame& f, size_t b, size_t e) {
    if (statements)
      exec_block(f, b, e);
    else
      exec_body(f, b, e);
  };
  branch_why_.clear();
  const size_t launches0 = C.launches.size(), tensors0 = C.tensors.size();
  const std::vector<std::string> notes0 = C.notes;
  // A view's copy made in a branch (TensorInfo::copy) holds the view's values only where that
  // branch runs: each branch starts from the copies made before, and they are kept after.
  std::vector<std::pair<int, int>> copies0;
  for (size_t t = 0; t < tensors0; ++t)
    copies0.emplace_back(C.tensors[t].copy, C.tensors[t].copy_writes);
  auto restore_copies = [&] {
    for (size_t t = 0; t < tensors0; ++t)
      std::tie(C.tensors[t].copy, C.tensors[t].copy_writes) = copies0[t];
  };
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
    restore_copies();
    outer_changed();
  };
  // Which branch each launch and tensor from launches0 and tensors0 on belongs to (true: the
  // then-branch).
  std::vector<bool> then_side, then_made;
  auto mark = [&](bool then) {
    then_side.resize(C.launches.size() - launches0, then);
    then_made.resize(C.tensors.size() - tensors0, then);
  };
  Frame then_fr = fr, else_fr = fr;
  try {
    run(then_fr, then_begin, then_end);
    mark(true);
    restore_copies();
    if (outer_changed()) {
      undo();
      return false;
    }
    if (else_begin < else_end) run(else_fr, else_begin, else_end);
    mark(false);
    restore_copies();
    // One branch returns (`if (c) { ...; return a; }`): the statements after the `if` in its
    // block are the other branch's.
    if (then_fr.returned != else_fr.returned && rest_begin < rest_end) {
      Frame& f = then_fr.returned ? else_fr : then_fr;
      exec_range(f, rest_begin, rest_end);
      mark(&f == &then_fr);
      restore_copies();
    }
    if (outer_changed()) {
      undo();
      return false;
    }
  } catch (const ImportError&) {
    undo();
    return false;
  }
  // A return inside a loop that runs as a repeat would end the loop, which a repeat cannot.
  const bool returned = then_fr.returned && else_fr.returned;
  if (then_fr.returned != else_fr.returned || (returned && !C.repeat_var_.empty()) ||
      then_fr.scopes.size() != fr.scopes.size() || else_fr.scopes.size() != fr.scopes.size()) {
    undo();
    return false;
  }
  // Allocations in a branch are buffers at every size set (with rows only where their branch
  // runs, below): their dimensions must be sizes at each.
  for (size_t t = tensors0; t < C.tensors.size(); ++t)
    for (const Val& d : C.tensors[t].shape)
      if (d.kind != Val::Int || (d.k ? *d.k < 0 : !non_negative(d.e))) {
        undo();
        return false;
      }
  if (returned) {
    // Both return (the function ends here): the value the branch that ran returns.
    std::optional<Val> ret =
        merged_return(fr, then_fr.ret.value_or(Val{}), else_fr.ret.value_or(Val{}), cond, mark);
    if (!ret) {
      undo();
      return false;
    }
    fr.ret = *ret;
    fr.returned = true;
  } else {
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
        if (std::string why = var.v.k ? "" : expr_problem(var.v.e); !why.empty()) {
          branch_why_ = "the value of `" + name +
                        "` after it, chosen by the condition, has no "
                        "expression the launch block can evaluate (" +
                        why + ")";
          undo();
          return false;
        }
        var.v = C.named_value(var.v, name);
      }
  }
  const std::string not_cond = "1 - (" + cond + ")";
  // A buffer made in a branch is needed only where that branch runs: elsewhere it has no rows
  // (its first dimension times the branch's 0 or 1). A value returned keeps its shape.
  std::set<int> kept;
  if (fr.ret && fr.returned)
    for (const Val& v : fr.ret->kind == Val::List ? fr.ret->items : std::vector<Val>{*fr.ret})
      if (v.kind == Val::Tensor) kept.insert(C.storage_of(v.tensor));
  for (size_t t = tensors0; t < C.tensors.size(); ++t) {
    TensorInfo& info = C.tensors[t];
    if (info.role != "alloc" || info.base >= 0 || info.view_src >= 0 || info.shape.empty() ||
        kept.count(static_cast<int>(t)))
      continue;
    info.shape[0] =
        int_binop("*", info.shape[0], make_int_expr(then_made[t - tensors0] ? cond : not_cond), "");
  }
  // Launches and torch steps: the then-branch's run `cond` times, the else-branch's `1 - cond`
  // times.
  for (size_t l = launches0; l < C.launches.size(); ++l) {
    LaunchOut& L = C.launches[l];
    const std::string& c = then_side[l - launches0] ? cond : not_cond;
    L.repeat_count = L.repeat_count.empty() ? c : "(" + L.repeat_count + ") * (" + c + ")";
    std::vector<std::string> exprs = L.grid;
    exprs.insert(exprs.end(), L.block.begin(), L.block.end());
    exprs.push_back(L.shared);
    exprs.push_back(L.repeat_count);
    // Integer arguments (a torch step's lists item by item): not a scalar's name, not a float (a
    // literal such as `1e-06`, a real expression with `1.0`), not a torch step's none, true or
    // false.
    for (const auto& a : L.args) {
      if (a.tensor >= 0 || !a.tensors.empty() || a.text.empty()) continue;
      std::vector<std::string> items = {a.text};
      if (!L.torch.empty() && a.text.front() == '[' && a.text.back() == ']')
        items = split_top_level(a.text.substr(1, a.text.size() - 2));
      for (const auto& t : items)
        if (t != "null" && t != "none" && t != "true" && t != "false" && !C.P.find_scalar(t) &&
            t.find('.') == std::string::npos && !is_float_literal(t))
          exprs.push_back(t);
    }
    for (const auto& a : L.args)
      if (!a.offset.empty()) exprs.push_back(a.offset);
    const std::string& rv = L.repeat_var.empty() ? C.repeat_var_ : L.repeat_var;
    for (const auto& e : exprs)
      if (!e.empty() && !problem_at(e, C, rv).empty()) {
        undo();
        return false;
      }
  }
  return true;
}

std::optional<Val> Interp::merged_return(Frame& fr, const Val& a, const Val& b,
                                         const std::string& cond,
                                         const std::function<void(bool)>& mark) {
  if (same_value(a, b)) return a;
  if (a.kind == Val::Int && b.kind == Val::Int) {
    Val v = select_int(cond, a, b);
    if (!v.k && !evaluates(v.e)) return std::nullopt;
    return v;
  }
  // Two tensors, on a suite (torch steps): one branch's is copied into the other's buffer where
  // that branch runs, so that one buffer holds what the branch that ran returns. Both are the
  // function's own (allocated by it, seen by nothing outside it but through what it returns), so
  // that no tensor of the caller is, or stops being, the result.
  if (a.kind != Val::Tensor || b.kind != Val::Tensor || C.P.torchscript.empty())
    return std::nullopt;
  auto plain = [&](const Val& v) {
    const TensorInfo& t = C.tensors[static_cast<size_t>(v.tensor)];
    return v.elem.empty() && static_cast<size_t>(v.tensor) >= fr.tensors0 && t.role == "alloc" &&
           t.base < 0 && t.view_src < 0 && t.layout.empty() && !t.layout_unknown;
  };
  const bool into_a = plain(a);
  if (!into_a && !plain(b)) return std::nullopt;
  const Val& to = into_a ? a : b;
  Val from = into_a ? b : a;
  const TensorInfo target = C.tensors[static_cast<size_t>(to.tensor)];
  const TensorInfo source = C.tensors[static_cast<size_t>(from.tensor)];
  // The same dtype and, at every size set, the same shape: what forward sees of the result.
  if (source.dtype != target.dtype || source.shape.size() != target.shape.size() ||
      C.storage_of(from.tensor) == to.tensor ||
      static_cast<size_t>(C.storage_of(from.tensor)) < fr.tensors0)
    return std::nullopt;
  for (size_t d = 0; d < target.shape.size(); ++d) {
    auto x = C.per_set(source.shape[d]), y = C.per_set(target.shape[d]);
    if (!x || !y || *x != *y) return std::nullopt;
  }
  // The values in order: a view of a buffer is its buffer's (read in the target's shape), a
  // lazy view is copied first (on the source's side).
  if (from.elem == "lazy") {
    from = C.materialized(from, "the value `" + fr.fn + "` returns", "host_logic", true);
  } else if (from.elem == "reshaped" && source.base >= 0) {
    from.tensor = C.storage_of(from.tensor);
    from.elem.clear();
  } else if (!from.elem.empty() || !source.layout.empty() || source.layout_unknown) {
    return std::nullopt;
  }
  LaunchOut step;
  step.torch = "reshape";
  step.out = to.tensor;
  LaunchArgOut src, dims;
  src.tensor = from.tensor;
  for (const Val& d : target.shape) dims.text += (dims.text.empty() ? "" : ", ") + int_text(d);
  dims.text = "[" + dims.text + "]";
  step.args = {src, dims};
  ++C.writes[to.tensor];
  C.launches.push_back(step);
  mark(!into_a);
  const std::string note =
      "the host wrapper returns different tensors depending on the sizes: the one of the branch "
      "taken is copied into the other's buffer where it is taken (a reshape step, whose time "
      "counts in this file's time)";
  if (std::find(C.notes.begin(), C.notes.end(), note) == C.notes.end()) C.notes.push_back(note);
  return to;
}

}  // namespace kernrl::kbimport::host
