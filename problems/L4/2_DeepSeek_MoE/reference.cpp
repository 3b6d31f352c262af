#include "references/reference.h"

namespace kernrl::problems::L4_2_DeepSeek_MoE {

struct Routing {
  torch::Tensor scores;  // [T, E] sigmoid of the router logits
  torch::Tensor choice;  // [T, E] scores + correction bias
  torch::Tensor group;   // [T, G] sum of the top-2 choice values of each group
  torch::Tensor kept;    // [T, E] bool: expert lies in a kept group
};

Routing route(const torch::Tensor& x2, const RefContext& c) {
  const int64_t t = x2.size(0), e = c.size("n_routed_experts"), g = c.size("n_group");
  Routing r;
  r.scores = torch::sigmoid(torch::matmul(x2, c.t("gate_weight").t()));
  r.choice = r.scores + c.t("e_score_correction_bias");
  r.group = std::get<0>(r.choice.view({t, g, e / g}).topk(2, -1)).sum(-1);
  auto group_idx = std::get<1>(r.group.topk(c.size("topk_group"), -1));
  auto group_mask = torch::zeros({t, g}, c.opts(torch::kBool)).scatter_(1, group_idx, true);
  r.kept = group_mask.unsqueeze(-1).expand({t, g, e / g}).reshape({t, e});
  return r;
}

// The choice values the experts are selected from: 0 outside the kept groups.
torch::Tensor masked_choice(const Routing& r) {
  return r.choice.masked_fill(r.kept.logical_not(), 0.0);
}

torch::Tensor swiglu_mlp(const torch::Tensor& v, const torch::Tensor& gate, const torch::Tensor& up,
                         const torch::Tensor& down) {
  return torch::matmul(torch::silu(torch::matmul(v, gate.t())) * torch::matmul(v, up.t()),
                       down.t());
}

TensorMap reference(const RefContext& c) {
  const auto& x3 = c.t("x");
  const int64_t h = c.size("hidden_size"), e = c.size("n_routed_experts"),
                k = c.size("num_experts_per_tok");
  auto x = x3.reshape({-1, h});
  auto r = route(x, c);
  auto topk_idx = std::get<1>(masked_choice(r).topk(k, -1));
  auto w = r.scores.gather(1, topk_idx);
  w = w / (w.sum(-1, true) + 1e-20) * c.scalar("routed_scaling_factor");
  const auto& gp = c.t("experts_gate_proj");
  const auto& up = c.t("experts_up_proj");
  const auto& dp = c.t("experts_down_proj");
  auto routed = torch::zeros_like(x);
  // Group the (token, slot) pairs by expert: one pass per expert, no per-token weight copies.
  for (int64_t i = 0; i < e; i++) {
    auto sel = torch::nonzero(topk_idx == i);
    if (sel.size(0) == 0) continue;
    auto token = sel.select(1, 0), slot = sel.select(1, 1);
    auto y = swiglu_mlp(x.index_select(0, token), gp[i], up[i], dp[i]);
    routed.index_add_(0, token, y * w.index({token, slot}).unsqueeze(1));
  }
  auto shared =
      swiglu_mlp(x, c.t("shared_gate_proj"), c.t("shared_up_proj"), c.t("shared_down_proj"));
  return {{"out", (routed + shared).view(x3.sizes())}};
}

// x ~ N(0, 1), with the rows of tokens whose routing has a near-tie (group or expert margin
// below 2e-4) redrawn until none is left, so that float32 rounding cannot flip a selection.
TensorMap inputs(const RefContext& c) {
  const int64_t t = c.size("batch_size") * c.size("seq_len"), h = c.size("hidden_size");
  const int64_t tg = c.size("topk_group"), k = c.size("num_experts_per_tok");
  const double margin = 2e-4;
  auto x = torch::randn({t, h}, c.opts());
  for (int round = 0; round < 100; round++) {
    auto r = route(x, c);
    auto gs = std::get<0>(r.group.sort(-1, /*descending=*/true));
    auto group_gap = gs.select(1, tg - 1) - gs.select(1, tg);
    auto es = std::get<0>(masked_choice(r).sort(-1, true));
    auto expert_gap = es.select(1, k - 1) - es.select(1, k);
    auto bad = (group_gap < margin).logical_or(expert_gap < margin);
    if (!bad.any().item<bool>()) break;
    x = torch::where(bad.unsqueeze(1), torch::randn({t, h}, c.opts()), x);
  }
  return {{"x", x.view({c.size("batch_size"), c.size("seq_len"), h})}};
}

KERNRL_REFERENCE("L4_2_DeepSeek_MoE", reference);
KERNRL_INPUTS("L4_2_DeepSeek_MoE", inputs);

}  // namespace kernrl::problems::L4_2_DeepSeek_MoE
