#include "references/reference.h"

#include <cmath>

namespace kernrl::problems::L5_4_ConjugateGradient_Step {

TensorMap reference(const RefContext& c) {
  const auto& A = c.t("A");
  const auto& x = c.t("x");
  const auto& r = c.t("r");
  const auto& p = c.t("p");
  const auto& rsold = c.t("rsold");
  auto Ap = A.mv(p);
  auto alpha = rsold / torch::dot(p, Ap);
  auto x_new = x + alpha * p;
  auto r_new = r - alpha * Ap;
  auto rsnew = torch::dot(r_new, r_new);
  auto p_new = r_new + (rsnew / rsold) * p;
  return {{"x_new", x_new}, {"r_new", r_new}, {"p_new", p_new}, {"rsnew", rsnew}};
}

// A = Q diag(d) Q^T with Q the orthogonal factor of a QR decomposition of an N(0, 1) matrix and d
// uniform in [0.1, 1.1) (the original's generator, computed in float64 and rounded to float32);
// the state is that after one CG step (in float64) from x0 ~ N(0, 1) for b ~ N(0, 1).
TensorMap inputs(const RefContext& c) {
  int64_t n = c.size("matrix_size");
  auto f64 = c.opts(torch::kFloat64);
  auto q = std::get<0>(torch::linalg_qr(torch::randn({n, n}, f64)));
  auto d = torch::rand({n}, f64) + 0.1;
  auto Ad = torch::matmul(q * d.unsqueeze(0), q.t());
  auto A = Ad.to(torch::kFloat32);
  Ad = A.to(torch::kFloat64);
  auto x0 = torch::randn({n}, f64);
  auto b = torch::randn({n}, f64);
  auto r0 = b - Ad.mv(x0);
  auto p0 = r0;
  auto rs0 = torch::dot(r0, r0);
  auto Ap = Ad.mv(p0);
  auto alpha = rs0 / torch::dot(p0, Ap);
  auto x1 = (x0 + alpha * p0).to(torch::kFloat32);
  auto r1d = r0 - alpha * Ap;
  auto rs1 = torch::dot(r1d, r1d);
  auto p1 = (r1d + (rs1 / rs0) * p0).to(torch::kFloat32);
  auto r1 = r1d.to(torch::kFloat32);
  auto r1r = r1.to(torch::kFloat64);
  auto rsold = torch::dot(r1r, r1r).to(torch::kFloat32);
  return {{"A", A}, {"x", x1}, {"r", r1}, {"p", p1}, {"rsold", rsold}};
}

KERNRL_REFERENCE("L5_4_ConjugateGradient_Step", reference);
KERNRL_INPUTS("L5_4_ConjugateGradient_Step", inputs);

}  // namespace kernrl::problems::L5_4_ConjugateGradient_Step
