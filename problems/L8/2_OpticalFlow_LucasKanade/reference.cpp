#include "references/reference.h"

namespace kernrl::problems::L8_2_OpticalFlow_LucasKanade {

using Tensor = torch::Tensor;
namespace F = torch::nn::functional;

// Sobel (zero padding, as conv2d with padding=1) and the reflect-padded window sums use shifted
// slices and avg_pool2d rather than conv2d, whose CUDA path may run in TF32.
TensorMap reference(const RefContext& c) {
  const auto& f1 = c.t("frame1");
  const auto& f2 = c.t("frame2");
  int64_t H = f1.size(0), W = f1.size(1);
  auto P = torch::constant_pad_nd((f1 + f2) * 0.5, {1, 1, 1, 1}, 0);
  auto s = [&](int64_t dy, int64_t dx) { return P.narrow(0, 1 + dy, H).narrow(1, 1 + dx, W); };
  auto ix = (s(-1, 1) + s(0, 1) * 2 + s(1, 1)) - (s(-1, -1) + s(0, -1) * 2 + s(1, -1));
  auto iy = (s(1, -1) + s(1, 0) * 2 + s(1, 1)) - (s(-1, -1) + s(-1, 0) * 2 + s(-1, 1));
  auto it = f2 - f1;
  auto prods = torch::stack({ix * ix, iy * iy, ix * iy, ix * it, iy * it}, 0);  // [5, H, W]
  int64_t r = c.scalar("window") / 2;
  auto padded = F::pad(prods.unsqueeze(0), F::PadFuncOptions({r, r, r, r}).mode(torch::kReflect));
  auto S = torch::avg_pool2d(padded, {2 * r + 1, 2 * r + 1}, {1, 1}).squeeze(0) *
           double((2 * r + 1) * (2 * r + 1));
  auto sxx = S[0], syy = S[1], sxy = S[2], sxt = S[3], syt = S[4];
  auto det = sxx * syy - sxy * sxy;
  auto ok = det.abs() > c.scalar("det_eps");
  auto safe = torch::where(ok, det, torch::ones_like(det));
  auto u = torch::where(ok, (sxy * syt - syy * sxt) / safe, torch::zeros_like(det));
  auto v = torch::where(ok, (sxy * sxt - sxx * syt) / safe, torch::zeros_like(det));
  return {{"u", u}, {"v", v}};
}

KERNRL_REFERENCE("L8_2_OpticalFlow_LucasKanade", reference);

}  // namespace kernrl::problems::L8_2_OpticalFlow_LucasKanade
