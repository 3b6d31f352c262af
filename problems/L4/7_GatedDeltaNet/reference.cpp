#include "references/reference.h"

namespace kernrl::problems::L4_7_GatedDeltaNet {

using torch::indexing::Slice;

// Causal depthwise conv over time (with bias) + SiLU. u [B, T, C], w [C, K], bias [C].
torch::Tensor conv_silu(const torch::Tensor& u, const torch::Tensor& w, const torch::Tensor& bias) {
  const int64_t k = w.size(1), t = u.size(1);
  auto y = torch::conv1d(u.transpose(1, 2), w.unsqueeze(1), bias, 1, k - 1, 1, u.size(2));
  return torch::silu(y.index({"...", Slice(0, t)}).transpose(1, 2));
}

// Chunked gated delta rule (scalar decay per step), exact reformulation of
//   S = alpha_t S; S += k_t (beta_t (v_t - S^T k_t))^T; o_t = S^T q_t.
// q, k, v: [B, H, T, D]; log_alpha, beta: [B, H, T]. Within a chunk (G = cumsum of log alpha):
//   A[t, s] = beta_t (k_t . k_s) exp(G_t - G_s) for s < t;  (I + A) [U | W] = [beta v | beta k
//   exp(G)] delta = U - W S0;  o = (q exp(G)) S0 + Bq delta, Bq[t, s] = (q_t . k_s) exp(G_t - G_s)
//   for s <= t; S1 = exp(G_last) S0 + (k exp(G_last - G))^T delta.
torch::Tensor chunk_gated_delta(torch::Tensor q, torch::Tensor k, torch::Tensor v,
                                torch::Tensor log_alpha, torch::Tensor beta, int64_t chunk) {
  const int64_t b = q.size(0), h = q.size(1), t = q.size(2), dk = q.size(3), dv = v.size(3);
  const int64_t n = (t + chunk - 1) / chunk, pad = n * chunk - t;
  if (pad > 0) {  // zero keys / values and unit decay leave the state unchanged
    q = torch::constant_pad_nd(q, {0, 0, 0, pad});
    k = torch::constant_pad_nd(k, {0, 0, 0, pad});
    v = torch::constant_pad_nd(v, {0, 0, 0, pad});
    log_alpha = torch::constant_pad_nd(log_alpha, {0, pad});
    beta = torch::constant_pad_nd(beta, {0, pad});
  }
  q = q.view({b, h, n, chunk, dk});
  k = k.view({b, h, n, chunk, dk});
  v = v.view({b, h, n, chunk, dv});
  auto g = log_alpha.view({b, h, n, chunk}).cumsum(-1);
  auto bt = beta.view({b, h, n, chunk}).unsqueeze(-1);
  auto opts = q.options();
  auto strict = torch::ones({chunk, chunk}, opts.dtype(torch::kBool)).tril(-1);
  auto incl = torch::ones({chunk, chunk}, opts.dtype(torch::kBool)).tril(0);
  auto diff = g.unsqueeze(-1) - g.unsqueeze(-2);  // [.., t, s] = G_t - G_s
  auto decay_strict = diff.masked_fill(strict.logical_not(), -INFINITY).exp();
  auto decay_incl = diff.masked_fill(incl.logical_not(), -INFINITY).exp();
  auto a = bt * torch::matmul(k, k.transpose(-1, -2)) * decay_strict;
  auto eye = torch::eye(chunk, opts);
  auto rhs = torch::cat({bt * v, bt * k * g.exp().unsqueeze(-1)}, -1);
  auto uw = torch::linalg_solve_triangular(eye + a, rhs, /*upper=*/false, /*left=*/true,
                                           /*unitriangular=*/true);
  auto u = uw.index({"...", Slice(0, dv)});
  auto w = uw.index({"...", Slice(dv, torch::indexing::None)});
  auto bq = torch::matmul(q, k.transpose(-1, -2)) * decay_incl;
  auto qg = q * g.exp().unsqueeze(-1);
  auto g_last = g.index({"...", Slice(chunk - 1, chunk)});  // [b, h, n, 1]
  auto kd = k * (g_last - g).exp().unsqueeze(-1);
  auto state = torch::zeros({b, h, dk, dv}, opts);
  std::vector<torch::Tensor> outs;
  for (int64_t i = 0; i < n; i++) {
    auto delta = u.select(2, i) - torch::matmul(w.select(2, i), state);
    outs.push_back(torch::matmul(qg.select(2, i), state) + torch::matmul(bq.select(2, i), delta));
    state = state * g_last.select(2, i).exp().unsqueeze(-1) +
            torch::matmul(kd.select(2, i).transpose(-1, -2), delta);
  }
  return torch::stack(outs, 2).view({b, h, n * chunk, dv}).index({"...", Slice(0, t), Slice()});
}

TensorMap reference(const RefContext& c) {
  const auto& x = c.t("x");
  const int64_t b = x.size(0), t = x.size(1), nh = c.size("num_heads"), hd = c.size("head_dim");
  auto proj = [&](const char* w) { return torch::matmul(x, c.t(w).t()); };
  auto heads = [&](const torch::Tensor& u) {
    return u.view({b, t, nh, hd}).transpose(1, 2);
  };  // [B, H, T, D]
  auto q = heads(conv_silu(proj("q_proj_weight"), c.t("q_conv_weight"), c.t("q_conv_bias")));
  auto k = heads(conv_silu(proj("k_proj_weight"), c.t("k_conv_weight"), c.t("k_conv_bias")));
  auto v = heads(conv_silu(proj("v_proj_weight"), c.t("v_conv_weight"), c.t("v_conv_bias")));
  q = q * (1.0 / std::sqrt(static_cast<double>(hd)));
  auto alpha = torch::sigmoid(proj("a_proj_weight") + c.t("a_proj_bias"));  // [B, T, H]
  auto log_alpha = alpha.clamp_min(1e-6).log().transpose(1, 2);             // [B, H, T]
  auto beta = torch::sigmoid(proj("b_proj_weight") + c.t("b_proj_bias")).transpose(1, 2);
  auto o = chunk_gated_delta(q.contiguous(), k.contiguous(), v.contiguous(), log_alpha.contiguous(),
                             beta.contiguous(), 64);
  o = torch::layer_norm(o.transpose(1, 2), {hd}, c.t("o_norm_weight"), c.t("o_norm_bias"),
                        c.scalar("norm_eps"));
  o = o.reshape({b, t, nh * hd}) * torch::sigmoid(proj("g_proj_weight"));
  return {{"out", torch::matmul(o, c.t("o_proj_weight").t())}};
}

KERNRL_REFERENCE("L4_7_GatedDeltaNet", reference);

}  // namespace kernrl::problems::L4_7_GatedDeltaNet
