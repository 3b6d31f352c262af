#include "references/reference.h"

#include "references/fused.h"

namespace kernrl::problems::L4_4_FP8_Matmul {

constexpr double kE4M3Max = 448.0;

// Rounds float32 values onto the E4M3FN grid: clamp to +-448, then round to nearest, ties to even,
// with 3 mantissa bits and the exponent clamped at -6 (subnormal spacing 2^-9). Exact: the step is
// a power of two built from its bit pattern, and dividing by it only shifts the exponent.
torch::Tensor round_e4m3(const torch::Tensor& v32) {
  auto v = v32.clamp(-kE4M3Max, kE4M3Max);
  auto e = std::get<1>(torch::frexp(v)).to(torch::kInt32);  // v = m * 2^e with 0.5 <= |m| < 1
  auto exponent = (e - 1).clamp_min(-6);                    // floor(log2|v|), at least -6
  auto step = ((exponent - 3 + 127) * (1 << 23)).to(torch::kInt32).view(torch::kFloat32);
  return torch::round(v / step) * step;
}

// float32 -> float16 -> float32: the rounding of a float16 operation computed exactly in float32.
torch::Tensor f16(const torch::Tensor& v) {
  return v.to(torch::kFloat16).to(torch::kFloat32);
}

// `fused`: the quantized GEMM through torch._scaled_mm (FP8 E4M3 operands, float32 accumulation,
// the dequantization scales applied to the float32 result), as a PyTorch user on an FP8 GPU
// writes it; otherwise the GEMM emulated in float16 (CUDA) or float32 (CPU).
TensorMap fp8_matmul(const RefContext& c, bool fused) {
  auto x = c.t("x").to(torch::kFloat32);
  const auto& w = c.t("weight");  // float32 [in_features, out_features]
  // x side in float16 arithmetic (each product / quotient is exact or correctly rounded in float32
  // first, so rounding it to float16 is what the float16 operation returns).
  auto scale_x = f16(kE4M3Max / x.abs().max());
  auto xq = round_e4m3(f16(x * scale_x));
  auto inv_x = f16(1.0 / scale_x);
  auto scale_w = kE4M3Max / w.abs().max();
  auto wq = round_e4m3(w * scale_w);
  auto inv_w = 1.0 / scale_w;
  if (fused) {
    const int64_t in = xq.size(-1);
    auto out = refs::fused::scaled_mm_e4m3(xq.reshape({-1, in}), wq, inv_x,
                                           inv_w.to(torch::kFloat32), torch::kFloat16);
    auto shape = xq.sizes().vec();
    shape.back() = wq.size(1);
    return {{"out", out.view(shape)}};
  }
  torch::Tensor acc;
  if (x.is_cuda()) {
    // E4M3 values (and their products by 2^-8) are exact in fp16; the 2^-8 factors keep the fp16
    // GEMM result in range, and are undone in float32 afterwards.
    const double pre = 1.0 / 256.0;
    acc = torch::matmul((xq * pre).to(torch::kFloat16), (wq * pre).to(torch::kFloat16))
              .to(torch::kFloat32) *
          65536.0;
  } else {
    acc = torch::matmul(xq, wq);
  }
  return {{"out", (acc * inv_x * inv_w).to(torch::kFloat16)}};
}

TensorMap portable(const RefContext& c) {
  return fp8_matmul(c, false);
}
TensorMap fused(const RefContext& c) {
  return fp8_matmul(c, true);
}

KERNRL_REFERENCE_ROUTES("L4_4_FP8_Matmul", fused, portable);

}  // namespace kernrl::problems::L4_4_FP8_Matmul
