// Independent CPU checks of the Level-2 and Level-3 references: each reference is compared with
// brute-force loops in double precision at a tiny size (convolutions, linear layers, norms,
// pooling and attention written out element by element).
//
// Debian's libtorch is built with glog, whose CHECK macro collides with doctest's short names, so
// this file uses only the DOCTEST_-prefixed macros.
#include "references/reference.h"

#ifndef DOCTEST_CONFIG_NO_SHORT_MACRO_NAMES
#define DOCTEST_CONFIG_NO_SHORT_MACRO_NAMES
#endif
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace kernrl_checks_L2_L3 {

using kernrl::TensorMap;
using Sizes = std::map<std::string, int64_t>;
using Scalars = std::map<std::string, double>;

static TensorMap run_reference(const std::string& id, const TensorMap& tensors, const Sizes& sizes,
                               const Scalars& scalars = {}) {
  const kernrl::ReferenceEntry* entry = kernrl::find_reference(id);
  DOCTEST_REQUIRE_MESSAGE(entry != nullptr, "no reference registered for " << id);
  kernrl::RefContext ctx{tensors, sizes, scalars, torch::Device(torch::kCPU)};
  return entry->run(ctx);
}

static torch::Tensor randn(std::vector<int64_t> shape, uint64_t seed, double std = 1.0) {
  torch::manual_seed(seed);
  return torch::randn(shape, torch::kFloat32) * std;
}

static torch::Tensor uniform(std::vector<int64_t> shape, uint64_t seed, double lo, double hi) {
  torch::manual_seed(seed);
  return torch::rand(shape, torch::kFloat32) * (hi - lo) + lo;
}

// Max |a - b| over all elements, compared in double.
static double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  DOCTEST_REQUIRE((a.sizes() == b.sizes()));
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// A dense row-major double array with a shape, filled from / converted to tensors.
struct Arr {
  std::vector<int64_t> shape;
  std::vector<double> v;
  explicit Arr(std::vector<int64_t> s) : shape(std::move(s)) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    v.assign(n, 0.0);
  }
  explicit Arr(const torch::Tensor& t) : Arr(t.sizes().vec()) {
    auto c = t.to(torch::kFloat64).contiguous();
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), v.begin());
  }
  int64_t idx(std::initializer_list<int64_t> ix) const {
    int64_t i = 0, k = 0;
    for (auto x : ix) i = i * shape[k++] + x;
    return i;
  }
  double& operator()(std::initializer_list<int64_t> ix) { return v[idx(ix)]; }
  double operator()(std::initializer_list<int64_t> ix) const { return v[idx(ix)]; }
  torch::Tensor tensor() const {
    return torch::from_blob(const_cast<double*>(v.data()), shape, torch::kFloat64).clone();
  }
};

// y[m, n] = sum_k x[m, k] w[n, k] + b[n]
static Arr loop_linear(const Arr& x, const Arr& w, const Arr& b) {
  const int64_t M = x.shape[0], K = x.shape[1], N = w.shape[0];
  Arr y({M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = b({n});
      for (int64_t k = 0; k < K; ++k) s += x({m, k}) * w({n, k});
      y({m, n}) = s;
    }
  return y;
}

// Valid (no padding, stride 1) 2-D convolution with bias.
static Arr loop_conv2d(const Arr& x, const Arr& w, const Arr& b) {
  const int64_t B = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], K = w.shape[2], Ho = H - K + 1, Wo = W - K + 1;
  Arr y({B, O, Ho, Wo});
  for (int64_t n = 0; n < B; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          double s = b({o});
          for (int64_t c = 0; c < C; ++c)
            for (int64_t p = 0; p < K; ++p)
              for (int64_t q = 0; q < K; ++q) s += x({n, c, i + p, j + q}) * w({o, c, p, q});
          y({n, o, i, j}) = s;
        }
  return y;
}

// Non-overlapping 2-D pooling (window = stride = P, trailing rows/columns dropped).
static Arr loop_pool2d(const Arr& x, int64_t P, bool is_max) {
  const int64_t B = x.shape[0], C = x.shape[1], Ho = x.shape[2] / P, Wo = x.shape[3] / P;
  Arr y({B, C, Ho, Wo});
  for (int64_t n = 0; n < B; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          double r = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t p = 0; p < P; ++p)
            for (int64_t q = 0; q < P; ++q) {
              const double v = x({n, c, i * P + p, j * P + q});
              r = is_max ? std::max(r, v) : r + v;
            }
          y({n, c, i, j}) = is_max ? r : r / (P * P);
        }
  return y;
}

static double gelu(double v) {
  return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
}
static double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// LayerNorm of each row of a [M, C] array (biased variance) with affine weight and bias.
static Arr loop_layer_norm(const Arr& x, const Arr& w, const Arr& b, double eps) {
  const int64_t M = x.shape[0], C = x.shape[1];
  Arr y({M, C});
  for (int64_t m = 0; m < M; ++m) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < C; ++c) mean += x({m, c});
    mean /= C;
    for (int64_t c = 0; c < C; ++c) var += (x({m, c}) - mean) * (x({m, c}) - mean);
    var /= C;
    for (int64_t c = 0; c < C; ++c)
      y({m, c}) = (x({m, c}) - mean) / std::sqrt(var + eps) * w({c}) + b({c});
  }
  return y;
}

// Multi-head attention over one sequence: q, k, v are [T, E] (heads = nh groups of E / nh
// consecutive features); returns softmax(q_h k_h^T / sqrt(hd) [masked]) v_h, heads concatenated.
static Arr loop_attention(const Arr& q, const Arr& k, const Arr& v, int64_t nh, bool causal) {
  const int64_t T = q.shape[0], E = q.shape[1], hd = E / nh;
  Arr y({T, E});
  std::vector<double> p(T);
  for (int64_t h = 0; h < nh; ++h)
    for (int64_t i = 0; i < T; ++i) {
      const int64_t nk = causal ? i + 1 : T;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < nk; ++j) {
        double s = 0;
        for (int64_t d = 0; d < hd; ++d) s += q({i, h * hd + d}) * k({j, h * hd + d});
        p[j] = s / std::sqrt(static_cast<double>(hd));
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < nk; ++j) sum += (p[j] = std::exp(p[j] - mx));
      for (int64_t d = 0; d < hd; ++d) {
        double s = 0;
        for (int64_t j = 0; j < nk; ++j) s += p[j] / sum * v({j, h * hd + d});
        y({i, h * hd + d}) = s;
      }
    }
  return y;
}

// Rows [r0, r0 + n) of a [M, C] array, columns [c0, c0 + nc).
static Arr slice(const Arr& x, int64_t r0, int64_t n, int64_t c0, int64_t nc) {
  Arr y({n, nc});
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < nc; ++c) y({r, c}) = x({r0 + r, c0 + c});
  return y;
}

DOCTEST_TEST_CASE("L2 conv2d problems match brute-force loops") {
  const int64_t B = 2, C = 3, O = 5, H = 9, W = 8, K = 3, P = 2;
  auto x = randn({B, C, H, W}, 1), w = randn({O, C, K, K}, 2, 0.2), b = randn({O}, 3, 0.2);
  const Arr conv = loop_conv2d(Arr(x), Arr(w), Arr(b));
  const int64_t Ho = H - K + 1, Wo = W - K + 1;
  Sizes sizes = {{"batch_size", B}, {"in_channels", C}, {"out_channels", O},
                 {"height", H},     {"width", W},       {"kernel_size", K}};

  DOCTEST_SUBCASE("L2_46 subtract, tanh, subtract, average pool") {
    sizes["kernel_size_pool"] = P;
    auto out = run_reference("L2_46_Conv2d_Subtract_Tanh_Subtract_AvgPool",
                             {{"x", x}, {"weight", w}, {"bias", b}}, sizes,
                             {{"subtract1_value", 0.5}, {"subtract2_value", 0.2}})
                   .at("out");
    Arr z = conv;
    for (auto& e : z.v) e = std::tanh(e - 0.5) - 0.2;
    DOCTEST_CHECK(max_abs_diff(out, loop_pool2d(z, P, false).tensor()) < 1e-5);
  }
  DOCTEST_SUBCASE("L2_82 tanh, scale, channel bias, max pool") {
    sizes["pool_kernel_size"] = P;
    auto bias = randn({O, 1, 1}, 4);
    auto out = run_reference("L2_82_Conv2d_Tanh_Scaling_BiasAdd_Max",
                             {{"x", x}, {"conv_weight", w}, {"conv_bias", b}, {"bias", bias}},
                             sizes, {{"scaling_factor", 2.0}})
                   .at("out");
    Arr z = conv;
    const Arr bb(bias.reshape({O}));
    for (int64_t n = 0; n < B; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j)
            z({n, o, i, j}) = std::tanh(z({n, o, i, j})) * 2.0 + bb({o});
    DOCTEST_CHECK(max_abs_diff(out, loop_pool2d(z, P, true).tensor()) < 1e-5);
  }
  DOCTEST_SUBCASE("L2_52 tanh(softplus) activation and L2_73 batch norm in eval mode") {
    auto gamma = uniform({O}, 5, 0.5, 1.5), beta = randn({O}, 6, 0.1);
    auto rm = randn({O}, 7, 0.1), rv = uniform({O}, 8, 0.5, 1.5);
    TensorMap t = {
        {"x", x},          {"conv_weight", w},      {"conv_bias", b},      {"bn_weight", gamma},
        {"bn_bias", beta}, {"bn_running_mean", rm}, {"bn_running_var", rv}};
    const double eps = 1e-5;
    const Arr g(gamma), be(beta), m(rm), var(rv);
    auto bn = [&](double v, int64_t o) {
      return (v - m({o})) / std::sqrt(var({o}) + eps) * g({o}) + be({o});
    };
    auto out52 =
        run_reference("L2_52_Conv2d_Activation_BatchNorm", t, sizes, {{"eps", eps}}).at("out");
    auto out73 = run_reference("L2_73_Conv2d_BatchNorm_Scaling", t, sizes,
                               {{"eps", eps}, {"scaling_factor", 2.0}})
                     .at("out");
    Arr e52 = conv, e73 = conv;
    for (int64_t n = 0; n < B; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j) {
            const double v = conv({n, o, i, j});
            const double sp = v > 20 ? v : std::log1p(std::exp(v));
            e52({n, o, i, j}) = bn(std::tanh(sp) * v, o);
            e73({n, o, i, j}) = bn(v, o) * 2.0;
          }
    DOCTEST_CHECK(max_abs_diff(out52, e52.tensor()) < 1e-5);
    DOCTEST_CHECK(max_abs_diff(out73, e73.tensor()) < 1e-5);
  }
  DOCTEST_SUBCASE("L2_17 instance norm over each (image, channel) plane, divided") {
    auto out =
        run_reference("L2_17_Conv2d_InstanceNorm_Divide", {{"x", x}, {"weight", w}, {"bias", b}},
                      sizes, {{"eps", 1e-5}, {"divide_by", 2.0}})
            .at("out");
    Arr e = conv;
    for (int64_t n = 0; n < B; ++n)
      for (int64_t o = 0; o < O; ++o) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j) mean += conv({n, o, i, j});
        mean /= Ho * Wo;
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j) var += std::pow(conv({n, o, i, j}) - mean, 2);
        var /= Ho * Wo;
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j)
            e({n, o, i, j}) = (conv({n, o, i, j}) - mean) / std::sqrt(var + 1e-5) / 2.0;
      }
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-5);
  }
}

DOCTEST_TEST_CASE("L2_85 group norm, scale, max pool and clamp match a loop") {
  const int64_t B = 2, C = 3, O = 6, H = 10, W = 9, K = 3, G = 3, P = 2;
  auto x = randn({B, C, H, W}, 11), w = randn({O, C, K, K}, 12, 0.2), b = randn({O}, 13, 0.2);
  auto gw = uniform({O}, 14, 0.5, 1.5), gb = randn({O}, 15, 0.1),
       sc = uniform({O, 1, 1}, 16, -1.0, 1.5);
  auto out = run_reference("L2_85_Conv2d_GroupNorm_Scale_MaxPool_Clamp",
                           {{"x", x},
                            {"conv_weight", w},
                            {"conv_bias", b},
                            {"group_norm_weight", gw},
                            {"group_norm_bias", gb},
                            {"scale", sc}},
                           {{"batch_size", B},
                            {"in_channels", C},
                            {"out_channels", O},
                            {"height", H},
                            {"width", W},
                            {"kernel_size", K},
                            {"num_groups", G},
                            {"maxpool_kernel_size", P}},
                           {{"eps", 1e-5}, {"clamp_min", 0.0}, {"clamp_max", 1.0}})
                 .at("out");
  Arr z = loop_conv2d(Arr(x), Arr(w), Arr(b));
  const Arr g(gw), be(gb), s(sc.reshape({O}));
  const int64_t Ho = H - K + 1, Wo = W - K + 1, gs = O / G;
  for (int64_t n = 0; n < B; ++n)
    for (int64_t grp = 0; grp < G; ++grp) {
      double mean = 0, var = 0;
      const double cnt = static_cast<double>(gs * Ho * Wo);
      for (int64_t o = grp * gs; o < (grp + 1) * gs; ++o)
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j) mean += z({n, o, i, j});
      mean /= cnt;
      for (int64_t o = grp * gs; o < (grp + 1) * gs; ++o)
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j) var += std::pow(z({n, o, i, j}) - mean, 2);
      var /= cnt;
      for (int64_t o = grp * gs; o < (grp + 1) * gs; ++o)
        for (int64_t i = 0; i < Ho; ++i)
          for (int64_t j = 0; j < Wo; ++j)
            z({n, o, i, j}) =
                ((z({n, o, i, j}) - mean) / std::sqrt(var + 1e-5) * g({o}) + be({o})) * s({o});
    }
  Arr e = loop_pool2d(z, P, true);
  for (auto& v : e.v) v = std::min(std::max(v, 0.0), 1.0);
  DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-5);
}

DOCTEST_TEST_CASE("L2_6 conv3d, channel softmax and two max pools match a loop") {
  const int64_t B = 2, C = 2, O = 4, D = 7, H = 10, W = 11, K = 2, P = 2;
  auto x = randn({B, C, D, H, W}, 21), w = randn({O, C, K, K, K}, 22, 0.5), b = randn({O}, 23, 0.3);
  auto out =
      run_reference("L2_6_Conv3d_Softmax_MaxPool_MaxPool", {{"x", x}, {"weight", w}, {"bias", b}},
                    {{"batch_size", B},
                     {"in_channels", C},
                     {"out_channels", O},
                     {"depth", D},
                     {"height", H},
                     {"width", W},
                     {"kernel_size", K},
                     {"pool_kernel_size", P}})
          .at("out");
  const Arr X(x), Wt(w), Bs(b);
  const int64_t Dc = D - K + 1, Hc = H - K + 1, Wc = W - K + 1;
  Arr sm({B, O, Dc, Hc, Wc});
  std::vector<double> y(O);
  for (int64_t n = 0; n < B; ++n)
    for (int64_t d = 0; d < Dc; ++d)
      for (int64_t i = 0; i < Hc; ++i)
        for (int64_t j = 0; j < Wc; ++j) {
          double mx = -1e300, sum = 0;
          for (int64_t o = 0; o < O; ++o) {
            double s = Bs({o});
            for (int64_t c = 0; c < C; ++c)
              for (int64_t a = 0; a < K; ++a)
                for (int64_t p = 0; p < K; ++p)
                  for (int64_t q = 0; q < K; ++q)
                    s += X({n, c, d + a, i + p, j + q}) * Wt({o, c, a, p, q});
            y[o] = s;
            mx = std::max(mx, s);
          }
          for (int64_t o = 0; o < O; ++o) sum += std::exp(y[o] - mx);
          for (int64_t o = 0; o < O; ++o) sm({n, o, d, i, j}) = std::exp(y[o] - mx) / sum;
        }
  // Pool twice with window/stride P, exactly as two nn.MaxPool3d(P) layers.
  auto pool3 = [&](const Arr& a) {
    const int64_t d2 = a.shape[2] / P, h2 = a.shape[3] / P, w2 = a.shape[4] / P;
    Arr r({B, O, d2, h2, w2});
    for (int64_t n = 0; n < B; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t d = 0; d < d2; ++d)
          for (int64_t i = 0; i < h2; ++i)
            for (int64_t j = 0; j < w2; ++j) {
              double m = -1e300;
              for (int64_t a2 = 0; a2 < P; ++a2)
                for (int64_t p = 0; p < P; ++p)
                  for (int64_t q = 0; q < P; ++q)
                    m = std::max(m, a({n, o, d * P + a2, i * P + p, j * P + q}));
              r({n, o, d, i, j}) = m;
            }
    return r;
  };
  DOCTEST_CHECK(max_abs_diff(out, pool3(pool3(sm)).tensor()) < 1e-6);
}

DOCTEST_TEST_CASE("L2 linear problems match brute-force loops") {
  const int64_t M = 5, K = 13, N = 12;
  auto x = randn({M, K}, 31), w = randn({N, K}, 32, 0.3), b = randn({N}, 33, 0.3);
  const Arr y = loop_linear(Arr(x), Arr(w), Arr(b));
  TensorMap t = {{"x", x}, {"weight", w}, {"bias", b}};
  Sizes sizes = {{"batch_size", M}, {"in_features", K}, {"out_features", N}};

  DOCTEST_SUBCASE("L2_40 scaling and residual add") {
    auto out =
        run_reference("L2_40_Matmul_Scaling_ResidualAdd", t, sizes, {{"scaling_factor", 0.5}})
            .at("out");
    Arr e = y;
    for (auto& v : e.v) v = v * 0.5 + v;
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-5);
  }
  DOCTEST_SUBCASE("L2_59 swish and scaling") {
    auto out =
        run_reference("L2_59_Matmul_Swish_Scaling", t, sizes, {{"scaling_factor", 2.0}}).at("out");
    Arr e = y;
    for (auto& v : e.v) v = v * sigmoid(v) * 2.0;
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-5);
  }
  DOCTEST_SUBCASE("L2_86 divide and GELU") {
    auto out = run_reference("L2_86_Matmul_Divide_GELU", t,
                             {{"batch_size", M}, {"input_size", K}, {"output_size", N}},
                             {{"divisor", 10.0}})
                   .at("out");
    Arr e = y;
    for (auto& v : e.v) v = gelu(v / 10.0);
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-6);
  }
  DOCTEST_SUBCASE("L2_99 GELU and row softmax") {
    auto out = run_reference("L2_99_Matmul_GELU_Softmax", t, sizes).at("out");
    Arr e = y;
    for (int64_t m = 0; m < M; ++m) {
      double sum = 0;
      for (int64_t n = 0; n < N; ++n) sum += std::exp(gelu(y({m, n})));
      for (int64_t n = 0; n < N; ++n) e({m, n}) = std::exp(gelu(y({m, n}))) / sum;
    }
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-6);
  }
  DOCTEST_SUBCASE("L2_55 max pool over features, sum, scale") {
    for (int64_t k : {2, 5}) {
      sizes["kernel_size"] = k;
      auto out = run_reference("L2_55_Matmul_MaxPool_Sum_Scale", t, sizes, {{"scale_factor", 0.5}})
                     .at("out");
      Arr e({M});
      for (int64_t m = 0; m < M; ++m) {
        double s = 0;
        for (int64_t p = 0; p < N / k; ++p) {
          double mx = -1e300;
          for (int64_t q = 0; q < k; ++q) mx = std::max(mx, y({m, p * k + q}));
          s += mx;
        }
        e({m}) = s * 0.5;
      }
      DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-5);
    }
  }
  DOCTEST_SUBCASE("L2_98 average pool over features, GELU, scale, row max") {
    sizes["pool_kernel_size"] = 5;  // 12 features -> 2 windows, 2 features dropped
    auto out =
        run_reference("L2_98_Matmul_AvgPool_GELU_Scale_Max", t, sizes, {{"scale_factor", 2.0}})
            .at("out");
    Arr e({M});
    for (int64_t m = 0; m < M; ++m) {
      double best = -1e300;
      for (int64_t p = 0; p < N / 5; ++p) {
        double s = 0;
        for (int64_t q = 0; q < 5; ++q) s += y({m, p * 5 + q});
        best = std::max(best, gelu(s / 5) * 2.0);
      }
      e({m}) = best;
    }
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-5);
  }
  DOCTEST_SUBCASE("L2_66 softmax over the batch of the row means") {
    auto out = run_reference("L2_66_Matmul_Dropout_Mean_Softmax", t, sizes, {{"dropout_p", 0.2}})
                   .at("out");
    std::vector<double> mean(M);
    double sum = 0;
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) mean[m] += y({m, n}) / N;
      sum += std::exp(mean[m]);
    }
    Arr e({M, 1});
    for (int64_t m = 0; m < M; ++m) e({m, 0}) = std::exp(mean[m]) / sum;
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-7);
    DOCTEST_CHECK(out.sum().item<double>() == doctest::Approx(1.0).epsilon(1e-6));
  }
  DOCTEST_SUBCASE("L2_37 swish, bias and group norm") {
    const int64_t G = 4;
    auto bias = randn({N}, 34, 0.5), gw = uniform({N}, 35, 0.5, 1.5), gb = randn({N}, 36, 0.1);
    auto out = run_reference(
                   "L2_37_Matmul_Swish_Sum_GroupNorm",
                   {{"x", x},
                    {"matmul_weight", w},
                    {"matmul_bias", b},
                    {"bias", bias},
                    {"group_norm_weight", gw},
                    {"group_norm_bias", gb}},
                   {{"batch_size", M}, {"in_features", K}, {"out_features", N}, {"num_groups", G}},
                   {{"eps", 1e-5}})
                   .at("out");
    const Arr bb(bias), g(gw), be(gb);
    Arr z = y, e({M, N});
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) z({m, n}) = sigmoid(y({m, n})) * y({m, n}) + bb({n});
    const int64_t gs = N / G;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t grp = 0; grp < G; ++grp) {
        double mean = 0, var = 0;
        for (int64_t n = grp * gs; n < (grp + 1) * gs; ++n) mean += z({m, n}) / gs;
        for (int64_t n = grp * gs; n < (grp + 1) * gs; ++n)
          var += std::pow(z({m, n}) - mean, 2) / gs;
        for (int64_t n = grp * gs; n < (grp + 1) * gs; ++n)
          e({m, n}) = (z({m, n}) - mean) / std::sqrt(var + 1e-5) * g({n}) + be({n});
      }
    DOCTEST_CHECK(max_abs_diff(out, e.tensor()) < 1e-5);
  }
}

DOCTEST_TEST_CASE("L3_43 causal self-attention matches a per-query loop") {
  const int64_t B = 2, T = 7, C = 12, nh = 3;
  auto x = randn({B, T, C}, 41);
  auto wa = randn({3 * C, C}, 42, 0.3), ba = randn({3 * C}, 43, 0.1);
  auto wp = randn({C, C}, 44, 0.3), bp = randn({C}, 45, 0.1);
  auto out = run_reference("L3_43_MinGPTCausalAttention",
                           {{"x", x},
                            {"c_attn_weight", wa},
                            {"c_attn_bias", ba},
                            {"c_proj_weight", wp},
                            {"c_proj_bias", bp}},
                           {{"batch_size", B}, {"seq_len", T}, {"n_embd", C}, {"n_head", nh}})
                 .at("out");
  for (int64_t b = 0; b < B; ++b) {
    const Arr qkv = loop_linear(Arr(x[b]), Arr(wa), Arr(ba));
    const Arr y = loop_attention(slice(qkv, 0, T, 0, C), slice(qkv, 0, T, C, C),
                                 slice(qkv, 0, T, 2 * C, C), nh, true);
    DOCTEST_CHECK(max_abs_diff(out[b], loop_linear(y, Arr(wp), Arr(bp)).tensor()) < 1e-5);
  }
}

DOCTEST_TEST_CASE("L3_44 minGPT block matches loops (LayerNorm, causal attention, NewGELU MLP)") {
  const int64_t B = 2, T = 6, C = 8, nh = 2;
  const double eps = 1e-5;
  TensorMap t = {{"x", randn({B, T, C}, 51)},
                 {"ln_1_weight", uniform({C}, 52, 0.5, 1.5)},
                 {"ln_1_bias", randn({C}, 53, 0.1)},
                 {"attn_c_attn_weight", randn({3 * C, C}, 54, 0.3)},
                 {"attn_c_attn_bias", randn({3 * C}, 55, 0.1)},
                 {"attn_c_proj_weight", randn({C, C}, 56, 0.3)},
                 {"attn_c_proj_bias", randn({C}, 57, 0.1)},
                 {"ln_2_weight", uniform({C}, 58, 0.5, 1.5)},
                 {"ln_2_bias", randn({C}, 59, 0.1)},
                 {"mlp_c_fc_weight", randn({4 * C, C}, 60, 0.3)},
                 {"mlp_c_fc_bias", randn({4 * C}, 61, 0.1)},
                 {"mlp_c_proj_weight", randn({C, 4 * C}, 62, 0.2)},
                 {"mlp_c_proj_bias", randn({C}, 63, 0.1)}};
  auto out = run_reference("L3_44_MiniGPTBlock", t,
                           {{"batch_size", B}, {"seq_len", T}, {"n_embd", C}, {"n_head", nh}},
                           {{"eps", eps}})
                 .at("out");
  auto P = [&](const char* n) { return Arr(t.at(n)); };
  for (int64_t b = 0; b < B; ++b) {
    const Arr x(t.at("x")[b]);
    const Arr h = loop_layer_norm(x, P("ln_1_weight"), P("ln_1_bias"), eps);
    const Arr qkv = loop_linear(h, P("attn_c_attn_weight"), P("attn_c_attn_bias"));
    const Arr y = loop_attention(slice(qkv, 0, T, 0, C), slice(qkv, 0, T, C, C),
                                 slice(qkv, 0, T, 2 * C, C), nh, true);
    const Arr a = loop_linear(y, P("attn_c_proj_weight"), P("attn_c_proj_bias"));
    Arr x1 = x;
    for (size_t i = 0; i < x1.v.size(); ++i) x1.v[i] += a.v[i];
    Arr f = loop_linear(loop_layer_norm(x1, P("ln_2_weight"), P("ln_2_bias"), eps),
                        P("mlp_c_fc_weight"), P("mlp_c_fc_bias"));
    for (auto& u : f.v)
      u = 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
    const Arr m = loop_linear(f, P("mlp_c_proj_weight"), P("mlp_c_proj_bias"));
    Arr e = x1;
    for (size_t i = 0; i < e.v.size(); ++i) e.v[i] += m.v[i];
    DOCTEST_CHECK(max_abs_diff(out[b], e.tensor()) < 1e-5);
  }
}

DOCTEST_TEST_CASE("L3_31 vision attention matches a per-pixel loop (MHA, residual, LayerNorm)") {
  const int64_t B = 2, E = 8, nh = 2, H = 3, W = 4, S = H * W;
  const double eps = 1e-5;
  TensorMap t = {{"x", randn({B, E, H, W}, 71)},
                 {"in_proj_weight", randn({3 * E, E}, 72, 0.4)},
                 {"in_proj_bias", randn({3 * E}, 73, 0.1)},
                 {"out_proj_weight", randn({E, E}, 74, 0.4)},
                 {"out_proj_bias", randn({E}, 75, 0.1)},
                 {"norm_weight", uniform({E}, 76, 0.5, 1.5)},
                 {"norm_bias", randn({E}, 77, 0.1)}};
  auto out = run_reference("L3_31_VisionAttention", t,
                           {{"batch_size", B},
                            {"embed_dim", E},
                            {"num_heads", nh},
                            {"image_height", H},
                            {"image_width", W}},
                           {{"eps", eps}})
                 .at("out");
  DOCTEST_REQUIRE((out.sizes() == torch::IntArrayRef({B, E, H, W})));
  for (int64_t b = 0; b < B; ++b) {
    const Arr xb(t.at("x")[b].reshape({E, S}));
    Arr tok({S, E});  // token s = pixel s in row-major order
    for (int64_t s = 0; s < S; ++s)
      for (int64_t e = 0; e < E; ++e) tok({s, e}) = xb({e, s});
    const Arr qkv = loop_linear(tok, Arr(t.at("in_proj_weight")), Arr(t.at("in_proj_bias")));
    const Arr y = loop_attention(slice(qkv, 0, S, 0, E), slice(qkv, 0, S, E, E),
                                 slice(qkv, 0, S, 2 * E, E), nh, false);
    Arr z = loop_linear(y, Arr(t.at("out_proj_weight")), Arr(t.at("out_proj_bias")));
    for (size_t i = 0; i < z.v.size(); ++i) z.v[i] += tok.v[i];
    const Arr n = loop_layer_norm(z, Arr(t.at("norm_weight")), Arr(t.at("norm_bias")), eps);
    Arr e({E, H, W});
    for (int64_t s = 0; s < S; ++s)
      for (int64_t c = 0; c < E; ++c) e({c, s / W, s % W}) = n({s, c});
    DOCTEST_CHECK(max_abs_diff(out[b], e.tensor()) < 1e-5);
  }
}

}  // namespace kernrl_checks_L2_L3
