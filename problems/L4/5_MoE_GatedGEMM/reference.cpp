#include "references/reference.h"

namespace kernrl::problems::L4_5_MoE_GatedGEMM {

TensorMap reference(const RefContext& c) {
  const auto& x3 = c.t("x");
  const int64_t hidden = c.size("hidden_size"), experts = c.size("num_experts");
  auto x = x3.reshape({-1, hidden});
  auto idx = c.t("expert_indices").reshape({x.size(0), -1});
  auto wts = c.t("expert_weights").reshape({x.size(0), -1});
  const auto& w1 = c.t("w1");
  const auto& w2 = c.t("w2");
  const auto& w3 = c.t("w3");
  auto out = torch::zeros({x.size(0), hidden}, c.opts(torch::kFloat32));
  // Group the (token, slot) pairs by expert: one pass per expert, no per-token weight copies.
  for (int64_t e = 0; e < experts; e++) {
    auto sel = torch::nonzero(idx == e);  // [n, 2]: (token, slot)
    if (sel.size(0) == 0) continue;
    auto token = sel.select(1, 0), slot = sel.select(1, 1);
    auto xe = x.index_select(0, token);
    auto h = torch::silu(torch::matmul(xe, w1[e].t())) * torch::matmul(xe, w3[e].t());
    auto y = torch::matmul(h, w2[e].t());
    auto w = wts.index({token, slot}).unsqueeze(1);
    out.index_add_(0, token, y.to(torch::kFloat32) * w);
  }
  return {{"out", out.to(torch::kBFloat16).view(x3.sizes())}};
}

// Routing as the original draws it: top_k distinct experts uniformly at random per token (the
// first top_k of a random permutation), weights softmax over top_k standard normals.
TensorMap inputs(const RefContext& c) {
  const int64_t b = c.size("batch_size"), s = c.size("seq_len"), e = c.size("num_experts"),
                k = c.size("top_k");
  auto keys = torch::rand({b, s, e}, c.opts(torch::kFloat32));
  auto idx = std::get<1>(keys.sort(-1)).narrow(-1, 0, k);  // a random permutation's first top_k
  auto w = torch::softmax(torch::randn({b, s, k}, c.opts(torch::kFloat32)), -1);
  return {{"expert_indices", idx.to(torch::kInt64)}, {"expert_weights", w}};
}

KERNRL_REFERENCE("L4_5_MoE_GatedGEMM", reference);
KERNRL_INPUTS("L4_5_MoE_GatedGEMM", inputs);

}  // namespace kernrl::problems::L4_5_MoE_GatedGEMM
