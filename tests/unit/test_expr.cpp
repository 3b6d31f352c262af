#include <doctest/doctest.h>

#include "core/expr.h"

using namespace kernrl;

TEST_CASE("integer expressions") {
  Vars v = {{"N", 1000}, {"dim", 7}, {"num_sms", 132}};
  CHECK(eval_expr("N", v) == 1000);
  CHECK(eval_expr("2 + 3 * 4", v) == 14);
  CHECK(eval_expr("(2 + 3) * 4", v) == 20);
  CHECK(eval_expr("N / 3", v) == 333);
  CHECK(eval_expr("-7 / 2", v) == -3);  // C truncation
  CHECK(eval_expr("N % 7", v) == 1000 % 7);
  CHECK(eval_expr("cdiv(N, 256)", v) == 4);
  CHECK(eval_expr("cdiv(1024, 256)", v) == 4);
  CHECK(eval_expr("cdiv(0, 256)", v) == 0);
  CHECK(eval_expr("min(N, dim) + max(N, dim)", v) == 1007);
  CHECK(eval_expr("num_sms * 4", v) == 528);
  CHECK(eval_expr(" - -3", v) == 3);
  CHECK(eval_expr("42", {}) == 42);
}

TEST_CASE("expression errors name the cause") {
  Vars v = {{"N", 10}, {"Z", 0}};
  CHECK_THROWS_WITH_AS(eval_expr("N / Z", v), doctest::Contains("division by zero"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("N % 0", v), doctest::Contains("modulo by zero"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("cdiv(N, Z)", v), doctest::Contains("division by zero"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("4611686018427387904 * 4", v), doctest::Contains("overflow"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("99999999999999999999", v), doctest::Contains("overflow"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("M + 1", v), doctest::Contains("unknown name 'M'"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("N +", v), doctest::Contains("unexpected end"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("(N", v), doctest::Contains("missing ')'"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("pow(N, 2)", v), doctest::Contains("unknown function"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("1.5 * N", v), doctest::Contains("not an integer"), ExprError);
  CHECK_THROWS_AS(eval_expr("N N", v), ExprError);
}

TEST_CASE("names of an expression") {
  auto n = expr_names("cdiv(batch_size * dim, 256) + num_sms");
  CHECK(n == std::vector<std::string>{"batch_size", "dim", "num_sms"});
}

TEST_CASE("hostile expressions are clean errors: depth, length, control characters") {
  Vars v = {{"N", 10}};
  std::string deep = std::string(20000, '(') + "N" + std::string(20000, ')');
  CHECK_THROWS_WITH_AS(eval_expr(deep, v), doctest::Contains("characters"),
                       ExprError);  // over the length first
  std::string nested = std::string(1000, '(') + "N" + std::string(1000, ')');
  CHECK_THROWS_WITH_AS(eval_expr(nested, v), doctest::Contains("nested more than"), ExprError);
  CHECK_THROWS_WITH_AS(expr_names(nested), doctest::Contains("nested more than"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr(std::string(3000, '-') + "N", v),
                       doctest::Contains("nested more than"), ExprError);
  std::string calls;
  for (int i = 0; i < 500; ++i) calls += "min(1, ";
  calls += "N" + std::string(500, ')');
  CHECK_THROWS_WITH_AS(eval_expr(calls, v), doctest::Contains("nested more than"), ExprError);
  // Just within the bounds: fine.
  std::string ok = std::string(kMaxExprDepth - 1, '(') + "N" + std::string(kMaxExprDepth - 1, ')');
  CHECK(eval_expr(ok, v) == 10);
  CHECK(eval_expr("N" + std::string(kMaxExprChars - 1, ' '), v) == 10);
  CHECK_THROWS_WITH_AS(eval_expr("N" + std::string(kMaxExprChars, ' '), v),
                       doctest::Contains("limit"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("N\x01", v), doctest::Contains("control character"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("N \xff", v), doctest::Contains("byte 0xff"), ExprError);
  // Overflow everywhere it can happen.
  CHECK_THROWS_WITH_AS(eval_expr("-9223372036854775807 - 2", v), doctest::Contains("overflow"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("(0 - 9223372036854775807 - 1) / (0 - 1)", v),
                       doctest::Contains("overflow"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("(0 - 9223372036854775807 - 1) % (0 - 1)", v),
                       doctest::Contains("overflow"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("cdiv(0 - 9223372036854775807 - 1, 0 - 1)", v),
                       doctest::Contains("overflow"), ExprError);
  CHECK_THROWS_WITH_AS(eval_expr("-(0 - 9223372036854775807 - 1)", v),
                       doctest::Contains("overflow"), ExprError);
  CHECK(eval_expr("cdiv(9223372036854775807, 2)", v) == 4611686018427387904);
}

TEST_CASE("real expressions follow C's promotions") {
  Vars v{{"n", 7}, {"m", 2}};
  RealVars r{{"eps", 0.5}};
  CHECK(eval_real_expr("1.0 / n", v, r) == doctest::Approx(1.0 / 7));
  CHECK(eval_real_expr("1.0f / (n * m)", v, r) == doctest::Approx(1.0 / 14));
  CHECK(eval_real_expr("n / m", v, r) == 3);     // two integers: truncating division
  CHECK(eval_real_expr("n / 2.", v, r) == 3.5);  // a double operand: real division
  CHECK(eval_real_expr("1.0 / (n / m)", v, r) == doctest::Approx(1.0 / 3));
  CHECK(eval_real_expr("eps * n + 1e-1", v, r) == doctest::Approx(3.6));
  CHECK(eval_real_expr("-.25 * m", v, r) == -0.5);
  CHECK(eval_real_expr("max(eps, 0.75)", v, r) == 0.75);
  CHECK(eval_real_expr("cdiv(n, m) * 0.5", v, r) == 2.0);
  CHECK_THROWS_WITH_AS(eval_real_expr("1.0 / (n - 7)", v, r), doctest::Contains("division by zero"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_real_expr("n % 2.0", v, r), doctest::Contains("two integers"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_real_expr("cdiv(n, 0.5)", v, r), doctest::Contains("two integers"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_real_expr("1e300 * 1e300", v, r), doctest::Contains("finite"),
                       ExprError);
  CHECK_THROWS_WITH_AS(eval_real_expr("1e999", v, r), doctest::Contains("out of range"), ExprError);
  CHECK_THROWS_AS(eval_real_expr("1.0 / k", v, r), ExprError);
  CHECK_THROWS_AS(eval_real_expr("2f", v, r), ExprError);
  // Integer expressions still refuse float literals.
  CHECK_THROWS_WITH_AS(eval_expr("n * 0.5", v), doctest::Contains("not an integer literal"),
                       ExprError);
  CHECK(has_real_literal("1.0 / (batch * dim)"));
  CHECK(has_real_literal("n * 2.f"));
  CHECK_FALSE(has_real_literal("n * 2"));
  CHECK_FALSE(has_real_literal("1.0 / ("));
  CHECK(has_real_literal("cdiv(n, 2.0)"));  // a real expression, whose evaluation says why not
  CHECK(expr_names("1.0 / (batch * dim)", true) == std::vector<std::string>{"batch", "dim"});
}
