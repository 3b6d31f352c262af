#include "core/expr.h"

#include <cctype>

namespace kernrl {
namespace {

// Recursive-descent parser; evaluates while parsing (or only collects names when vars == nullptr).
class Parser {
 public:
  Parser(const std::string& text, const Vars* vars, std::vector<std::string>* names)
      : s_(text), vars_(vars), names_(names) {}

  int64_t parse() {
    if (s_.size() > kMaxExprChars)
      throw ExprError("expression of " + std::to_string(s_.size()) + " characters; the limit is " +
                      std::to_string(kMaxExprChars));
    for (char c : s_)
      if (static_cast<unsigned char>(c) < 0x20 && c != ' ' && c != '\t' && c != '\n')
        throw ExprError("expression contains a control character (byte " +
                        std::to_string(static_cast<unsigned char>(c)) + ")");
    int64_t v = sum();
    skip();
    if (pos_ != s_.size()) fail("unexpected " + show(s_[pos_]));
    return v;
  }

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
  int64_t add(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) fail("64-bit overflow");
    return r;
  }
  int64_t sub(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) fail("64-bit overflow");
    return r;
  }
  int64_t mul(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) fail("64-bit overflow");
    return r;
  }
  int64_t div(int64_t a, int64_t b, char op) const {
    if (!vars_) return 0;
    if (b == 0) fail(op == '%' ? "modulo by zero" : "division by zero");
    if (a == INT64_MIN && b == -1) fail("64-bit overflow");
    return op == '%' ? a % b : a / b;
  }
  int64_t sum() {
    int64_t v = product();
    for (;;) {
      if (eat('+'))
        v = add(v, product());
      else if (eat('-'))
        v = sub(v, product());
      else
        return v;
    }
  }
  int64_t product() {
    int64_t v = unary();
    for (;;) {
      skip();
      if (pos_ >= s_.size()) return v;
      char op = s_[pos_];
      if (op != '*' && op != '/' && op != '%') return v;
      ++pos_;
      int64_t rhs = unary();
      v = op == '*' ? mul(v, rhs) : div(v, rhs, op);
    }
  }
  int64_t unary() {
    if (eat('-')) {
      Nest nest(*this);
      return sub(0, unary());
    }
    if (eat('+')) {
      Nest nest(*this);
      return unary();
    }
    return primary();
  }
  int64_t primary() {
    skip();
    if (pos_ >= s_.size()) fail("unexpected end");
    char c = s_[pos_];
    if (c == '(') {
      Nest nest(*this);
      ++pos_;
      int64_t v = sum();
      if (!eat(')')) fail("missing ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
        v = add(mul(v, 10), s_[pos_++] - '0');
      if (pos_ < s_.size() &&
          (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.'))
        fail("not an integer literal");
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      std::string name = s_.substr(start, pos_ - start);
      if (eat('(')) return call(name);
      if (names_) names_->push_back(name);
      if (!vars_) return 1;
      auto it = vars_->find(name);
      if (it == vars_->end()) fail("unknown name '" + name + "'");
      return it->second;
    }
    fail("unexpected " + show(c));
  }
  int64_t call(const std::string& fn) {
    if (fn != "cdiv" && fn != "min" && fn != "max") fail("unknown function '" + fn + "'");
    Nest nest(*this);
    int64_t a = sum();
    if (!eat(',')) fail(fn + "() takes two arguments");
    int64_t b = sum();
    if (!eat(')')) fail("missing ')' after " + fn + "(");
    if (fn == "min") return a < b ? a : b;
    if (fn == "max") return a > b ? a : b;
    if (!vars_) return 0;
    if (b == 0) fail("division by zero in cdiv");
    // Ceiling division for any signs, without overflow in a + b - 1.
    int64_t q = div(a, b, '/');
    if ((a % b != 0) && ((a > 0) == (b > 0))) q = add(q, 1);
    return q;
  }

  const std::string& s_;
  const Vars* vars_;
  std::vector<std::string>* names_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

int64_t eval_expr(const std::string& text, const Vars& vars) {
  return Parser(text, &vars, nullptr).parse();
}

std::vector<std::string> expr_names(const std::string& text) {
  std::vector<std::string> names;
  Parser(text, nullptr, &names).parse();
  return names;
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
