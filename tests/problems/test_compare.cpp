// The comparison rules themselves, on hand-made tensors.
#include <doctest/doctest.h>

#include <limits>

#include "worker/compare.h"

using namespace kernrl;

namespace {
TensorSpec out_spec(const std::string& dtype, const std::string& mode = "allclose") {
  TensorSpec t;
  t.name = "out";
  t.dtype = *dtype_from_name(dtype);
  t.compare = t.dtype.is_float ? mode : "exact";
  return t;
}
}  // namespace

TEST_CASE("allclose: within atol + rtol*|ref| passes, beyond fails, first mismatch recorded") {
  auto spec = out_spec("float32");
  Tolerance tol{1e-4, 1e-4, 1e-2};
  auto want = torch::tensor({1.0f, -2.0f, 100.0f, 0.0f});
  CHECK(compare_output(spec, want + torch::tensor({5e-5f, 0.f, 9e-3f, 9e-5f}), want, tol).passed);
  auto c = compare_output(spec, want + torch::tensor({0.f, 0.f, 0.f, 2e-4f}), want, tol);
  CHECK_FALSE(c.passed);
  CHECK(c.mismatches == 1);
  CHECK(c.first_mismatch["index"] == nlohmann::json::array({3}));
}

TEST_CASE("NaN and infinity must match exactly") {
  auto spec = out_spec("float32");
  Tolerance tol;
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto want = torch::tensor({inf, -inf, nan, 1.0f});
  CHECK(compare_output(spec, want.clone(), want, tol).passed);
  CHECK_FALSE(compare_output(spec, torch::tensor({inf, inf, nan, 1.0f}), want, tol).passed);
  CHECK_FALSE(compare_output(spec, torch::tensor({inf, -inf, 0.0f, 1.0f}), want, tol).passed);
  CHECK_FALSE(compare_output(spec, torch::tensor({inf, -inf, nan, nan}), want, tol).passed);
  // Poisoned (never written) output: all NaN.
  CHECK_FALSE(compare_output(spec, torch::full({4}, nan), torch::ones({4}), tol).passed);
}

TEST_CASE("relative L2 catches zeros and constants where elementwise tolerance would not") {
  auto spec = out_spec("float32");
  // Softmax-like outputs: tiny magnitudes, an all-zeros answer is within atol everywhere.
  auto want = torch::softmax(torch::randn({4, 65536}) * 0.1, 1);  // every element ~1.5e-5, far under atol
  Tolerance tol{1e-4, 1e-4, 1e-2};
  auto zeros = compare_output(spec, torch::zeros_like(want), want, tol);
  CHECK(zeros.mismatches == 0);
  CHECK_FALSE(zeros.passed);
  CHECK(zeros.reason.find("relative L2") != std::string::npos);
  CHECK_FALSE(compare_output(spec, torch::full_like(want, want.mean().item<float>()), want, tol).passed);
  CHECK(compare_output(spec, want * (1 + 1e-6), want, tol).passed);
}

TEST_CASE("integers and exact mode compare bit for bit") {
  auto ispec = out_spec("int64");
  auto want = torch::tensor({1, 2, 3}, torch::kInt64);
  CHECK(compare_output(ispec, want.clone(), want, {}).passed);
  CHECK_FALSE(compare_output(ispec, torch::tensor({1, 2, 4}, torch::kInt64), want, {}).passed);
  auto fexact = out_spec("float32", "exact");
  auto w = torch::tensor({1.0f, 2.0f});
  CHECK_FALSE(compare_output(fexact, torch::tensor({1.0f, 2.0000002f}), w, {}).passed);
  auto bspec = out_spec("bool");
  auto wb = torch::tensor({true, false});
  CHECK(compare_output(bspec, wb.clone(), wb, {}).passed);
  CHECK_FALSE(compare_output(bspec, torch::tensor({true, true}), wb, {}).passed);
}

TEST_CASE("complex outputs compare real and imaginary parts") {
  auto spec = out_spec("complex64");
  auto want = torch::complex(torch::randn({64}), torch::randn({64}));
  CHECK(compare_output(spec, want.clone(), want, {}).passed);
  CHECK_FALSE(compare_output(spec, torch::conj(want).resolve_conj(), want, {}).passed);
}

TEST_CASE("variable-size outputs: only the first count rows, after the count itself") {
  ProblemSpec p;
  p.id = "t";
  TensorSpec count = out_spec("int64");
  count.name = "count";
  TensorSpec vals = out_spec("float32");
  vals.name = "vals";
  vals.count = "count";
  p.outputs = {count, vals};
  TensorMap want = {{"count", torch::tensor({2}, torch::kInt64)}, {"vals", torch::tensor({1.0f, 2.0f, 0.0f})}};
  TensorMap got = {{"count", torch::tensor({2}, torch::kInt64)}, {"vals", torch::tensor({1.0f, 2.0f, 99.0f})}};
  auto r = compare_outputs(p, got, want);
  CHECK(r.size() == 2);
  CHECK(r[0].passed);
  CHECK(r[1].passed);
  got["count"] = torch::tensor({3}, torch::kInt64);
  r = compare_outputs(p, got, want);
  CHECK_FALSE(r[0].passed);
  CHECK_FALSE(r[1].passed);
}
