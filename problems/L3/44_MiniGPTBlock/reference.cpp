#include "references/reference.h"

#include <cmath>

#include "references/fused.h"

namespace kernrl::problems::L3_44_MiniGPTBlock {

// Eager attention, as the OpenEnv module writes it (`fused`: scaled_dot_product_attention).
torch::Tensor causal_self_attention(const RefContext& c, const torch::Tensor& x, bool fused) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), nh = c.size("n_head"), hd = C / nh;
  auto qkv = torch::linear(x, c.t("attn_c_attn_weight"), c.t("attn_c_attn_bias")).split(C, 2);
  auto q = qkv[0].view({B, T, nh, hd}).transpose(1, 2);
  auto k = qkv[1].view({B, T, nh, hd}).transpose(1, 2);
  auto v = qkv[2].view({B, T, nh, hd}).transpose(1, 2);
  torch::Tensor y;
  if (fused) {
    y = refs::fused::sdpa(q, k, v, true);
  } else {
    auto att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(hd)));
    auto mask = torch::ones({T, T}, c.opts()).tril().view({1, 1, T, T});
    att = att.masked_fill(mask == 0, -INFINITY);
    att = torch::softmax(att, -1);
    y = torch::matmul(att, v);
  }
  y = y.transpose(1, 2).contiguous().view({B, T, C});
  return torch::linear(y, c.t("attn_c_proj_weight"), c.t("attn_c_proj_bias"));
}

torch::Tensor mlp(const RefContext& c, const torch::Tensor& x) {
  auto h = torch::linear(x, c.t("mlp_c_fc_weight"), c.t("mlp_c_fc_bias"));
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  h = 0.5 * h * (1.0 + torch::tanh(k * (h + 0.044715 * torch::pow(h, 3.0))));
  return torch::linear(h, c.t("mlp_c_proj_weight"), c.t("mlp_c_proj_bias"));
}

TensorMap block(const RefContext& c, bool fused) {
  auto x = c.t("x");
  const int64_t C = x.size(2);
  const double eps = c.scalar("eps");
  x = x + causal_self_attention(
              c, torch::layer_norm(x, {C}, c.t("ln_1_weight"), c.t("ln_1_bias"), eps), fused);
  x = x + mlp(c, torch::layer_norm(x, {C}, c.t("ln_2_weight"), c.t("ln_2_bias"), eps));
  return {{"out", x}};
}

TensorMap portable(const RefContext& c) {
  return block(c, false);
}
TensorMap fused(const RefContext& c) {
  return block(c, true);
}

KERNRL_REFERENCE_ROUTES("L3_44_MiniGPTBlock", fused, portable);

}  // namespace kernrl::problems::L3_44_MiniGPTBlock
