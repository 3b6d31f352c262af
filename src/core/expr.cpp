#include "core/expr.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace kernrl {
namespace {

// A value: an integer, or (in expressions that allow them) a double. C's rules: an operation on
// two integers is an integer one (division truncates), with a double operand a double one.
struct Num {
  bool real = false;
  int64_t i = 0;
  double d = 0;
  double as_double() const { return real ? d : static_cast<double>(i); }
};

Num integer(int64_t v) {
  return Num{false, v, 0};
}
Num real(double v) {
  return Num{true, 0, v};
}

// Recursive-descent parser; evaluates while parsing (or only collects names when vars == nullptr).
// With `reals` (real_expr mode), float literals and the names of `reals` are doubles.
class Parser {
 public:
  Parser(const std::string& text, const Vars* vars, std::vector<std::string>* names,
         bool allow_real = false, const RealVars* reals = nullptr)
      : s_(text), vars_(vars), names_(names), allow_real_(allow_real), reals_(reals) {}

  Num parse() {
    if (s_.size() > kMaxExprChars)
      throw ExprError("expression of " + std::to_string(s_.size()) + " characters; the limit is " +
                      std::to_string(kMaxExprChars));
    for (char c : s_)
      if (static_cast<unsigned char>(c) < 0x20 && c != ' ' && c != '\t' && c != '\n')
        throw ExprError("expression contains a control character (byte " +
                        std::to_string(static_cast<unsigned char>(c)) + ")");
    Num v = sum();
    skip();
    if (pos_ != s_.size()) fail("unexpected " + show(s_[pos_]));
    if (v.real && vars_ && !std::isfinite(v.d)) fail("the value is not a finite number");
    return v;
  }

  bool saw_real_literal = false;

 private:
  // Every recursive step (a parenthesis, a call, a unary sign) goes through one Nest.
  struct Nest {
    explicit Nest(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxExprDepth)
        p_.fail("nested more than " + std::to_string(kMaxExprDepth) + " levels deep");
    }
    ~Nest() { --p_.depth_; }
    Parser& p_;
  };

  [[noreturn]] void fail(const std::string& why) const {
    throw ExprError("in expression \"" + s_ + "\": " + why);
  }
  static std::string show(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return "'" + std::string(1, c) + "'";
    static const char* hex = "0123456789abcdef";
    return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Num add(Num a, Num b) const {
    if (a.real || b.real) return real(a.as_double() + b.as_double());
    int64_t r;
    if (__builtin_add_overflow(a.i, b.i, &r)) fail("64-bit overflow");
    return integer(r);
  }
  Num sub(Num a, Num b) const {
    if (a.real || b.real) return real(a.as_double() - b.as_double());
    int64_t r;
    if (__builtin_sub_overflow(a.i, b.i, &r)) fail("64-bit overflow");
    return integer(r);
  }
  Num mul(Num a, Num b) const {
    if (a.real || b.real) return real(a.as_double() * b.as_double());
    int64_t r;
    if (__builtin_mul_overflow(a.i, b.i, &r)) fail("64-bit overflow");
    return integer(r);
  }
  Num div(Num a, Num b, char op) const {
    if (!vars_) return integer(0);
    if (op == '%' && (a.real || b.real)) fail("'%' needs two integers");
    if (b.as_double() == 0) fail(op == '%' ? "modulo by zero" : "division by zero");
    if (a.real || b.real) return real(a.as_double() / b.as_double());
    if (a.i == INT64_MIN && b.i == -1) fail("64-bit overflow");
    return integer(op == '%' ? a.i % b.i : a.i / b.i);
  }
  Num sum() {
    Num v = product();
    for (;;) {
      if (eat('+'))
        v = add(v, product());
      else if (eat('-'))
        v = sub(v, product());
      else
        return v;
    }
  }
  Num product() {
    Num v = unary();
    for (;;) {
      skip();
      if (pos_ >= s_.size()) return v;
      char op = s_[pos_];
      if (op != '*' && op != '/' && op != '%') return v;
      ++pos_;
      Num rhs = unary();
      v = op == '*' ? mul(v, rhs) : div(v, rhs, op);
    }
  }
  Num unary() {
    if (eat('-')) {
      Nest nest(*this);
      return sub(integer(0), unary());
    }
    if (eat('+')) {
      Nest nest(*this);
      return unary();
    }
    return primary();
  }
  bool digit_at(size_t i) const {
    return i < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i]));
  }
  // A float literal at pos_ (real mode): digits [. digits] | . digits, then [eE][+-]digits, [fF].
  Num real_literal() {
    size_t b = pos_;
    while (digit_at(pos_)) ++pos_;
    bool mark = false;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      mark = true;
      while (digit_at(pos_)) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      if (!digit_at(e)) fail("not a number");
      pos_ = e;
      while (digit_at(pos_)) ++pos_;
      mark = true;
    }
    std::string text = s_.substr(b, pos_ - b);
    if (mark && pos_ < s_.size() && (s_[pos_] == 'f' || s_[pos_] == 'F')) ++pos_;
    if (pos_ < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
      fail("not a number");
    if (!mark) {
      pos_ = b;
      return integer_literal();
    }
    saw_real_literal = true;
    double v = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(v)) fail("the literal " + text + " is out of range");
    return real(v);
  }
  Num integer_literal() {
    int64_t v = 0;
    while (digit_at(pos_)) {
      int64_t r;
      if (__builtin_mul_overflow(v, 10, &r) || __builtin_add_overflow(r, s_[pos_] - '0', &v))
        fail("64-bit overflow");
      ++pos_;
    }
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.'))
      fail("not an integer literal");
    return integer(v);
  }
  Num primary() {
    skip();
    if (pos_ >= s_.size()) fail("unexpected end");
    char c = s_[pos_];
    if (c == '(') {
      Nest nest(*this);
      ++pos_;
      Num v = sum();
      if (!eat(')')) fail("missing ')'");
      return v;
    }
    if (allow_real_ &&
        (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && digit_at(pos_ + 1))))
      return real_literal();
    if (std::isdigit(static_cast<unsigned char>(c))) return integer_literal();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      std::string name = s_.substr(start, pos_ - start);
      if (eat('(')) return call(name);
      if (names_) names_->push_back(name);
      if (!vars_) return integer(1);
      if (reals_)
        if (auto r = reals_->find(name); r != reals_->end()) return real(r->second);
      auto it = vars_->find(name);
      if (it == vars_->end()) fail("unknown name '" + name + "'");
      return integer(it->second);
    }
    fail("unexpected " + show(c));
  }
  Num call(const std::string& fn) {
    if (fn != "cdiv" && fn != "min" && fn != "max") fail("unknown function '" + fn + "'");
    Nest nest(*this);
    Num a = sum();
    if (!eat(',')) fail(fn + "() takes two arguments");
    Num b = sum();
    if (!eat(')')) fail("missing ')' after " + fn + "(");
    if (fn == "min" || fn == "max") {
      if (a.real || b.real) {
        double x = a.as_double(), y = b.as_double();
        return real(fn == "min" ? (x < y ? x : y) : (x > y ? x : y));
      }
      if (fn == "min") return a.i < b.i ? a : b;
      return a.i > b.i ? a : b;
    }
    if (!vars_) return integer(0);
    if (a.real || b.real) fail("cdiv() needs two integers");
    if (b.i == 0) fail("division by zero in cdiv");
    // Ceiling division for any signs, without overflow in a + b - 1.
    Num q = div(a, b, '/');
    if ((a.i % b.i != 0) && ((a.i > 0) == (b.i > 0))) q = add(q, integer(1));
    return q;
  }

  const std::string& s_;
  const Vars* vars_;
  std::vector<std::string>* names_;
  bool allow_real_;
  const RealVars* reals_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

int64_t eval_expr(const std::string& text, const Vars& vars) {
  return Parser(text, &vars, nullptr).parse().i;
}

double eval_real_expr(const std::string& text, const Vars& vars, const RealVars& reals) {
  return Parser(text, &vars, nullptr, true, &reals).parse().as_double();
}

std::vector<std::string> expr_names(const std::string& text, bool reals) {
  std::vector<std::string> names;
  Parser(text, nullptr, &names, reals).parse();
  return names;
}

bool has_real_literal(const std::string& text) {
  try {
    Parser p(text, nullptr, nullptr, true);
    p.parse();
    return p.saw_real_literal;
  } catch (const ExprError&) {
    return false;
  }
}

std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '<')
      ++depth;
    else if ((c == ')' || c == '>') && depth > 0)
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  for (auto& o : out) {
    size_t b = o.find_first_not_of(" \t\n"), e = o.find_last_not_of(" \t\n");
    o = b == std::string::npos ? "" : o.substr(b, e - b + 1);
  }
  return out;
}

}  // namespace kernrl
