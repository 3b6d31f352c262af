// Fused PyTorch operations that references take where a PyTorch user would, with the same
// operations written out where libtorch lacks them (libtorch 1.13: kFusedOpsNative is false).
// Helpers for references only: namespace kernrl::refs::fused.
#pragma once

#include <cmath>
#include <optional>

#include "references/reference.h"

namespace kernrl::refs::fused {

// softmax(q k^T * scale [+ causal mask]) v over the last two dimensions, as
// torch.nn.functional.scaled_dot_product_attention computes it (no dropout, no other mask; `scale`
// defaults to 1/sqrt(q.size(-1)); causal: query i sees keys 0..i, the mask aligned top-left).
inline torch::Tensor sdpa(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                          bool causal, std::optional<double> scale = std::nullopt) {
#if KERNRL_TORCH_AT_LEAST(2, 5)
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, causal, scale);
#else
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * s;
  if (causal) {
    auto keep = torch::ones({q.size(-2), k.size(-2)},
                            torch::TensorOptions().dtype(torch::kBool).device(q.device()))
                    .tril();
    scores = scores.masked_fill(keep.logical_not(), -INFINITY);
  }
  return torch::matmul(torch::softmax(scores, -1), v);
#endif
}

// (a @ b) * scale_a * scale_b in `out_dtype`, for a [M, K] and b [K, N] float32 matrices whose
// values are on the E4M3 grid (exact in float8_e4m3fn) and 0-dim float32 scales: an FP8 GEMM with
// float32 accumulation through torch._scaled_mm on a CUDA device that has one (K and N multiples
// of 16); elsewhere the float32 product, scaled and rounded to out_dtype.
inline torch::Tensor scaled_mm_e4m3(const torch::Tensor& a, const torch::Tensor& b,
                                    const torch::Tensor& scale_a, const torch::Tensor& scale_b,
                                    torch::Dtype out_dtype) {
#if KERNRL_TORCH_AT_LEAST(2, 5)
  if (a.is_cuda() && a.size(1) % 16 == 0 && b.size(1) % 16 == 0) {
    try {
      auto a8 = a.contiguous().to(c10::ScalarType::Float8_e4m3fn);
      auto b8 = b.t().contiguous().to(c10::ScalarType::Float8_e4m3fn).t();  // column-major
      return at::_scaled_mm(a8, b8, scale_a.to(torch::kFloat32), scale_b.to(torch::kFloat32), {},
                            {}, out_dtype, false);
    } catch (const c10::Error&) {
      // No FP8 GEMM on this GPU (before sm_89): the float32 route below.
    }
  }
#endif
  return (torch::matmul(a, b) * scale_a * scale_b).to(out_dtype);
}

}  // namespace kernrl::refs::fused
