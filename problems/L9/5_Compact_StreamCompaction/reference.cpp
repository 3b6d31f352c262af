#include "references/reference.h"

namespace kernrl::problems::L9_5_Compact_StreamCompaction {

TensorMap reference(const RefContext& c) {
  const auto& x = c.t("x");
  auto kept = torch::masked_select(x, x.ge(c.scalar("threshold")));
  auto out = torch::zeros_like(x);
  out.narrow(0, 0, kept.numel()).copy_(kept);
  auto count = torch::full({1}, kept.numel(), c.opts(torch::kInt64));
  return {{"count", count}, {"out", out}};
}

KERNRL_REFERENCE("L9_5_Compact_StreamCompaction", reference);

}  // namespace kernrl::problems::L9_5_Compact_StreamCompaction
