#include "references/reference.h"

namespace kernrl::problems::L5_2_Stencil_2D_Heat {

TensorMap reference(const RefContext& c) {
  const auto& u = c.t("u");
  int64_t h = u.size(0), w = u.size(1);
  auto out = u.clone();
  auto rows = [&](int64_t a, int64_t b) { return u.slice(0, a, b); };
  auto interior = 0.25 * (rows(0, h - 2).slice(1, 1, w - 1) + rows(2, h).slice(1, 1, w - 1) +
                          rows(1, h - 1).slice(1, 0, w - 2) + rows(1, h - 1).slice(1, 2, w));
  out.slice(0, 1, h - 1).slice(1, 1, w - 1).copy_(interior);
  return {{"out", out}};
}

// The original's grid: N(0, 1), then first row 1, last row 0, first column 1, last column 0.
TensorMap inputs(const RefContext& c) {
  auto u = torch::randn({c.size("grid_height"), c.size("grid_width")}, c.opts(torch::kFloat32));
  u.select(0, 0).fill_(1.0);
  u.select(0, -1).fill_(0.0);
  u.select(1, 0).fill_(1.0);
  u.select(1, -1).fill_(0.0);
  return {{"u", u}};
}

KERNRL_REFERENCE("L5_2_Stencil_2D_Heat", reference);
KERNRL_INPUTS("L5_2_Stencil_2D_Heat", inputs);

}  // namespace kernrl::problems::L5_2_Stencil_2D_Heat
