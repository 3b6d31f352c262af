// Independent CPU checks of the Level-1 references: each reference is compared with a brute-force
// loop in double precision at a tiny size, or with published values.
//
// Debian's libtorch is built with glog, whose CHECK macro collides with doctest's short names, so
// this file uses only the DOCTEST_-prefixed macros.
#include "references/reference.h"

#ifndef DOCTEST_CONFIG_NO_SHORT_MACRO_NAMES
#define DOCTEST_CONFIG_NO_SHORT_MACRO_NAMES
#endif
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace kernrl_checks_L1 {

using kernrl::TensorMap;

static TensorMap run_reference(const std::string& id, const TensorMap& tensors,
                               const std::map<std::string, int64_t>& sizes,
                               const std::map<std::string, double>& scalars = {}) {
  const kernrl::ReferenceEntry* entry = kernrl::find_reference(id);
  DOCTEST_REQUIRE_MESSAGE(entry != nullptr, "no reference registered for " << id);
  kernrl::RefContext ctx{tensors, sizes, scalars, torch::Device(torch::kCPU)};
  return entry->run(ctx);
}

static torch::Tensor randn(std::vector<int64_t> shape, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randn(shape, torch::kFloat32);
}

// Max |a - b| over all elements, a and b compared in double.
static double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  DOCTEST_REQUIRE((a.sizes() == b.sizes()));
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// Triple-loop matmul in double: (M, K) @ (K, N).
static torch::Tensor loop_matmul(const torch::Tensor& A, const torch::Tensor& B) {
  auto a = A.to(torch::kFloat64).contiguous(), b = B.to(torch::kFloat64).contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto out = torch::zeros({M, N}, torch::kFloat64);
  auto pa = a.accessor<double, 2>(), pb = b.accessor<double, 2>();
  auto po = out.accessor<double, 2>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += pa[i][k] * pb[k][j];
      po[i][j] = s;
    }
  return out;
}

DOCTEST_TEST_CASE("L1 matmul references match a triple loop") {
  struct Case {
    const char* id;
    int64_t M, K, N;
  };
  const std::vector<Case> cases = {
      {"L1_1_Square_matrix_multiplication_", 9, 9, 9},
      {"L1_2_Standard_matrix_multiplication_", 5, 13, 7},
      {"L1_8_Matmul_with_irregular_shapes_", 11, 3, 17},
  };
  for (const auto& c : cases) {
    DOCTEST_CAPTURE(c.id);
    auto A = randn({c.M, c.K}, 1), B = randn({c.K, c.N}, 2);
    std::map<std::string, int64_t> sizes = {{"M", c.M}, {"K", c.K}, {"N", c.N}};
    auto out = run_reference(c.id, {{"A", A}, {"B", B}}, sizes).at("out");
    DOCTEST_CHECK((out.scalar_type() == torch::kFloat32));
    DOCTEST_CHECK(max_abs_diff(out, loop_matmul(A, B)) < 1e-4);
  }
}

DOCTEST_TEST_CASE("L1_9 tall-skinny matmul matches a triple loop") {
  const int64_t M = 13, N = 4;
  auto A = randn({M, N}, 3), B = randn({N, M}, 4);
  auto out = run_reference("L1_9_Tall_skinny_matrix_multiplication_", {{"A", A}, {"B", B}},
                           {{"M", M}, {"N", N}})
                 .at("out");
  DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({M, M})));
  DOCTEST_CHECK(max_abs_diff(out, loop_matmul(A, B)) < 1e-5);
}

DOCTEST_TEST_CASE("L1_3 batched matmul matches a loop per batch entry") {
  const int64_t batch = 3, m = 4, k = 5, n = 6;
  auto A = randn({batch, m, k}, 5), B = randn({batch, k, n}, 6);
  auto out = run_reference("L1_3_Batched_matrix_multiplication", {{"A", A}, {"B", B}},
                           {{"batch_size", batch}, {"m", m}, {"k", k}, {"n", n}})
                 .at("out");
  DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({batch, m, n})));
  for (int64_t b = 0; b < batch; ++b)
    DOCTEST_CHECK(max_abs_diff(out[b], loop_matmul(A[b], B[b])) < 1e-5);
}

DOCTEST_TEST_CASE("L1_4 matrix-vector product matches a loop") {
  const int64_t M = 6, K = 37;
  auto A = randn({M, K}, 7), B = randn({K, 1}, 8);
  auto out = run_reference("L1_4_Matrix_vector_multiplication_", {{"A", A}, {"B", B}},
                           {{"M", M}, {"K", K}})
                 .at("out");
  DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({M, 1})));
  DOCTEST_CHECK(max_abs_diff(out, loop_matmul(A, B)) < 1e-5);
}

DOCTEST_TEST_CASE("L1_26 GELU matches the erf formula and published values") {
  auto x = randn({3, 50}, 9) * 3;
  auto out = run_reference("L1_26_GELU_", {{"x", x}}, {{"batch_size", 3}, {"dim", 50}}).at("out");
  auto xd = x.to(torch::kFloat64).contiguous();
  auto expect = torch::empty_like(xd);
  auto px = xd.accessor<double, 2>();
  auto pe = expect.accessor<double, 2>();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 50; ++j)
      pe[i][j] = 0.5 * px[i][j] * (1.0 + std::erf(px[i][j] / std::sqrt(2.0)));
  DOCTEST_CHECK(max_abs_diff(out, expect) < 1e-6);

  // GELU(1) = Phi(1) = 0.841344746..., GELU(-1) = -(1 - Phi(1)), GELU(0) = 0, GELU(3) = 3 Phi(3).
  auto v = torch::tensor({{1.0f, -1.0f, 0.0f, 3.0f}});
  auto g = run_reference("L1_26_GELU_", {{"x", v}}, {{"batch_size", 1}, {"dim", 4}}).at("out");
  DOCTEST_CHECK(g[0][0].item<double>() == doctest::Approx(0.8413447460685429).epsilon(1e-6));
  DOCTEST_CHECK(g[0][1].item<double>() == doctest::Approx(-0.15865525393145707).epsilon(1e-6));
  DOCTEST_CHECK(g[0][2].item<double>() == 0.0);
  DOCTEST_CHECK(g[0][3].item<double>() == doctest::Approx(3 * 0.9986501019683699).epsilon(1e-6));
}

DOCTEST_TEST_CASE("L1_36 RMSNorm matches a loop over features") {
  const int64_t B = 2, F = 5, D1 = 3, D2 = 4;
  const double eps = 1e-5;
  auto x = randn({B, F, D1, D2}, 10);
  auto out = run_reference("L1_36_RMSNorm_", {{"x", x}},
                           {{"batch_size", B}, {"features", F}, {"dim1", D1}, {"dim2", D2}},
                           {{"eps", eps}})
                 .at("out");
  auto xd = x.to(torch::kFloat64);
  auto px = xd.accessor<double, 4>();
  auto expect = torch::empty_like(xd);
  auto pe = expect.accessor<double, 4>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < D1; ++i)
      for (int64_t j = 0; j < D2; ++j) {
        double ss = 0;
        for (int64_t f = 0; f < F; ++f) ss += px[b][f][i][j] * px[b][f][i][j];
        const double r = std::sqrt(ss / F + eps);
        for (int64_t f = 0; f < F; ++f) pe[b][f][i][j] = px[b][f][i][j] / r;
      }
  DOCTEST_CHECK(max_abs_diff(out, expect) < 1e-5);
}

DOCTEST_TEST_CASE("L1_40 LayerNorm matches a two-pass loop with affine weight and bias") {
  const int64_t B = 3, F = 2, D1 = 3, D2 = 5;
  const double eps = 1e-5;
  auto x = randn({B, F, D1, D2}, 11) * 2 + 1;
  auto w = randn({F, D1, D2}, 12), bias = randn({F, D1, D2}, 13);
  auto out = run_reference("L1_40_LayerNorm", {{"x", x}, {"weight", w}, {"bias", bias}},
                           {{"batch_size", B}, {"features", F}, {"dim1", D1}, {"dim2", D2}},
                           {{"eps", eps}})
                 .at("out");
  const int64_t n = F * D1 * D2;
  auto xf = x.to(torch::kFloat64).reshape({B, n}).contiguous();
  auto wf = w.to(torch::kFloat64).reshape({n}).contiguous();
  auto bf = bias.to(torch::kFloat64).reshape({n}).contiguous();
  auto px = xf.accessor<double, 2>();
  auto pw = wf.accessor<double, 1>();
  auto pb = bf.accessor<double, 1>();
  auto expect = torch::empty({B, n}, torch::kFloat64);
  auto pe = expect.accessor<double, 2>();
  for (int64_t b = 0; b < B; ++b) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += px[b][i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (px[b][i] - mean) * (px[b][i] - mean);
    var /= n;  // biased
    for (int64_t i = 0; i < n; ++i)
      pe[b][i] = (px[b][i] - mean) / std::sqrt(var + eps) * pw[i] + pb[i];
  }
  DOCTEST_CHECK(max_abs_diff(out.reshape({B, n}), expect) < 1e-5);
}

DOCTEST_TEST_CASE("L1_42 max pooling (k 2, s 2, p 1, dilation 3) matches a brute-force loop") {
  const int64_t N = 2, C = 3;
  const int64_t k = 2, s = 2, p = 1, d = 3;
  for (auto hw : std::vector<std::pair<int64_t, int64_t>>{{8, 8}, {11, 6}, {5, 9}}) {
    const int64_t H = hw.first, W = hw.second;
    DOCTEST_CAPTURE(H);
    DOCTEST_CAPTURE(W);
    auto x = randn({N, C, H, W}, 14 + H);
    auto out = run_reference("L1_42_Max_Pooling_2D", {{"x", x}},
                             {{"batch_size", N}, {"channels", C}, {"height", H}, {"width", W}},
                             {{"kernel_size", k}, {"stride", s}, {"padding", p}, {"dilation", d}})
                   .at("out");
    const int64_t OH = (H + 2 * p - d * (k - 1) - 1) / s + 1,
                  OW = (W + 2 * p - d * (k - 1) - 1) / s + 1;
    DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({N, C, OH, OW})));
    auto px = x.accessor<float, 4>();
    auto po = out.accessor<float, 4>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            float m = -INFINITY;
            for (int64_t a = 0; a < k; ++a)
              for (int64_t b = 0; b < k; ++b) {
                const int64_t r = i * s - p + a * d, q = j * s - p + b * d;
                if (r >= 0 && r < H && q >= 0 && q < W) m = std::max(m, px[n][c][r][q]);
              }
            DOCTEST_CHECK(po[n][c][i][j] == m);
          }
  }
}

DOCTEST_TEST_CASE("L1_47 sum over dim 1 with keepdim matches a loop") {
  const int64_t B = 3, D1 = 7, D2 = 5;
  auto x = randn({B, D1, D2}, 20);
  auto out = run_reference("L1_47_Sum_reduction_over_a_dimension", {{"x", x}},
                           {{"batch_size", B}, {"dim1", D1}, {"dim2", D2}}, {{"dim", 1}})
                 .at("out");
  DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({B, 1, D2})));
  auto xd = x.to(torch::kFloat64);
  auto px = xd.accessor<double, 3>();
  auto expect = torch::zeros({B, 1, D2}, torch::kFloat64);
  auto pe = expect.accessor<double, 3>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < D1; ++i)
      for (int64_t j = 0; j < D2; ++j) pe[b][0][j] += px[b][i][j];
  DOCTEST_CHECK(max_abs_diff(out, expect) < 1e-5);
}

DOCTEST_TEST_CASE("L1_63 standard convolution matches a direct loop") {
  const int64_t N = 2, C = 3, OC = 4, K = 3, H = 7, W = 6;
  auto x = randn({N, C, H, W}, 21), w = randn({OC, C, K, K}, 22) * 0.2;
  auto out = run_reference("L1_63_conv_standard_2D__square_input__square_kernel",
                           {{"x", x}, {"weight", w}},
                           {{"batch_size", N},
                            {"in_channels", C},
                            {"out_channels", OC},
                            {"kernel_size", K},
                            {"height", H},
                            {"width", W}})
                 .at("out");
  const int64_t OH = H - K + 1, OW = W - K + 1;
  DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({N, OC, OH, OW})));
  auto px = x.accessor<float, 4>();
  auto pw = w.accessor<float, 4>();
  auto expect = torch::zeros({N, OC, OH, OW}, torch::kFloat64);
  auto pe = expect.accessor<double, 4>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t a = 0; a < K; ++a)
              for (int64_t b = 0; b < K; ++b) s += (double)px[n][c][i + a][j + b] * pw[o][c][a][b];
          pe[n][o][i][j] = s;
        }
  DOCTEST_CHECK(max_abs_diff(out, expect) < 1e-5);
}

DOCTEST_TEST_CASE("L1_82 depthwise convolution matches a direct loop") {
  const int64_t N = 2, C = 3, K = 3, H = 6, W = 8;
  auto x = randn({N, C, H, W}, 23), w = randn({C, 1, K, K}, 24) * 0.3;
  auto out =
      run_reference(
          "L1_82_conv_depthwise_2D_square_input_square_kernel", {{"x", x}, {"weight", w}},
          {{"batch_size", N}, {"in_channels", C}, {"kernel_size", K}, {"height", H}, {"width", W}})
          .at("out");
  const int64_t OH = H - K + 1, OW = W - K + 1;
  DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({N, C, OH, OW})));
  auto px = x.accessor<float, 4>();
  auto pw = w.accessor<float, 4>();
  auto expect = torch::zeros({N, C, OH, OW}, torch::kFloat64);
  auto pe = expect.accessor<double, 4>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = 0;
          for (int64_t a = 0; a < K; ++a)
            for (int64_t b = 0; b < K; ++b) s += (double)px[n][c][i + a][j + b] * pw[c][0][a][b];
          pe[n][c][i][j] = s;
        }
  DOCTEST_CHECK(max_abs_diff(out, expect) < 1e-5);
}

DOCTEST_TEST_CASE("L1_95 cross-entropy matches the log-sum-exp formula") {
  // Published-style hand value: logits (1, 2, 3), target 2 -> log(e + e^2 + e^3) - 3.
  {
    auto p = torch::tensor({{1.0f, 2.0f, 3.0f}});
    auto t = torch::tensor({2}, torch::kInt64);
    auto out = run_reference("L1_95_CrossEntropyLoss", {{"predictions", p}, {"targets", t}},
                             {{"batch_size", 1}, {"num_classes", 3}})
                   .at("out");
    DOCTEST_CHECK(out.dim() == 0);
    DOCTEST_CHECK(out.item<double>() == doctest::Approx(0.40760596444438013).epsilon(1e-6));
  }
  // Random rows with very different scales against a stable log-sum-exp loop in double.
  const int64_t N = 9, C = 10;
  auto scale = torch::exp(2.0 * randn({N, 1}, 25));
  auto p = randn({N, C}, 26) * scale;
  torch::manual_seed(27);
  auto t = torch::randint(0, C, {N}, torch::kInt64);
  auto out = run_reference("L1_95_CrossEntropyLoss", {{"predictions", p}, {"targets", t}},
                           {{"batch_size", N}, {"num_classes", C}})
                 .at("out");
  auto pd = p.to(torch::kFloat64);
  auto pp = pd.accessor<double, 2>();
  auto pt = t.accessor<int64_t, 1>();
  double total = 0;
  for (int64_t i = 0; i < N; ++i) {
    double m = -INFINITY;
    for (int64_t j = 0; j < C; ++j) m = std::max(m, pp[i][j]);
    double se = 0;
    for (int64_t j = 0; j < C; ++j) se += std::exp(pp[i][j] - m);
    total += m + std::log(se) - pp[i][pt[i]];
  }
  DOCTEST_CHECK(out.item<double>() == doctest::Approx(total / N).epsilon(1e-5));
}

DOCTEST_TEST_CASE("L1_95 custom input generator draws per-row scaled logits") {
  const kernrl::ReferenceEntry* entry = kernrl::find_reference("L1_95_CrossEntropyLoss");
  DOCTEST_REQUIRE(entry != nullptr);
  DOCTEST_REQUIRE(static_cast<bool>(entry->generate));
  TensorMap drawn;
  std::map<std::string, int64_t> sizes = {{"batch_size", 4096}, {"num_classes", 10}};
  std::map<std::string, double> scalars;
  kernrl::RefContext ctx{drawn, sizes, scalars, torch::Device(torch::kCPU)};
  torch::manual_seed(28);
  auto gen = entry->generate(ctx);
  DOCTEST_REQUIRE(gen.count("predictions") == 1);
  auto p = gen.at("predictions");
  DOCTEST_CHECK((p.sizes() == torch::IntArrayRef({4096, 10})));
  DOCTEST_CHECK((p.scalar_type() == torch::kFloat32));
  // Row standard deviations follow exp(2 z): their logs have a spread of about 2.
  auto log_row_std = torch::log(p.to(torch::kFloat64).std(1));
  const double spread = log_row_std.std().item<double>();
  DOCTEST_CHECK(spread > 1.5);
  DOCTEST_CHECK(spread < 2.5);
}

}  // namespace kernrl_checks_L1
