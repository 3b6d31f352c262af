#include "references/reference.h"

namespace kernrl::problems::L8_5_VideoStabilization {

using Tensor = torch::Tensor;

// Output pixel p samples the input at inverse(homography) p (homogeneous, divided by w + 1e-10):
// bilinear, zeros padding, align_corners=True.
TensorMap reference(const RefContext& c) {
  const auto& frame = c.t("frame");  // [C, H, W]
  const int64_t H = frame.size(1), W = frame.size(2);
  auto opt = frame.options();
  auto ys = torch::arange(H, opt).view({H, 1}).expand({H, W});
  auto xs = torch::arange(W, opt).view({1, W}).expand({H, W});
  auto dst = torch::stack({xs, ys, torch::ones({H, W}, opt)}, 0).reshape({3, -1});
  auto src = torch::matmul(torch::linalg_inv(c.t("homography")), dst);
  auto xy = src.narrow(0, 0, 2) / (src.narrow(0, 2, 1) + 1e-10);
  auto sx = xy[0].reshape({H, W}) * 2 / double(W - 1) - 1;
  auto sy = xy[1].reshape({H, W}) * 2 / double(H - 1) - 1;
  auto grid = torch::stack({sx, sy}, -1).unsqueeze(0);
  return {{"out", torch::grid_sampler(frame.unsqueeze(0), grid, /*bilinear*/ 0, /*zeros*/ 0,
                                      /*align_corners*/ true)[0]}};
}

// Near-rigid homographies: rotation in [-0.05, 0.05] rad, scale in [0.98, 1.02], translation in
// [-8, 8] pixels per axis, perspective terms in +-1e-5.
TensorMap inputs(const RefContext& c) {
  auto u = torch::rand({6}, c.opts(torch::kFloat64)) * 2 - 1;  // uniform in [-1, 1)
  auto a = u[0] * 0.05, s = 1 + u[1] * 0.02;
  auto h = torch::stack({s * torch::cos(a), -s * torch::sin(a), u[2] * 8,  //
                         s * torch::sin(a), s * torch::cos(a), u[3] * 8,   //
                         u[4] * 1e-5, u[5] * 1e-5, torch::ones_like(a)})
               .view({3, 3});
  return {{"homography", h.to(torch::kFloat32)}};
}

KERNRL_REFERENCE("L8_5_VideoStabilization", reference);
KERNRL_INPUTS("L8_5_VideoStabilization", inputs);

}  // namespace kernrl::problems::L8_5_VideoStabilization
