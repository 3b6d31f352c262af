#include "references/reference.h"

namespace kernrl::problems::L4_6_INT4_Quantized_GEMM {

// W[n, k] = fp16(scales[n, k / group_size] * (q[n, k] - 8)); column 2j is the low nibble of byte j.
// The product of an fp16 scale and an integer in [-8, 7] is exact in float32; rounding it to fp16
// is what the original's fp16 multiply does.
torch::Tensor dequantize(const torch::Tensor& qweight, const torch::Tensor& scales,
                         int64_t group_size) {
  const int64_t n = qweight.size(0);
  auto packed = qweight.to(torch::kInt32);
  auto low = packed.bitwise_and(15);
  auto high = packed.bitwise_and(240).div(16, "floor");
  auto q = torch::stack({low, high}, -1).reshape({n, -1});
  auto w = (q - 8).to(torch::kFloat32).view({n, -1, group_size}) *
           scales.to(torch::kFloat32).unsqueeze(-1);
  return w.view({n, -1}).to(torch::kFloat16).to(torch::kFloat32);
}

TensorMap reference(const RefContext& c) {
  const auto& x = c.t("x");
  auto w = dequantize(c.t("qweight"), c.t("scales"), c.size("group_size"));
  // fp16 GEMM (fp32 accumulation) on the GPU, as a PyTorch user would write; CPU libtorch has no
  // fp16 matmul, so it runs in float32 there.
  const auto cdt = x.is_cuda() ? torch::kFloat16 : torch::kFloat32;
  auto out = torch::matmul(x.to(cdt), w.to(cdt).t());
  return {{"out", out.to(torch::kFloat16)}};
}

// Scales as the original draws them: |N(0, 1)| * 0.1 in float16.
TensorMap inputs(const RefContext& c) {
  const int64_t n = c.size("out_features"), groups = c.size("in_features") / c.size("group_size");
  return {{"scales",
           (torch::randn({n, groups}, c.opts(torch::kFloat32)).abs() * 0.1).to(torch::kFloat16)}};
}

KERNRL_REFERENCE("L4_6_INT4_Quantized_GEMM", reference);
KERNRL_INPUTS("L4_6_INT4_Quantized_GEMM", inputs);

}  // namespace kernrl::problems::L4_6_INT4_Quantized_GEMM
