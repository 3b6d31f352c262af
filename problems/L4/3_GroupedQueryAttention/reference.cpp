#include "references/reference.h"

#include <cmath>

#include "references/fused.h"

namespace kernrl::problems::L4_3_GroupedQueryAttention {

// Rotate-half RoPE: x [..., seq, head_dim], cos / sin [seq, head_dim].
torch::Tensor rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  auto halves = x.chunk(2, -1);
  return x * cos + torch::cat({-halves[1], halves[0]}, -1) * sin;
}

// `fused`: the key/value heads repeated for their query groups, then scaled_dot_product_attention
// (as Hugging Face's SDPA attention does); otherwise the scores materialised and masked.
TensorMap gqa(const RefContext& c, bool fused) {
  const auto& x = c.t("x");
  const int64_t b = x.size(0), s = x.size(1);
  const int64_t nh = c.size("num_heads"), nkv = c.size("num_kv_heads"), hd = c.size("head_dim");
  const double theta = c.scalar("rope_theta");
  auto q = torch::matmul(x, c.t("q_proj_weight").t()).view({b, s, nh, hd}).transpose(1, 2);
  auto k = torch::matmul(x, c.t("k_proj_weight").t()).view({b, s, nkv, hd}).transpose(1, 2);
  auto v = torch::matmul(x, c.t("v_proj_weight").t()).view({b, s, nkv, hd}).transpose(1, 2);
  auto f32 = c.opts(torch::kFloat32);
  auto inv_freq = 1.0 / torch::pow(theta, torch::arange(0, hd, 2, f32) / static_cast<double>(hd));
  auto freqs = torch::outer(torch::arange(s, f32), inv_freq);
  auto emb = torch::cat({freqs, freqs}, -1);
  auto cos = emb.cos(), sin = emb.sin();
  auto qr = rope(q, cos, sin);
  auto kr = rope(k, cos, sin).repeat_interleave(nh / nkv, 1);
  auto vr = v.repeat_interleave(nh / nkv, 1);
  torch::Tensor o;
  if (fused) {
    o = refs::fused::sdpa(qr, kr, vr, true);
  } else {
    auto scores =
        torch::matmul(qr, kr.transpose(-1, -2)) * (1.0 / std::sqrt(static_cast<double>(hd)));
    auto mask = torch::ones({s, s}, c.opts(torch::kBool)).triu(1);
    o = torch::matmul(torch::softmax(scores.masked_fill(mask, -INFINITY), -1), vr);
  }
  auto attn = o.transpose(1, 2).reshape({b, s, nh * hd});
  return {{"out", torch::matmul(attn, c.t("o_proj_weight").t())}};
}

TensorMap portable(const RefContext& c) {
  return gqa(c, false);
}
TensorMap fused(const RefContext& c) {
  return gqa(c, true);
}

KERNRL_REFERENCE_ROUTES("L4_3_GroupedQueryAttention", fused, portable);

}  // namespace kernrl::problems::L4_3_GroupedQueryAttention
