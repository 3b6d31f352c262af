// Python expressions from tokens (py_parse_expr) and back to text (py_dotted, py_text).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "import/import_error.h"
#include "import/nesting.h"
#include "import/python_reader.h"

namespace kernrl::kbimport {

namespace {

[[noreturn]] void syntax(int line, const std::string& what) {
  throw ImportError("python_syntax", "the Python text cannot be read: " + what + " (line " +
                                         std::to_string(line) + ")");
}

}  // namespace

namespace {

class Parser {
 public:
  Parser(const std::vector<PyTok>& t, size_t b, size_t e) : t_(t), i_(b), end_(e) {}

  PyExprP parse_all() {
    PyExprP e = tuple_or_expr();
    if (i_ != end_) syntax(t_[i_].line, "unexpected '" + t_[i_].text + "'");
    // What reads the tree recurses along it: a tree deeper than any real generation's (a sum of
    // thousands of terms) is refused here rather than overflowing the stack there.
    if (tree_depth(e, 0) > kMaxDepth)
      syntax(e->line,
             "an expression nested or chained more than " + std::to_string(kMaxDepth) + " deep");
    return e;
  }

 private:
  bool at_op(const char* op) const {
    return i_ < end_ && t_[i_].kind == PyTok::Op && t_[i_].text == op;
  }
  bool at_name(const char* kw) const {
    return i_ < end_ && t_[i_].kind == PyTok::Name && t_[i_].text == kw;
  }
  int line() const { return i_ < end_ ? t_[i_].line : (end_ > 0 ? t_[end_ - 1].line : 0); }
  void expect(const char* op) {
    if (!at_op(op)) syntax(line(), std::string("expected '") + op + "'");
    ++i_;
  }
  static PyExprP make(PyExpr::Kind k, std::string text, int line) {
    auto e = std::make_shared<PyExpr>();
    e->kind = k;
    e->text = std::move(text);
    e->line = line;
    return e;
  }

  // One slice, a:b or a:b:c (None where a part is left out), up to the next ',' or ']'.
  PyExprP slice_part(int l) {
    PyExprP sl = make(PyExpr::Other, "slice", l);
    for (int part = 0; part < 3; ++part) {
      if (at_op(":") || at_op("]") || at_op(","))
        sl->kids.push_back(make(PyExpr::Const, "None", l));
      else
        sl->kids.push_back(expr());
      if (part < 2 && at_op(":")) {
        ++i_;
      } else if (part < 2) {
        for (int rest = part + 1; rest < 3; ++rest)
          sl->kids.push_back(make(PyExpr::Const, "None", l));
        break;
      }
    }
    return sl;
  }

  PyExprP tuple_or_expr() {
    int l = line();
    PyExprP first = expr();
    if (!at_op(",")) return first;
    PyExprP tup = make(PyExpr::Tuple, "", l);
    tup->kids.push_back(first);
    while (at_op(",")) {
      ++i_;
      if (i_ >= end_ || at_op(")") || at_op("]") || at_op("=")) break;
      tup->kids.push_back(expr());
    }
    return tup;
  }

  static constexpr int kMaxDepth = 400;

  static int tree_depth(const PyExprP& e, int d) {
    if (!e || d > kMaxDepth) return d;
    int m = d;
    for (const auto& k : e->kids) m = std::max(m, tree_depth(k, d + 1));
    for (const auto& kw : e->kwargs) m = std::max(m, tree_depth(kw.second, d + 1));
    return m;
  }

  PyExprP expr() {
    // Nested brackets recurse through every level of the grammar: bounded.
    Nesting nest(nesting_);
    if (nesting_ > 100) syntax(line(), "an expression nested more than 100 deep");
    int l = line();
    if (at_name("lambda")) {
      // lambda args: body
      int depth = 0;
      while (i_ < end_) {
        const PyTok& t = t_[i_];
        if (t.kind == PyTok::Op && (t.text == "(" || t.text == "[" || t.text == "{")) ++depth;
        if (t.kind == PyTok::Op && (t.text == ")" || t.text == "]" || t.text == "}")) {
          if (depth == 0) break;
          --depth;
        }
        if (depth == 0 && t.kind == PyTok::Op && t.text == ",") break;
        ++i_;
      }
      return make(PyExpr::Other, "lambda", l);
    }
    PyExprP e = or_expr();
    if (at_name("if")) {
      ++i_;
      PyExprP cond = or_expr();
      if (!at_name("else")) syntax(line(), "expected 'else'");
      ++i_;
      PyExprP other = expr();
      // kids: the value if true, the condition, the value if false.
      PyExprP o = make(PyExpr::Other, "conditional expression", l);
      o->kids = {e, cond, other};
      return o;
    }
    return e;
  }
  // `[elem for target in iterable if cond]`, read after `[elem`: kids elem, target, iterable and
  // the condition when there is one. Other forms (several `for`s or `if`s) keep no kids.
  PyExprP comprehension(const PyExprP& elem, int l) {
    PyExprP c = make(PyExpr::Other, "list comprehension", l);
    size_t start = i_;
    try {
      if (PyExprP whole = comprehension_parts(c, elem, "]")) {
        ++i_;  // ]
        return whole;
      }
    } catch (const ImportError&) {
      // A form not read here (the whole text was read as Python before): no kids.
    }
    i_ = start;
    skip_to_close();
    expect("]");
    return c;
  }
  // `(elem for target in iterable if cond)`, read after `elem`, up to the closing parenthesis
  // (left for the caller): "generator expression" with the kids of a list comprehension, or
  // without kids for other forms.
  PyExprP generator(const PyExprP& elem, int l) {
    PyExprP c = make(PyExpr::Other, "generator expression", l);
    size_t start = i_;
    try {
      if (PyExprP whole = comprehension_parts(c, elem, ")")) return whole;
    } catch (const ImportError&) {
    }
    i_ = start;
    skip_to_close();
    return c;
  }
  PyExprP comprehension_parts(const PyExprP& c, const PyExprP& elem, const char* close) {
    int l = c->line;
    ++i_;  // for
    PyExprP target = bitor_expr();
    if (at_op(",")) {
      PyExprP tup = make(PyExpr::Tuple, "", l);
      tup->kids.push_back(target);
      while (at_op(",")) {
        ++i_;
        tup->kids.push_back(bitor_expr());
      }
      target = tup;
    }
    if (at_name("in")) {
      ++i_;
      PyExprP iterable = or_expr();
      PyExprP cond;
      if (at_name("if")) {
        ++i_;
        cond = or_expr();
      }
      if (at_op(close)) {
        c->kids = {elem, target, iterable};
        if (cond) c->kids.push_back(cond);
        return c;
      }
    }
    return nullptr;
  }
  PyExprP or_expr() {
    PyExprP e = and_expr();
    while (at_name("or")) {
      int l = line();
      ++i_;
      e = bin("or", e, and_expr(), l);
    }
    return e;
  }
  PyExprP and_expr() {
    PyExprP e = not_expr();
    while (at_name("and")) {
      int l = line();
      ++i_;
      e = bin("and", e, not_expr(), l);
    }
    return e;
  }
  PyExprP not_expr() {
    if (at_name("not")) {
      int l = line();
      ++i_;
      PyExprP u = make(PyExpr::Unary, "not", l);
      if (++unary_ > 100) syntax(l, "more than 100 unary operators in a row");
      u->kids.push_back(not_expr());
      return u;
    }
    return comparison();
  }
  // `a < b <= c` is `a < b and b <= c`, as Python reads it. Python evaluates b once: b read twice
  // here must have no effect, so a chain whose inner operand calls anything (a layer, the
  // extension: launches) is "Other" (refused).
  PyExprP comparison() {
    PyExprP e = bitor_expr();
    PyExprP last;  // the right side of the comparison before, in a chain
    for (;;) {
      int l = line();
      std::string op;
      if (at_op("<") || at_op(">") || at_op("==") || at_op("!=") || at_op("<=") || at_op(">=")) {
        op = t_[i_].text;
        ++i_;
      } else if (at_name("in")) {
        op = "in";
        ++i_;
      } else if (at_name("is")) {
        op = "is";
        ++i_;
        if (at_name("not")) ++i_, op = "is not";
      } else if (at_name("not") && i_ + 1 < end_ && t_[i_ + 1].text == "in") {
        op = "not in";
        i_ += 2;
      } else {
        return e;
      }
      PyExprP rhs = bitor_expr();
      if (last && calls(last)) {
        e = make(PyExpr::Other, "chained comparison whose inner operand calls a function", l);
        last = rhs;
        continue;
      }
      e = last ? bin("and", e, bin(op, last, rhs, l), l) : bin(op, e, rhs, l);
      last = rhs;
    }
  }
  PyExprP bitor_expr() {
    return left_assoc({"|"}, [&] { return bitxor_expr(); });
  }
  PyExprP bitxor_expr() {
    return left_assoc({"^"}, [&] { return bitand_expr(); });
  }
  PyExprP bitand_expr() {
    return left_assoc({"&"}, [&] { return shift_expr(); });
  }
  PyExprP shift_expr() {
    return left_assoc({"<<", ">>"}, [&] { return arith(); });
  }
  PyExprP arith() {
    return left_assoc({"+", "-"}, [&] { return term(); });
  }
  PyExprP term() {
    return left_assoc({"*", "/", "//", "%", "@"}, [&] { return factor(); });
  }
  PyExprP factor() {
    if (at_op("-") || at_op("+") || at_op("~")) {
      int l = line();
      std::string op = t_[i_++].text;
      PyExprP u = make(PyExpr::Unary, op, l);
      if (++unary_ > 100) syntax(l, "more than 100 unary operators in a row");
      u->kids.push_back(factor());
      return u;
    }
    return power();
  }
  PyExprP power() {
    PyExprP e = postfix();
    if (at_op("**")) {
      int l = line();
      ++i_;
      e = bin("**", e, factor(), l);
    }
    return e;
  }
  template <typename F>
  PyExprP left_assoc(std::initializer_list<const char*> ops, F next) {
    PyExprP e = next();
    for (;;) {
      bool found = false;
      for (const char* op : ops)
        if (at_op(op)) {
          int l = line();
          ++i_;
          e = bin(op, e, next(), l);
          found = true;
          break;
        }
      if (!found) return e;
    }
  }
  // Whether `x` calls anything but builtins and tensor methods that only read sizes.
  static bool calls(const PyExprP& x) {
    if (x->kind == PyExpr::Call) {
      static const std::set<std::string> pure_names = {"len", "int",   "float", "min",       "max",
                                                       "abs", "tuple", "list",  "isinstance"};
      static const std::set<std::string> pure_methods = {"size", "dim", "numel"};
      const PyExprP& f = x->kids[0];
      bool pure = (f->kind == PyExpr::Name && pure_names.count(f->text)) ||
                  (f->kind == PyExpr::Attr && pure_methods.count(f->text));
      if (!pure) return true;
    }
    for (const auto& k : x->kids)
      if (calls(k)) return true;
    for (const auto& kw : x->kwargs)
      if (calls(kw.second)) return true;
    return false;
  }

  PyExprP bin(const std::string& op, PyExprP a, PyExprP b, int l) {
    PyExprP e = make(PyExpr::BinOp, op, l);
    e->kids = {std::move(a), std::move(b)};
    return e;
  }

  PyExprP postfix() {
    PyExprP e = atom();
    for (;;) {
      int l = line();
      if (at_op(".")) {
        ++i_;
        if (i_ >= end_ || t_[i_].kind != PyTok::Name) syntax(line(), "expected a name after '.'");
        PyExprP a = make(PyExpr::Attr, t_[i_++].text, l);
        a->kids.push_back(e);
        e = a;
      } else if (at_op("(")) {
        ++i_;
        PyExprP c = make(PyExpr::Call, "", l);
        c->kids.push_back(e);
        while (!at_op(")")) {
          if (i_ >= end_) syntax(l, "a call that is never closed");
          if (at_op("*") || at_op("**")) {
            ++i_;
            expr();
            c->kwargs.push_back({"*", make(PyExpr::Other, "unpacking", l)});
          } else if (i_ + 1 < end_ && t_[i_].kind == PyTok::Name && t_[i_ + 1].kind == PyTok::Op &&
                     t_[i_ + 1].text == "=") {
            std::string k = t_[i_].text;
            i_ += 2;
            c->kwargs.push_back({k, expr()});
          } else {
            c->kids.push_back(expr());
            if (at_name("for")) {  // a generator expression as the only argument
              c->kids.back() = generator(c->kids.back(), l);
              break;
            }
          }
          if (at_op(","))
            ++i_;
          else if (!at_op(")"))
            syntax(line(), "expected ',' or ')' in a call");
        }
        expect(")");
        e = c;
      } else if (at_op("[")) {
        ++i_;
        PyExprP x = make(PyExpr::Index, "", l);
        x->kids.push_back(e);
        size_t save = i_;
        // A slice (a:b, a:b:c) is "Other" "slice" with kids start, stop, step (None where left
        // out); a multi-dimensional index (a, b or a:b, c) is "Other" "dims" with a kid per
        // dimension, each a slice or an expression (`...` the constant Ellipsis; the index is
        // "Other" "slice" without kids where a part is neither).
        int depth = 0;
        bool slice = false, comma = false;
        size_t j = i_;
        for (; j < end_; ++j) {
          const PyTok& t = t_[j];
          if (t.kind == PyTok::Op && (t.text == "(" || t.text == "[" || t.text == "{")) ++depth;
          if (t.kind == PyTok::Op && (t.text == ")" || t.text == "]" || t.text == "}")) {
            if (depth == 0) break;
            --depth;
          }
          if (depth == 0 && t.kind == PyTok::Op && t.text == ":") slice = true;
          if (depth == 0 && t.kind == PyTok::Op && t.text == ",") comma = true;
        }
        if (slice && !comma) {
          x->kids.push_back(slice_part(l));
          if (!at_op("]")) syntax(line(), "expected ']' after a slice");
        } else if (comma) {
          PyExprP dims = make(PyExpr::Other, "dims", l);
          bool plain = true;
          try {
            while (i_ < j && plain) {
              size_t k = i_;
              int dd = 0;
              bool part_slice = false;
              for (; k < j; ++k) {
                const PyTok& t = t_[k];
                if (t.kind == PyTok::Op && (t.text == "(" || t.text == "[" || t.text == "{")) ++dd;
                if (t.kind == PyTok::Op && (t.text == ")" || t.text == "]" || t.text == "}")) --dd;
                if (dd == 0 && t.kind == PyTok::Op && t.text == ",") break;
                if (dd == 0 && t.kind == PyTok::Op && t.text == ":") part_slice = true;
              }
              // A part that is `...` alone is the constant Ellipsis; an empty part, or one
              // that begins with a dot otherwise, leaves the index opaque.
              if (k == i_ || (t_[i_].kind == PyTok::Op && t_[i_].text[0] == '.' &&
                              !(t_[i_].text == "..." && k == i_ + 1)))
                plain = false;
              else
                dims->kids.push_back(part_slice ? slice_part(l) : expr());
              if (plain && i_ != k) plain = false;  // the part did not end where it should
              if (plain && at_op(",")) ++i_;
            }
          } catch (const ImportError&) {
            plain = false;  // a part not read here (`*idx`): the index stays opaque
          }
          i_ = j;
          x->kids.push_back(plain ? dims : make(PyExpr::Other, "slice", l));
        } else if (j == save) {
          i_ = j;
          x->kids.push_back(make(PyExpr::Other, "slice", l));
        } else {
          x->kids.push_back(tuple_or_expr());
        }
        expect("]");
        e = x;
      } else {
        return e;
      }
    }
  }

  void skip_to_close() {
    int depth = 0;
    while (i_ < end_) {
      const PyTok& t = t_[i_];
      if (t.kind == PyTok::Op && (t.text == "(" || t.text == "[" || t.text == "{")) ++depth;
      if (t.kind == PyTok::Op && (t.text == ")" || t.text == "]" || t.text == "}")) {
        if (depth == 0) return;
        --depth;
      }
      ++i_;
    }
  }

  PyExprP atom() {
    if (i_ >= end_) syntax(line(), "an expression is missing");
    const PyTok& t = t_[i_];
    int l = t.line;
    if (t.kind == PyTok::Number) {
      ++i_;
      return make(PyExpr::Num, t.text, l);
    }
    if (t.kind == PyTok::String) {
      // Adjacent literals concatenate. Where f-strings and plain strings do, the plain parts'
      // braces are doubled, so that the joined text is read as one f-string of the same value.
      PyExprP s = make(PyExpr::Str, "", l);
      std::vector<std::pair<std::string, bool>> parts;
      while (i_ < end_ && t_[i_].kind == PyTok::String) {
        parts.push_back({t_[i_].text, t_[i_].fstring});
        s->fstring |= t_[i_].fstring;
        ++i_;
      }
      for (const auto& [text, f] : parts) {
        if (f || !s->fstring) {
          s->text += text;
          continue;
        }
        for (char c : text) {
          s->text += c;
          if (c == '{' || c == '}') s->text += c;
        }
      }
      return s;
    }
    if (t.kind == PyTok::Name) {
      ++i_;
      if (t.text == "True" || t.text == "False" || t.text == "None")
        return make(PyExpr::Const, t.text, l);
      return make(PyExpr::Name, t.text, l);
    }
    if (at_op("(")) {
      ++i_;
      if (at_op(")")) {
        ++i_;
        return make(PyExpr::Tuple, "", l);
      }
      PyExprP e = tuple_or_expr();
      if (at_name("for")) e = generator(e, l);
      expect(")");
      return e;
    }
    if (at_op("[")) {
      ++i_;
      PyExprP list = make(PyExpr::List, "", l);
      while (!at_op("]")) {
        if (i_ >= end_) syntax(l, "a list that is never closed");
        list->kids.push_back(expr());
        if (at_name("for")) return comprehension(list->kids.back(), l);
        if (at_op(","))
          ++i_;
        else if (!at_op("]"))
          syntax(line(), "expected ',' or ']'");
      }
      ++i_;
      return list;
    }
    if (at_op("{")) {
      ++i_;
      skip_to_close();
      expect("}");
      return make(PyExpr::Other, "dict or set", l);
    }
    if (at_op("...")) {
      ++i_;
      return make(PyExpr::Const, "Ellipsis", l);
    }
    syntax(l, "unexpected '" + t.text + "'");
  }

  int nesting_ = 0;  // expr() calls in progress
  int unary_ = 0;    // unary operators read (a chain of them recurses)
  const std::vector<PyTok>& t_;
  size_t i_, end_;
};

}  // namespace

PyExprP py_parse_expr(const std::vector<PyTok>& toks, size_t begin, size_t end) {
  if (begin >= end) {
    int l = begin < toks.size() ? toks[begin].line : (toks.empty() ? 0 : toks.back().line);
    syntax(l, "an expression is missing");
  }
  return Parser(toks, begin, end).parse_all();
}

std::string py_dotted(const PyExprP& e) {
  if (!e) return "";
  if (e->kind == PyExpr::Name) return e->text;
  if (e->kind == PyExpr::Attr) {
    std::string base = py_dotted(e->kids[0]);
    return base.empty() ? "" : base + "." + e->text;
  }
  return "";
}

std::string py_text(const PyExprP& e) {
  if (!e) return "";
  switch (e->kind) {
    case PyExpr::Name:
    case PyExpr::Num:
      return e->text;
    case PyExpr::Const:
      return e->text == "Ellipsis" ? "..." : e->text;
    case PyExpr::Str:
      return "'" + e->text.substr(0, 40) + (e->text.size() > 40 ? "..." : "") + "'";
    case PyExpr::Attr:
      return py_text(e->kids[0]) + "." + e->text;
    case PyExpr::Call: {
      std::string s = py_text(e->kids[0]) + "(";
      for (size_t i = 1; i < e->kids.size(); ++i) s += (i > 1 ? ", " : "") + py_text(e->kids[i]);
      for (size_t i = 0; i < e->kwargs.size(); ++i)
        s += (e->kids.size() > 1 || i ? ", " : "") + e->kwargs[i].first + "=" +
             py_text(e->kwargs[i].second);
      return s + ")";
    }
    case PyExpr::Index:
      return py_text(e->kids[0]) + "[" + py_text(e->kids[1]) + "]";
    case PyExpr::BinOp:
      return py_text(e->kids[0]) + " " + e->text + " " + py_text(e->kids[1]);
    case PyExpr::Unary:
      return e->text + (e->text == "not" ? " " : "") + py_text(e->kids[0]);
    case PyExpr::Tuple:
    case PyExpr::List: {
      std::string s = e->kind == PyExpr::Tuple ? "(" : "[";
      for (size_t i = 0; i < e->kids.size(); ++i) s += (i ? ", " : "") + py_text(e->kids[i]);
      return s + (e->kind == PyExpr::Tuple ? ")" : "]");
    }
    case PyExpr::Other:
      if (e->text == "slice" && e->kids.size() == 3) {
        auto part = [](const PyExprP& k) {
          return k->kind == PyExpr::Const && k->text == "None" ? std::string() : py_text(k);
        };
        std::string t = part(e->kids[0]) + ":" + part(e->kids[1]);
        if (!part(e->kids[2]).empty()) t += ":" + part(e->kids[2]);
        return t;
      }
      if (e->text == "dims") {
        std::string t;
        for (size_t i = 0; i < e->kids.size(); ++i) t += (i ? ", " : "") + py_text(e->kids[i]);
        return t;
      }
      return e->text;
  }
  return "";
}

}  // namespace kernrl::kbimport
