#include "references/reference.h"

namespace kernrl::problems::L8_8_SceneChangeDetect {

using Tensor = torch::Tensor;

// 32-bin histograms of every frame, bin = trunc(clamp(v * 31, 0, 31)), each divided by its
// total: [B, 32] float32.
inline Tensor histograms(const Tensor& f, int64_t bins, const RefContext& c) {
  int64_t B = f.size(0);
  auto q = (f * double(bins - 1)).clamp(0, bins - 1).to(torch::kInt64).reshape({B, -1});
  q = q + torch::arange(B, c.opts(torch::kInt64)).unsqueeze(1) * bins;
  auto h = torch::bincount(q.reshape({-1}), {}, B * bins).reshape({B, bins}).to(torch::kFloat32);
  return h / h.sum(1, true);
}

TensorMap reference(const RefContext& c) {
  const auto& f1 = c.t("frame1");
  const auto& f2 = c.t("frame2");
  auto sad = (f1 - f2).abs().mean({1, 2});
  auto sad_score = sad / f1.abs().mean({1, 2}).clamp_min(1e-6);
  auto h1 = histograms(f1, 32, c), h2 = histograms(f2, 32, c);
  auto chi_sq = ((h1 - h2).pow(2) / (h1 + h2 + 1e-10)).sum(1) / 2;
  auto cut = sad_score.gt(c.scalar("sad_threshold")) | chi_sq.gt(c.scalar("hist_threshold"));
  return {{"is_scene_change", cut}, {"sad_score", sad_score}, {"chi_sq", chi_sq}};
}

// frame1 uniform on [lo1, lo1 + 0.4), lo1 ~ U[0, 0.6). For floor(batch / 2) random pairs (cuts)
// frame2 is uniform on [lo2, lo2 + 0.4) with |lo2 - lo1| >= 0.3: lo2 in [lo1 + 0.3, 0.6) when
// lo1 < 0.3, else in [0, lo1 - 0.3]. For the others frame2 = clamp(frame1 + N(0, 0.02), 0, 1).
TensorMap inputs(const RefContext& c) {
  int64_t B = c.size("batch"), H = c.size("height"), W = c.size("width");
  auto opt = c.opts(torch::kFloat32);
  auto lo1 = torch::rand({B, 1, 1}, opt) * 0.6;
  auto u = torch::rand({B, 1, 1}, opt);
  auto lo2 = torch::where(lo1.lt(0.3), lo1 + 0.3 + (0.3 - lo1) * u, (lo1 - 0.3) * u);
  auto f1 = lo1 + torch::rand({B, H, W}, opt) * 0.4;
  auto fresh = lo2 + torch::rand({B, H, W}, opt) * 0.4;
  auto similar = (f1 + torch::randn({B, H, W}, opt) * 0.02).clamp(0, 1);
  auto cut = torch::randperm(B, c.opts(torch::kInt64)).lt(B / 2).view({B, 1, 1});
  return {{"frame1", f1}, {"frame2", torch::where(cut, fresh, similar)}};
}

KERNRL_REFERENCE("L8_8_SceneChangeDetect", reference);
KERNRL_INPUTS("L8_8_SceneChangeDetect", inputs);

}  // namespace kernrl::problems::L8_8_SceneChangeDetect
