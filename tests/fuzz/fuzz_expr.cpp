// Integer and real expressions: evaluation and name collection on any text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  static const kernrl::Vars vars = {{"N", 4096},        {"M", 3},    {"dim", 16384},  {"zero", 0},
                                    {"big", INT64_MAX}, {"neg", -7}, {"num_sms", 132}};
  try {
    kernrl::eval_expr(text, vars);
  } catch (const kernrl::ExprError&) {
  }
  try {
    kernrl::expr_names(text);
  } catch (const kernrl::ExprError&) {
  }
  static const kernrl::RealVars reals = {{"eps", 1e-5}, {"huge", 1e308}, {"alpha", -0.5}};
  try {
    kernrl::eval_real_expr(text, vars, reals);
  } catch (const kernrl::ExprError&) {
  }
  try {
    kernrl::expr_names(text, true);
  } catch (const kernrl::ExprError&) {
  }
  (void)kernrl::has_real_literal(text);
  return 0;
}
