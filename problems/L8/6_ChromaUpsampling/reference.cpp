#include "references/reference.h"

namespace kernrl::problems::L8_6_ChromaUpsampling {

namespace F = torch::nn::functional;

TensorMap reference(const RefContext& c) {
  const auto& y = c.t("y_full");  // [H, W]
  int64_t H = y.size(0), W = y.size(1);
  auto up = [&](const torch::Tensor& p) {
    return F::interpolate(p.unsqueeze(0).unsqueeze(0), F::InterpolateFuncOptions()
                                                           .size(std::vector<int64_t>{H, W})
                                                           .mode(torch::kBilinear)
                                                           .align_corners(false))[0][0];
  };
  return {{"y_out", y.clone()}, {"u_full", up(c.t("u_half"))}, {"v_full", up(c.t("v_half"))}};
}

KERNRL_REFERENCE("L8_6_ChromaUpsampling", reference);

}  // namespace kernrl::problems::L8_6_ChromaUpsampling
