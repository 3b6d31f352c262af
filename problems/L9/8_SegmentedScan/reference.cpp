#include "references/reference.h"

namespace kernrl::problems::L9_8_SegmentedScan {

TensorMap reference(const RefContext& c) {
  const auto& x = c.t("x");
  auto heads = c.t("flags").clone();
  heads.narrow(0, 0, 1).fill_(true);
  auto excl = torch::cumsum(x, 0) - x;  // exact: integer-valued inputs
  auto seg = torch::cumsum(heads.to(torch::kInt64), 0) - 1;
  auto base = excl.index_select(0, heads.nonzero().squeeze(1));
  return {{"out", excl - base.index_select(0, seg)}};
}

// flags: position 0 and num_heads - 1 further distinct positions in [1, n), uniformly at random
// (the original's generator).
TensorMap inputs(const RefContext& c) {
  const int64_t n = c.size("n");
  auto pos =
      torch::randperm(n - 1, c.opts(torch::kInt64)).narrow(0, 0, c.size("num_heads") - 1) + 1;
  auto flags = torch::zeros({n}, c.opts(torch::kBool));
  flags.index_fill_(0, pos, true);
  flags.narrow(0, 0, 1).fill_(true);
  return {{"flags", flags}};
}

KERNRL_REFERENCE("L9_8_SegmentedScan", reference);
KERNRL_INPUTS("L9_8_SegmentedScan", inputs);

}  // namespace kernrl::problems::L9_8_SegmentedScan
