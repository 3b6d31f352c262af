#include "references/reference.h"

namespace kernrl::problems::L4_8_KimiDeltaAttention {

using torch::indexing::Slice;

// Causal depthwise conv over time (with bias) + SiLU. u [B, T, C], w [C, K], bias [C].
torch::Tensor conv_silu(const torch::Tensor& u, const torch::Tensor& w, const torch::Tensor& bias) {
  const int64_t k = w.size(1), t = u.size(1);
  auto y = torch::conv1d(u.transpose(1, 2), w.unsqueeze(1), bias, 1, k - 1, 1, u.size(2));
  return torch::silu(y.index({"...", Slice(0, t)}).transpose(1, 2));
}

// Chunked delta rule with a per-key-channel decay, exact reformulation of
//   S = diag(alpha_t) S; S += k_t (beta_t (v_t - S^T k_t))^T; o_t = S^T q_t.
// q, k, log_alpha: [B, H, T, Dk]; v: [B, H, T, Dv]; beta: [B, H, T]. Within a chunk, G = cumsum of
// log alpha (per channel) and E[t, s, i] = exp(G_t[i] - G_s[i]) for s <= t (formed pairwise: every
// exponent is <= 0):
//   A[t, s] = beta_t sum_i k_t[i] k_s[i] E[t, s, i] (s < t);  (I + A) [U | W] = [beta v | beta k
//   exp(G)] delta = U - W S0;  o = (q exp(G)) S0 + Bq delta,  Bq[t, s] = sum_i q_t[i] k_s[i] E[t,
//   s, i] (s <= t); S1 = exp(G_last) * S0 (rows) + (k exp(G_last - G))^T delta.
torch::Tensor chunk_kda(torch::Tensor q, torch::Tensor k, torch::Tensor v, torch::Tensor log_alpha,
                        torch::Tensor beta, int64_t chunk) {
  const int64_t b = q.size(0), h = q.size(1), t = q.size(2), dk = q.size(3), dv = v.size(3);
  const int64_t n = (t + chunk - 1) / chunk, pad = n * chunk - t;
  if (pad > 0) {  // zero keys / values and unit decay leave the state unchanged
    q = torch::constant_pad_nd(q, {0, 0, 0, pad});
    k = torch::constant_pad_nd(k, {0, 0, 0, pad});
    v = torch::constant_pad_nd(v, {0, 0, 0, pad});
    log_alpha = torch::constant_pad_nd(log_alpha, {0, 0, 0, pad});
    beta = torch::constant_pad_nd(beta, {0, pad});
  }
  q = q.view({b, h, n, chunk, dk});
  k = k.view({b, h, n, chunk, dk});
  v = v.view({b, h, n, chunk, dv});
  auto g = log_alpha.view({b, h, n, chunk, dk}).cumsum(3);
  auto bt = beta.view({b, h, n, chunk}).unsqueeze(-1);
  auto opts = q.options();
  auto incl =
      torch::ones({chunk, chunk}, opts.dtype(torch::kBool)).tril(0).unsqueeze(-1);  // [t, s, 1]
  auto eye = torch::eye(chunk, opts);
  auto rhs = torch::cat({bt * v, bt * k * g.exp()}, -1);
  auto qg = q * g.exp();
  auto g_last =
      g.index({Slice(), Slice(), Slice(), Slice(chunk - 1, chunk), Slice()});  // [b, h, n, 1, dk]
  auto kd = k * (g_last - g).exp();
  auto decay_last = g_last.exp().squeeze(3).unsqueeze(-1);  // [b, h, n, dk, 1]
  auto state = torch::zeros({b, h, dk, dv}, opts);
  std::vector<torch::Tensor> outs;
  for (int64_t i = 0; i < n; i++) {
    auto gi = g.select(2, i), ki = k.select(2, i), qi = q.select(2, i);  // [b, h, C, dk]
    auto e = (gi.unsqueeze(-2) - gi.unsqueeze(-3))
                 .masked_fill(incl.logical_not(), -INFINITY)
                 .exp();             // [b, h, t, s, dk]
    auto ek = e * ki.unsqueeze(-3);  // E[t, s, i] k_s[i]
    auto a = (ek * ki.unsqueeze(-2)).sum(-1).tril(-1) * bt.select(2, i);
    auto bq = (ek * qi.unsqueeze(-2)).sum(-1);
    auto uw = torch::linalg_solve_triangular(eye + a, rhs.select(2, i), /*upper=*/false,
                                             /*left=*/true, /*unitriangular=*/true);
    auto delta = uw.index({"...", Slice(0, dv)}) -
                 torch::matmul(uw.index({"...", Slice(dv, torch::indexing::None)}), state);
    outs.push_back(torch::matmul(qg.select(2, i), state) + torch::matmul(bq, delta));
    state =
        state * decay_last.select(2, i) + torch::matmul(kd.select(2, i).transpose(-1, -2), delta);
  }
  return torch::stack(outs, 2).view({b, h, n * chunk, dv}).index({"...", Slice(0, t), Slice()});
}

TensorMap reference(const RefContext& c) {
  const auto& x = c.t("x");
  const int64_t b = x.size(0), t = x.size(1), nh = c.size("num_heads"), hd = c.size("head_dim");
  auto proj = [&](const char* w) { return torch::matmul(x, c.t(w).t()); };
  auto heads = [&](const torch::Tensor& u) {
    return u.reshape({b, t, nh, hd}).transpose(1, 2).contiguous();
  };  // [B, H, T, D]
  auto q = heads(conv_silu(proj("q_proj_weight"), c.t("q_conv_weight"), c.t("q_conv_bias")));
  auto k = heads(conv_silu(proj("k_proj_weight"), c.t("k_conv_weight"), c.t("k_conv_bias")));
  auto v = heads(conv_silu(proj("v_proj_weight"), c.t("v_conv_weight"), c.t("v_conv_bias")));
  q = q * (1.0 / std::sqrt(static_cast<double>(hd)));
  auto alpha = torch::sigmoid(proj("a_proj_weight") + c.t("a_proj_bias"));  // [B, T, D]
  auto log_alpha = heads(alpha.clamp_min(1e-6).log());
  auto beta = torch::sigmoid(proj("b_proj_weight") + c.t("b_proj_bias"))
                  .transpose(1, 2)
                  .contiguous();                                     // [B, H, T]
  auto o = chunk_kda(q, k, v, log_alpha, beta, 64).transpose(1, 2);  // [B, T, H, D]
  o = torch::layer_norm(o, {hd}, c.t("o_norm_weight"), c.t("o_norm_bias"), c.scalar("norm_eps"));
  o = o.reshape({b, t, nh * hd}) * torch::sigmoid(proj("g_proj_weight"));
  return {{"out", torch::matmul(o, c.t("o_proj_weight").t())}};
}

KERNRL_REFERENCE("L4_8_KimiDeltaAttention", reference);

}  // namespace kernrl::problems::L4_8_KimiDeltaAttention
