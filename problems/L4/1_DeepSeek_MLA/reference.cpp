#include "references/reference.h"

#include "references/fused.h"

namespace kernrl::problems::L4_1_DeepSeek_MLA {

using torch::indexing::Slice;

// DeepSeek RMSNorm: w * (u * rsqrt(mean(u^2) + eps)) over the last dimension.
torch::Tensor rmsnorm(const torch::Tensor& u, const torch::Tensor& w, double eps) {
  return w * (u * torch::rsqrt(u.pow(2).mean(-1, true) + eps));
}

// Rotate-half RoPE: x [..., seq, d], cos / sin [seq, d].
torch::Tensor rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  auto halves = x.chunk(2, -1);
  return x * cos + torch::cat({-halves[1], halves[0]}, -1) * sin;
}

// `fused`: scaled_dot_product_attention (query/key head dim nope + rope, value head dim v_head_dim,
// the problem's softmax_scale); otherwise the scores materialised and masked.
TensorMap mla(const RefContext& c, bool fused) {
  const auto& x = c.t("x");
  const int64_t b = x.size(0), s = x.size(1), nh = c.size("num_heads");
  const int64_t nope = c.size("qk_nope_head_dim"), rd = c.size("qk_rope_head_dim"),
                vd = c.size("v_head_dim");
  const int64_t kvr = c.size("kv_lora_rank");
  const double eps = c.scalar("rms_norm_eps"), theta = c.scalar("rope_theta"),
               scale = c.scalar("softmax_scale");

  auto q = torch::matmul(
      rmsnorm(torch::matmul(x, c.t("q_a_proj_weight").t()), c.t("q_a_layernorm_weight"), eps),
      c.t("q_b_proj_weight").t());
  q = q.view({b, s, nh, nope + rd}).transpose(1, 2);
  auto ckv = torch::matmul(x, c.t("kv_a_proj_with_mqa_weight").t());
  auto c_kv = ckv.index({"...", Slice(0, kvr)});
  auto k_pe =
      ckv.index({"...", Slice(kvr, torch::indexing::None)}).view({b, s, 1, rd}).transpose(1, 2);
  auto kv =
      torch::matmul(rmsnorm(c_kv, c.t("kv_a_layernorm_weight"), eps), c.t("kv_b_proj_weight").t());
  kv = kv.view({b, s, nh, nope + vd}).transpose(1, 2);
  auto k_nope = kv.index({"...", Slice(0, nope)});
  auto v = kv.index({"...", Slice(nope, torch::indexing::None)});

  auto f32 = c.opts(torch::kFloat32);
  auto inv_freq = 1.0 / torch::pow(theta, torch::arange(0, rd, 2, f32) / static_cast<double>(rd));
  auto freqs = torch::outer(torch::arange(s, f32), inv_freq);
  auto emb = torch::cat({freqs, freqs}, -1);
  auto cos = emb.cos(), sin = emb.sin();
  auto q_pe = rope(q.index({"...", Slice(nope, torch::indexing::None)}), cos, sin);
  auto k_pe_r = rope(k_pe, cos, sin).expand({b, nh, s, rd});
  auto query = torch::cat({q.index({"...", Slice(0, nope)}), q_pe}, -1);
  auto key = torch::cat({k_nope, k_pe_r}, -1);
  torch::Tensor o;
  if (fused) {
    o = refs::fused::sdpa(query, key, v, true, scale);
  } else {
    auto scores = torch::matmul(query, key.transpose(-1, -2)) * scale;
    auto mask = torch::ones({s, s}, c.opts(torch::kBool)).triu(1);
    o = torch::matmul(torch::softmax(scores.masked_fill(mask, -INFINITY), -1), v);
  }
  auto attn = o.transpose(1, 2).reshape({b, s, nh * vd});
  return {{"out", torch::matmul(attn, c.t("o_proj_weight").t())}};
}

TensorMap portable(const RefContext& c) {
  return mla(c, false);
}
TensorMap fused(const RefContext& c) {
  return mla(c, true);
}

KERNRL_REFERENCE_ROUTES("L4_1_DeepSeek_MLA", fused, portable);

}  // namespace kernrl::problems::L4_1_DeepSeek_MLA
