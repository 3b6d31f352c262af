#include "references/reference.h"

#include <cmath>

#include "references/fused.h"

namespace kernrl::problems::L3_31_VisionAttention {

// (S, B, E) -> (B * nh, S, hd), as nn.MultiheadAttention splits the heads.
torch::Tensor split_heads(const torch::Tensor& u, int64_t S, int64_t B, int64_t nh, int64_t hd) {
  return u.contiguous().view({S, B * nh, hd}).transpose(0, 1);
}

// `fused`: the attention through scaled_dot_product_attention (nn.MultiheadAttention's own route
// when no attention weights are asked for); otherwise the scores materialised, as the module's
// default (need_weights) route computes them.
TensorMap attention_block(const RefContext& c, bool fused) {
  const auto& x = c.t("x");
  const int64_t B = x.size(0), E = x.size(1), H = x.size(2), W = x.size(3), S = H * W;
  const int64_t nh = c.size("num_heads"), hd = E / nh;
  auto t = x.view({B, E, S}).permute({2, 0, 1});  // (S, B, E)
  auto qkv = torch::linear(t, c.t("in_proj_weight"), c.t("in_proj_bias")).chunk(3, -1);
  auto q = split_heads(qkv[0], S, B, nh, hd);
  auto k = split_heads(qkv[1], S, B, nh, hd);
  auto v = split_heads(qkv[2], S, B, nh, hd);
  torch::Tensor o;
  if (fused) {
    // 4-D (1, B * heads, S, hd): the fused kernels take batch and head dimensions.
    o = refs::fused::sdpa(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), false).squeeze(0);
  } else {
    q = q / std::sqrt(static_cast<double>(hd));
    o = torch::bmm(torch::softmax(torch::bmm(q, k.transpose(1, 2)), -1), v);
  }
  o = o.transpose(0, 1).contiguous().view({S, B, E});
  o = torch::linear(o, c.t("out_proj_weight"), c.t("out_proj_bias"));
  auto z = torch::layer_norm(o + t, {E}, c.t("norm_weight"), c.t("norm_bias"), c.scalar("eps"));
  return {{"out", z.permute({1, 2, 0}).reshape({B, E, H, W})}};
}

TensorMap portable(const RefContext& c) {
  return attention_block(c, false);
}
TensorMap fused(const RefContext& c) {
  return attention_block(c, true);
}

KERNRL_REFERENCE_ROUTES("L3_31_VisionAttention", fused, portable);

}  // namespace kernrl::problems::L3_31_VisionAttention
