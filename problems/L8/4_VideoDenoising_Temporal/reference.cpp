#include "references/reference.h"

namespace kernrl::problems::L8_4_VideoDenoising_Temporal {

using Tensor = torch::Tensor;

TensorMap reference(const RefContext& c) {
  const auto& frames = c.t("frames");  // [T, H, W]
  const auto& flows = c.t("flows");    // [T - 1, H, W, 2]
  const int64_t T = frames.size(0), H = frames.size(1), W = frames.size(2), mid = T / 2;
  auto opt = frames.options();
  auto acc = frames[mid].clone();
  auto weight = torch::ones({H, W}, opt);
  auto ys = torch::linspace(-1, 1, H, opt).view({H, 1}).expand({H, W});
  auto xs = torch::linspace(-1, 1, W, opt).view({1, W}).expand({H, W});
  auto base = torch::stack({xs, ys}, -1);  // [H, W, 2]: (x, y)
  for (int64_t t = 0; t < T; ++t) {
    if (t == mid) continue;
    auto cum = torch::zeros({H, W, 2}, opt);
    if (t < mid)
      for (int64_t i = t; i < mid; ++i) cum = cum + flows[i];
    else
      for (int64_t i = mid; i < t; ++i) cum = cum - flows[i];
    auto norm = torch::stack({cum.select(2, 0) / (W / 2.0), cum.select(2, 1) / (H / 2.0)}, -1);
    auto grid = (base - norm).unsqueeze(0);
    auto warped =
        torch::grid_sampler(frames[t].unsqueeze(0).unsqueeze(0), grid, /*bilinear*/ 0, /*zeros*/ 0,
                            /*align_corners*/ true)[0][0];
    auto confidence = torch::exp(-cum.norm(2, -1) / 10);
    acc = acc + warped * confidence;
    weight = weight + confidence;
  }
  return {{"out", acc / weight}};
}

KERNRL_REFERENCE("L8_4_VideoDenoising_Temporal", reference);

}  // namespace kernrl::problems::L8_4_VideoDenoising_Temporal
