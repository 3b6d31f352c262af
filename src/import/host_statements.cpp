// The host side (host_interp.h): statements.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

#include "core/expr.h"
#include "import/host_interp.h"

namespace kernrl::kbimport::host {

size_t Interp::find_semi(const std::vector<CTok>& T, size_t i, size_t end) {
  int d = 0;
  for (size_t k = i; k < end; ++k) {
    const CTok& t = T[k];
    if (t.kind != CTok::Punct) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
    if (t.text == ")" || t.text == "]" || t.text == "}") --d;
    if (d == 0 && t.text == ";") return k;
    if (d < 0) return k;
  }
  return end;
}

size_t Interp::close_of(const std::vector<CTok>& T, size_t open, size_t end) {
  size_t c = c_match(T, open, end);
  if (c >= end)
    fail("unsupported_cuda", "the host code cannot be read: '" + T[open].text + "' at line " +
                                 std::to_string(T[open].line) + " is never closed");
  return c;
}

size_t Interp::stmt_end(const std::vector<CTok>& T, size_t i, size_t end) {
  if (i >= end) return end;
  const CTok& t = T[i];
  if (is_punct(t, "{")) return close_of(T, i, end) + 1;
  if (t.kind == CTok::Directive) return i + 1;
  if (t.kind == CTok::Ident && i + 1 < end && is_punct(T[i + 1], "(")) {
    // A statement that begins with a macro ends where its expansion says: `if (c) LAUNCH(1)
    // else ...` with LAUNCH(A) `if (v) a<A>(); else b<A>();` is an `if` inside the `if`.
    const MacroRef mr = find_macro(t.text, T, i);
    if (mr.fn && !macro_is_check(*mr.fn)) {
      size_t c = close_of(T, i + 1, end);
      auto V = macro_tokens(t.text, *mr.fn, T, i, split_args(T, i + 2, c));
      const size_t n = V->size();
      V->insert(V->end(), T.begin() + static_cast<long>(c) + 1, T.begin() + static_cast<long>(end));
      size_t e = stmt_end(*V, 0, V->size());
      if (e < n)
        fail("unsupported_cuda", "the macro `" + t.text + "` (used at line " +
                                     std::to_string(t.line) +
                                     ") expands to more than one statement where C++ takes one "
                                     "(the body of an `if`, `else` or loop): only the first "
                                     "would be under it");
      return c + 1 + (e - n);
    }
  }
  if (is_ident(t, "if") || is_ident(t, "for") || is_ident(t, "while") || is_ident(t, "switch")) {
    size_t c = close_of(T, i + 1, end);
    size_t e = stmt_end(T, c + 1, end);
    if (is_ident(t, "if") && e < end && is_ident(T[e], "else")) e = stmt_end(T, e + 1, end);
    return e;
  }
  if (is_ident(t, "do")) {
    size_t e = stmt_end(T, i + 1, end);
    return find_semi(T, e, end) + 1;
  }
  if (is_ident(t, "try")) {
    size_t e = stmt_end(T, i + 1, end);
    while (e < end && is_ident(T[e], "catch")) {
      size_t c = close_of(T, e + 1, end);
      e = stmt_end(T, c + 1, end);
    }
    return e;
  }
  return std::min(end, find_semi(T, i, end) + 1);
}

bool Interp::only_checks(const std::vector<CTok>& T, size_t i, size_t end, bool exits_count) {
  for (size_t k = i; k < end; ++k) {
    const CTok& t = T[k];
    // Under a condition that depends on the sizes, leaving early changes what runs.
    if (exits_count && t.kind == CTok::Ident &&
        (t.text == "return" || t.text == "break" || t.text == "continue" || t.text == "goto"))
      return false;
    if (t.kind == CTok::Punct &&
        (t.text == "<<<" || t.text == "=" || t.text == "+=" || t.text == "-=" || t.text == "*=" ||
         t.text == "/=" || t.text == "++" || t.text == "--"))
      return false;
    if (t.kind == CTok::Ident) {
      if (find_function(t.text, false).item || find_function(t.text, true).item) return false;
      // A macro that is not a check can expand to anything (a launch, an assignment).
      if (k + 1 < end && is_punct(T[k + 1], "(")) {
        const MacroRef mr = find_macro(t.text, T, k);
        if (mr.fn && !macro_is_check(*mr.fn)) return false;
      }
      if (t.text == "cudaMemset" || t.text == "cudaMemcpy" || starts_with(t.text, "AT_DISPATCH"))
        return false;
      if (t.text == "return" && k + 1 < end && !is_punct(T[k + 1], ";")) {
        // `return` of a value in a check is an early exit with a result: not a check.
        bool error_like = false;
        for (size_t q = k; q < end && !is_punct(T[q], ";"); ++q)
          if (T[q].kind == CTok::Ident &&
              (contains(T[q].text, "rror") || T[q].text == "false" || T[q].text == "nullptr"))
            error_like = true;
        if (!error_like) return false;
      }
    }
  }
  return true;
}

void Interp::exec_range(Frame& fr, size_t i, size_t end) {
  const std::vector<CTok>& T = *fr.T;
  while (i < end && !fr.returned) i = exec_stmt(fr, T, i, end);
}

void Interp::exec_block(Frame& fr, size_t i, size_t end) {
  fr.scopes.emplace_back();
  exec_range(fr, i, end);
  fr.scopes.pop_back();
}

void Interp::exec_body(Frame& fr, size_t i, size_t end) {
  const std::vector<CTok>& T = *fr.T;
  if (i < end && is_punct(T[i], "{")) {
    size_t c = close_of(T, i, end);
    exec_block(fr, i + 1, c);
  } else {
    fr.scopes.emplace_back();
    exec_stmt(fr, T, i, end);
    fr.scopes.pop_back();
  }
}

std::string Interp::snippet(const std::vector<CTok>& T, size_t i, size_t end) {
  std::string s = c_text(T, i, end);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

size_t Interp::exec_stmt(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
  const CTok& t = T[i];
  if (t.kind == CTok::Directive) return i + 1;
  if (is_punct(t, ";")) return i + 1;
  if (is_punct(t, "{")) {
    size_t c = close_of(T, i, end);
    exec_block(fr, i + 1, c);
    return c + 1;
  }
  if (t.kind == CTok::Ident) {
    const std::string& w = t.text;
    if (i + 1 < end && is_punct(T[i + 1], "(")) {
      const MacroRef mr = find_macro(w, T, i);
      if (mr.fn && !macro_is_check(*mr.fn)) return exec_macro_stmt(fr, T, i, end, w, *mr.fn);
    }
    if (w == "return") {
      size_t e = find_semi(T, i + 1, end);
      if (e > i + 1)
        fr.ret = eval(fr, T, i + 1, e);
      else
        fr.ret = Val{};
      fr.returned = true;
      return e + 1;
    }
    if (w == "if") return exec_if(fr, T, i, end);
    if (w == "for") return exec_for(fr, T, i, end);
    if (w == "while" || w == "do") return exec_while(fr, T, i, end);
    if (w == "switch") return exec_switch(fr, T, i, end);
    if (w == "break" || w == "continue" || w == "goto")
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + w + "` in the host code");
    if (w == "try") {
      size_t e = stmt_end(T, i, end);
      size_t body_end = stmt_end(T, i + 1, end);
      exec_body(fr, i + 1, body_end);
      return e;
    }
    if (w == "throw") {
      size_t e = find_semi(T, i, end);
      fail("mismatch", "the host wrapper `" + fr.fn + "` raises an error for this problem (`" +
                           snippet(T, i, e) + "`)");
    }
    if (w == "using" || w == "typedef") {
      size_t e = find_semi(T, i, end);
      if (w == "using" && i + 3 < e && T[i + 1].kind == CTok::Ident && is_punct(T[i + 2], "="))
        fr.types[T[i + 1].text] = resolve_type(fr, c_text(T, i + 3, e));
      else if (w == "typedef" && e > i + 2 && T[e - 1].kind == CTok::Ident)
        fr.types[T[e - 1].text] = resolve_type(fr, c_text(T, i + 1, e - 1));
      return e + 1;
    }
    if (w == "static_assert") return find_semi(T, i, end) + 1;
    if (is_declaration(fr, T, i, end)) return exec_decl(fr, T, i, end);
  }
  size_t e = find_semi(T, i, end);
  eval_statement_expr(fr, T, i, e);
  return std::min(end, e + 1);
}

size_t Interp::exec_macro_stmt(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end,
                               const std::string& name, const Converter::FnMacro& m) {
  if (++macro_depth_ > kMaxMacroDepth)
    fail("unsupported_cuda", "the macro `" + name + "` expands too deeply");
  size_t c = close_of(T, i + 1, end);
  auto V = macro_tokens(name, m, T, i, split_args(T, i + 2, c));
  // The expansion spliced in place of the use: its statements run, and one that it leaves
  // unfinished ends in the tokens after the use (which keep their places: V[n + j] is
  // T[c + 1 + j]).
  const size_t n = V->size();
  V->insert(V->end(), T.begin() + static_cast<long>(c) + 1, T.begin() + static_cast<long>(end));
  const std::vector<CTok>* outer = fr.T;
  fr.T = V.get();
  size_t k = 0;
  try {
    while (k < n && !fr.returned) k = exec_stmt(fr, *V, k, V->size());
  } catch (...) {
    fr.T = outer;
    --macro_depth_;
    throw;
  }
  fr.T = outer;
  --macro_depth_;
  if (fr.returned) return end;
  return c + 1 + (k - n);
}

void Interp::eval_statement_expr(Frame& fr, const std::vector<CTok>& T, size_t i, size_t e) {
  // A function-like macro used as a statement that only checks (CHECK_INPUT(x),
  // CUDA_CHECK(cudaGetLastError())): its call arguments run, the check does not.
  if (T[i].kind == CTok::Ident && i + 1 < e && is_punct(T[i + 1], "(")) {
    const MacroRef m = find_macro(T[i].text, T, i);
    if (m.fn && macro_is_check(*m.fn)) {
      size_t c = close_of(T, i + 1, e);
      for (auto [a, b] : split_args(T, i + 2, c))
        if (b > a + 1 && T[a].kind == CTok::Ident && is_punct(T[a + 1], "(") &&
            starts_with(T[a].text, "cuda"))
          eval(fr, T, a, b);
      return;
    }
  }
  eval(fr, T, i, e);
}

bool Interp::macro_is_check(const Converter::FnMacro& m, int depth) {
  for (const CTok& t : m.body) {
    if (t.kind != CTok::Ident) continue;
    if (starts_with(t.text, "TORCH_") || starts_with(t.text, "AT_ASSERT") || t.text == "throw" ||
        t.text == "cudaSuccess" || t.text == "cudaError_t" || t.text == "printf" ||
        t.text == "fprintf" || t.text == "exit" || t.text == "abort" || t.text == "assert" ||
        t.text == "cudaGetErrorString" || starts_with(t.text, "C10_") ||
        starts_with(t.text, "CHECK"))
      return true;
    // A macro made of other checking macros (CHECK_INPUT(x) -> CHECK_CUDA(x); ...).
    auto inner = C.fn_macros.find(t.text);
    if (depth < 8 && inner != C.fn_macros.end() && &inner->second != &m &&
        macro_is_check(inner->second, depth + 1))
      return true;
  }
  return false;
}

size_t Interp::exec_if(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
  size_t j = i + 1;
  if (j < end && is_ident(T[j], "constexpr")) ++j;
  if (j >= end || !is_punct(T[j], "("))
    fail("unsupported_cuda",
         "the host code cannot be read near `if` at line " + std::to_string(T[i].line));
  size_t c = close_of(T, j, end);
  size_t then_end = stmt_end(T, c + 1, end);
  size_t else_begin = end, else_end = then_end;
  if (then_end < end && is_ident(T[then_end], "else")) {
    else_begin = then_end + 1;
    else_end = stmt_end(T, else_begin, end);
  }
  std::string what = "if (" + snippet(T, j + 1, c) + ")";
  std::optional<bool> cond;
  std::optional<ImportError> why;  // the condition could not be evaluated, and why
  Val cv;                          // evaluated once: it may launch kernels (a helper's call)
  last_by_sizes_ = false;
  try {
    cv = eval(fr, T, j + 1, c);
    cond = truth(cv);
  } catch (const ImportError& e) {
    cond.reset();
    why = e;
  }
  note_decided(fr, cond, what);
  if (!cond) {
    std::string ce = cond_expr(cv);
    // An input check or an error report (on a value kernrl cannot know, such as a CUDA error):
    // no effect on launches. On the sizes, an early exit is not a check.
    const bool by_sizes = !ce.empty();
    branch_why_.clear();
    bool checks = only_checks(T, c + 1, then_end, by_sizes) &&
                  (else_begin == end || only_checks(T, else_begin, else_end, by_sizes));
    if (checks) return else_end;
    if (!ce.empty() &&
        exec_both_branches(fr, ce, c + 1, then_end, else_begin < end ? else_begin : end, else_end,
                           false, else_end, end))
      return fr.returned ? end : else_end;
    if (why) throw *why;  // not a condition on the sizes: what stopped its evaluation
    if (!branch_why_.empty())
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` is not the same at every size set of the problem, and " +
                             branch_why_);
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                           "` decides what runs, and is not the same at every size set of the "
                           "problem (the launch block cannot branch)");
  }
  if (*cond)
    exec_body(fr, c + 1, then_end);
  else if (else_begin < end)
    exec_body(fr, else_begin, else_end);
  return else_end;
}

bool Interp::contains_launch(const std::vector<CTok>& T, size_t i, size_t end) {
  for (size_t k = i; k < end; ++k) {
    if (is_punct(T[k], "<<<")) return true;
    if (T[k].kind == CTok::Ident && (find_function(T[k].text, false).item ||
                                     T[k].text == "cudaMemset" || T[k].text == "cudaMemsetAsync"))
      return true;
  }
  return false;
}

size_t Interp::exec_for(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
  size_t open = i + 1;
  if (open >= end || !is_punct(T[open], "("))
    fail("unsupported_cuda",
         "the host code cannot be read near `for` at line " + std::to_string(T[i].line));
  size_t close = close_of(T, open, end);
  size_t body_end = stmt_end(T, close + 1, end);
  size_t s1 = find_semi(T, open + 1, close);
  if (s1 >= close) fail("host_logic", "host logic in `" + fr.fn + "`: a range-based for loop");
  size_t s2 = find_semi(T, s1 + 1, close);
  std::string what = "for (" + snippet(T, open + 1, close) + ")";
  fr.scopes.emplace_back();
  if (s1 > open + 1) {
    if (is_declaration(fr, T, open + 1, s1 + 1))
      exec_decl(fr, T, open + 1, s1 + 1);
    else
      eval(fr, T, open + 1, s1);
  }
  for (int n = 0;; ++n) {
    // Only a constant condition unrolls: one that merely holds at every size set now may not
    // on a later pass.
    std::optional<bool> cond = true;
    if (s2 > s1 + 1) {
      Val cv = eval(fr, T, s1 + 1, s2);
      cond.reset();
      if ((cv.kind == Val::Bool || cv.kind == Val::Int) && cv.k) cond = *cv.k != 0;
    }
    if (!cond) {
      run_as_repeat(fr, T, open, s1, s2, close, close + 1, body_end, what);
      break;
    }
    if (!*cond) break;
    if (n >= kMaxLoopIterations)
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` runs more than " +
                             std::to_string(kMaxLoopIterations) + " times");
    exec_body(fr, close + 1, body_end);
    if (fr.returned) break;
    if (close > s2 + 1) eval(fr, T, s2 + 1, close);
  }
  fr.scopes.pop_back();
  return body_end;
}

void Interp::run_as_repeat(Frame& fr, const std::vector<CTok>& T, size_t open, size_t s1, size_t s2,
                           size_t close, size_t body, size_t body_end, const std::string& what) {
  auto bad = [&](const std::string& why) {
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                           "` runs a number of times that depends on the sizes" + why);
  };
  if (!contains_launch(T, body, body_end)) bad(" and computes host values");
  if (!C.repeat_var_.empty()) bad(" inside another such loop");
  // init: [type] v = C
  size_t k = open + 1;
  while (k < s1 && T[k].kind == CTok::Ident && k + 1 < s1 && T[k + 1].kind == CTok::Ident) ++k;
  if (!(k + 2 < s1 + 1 && T[k].kind == CTok::Ident && is_punct(T[k + 1], "=")))
    bad("; only `for (int i = START; i < COUNT; ++i)` loops become repeats");
  std::string v = T[k].text;
  Val start = to_int(eval(fr, T, k + 2, s1), what, fr);
  if (!start.k) bad(" and starts at a size-dependent value");
  // cond: v < E or v <= E
  if (!(s2 > s1 + 3 && is_ident(T[s1 + 1], v.c_str()) &&
        (is_punct(T[s1 + 2], "<") || is_punct(T[s1 + 2], "<="))))
    bad("; only `i < COUNT` conditions become repeats");
  bool le = is_punct(T[s1 + 2], "<=");
  Val limit = to_int(eval(fr, T, s1 + 3, s2), what, fr);
  // step: ++v, v++, v += 1
  std::string step = c_text(T, s2 + 1, close);
  if (!(step == "++" + v || step == "++ " + v || step == v + "++" || step == v + " ++" ||
        step == v + " += 1" || step == v + "+=1"))
    bad("; only loops stepping by one become repeats");
  Val count = arith("-", limit, start, what, fr);
  if (le) count = arith("+", count, make_int(1), what, fr);
  std::string var = v;
  while (C.reserved.count(var)) var += "_";
  C.reserved.insert(var);
  Val iv = arith("+", make_int_expr(var), start, what, fr);
  C.repeat_var_ = var;
  C.repeat_count_ = "max(" + int_text(count) + ", 0)";
  int saved = fr.loop_depth;
  fr.scopes.emplace_back();
  fr.loop_depth = depth(fr);
  declare(fr, v, iv);
  fr.scopes.back()[v].depth = depth(fr) + 1;  // the loop variable itself may be read freely
  size_t before = C.launches.size();
  if (is_punct(T[body], "{"))
    exec_range(fr, body + 1, close_of(T, body, body_end));
  else
    exec_stmt(fr, T, body, body_end);
  fr.scopes.pop_back();
  fr.loop_depth = saved;
  C.repeat_var_.clear();
  C.repeat_count_.clear();
  if (fr.returned) bad(" and returns from inside it");
  if (C.launches.size() == before) bad(" and launches nothing kernrl can follow");
  C.notes.push_back("`" + what + "` became `repeat: {count: " + C.launches.back().repeat_count +
                    ", var: " + var + "}`");
}

size_t Interp::exec_while(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
  bool do_while = is_ident(T[i], "do");
  size_t e = stmt_end(T, i, end);
  size_t body, body_end, cond_open;
  if (do_while) {
    body = i + 1;
    body_end = stmt_end(T, body, end);
    cond_open = body_end + 1;
  } else {
    cond_open = i + 1;
    body = close_of(T, cond_open, end) + 1;
    body_end = stmt_end(T, body, end);
  }
  size_t cond_close = close_of(T, cond_open, end);
  std::string what = std::string(do_while ? "do ... while (" : "while (") +
                     snippet(T, cond_open + 1, cond_close) + ")";
  for (int n = 0;; ++n) {
    if (!(do_while && n == 0)) {
      Val cv = eval(fr, T, cond_open + 1, cond_close);
      std::optional<bool> cond;
      if ((cv.kind == Val::Bool || cv.kind == Val::Int) && cv.k) cond = *cv.k != 0;
      if (!cond)
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                               "` runs a number of times that depends on the sizes");
      if (!*cond) break;
    }
    if (n >= kMaxLoopIterations)
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` runs more than " +
                             std::to_string(kMaxLoopIterations) + " times");
    exec_body(fr, body, body_end);
    if (fr.returned) break;
  }
  return e;
}

}  // namespace kernrl::kbimport::host

namespace kernrl::kbimport::host {

std::pair<size_t, size_t> Interp::case_statements(const std::vector<CTok>& T, size_t begin,
                                                  size_t stop) {
  // `{ ...; break; }` as a case's whole body: the block's statements before its break.
  if (begin < stop && is_punct(T[begin], "{")) {
    const size_t c = close_of(T, begin, stop);
    if (c + 1 >= stop || is_ident(T[c + 1], "break")) {
      size_t k = begin + 1;
      while (k < c && !is_ident(T[k], "break")) k = stmt_end(T, k, c);
      if (k < c) return {begin + 1, k};
    }
  }
  size_t k = begin;
  while (k < stop && !is_ident(T[k], "break")) k = stmt_end(T, k, stop);
  return {begin, k};
}

size_t Interp::exec_switch(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end) {
  if (i + 1 >= end || !is_punct(T[i + 1], "("))
    fail("unsupported_cuda",
         "the host code cannot be read near `switch` at line " + std::to_string(T[i].line));
  const size_t c = close_of(T, i + 1, end);
  const std::string what = "switch (" + snippet(T, i + 2, c) + ")";
  if (c + 1 >= end || !is_punct(T[c + 1], "{"))
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` without a braced body");
  const size_t open = c + 1, close = close_of(T, open, end);
  const Val d = to_int(eval(fr, T, i + 2, c), what, fr);
  std::vector<int64_t> values;
  if (d.k)
    values.assign(C.size_sets.size(), *d.k);
  else if (auto p = C.per_set(d))
    values = *p;
  else
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                           "` switches on a value that depends on the GPU or a loop");
  // The labels at the body's top level: `case VALUE:` (its value) and `default:`.
  struct Label {
    size_t at, body;  // the label's first token, the token after its ':'
    std::optional<int64_t> value;
  };
  std::vector<Label> labels;
  int depth = 0;
  for (size_t k = open + 1; k < close; ++k) {
    const CTok& t = T[k];
    if (is_punct(t, "{") || is_punct(t, "(") || is_punct(t, "[")) ++depth;
    if (is_punct(t, "}") || is_punct(t, ")") || is_punct(t, "]")) --depth;
    if (depth != 0 || !(is_ident(t, "case") || is_ident(t, "default"))) continue;
    size_t colon = k + 1;
    while (colon < close && !is_punct(T[colon], ":")) ++colon;
    if (colon >= close)
      fail("unsupported_cuda",
           "the host code cannot be read near `" + t.text + "` at line " + std::to_string(t.line));
    Label l{k, colon + 1, std::nullopt};
    if (is_ident(t, "case")) {
      Val v = to_int(eval(fr, T, k + 1, colon), what, fr);
      if (!v.k)
        fail("host_logic",
             "host logic in `" + fr.fn + "`: a case of `" + what + "` that is not a constant");
      l.value = v.k;
    }
    labels.push_back(l);
    k = colon;
  }
  // The case each size set takes (labels.size(): none, the body is skipped).
  std::set<size_t> taken;
  for (int64_t v : values) {
    size_t pick = labels.size();
    for (size_t l = 0; l < labels.size(); ++l)
      if (labels[l].value && *labels[l].value == v) pick = l;
    if (pick == labels.size())
      for (size_t l = 0; l < labels.size(); ++l)
        if (!labels[l].value) pick = l;
    taken.insert(pick);
  }
  if (taken.size() != 1) {
    // Cases that differ between size sets: each run of statements between a case's labels and
    // its `break` is an `if` on its values (a default on none of the others'), followed as a
    // size-dependent `if` is (host_branches.cpp). Falling through into a case is not followed.
    struct Group {
      std::vector<int64_t> values;
      bool is_default = false;
      size_t begin = 0, end = 0;  // the statements, up to the break
    };
    std::vector<Group> groups;
    for (size_t l = 0; l < labels.size(); ++l) {
      if (groups.empty() || groups.back().end != 0) groups.emplace_back();
      Group& g = groups.back();
      if (labels[l].value)
        g.values.push_back(*labels[l].value);
      else
        g.is_default = true;
      if (l + 1 < labels.size() && labels[l + 1].at == labels[l].body)
        continue;  // `case 1: case 2:`
      // The group's statements end at a top-level `break` (or a braced body's last statement,
      // `case 4: { ...; break; }`), the next label or the body's end.
      const size_t stop = l + 1 < labels.size() ? labels[l + 1].at : close;
      auto [begin, brk] = case_statements(T, labels[l].body, stop);
      g.begin = begin;
      g.end = brk;
      if (brk >= stop && stop != close && brk > begin)
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                               "` falls through from one case into another, and takes different "
                               "cases at different size sets of the problem");
      if (g.end == 0) g.end = g.begin;  // an empty group is still closed
    }
    auto equals = [&](int64_t v) {
      return "(" + compare_expr("==", int_text(d), std::to_string(v)) + ")";
    };
    std::string any_case;  // 1 where some case's value matches
    for (const Group& g : groups)
      for (int64_t v : g.values) any_case += (any_case.empty() ? "" : " + ") + equals(v);
    for (const Group& g : groups) {
      std::string cond;
      for (int64_t v : g.values) cond += (cond.empty() ? "" : " + ") + equals(v);
      if (g.is_default)
        cond = (cond.empty() ? "" : cond + " + ") + "1 - min(" +
               (any_case.empty() ? "0" : any_case) + ", 1)";
      cond = "min(" + cond + ", 1)";
      if (g.begin >= g.end) continue;
      if (!exec_both_branches(fr, cond, g.begin, g.end, close, close, true))
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                               "` takes different cases at different size sets of the problem, "
                               "and a case does more than launch kernels and set integers");
    }
    return close + 1;
  }
  const size_t pick = *taken.begin();
  if (pick < labels.size()) {
    C.notes.push_back("`" + what + "` in `" + fr.fn + "` takes `" +
                      (labels[pick].value ? "case " + std::to_string(*labels[pick].value)
                                          : std::string("default")) +
                      "` at every size set of the problem (bench and tests), so it was decided "
                      "here");
    fr.scopes.emplace_back();
    size_t k = labels[pick].body;
    while (k < close && !fr.returned) {
      bool label = false;
      for (const Label& l : labels)
        if (l.at == k) {
          k = l.body;  // falling through into the next case
          label = true;
        }
      if (label) continue;
      auto next =
          std::find_if(labels.begin(), labels.end(), [&](const Label& l) { return l.at > k; });
      const size_t stop = next == labels.end() ? close : next->at;
      auto [begin, brk] = case_statements(T, k, stop);
      exec_range(fr, begin, brk);
      if (brk < stop) break;  // the case's break
      k = stop;
    }
    fr.scopes.pop_back();
  }
  return close + 1;
}

}  // namespace kernrl::kbimport::host
