#include "references/reference.h"

#include <cmath>

#include "references/fused.h"

namespace kernrl::problems::L3_43_MinGPTCausalAttention {

// Eager attention, as the OpenEnv module writes it: the scores materialised and masked.
TensorMap portable(const RefContext& c) {
  const auto& x = c.t("x");
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), nh = c.size("n_head"), hd = C / nh;
  auto qkv = torch::linear(x, c.t("c_attn_weight"), c.t("c_attn_bias")).split(C, 2);
  auto q = qkv[0].view({B, T, nh, hd}).transpose(1, 2);
  auto k = qkv[1].view({B, T, nh, hd}).transpose(1, 2);
  auto v = qkv[2].view({B, T, nh, hd}).transpose(1, 2);
  auto att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(hd)));
  auto mask = torch::ones({T, T}, c.opts()).tril().view({1, 1, T, T});
  att = att.masked_fill(mask == 0, -INFINITY);
  att = torch::softmax(att, -1);
  auto y = torch::matmul(att, v).transpose(1, 2).contiguous().view({B, T, C});
  return {{"out", torch::linear(y, c.t("c_proj_weight"), c.t("c_proj_bias"))}};
}

// What a PyTorch user writes today: scaled_dot_product_attention with is_causal.
TensorMap fused(const RefContext& c) {
  const auto& x = c.t("x");
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), nh = c.size("n_head"), hd = C / nh;
  auto qkv = torch::linear(x, c.t("c_attn_weight"), c.t("c_attn_bias")).split(C, 2);
  auto q = qkv[0].view({B, T, nh, hd}).transpose(1, 2);
  auto k = qkv[1].view({B, T, nh, hd}).transpose(1, 2);
  auto v = qkv[2].view({B, T, nh, hd}).transpose(1, 2);
  auto y = refs::fused::sdpa(q, k, v, true).transpose(1, 2).contiguous().view({B, T, C});
  return {{"out", torch::linear(y, c.t("c_proj_weight"), c.t("c_proj_bias"))}};
}

KERNRL_REFERENCE_ROUTES("L3_43_MinGPTCausalAttention", fused, portable);

}  // namespace kernrl::problems::L3_43_MinGPTCausalAttention
