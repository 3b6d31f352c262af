// Integer expressions of launch blocks and problem specs: + - * / % ( ), cdiv, min, max, names;
// and real expressions (float arguments such as `1.0 / (batch_size * dim)`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kernrl {

// Thrown for syntax errors, unknown names, division by zero, 64-bit overflow, and expressions
// longer than kMaxExprChars or nested deeper than kMaxExprDepth.
struct ExprError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Vars = std::map<std::string, int64_t>;
using RealVars = std::map<std::string, double>;  // names whose value is a double

// Longer or deeper expressions are errors (ExprError), never a stack overflow.
constexpr size_t kMaxExprChars = 4096;
constexpr int kMaxExprDepth = 200;

// Evaluates `text` with the variables in `vars`. Division truncates toward zero as in C.
int64_t eval_expr(const std::string& text, const Vars& vars);

// Evaluates `text` as a real expression: float literals (0.5, 1e-5, 2.f) and the names of `reals`
// are doubles, the names of `vars` integers; an operation on two integers is an integer one
// (division truncates, as in C), with a double operand a double one. '%' and cdiv need integers.
// A result that is not finite, and division by zero, are ExprErrors.
double eval_real_expr(const std::string& text, const Vars& vars, const RealVars& reals);

// The identifiers `text` refers to (function names excluded); throws ExprError on bad syntax
// (float literals are bad syntax unless `reals`).
std::vector<std::string> expr_names(const std::string& text, bool reals = false);

// Whether `text` is a well-formed real expression with at least one float literal.
bool has_real_literal(const std::string& text);

// Splits `a, f(b, c), d` at its top-level commas (not inside parentheses or angle brackets), each
// item trimmed: the items of a launch block's list written as one value.
std::vector<std::string> split_top_level(const std::string& s);

}  // namespace kernrl
