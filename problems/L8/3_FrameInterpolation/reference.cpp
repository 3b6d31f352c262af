#include "references/reference.h"

namespace kernrl::problems::L8_3_FrameInterpolation {

using Tensor = torch::Tensor;

TensorMap reference(const RefContext& c) {
  const double t = c.scalar("t");
  const auto& f0 = c.t("frame0");     // [C, H, W]
  const auto& f1 = c.t("frame1");     // [C, H, W]
  const auto& flow = c.t("flow_01");  // [H, W, 2]
  const int64_t H = f0.size(1), W = f0.size(2);
  auto opt = f0.options();
  auto ys = torch::linspace(-1, 1, H, opt).view({H, 1}).expand({H, W});
  auto xs = torch::linspace(-1, 1, W, opt).view({1, W}).expand({H, W});
  auto grid = torch::stack({xs, ys}, -1);
  auto n = torch::stack({flow.select(2, 0) / (W / 2.0), flow.select(2, 1) / (H / 2.0)}, -1);
  auto w0 = torch::grid_sampler(f0.unsqueeze(0), (grid - n * t).unsqueeze(0), /*bilinear*/ 0,
                                /*border*/ 1,
                                /*align_corners*/ true);
  auto w1 = torch::grid_sampler(f1.unsqueeze(0), (grid + n * (1 - t)).unsqueeze(0), 0, 1, true);
  return {{"out", (w0 * (1 - t) + w1 * t)[0]}};
}

KERNRL_REFERENCE("L8_3_FrameInterpolation", reference);

}  // namespace kernrl::problems::L8_3_FrameInterpolation
