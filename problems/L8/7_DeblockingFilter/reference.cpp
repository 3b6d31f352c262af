#include "references/reference.h"

namespace kernrl::problems::L8_7_DeblockingFilter {

using Tensor = torch::Tensor;

// Filters every edge before positions bs, 2 bs, ... < size - 1 along `dim` of f [B, H, W]:
// p1 p0 | q0 q1 read from f, the filtered copy returned.
inline Tensor filter_edges(const Tensor& f, int64_t dim, int64_t bs, double alpha, double beta) {
  auto pos = torch::arange(bs, f.size(dim) - 1, bs, f.options().dtype(torch::kInt64));
  if (pos.numel() == 0) return f.clone();
  auto p1 = f.index_select(dim, pos - 2), p0 = f.index_select(dim, pos - 1);
  auto q0 = f.index_select(dim, pos), q1 = f.index_select(dim, pos + 1);
  auto on = (p0 - q0).abs().lt(alpha) & (p1 - p0).abs().lt(beta) & (q1 - q0).abs().lt(beta);
  auto out = f.index_copy(dim, pos - 1, torch::where(on, (p1 * 2 + p0 + q0 + 2) / 4, p0));
  return out.index_copy(dim, pos, torch::where(on, (q1 * 2 + q0 + p0 + 2) / 4, q0));
}

TensorMap reference(const RefContext& c) {
  int64_t bs = c.scalar("block_size");
  double alpha = c.scalar("alpha"), beta = c.scalar("beta");
  auto f = filter_edges(c.t("frame"), 2, bs, alpha, beta);  // vertical edges (across columns)
  return {{"out", filter_edges(f, 1, bs, alpha, beta)}};    // then horizontal edges
}

// Blocky frames: a level per 8x8 block uniform in [0.3, 0.7) plus per-pixel noise in [-0.03, 0.03].
TensorMap inputs(const RefContext& c) {
  int64_t B = c.size("batch"), H = c.size("height"), W = c.size("width");
  auto opt = c.opts(torch::kFloat32);
  auto level = (torch::rand({B, (H + 7) / 8, (W + 7) / 8}, opt) * 0.4 + 0.3)
                   .repeat_interleave(8, 1)
                   .repeat_interleave(8, 2)
                   .narrow(1, 0, H)
                   .narrow(2, 0, W);
  auto noise = (torch::rand({B, H, W}, opt) * 2 - 1) * 0.03;
  return {{"frame", level + noise}};
}

KERNRL_REFERENCE("L8_7_DeblockingFilter", reference);
KERNRL_INPUTS("L8_7_DeblockingFilter", inputs);

}  // namespace kernrl::problems::L8_7_DeblockingFilter
