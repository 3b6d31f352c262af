// Independent CPU checks of the Level-4 references: E4M3 rounding against the decoded bit patterns,
// INT4 unpacking against hand-packed codes, MoE routing and combination against per-token loops,
// the chunked delta-rule recurrences against step-by-step loops in double precision, and the
// attention layers (rotate-half RoPE, head mapping, causal softmax) against loops in double.
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
#include <map>
#include <string>
#include <vector>

namespace kernrl_checks_L4 {

using kernrl::TensorMap;
using Sizes = std::map<std::string, int64_t>;
using Scalars = std::map<std::string, double>;

static const kernrl::ReferenceEntry& entry(const std::string& id) {
  const kernrl::ReferenceEntry* e = kernrl::find_reference(id);
  DOCTEST_REQUIRE_MESSAGE(e != nullptr, "no reference registered for " << id);
  return *e;
}

static TensorMap run_reference(const std::string& id, const TensorMap& tensors, const Sizes& sizes,
                               const Scalars& scalars = {}) {
  kernrl::RefContext ctx{tensors, sizes, scalars, torch::Device(torch::kCPU)};
  torch::NoGradGuard no_grad;
  return entry(id).run(ctx);
}

// allclose(atol, rtol) and relative L2 error, in double.
static void expect_close(const torch::Tensor& got, const torch::Tensor& want, double atol,
                         double rtol, double rel_l2) {
  DOCTEST_REQUIRE((got.sizes() == want.sizes()));
  auto g = got.to(torch::kFloat64), w = want.to(torch::kFloat64);
  auto err = (g - w).abs();
  const double worst = (err / (atol + rtol * w.abs())).max().item<double>();
  const double l2 = ((g - w).norm() / w.norm()).item<double>();
  DOCTEST_CHECK_MESSAGE(worst <= 1.0, "worst error / tolerance = " << worst);
  DOCTEST_CHECK_MESSAGE(l2 <= rel_l2, "relative L2 error = " << l2);
}

static double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}
static double silu(double v) {
  return v * sigmoid(v);
}

// ------------------------------------------------------------------------------------------------
// L4_4_FP8_Matmul: E4M3 rounding against the 256 bit patterns.

// Value of an E4M3FN code (sign bit, 4 exponent bits with bias 7, 3 mantissa bits; 0x7f is NaN).
static double e4m3_decode(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  const double mag = e == 0 ? m * std::ldexp(1.0, -9) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
  return (code & 0x80) ? -mag : mag;
}

// Round to the nearest finite E4M3 value, ties to the even code (mantissa LSB 0), saturating.
static double e4m3_round(double v) {
  const double a = std::fabs(v);
  int best = 0;
  for (int code = 1; code < 0x7f; code++) {
    const double d = std::fabs(e4m3_decode(code) - a), db = std::fabs(e4m3_decode(best) - a);
    if (d < db || (d == db && (code & 1) == 0)) best = code;
  }
  return v < 0 ? -e4m3_decode(best) : e4m3_decode(best);
}

DOCTEST_TEST_CASE("L4_4_FP8_Matmul: E4M3 rounding matches the decoded bit patterns") {
  // Published anchors of the E4M3FN format.
  DOCTEST_CHECK(e4m3_decode(0x7e) == 448.0);
  DOCTEST_CHECK(e4m3_decode(0x01) == std::ldexp(1.0, -9));
  DOCTEST_CHECK(e4m3_decode(0x08) == std::ldexp(1.0, -6));
  DOCTEST_CHECK(e4m3_decode(0x38) == 1.0);
  // Inputs: every positive code value, every midpoint between neighbours (ties), values one fp16
  // ulp either side of each midpoint, and their negatives; 448 sets amax so the x scale is 1.
  std::vector<double> vals;
  for (int code = 0; code < 0x7f; code++) {
    const double lo = e4m3_decode(code);
    vals.push_back(lo);
    if (code + 1 < 0x7f) {
      const double mid = 0.5 * (lo + e4m3_decode(code + 1));
      const double ulp = std::ldexp(1.0, std::max(-24, std::ilogb(mid) - 10));
      vals.push_back(mid);
      vals.push_back(mid - ulp);
      vals.push_back(mid + ulp);
    }
  }
  const size_t n = vals.size();
  for (size_t i = 0; i < n; i++) vals.push_back(-vals[i]);
  const int64_t k = 16;  // x is [1, rows, 16]; the weight is the 16x16 identity
  while (vals.size() % k) vals.push_back(0.0);
  auto xd = torch::tensor(vals, torch::kFloat64);
  auto x = xd.to(torch::kFloat16);
  DOCTEST_REQUIRE(torch::equal(x.to(torch::kFloat64), xd));  // every test value is exact in fp16
  x = x.view({1, -1, k});
  // weight = I: amax 1, scale 448, quantized 448 * I exactly; out = xq * 448 / 448 = xq.
  auto w = torch::eye(k, torch::kFloat32);
  auto out =
      run_reference(
          "L4_4_FP8_Matmul", {{"x", x}, {"weight", w}},
          {{"batch_size", 1}, {"seq_len", x.size(1)}, {"in_features", k}, {"out_features", k}})
          .at("out");
  std::vector<double> want;
  for (double v : vals) want.push_back(e4m3_round(v));
  auto expected = torch::tensor(want, torch::kFloat64).view({1, -1, k});
  DOCTEST_CHECK(torch::equal(out.to(torch::kFloat64), expected));
}

// v rounded to float16, as a double.
static double half_round(double v) {
  return torch::tensor({(float)v}).to(torch::kFloat16).item<double>();
}

DOCTEST_TEST_CASE(
    "L4_4_FP8_Matmul: per-tensor scaling (float16 on the x side) and dequantization") {
  torch::manual_seed(41);
  const int64_t m = 5, kk = 24, nn = 7;
  auto x = (torch::randn({1, m, kk}) * 3).to(torch::kFloat16);
  auto w = torch::randn({kk, nn}) * 0.1;  // float32 [in_features, out_features]
  auto out =
      run_reference("L4_4_FP8_Matmul", {{"x", x}, {"weight", w}},
                    {{"batch_size", 1}, {"seq_len", m}, {"in_features", kk}, {"out_features", nn}})
          .at("out");
  auto xd = x.to(torch::kFloat64).view({m, kk}), wd = w.to(torch::kFloat64);
  // x side: scale, products and inverse each rounded to float16; weight side in float32.
  const double sx = half_round(448.0 / xd.abs().max().item<double>());
  const float sw = 448.0f / (float)wd.abs().max().item<double>();
  const double inv_x = half_round(1.0 / sx), inv_w = (double)(1.0f / sw);
  auto want = torch::zeros({m, nn}, torch::kFloat64);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < nn; j++) {
      double s = 0;
      for (int64_t q = 0; q < kk; q++)
        s += e4m3_round(
                 std::min(448.0, std::max(-448.0, half_round(xd[i][q].item<double>() * sx)))) *
             e4m3_round((float)(w[q][j].item<float>() * sw));
      want[i][j] = s * inv_x * inv_w;
    }
  expect_close(out.view({m, nn}), want, 2e-3, 2e-3, 1e-3);
}

// ------------------------------------------------------------------------------------------------
// L4_6_INT4_Quantized_GEMM: hand-packed codes.

DOCTEST_TEST_CASE("L4_6_INT4_Quantized_GEMM: unpacking matches hand-packed nibbles") {
  const int64_t n = 3, k = 256, group = 128;
  std::vector<int> codes(n * k);
  for (int64_t r = 0; r < n; r++)
    for (int64_t c = 0; c < k; c++) codes[r * k + c] = int((r * 7 + c * 3 + c / 5) % 16);
  auto packed = torch::zeros({n, k / 2}, torch::kUInt8);
  for (int64_t r = 0; r < n; r++)
    for (int64_t j = 0; j < k / 2; j++)
      packed[r][j] = codes[r * k + 2 * j] | (codes[r * k + 2 * j + 1] << 4);
  // Powers of two keep every W entry exact in fp16.
  auto scales = torch::tensor({0.5, 0.25, 1.0, 2.0, 0.125, 0.0625}, torch::kFloat64)
                    .view({n, k / group})
                    .to(torch::kFloat16);
  // x = identity, so out[0, m, r] = W[r, m].
  auto x = torch::eye(k, torch::kFloat16).unsqueeze(0);
  auto out =
      run_reference("L4_6_INT4_Quantized_GEMM", {{"x", x}, {"qweight", packed}, {"scales", scales}},
                    {{"batch_size", 1},
                     {"seq_len", k},
                     {"in_features", k},
                     {"out_features", n},
                     {"group_size", group}})
          .at("out");
  auto want = torch::zeros({1, k, n}, torch::kFloat64);
  for (int64_t r = 0; r < n; r++)
    for (int64_t c = 0; c < k; c++)
      want[0][c][r] = scales[r][c / group].item<double>() * (codes[r * k + c] - 8);
  DOCTEST_CHECK(torch::equal(out.to(torch::kFloat64), want));
  // A spot check of the byte layout: byte 0 of row 0 holds column 0 (low) and column 1 (high).
  DOCTEST_CHECK(packed[0][0].item<int>() == (codes[0] | (codes[1] << 4)));
}

DOCTEST_TEST_CASE("L4_6_INT4_Quantized_GEMM: each dequantized weight is rounded to float16") {
  const int64_t n = 2, k = 128, group = 128;
  auto packed = torch::full({n, k / 2}, 0xF7, torch::kUInt8);  // codes 7 (low) and 15 (high)
  auto scales = torch::tensor({0.1, 0.0377}, torch::kFloat64).view({n, 1}).to(torch::kFloat16);
  auto x = torch::eye(k, torch::kFloat16).unsqueeze(0);
  auto out =
      run_reference("L4_6_INT4_Quantized_GEMM", {{"x", x}, {"qweight", packed}, {"scales", scales}},
                    {{"batch_size", 1},
                     {"seq_len", k},
                     {"in_features", k},
                     {"out_features", n},
                     {"group_size", group}})
          .at("out");
  for (int64_t r = 0; r < n; r++) {
    const float s = scales[r][0].item<float>();
    for (int q : {7, 15}) {
      // s * (q - 8) is exact in float; the weight is that rounded to fp16.
      const double want = torch::tensor({s * float(q - 8)}).to(torch::kFloat16).item<double>();
      DOCTEST_CHECK(out[0][q == 7 ? 0 : 1][r].item<double>() == want);
    }
  }
  DOCTEST_CHECK(
      torch::tensor({scales[0][0].item<float>() * 7.0f}).to(torch::kFloat16).item<double>() !=
      scales[0][0].item<double>() * 7.0);  // the rounding matters for these values
}

// ------------------------------------------------------------------------------------------------
// MoE problems: per-token loops in double.

// SwiGLU expert on one token in double: down @ (silu(gate @ v) * (up @ v)); weights [I, H] / [H,
// I].
static std::vector<double> expert_double(const torch::Tensor& v, const torch::Tensor& gate,
                                         const torch::Tensor& up, const torch::Tensor& down) {
  auto vd = v.to(torch::kFloat64), g = gate.to(torch::kFloat64), u = up.to(torch::kFloat64),
       d = down.to(torch::kFloat64);
  const int64_t inter = g.size(0), hidden = g.size(1);
  auto pv = vd.accessor<double, 1>();
  auto pg = g.accessor<double, 2>(), pu = u.accessor<double, 2>(), pd = d.accessor<double, 2>();
  std::vector<double> h(inter), y(hidden, 0.0);
  for (int64_t i = 0; i < inter; i++) {
    double a = 0, b = 0;
    for (int64_t c = 0; c < hidden; c++) {
      a += pg[i][c] * pv[c];
      b += pu[i][c] * pv[c];
    }
    h[i] = silu(a) * b;
  }
  for (int64_t c = 0; c < hidden; c++)
    for (int64_t i = 0; i < inter; i++) y[c] += pd[c][i] * h[i];
  return y;
}

DOCTEST_TEST_CASE("L4_5_MoE_GatedGEMM: grouped experts match a per-token loop") {
  torch::manual_seed(51);
  const int64_t t = 7, hidden = 12, inter = 10, experts = 4, top_k = 2;
  auto x = (torch::randn({1, t, hidden}) * 3).to(torch::kBFloat16);
  auto w1 = (torch::randn({experts, inter, hidden}) * 0.3).to(torch::kBFloat16);
  auto w3 = (torch::randn({experts, inter, hidden}) * 0.3).to(torch::kBFloat16);
  auto w2 = (torch::randn({experts, hidden, inter}) * 0.3).to(torch::kBFloat16);
  auto idx =
      torch::tensor({0, 1, 2, 3, 3, 0, 1, 3, 2, 1, 0, 2, 3, 1}, torch::kInt64).view({1, t, top_k});
  auto wts = torch::rand({1, t, top_k});
  wts = wts / wts.sum(-1, true);
  Sizes sizes{{"batch_size", 1},        {"seq_len", t},
              {"hidden_size", hidden},  {"intermediate_size", inter},
              {"num_experts", experts}, {"top_k", top_k}};
  auto out = run_reference("L4_5_MoE_GatedGEMM",
                           {{"x", x},
                            {"expert_indices", idx},
                            {"expert_weights", wts},
                            {"w1", w1},
                            {"w2", w2},
                            {"w3", w3}},
                           sizes)
                 .at("out");
  auto want = torch::zeros({1, t, hidden}, torch::kFloat64);
  for (int64_t i = 0; i < t; i++)
    for (int64_t j = 0; j < top_k; j++) {
      const int64_t e = idx[0][i][j].item<int64_t>();
      auto y = expert_double(x[0][i], w1[e], w3[e], w2[e]);
      for (int64_t c = 0; c < hidden; c++) want[0][i][c] += wts[0][i][j].item<double>() * y[c];
    }
  // The reference keeps bf16 intermediates (about 0.5% noise); a wrong expert or weight is O(1).
  expect_close(out, want, 0.1, 0.03, 0.02);

  // The generated routing: top_k distinct experts per token, weights positive and summing to 1.
  Sizes gsizes = sizes;
  gsizes["seq_len"] = 50;
  TensorMap none;
  kernrl::RefContext ctx{none, gsizes, {}, torch::Device(torch::kCPU)};
  auto gen = entry("L4_5_MoE_GatedGEMM").generate(ctx);
  auto gi = gen.at("expert_indices"), gw = gen.at("expert_weights");
  DOCTEST_CHECK((gi.sizes() == torch::IntArrayRef{1, 50, top_k}));
  DOCTEST_CHECK((gi.select(-1, 0) != gi.select(-1, 1)).all().item<bool>());
  DOCTEST_CHECK(((gi >= 0).logical_and(gi < experts)).all().item<bool>());
  DOCTEST_CHECK((gw.sum(-1) - 1).abs().max().item<double>() < 1e-6);
}

DOCTEST_TEST_CASE("L4_2_DeepSeek_MoE: group-limited routing matches a per-token loop") {
  torch::manual_seed(52);
  const int64_t t = 9, hidden = 16, inter = 6, shared = 8, experts = 64, groups = 8, topk_group = 4,
                top_k = 8;
  const double scale = 2.5;
  Sizes sizes{{"batch_size", 1},
              {"seq_len", t},
              {"hidden_size", hidden},
              {"moe_intermediate_size", inter},
              {"n_routed_experts", experts},
              {"n_group", groups},
              {"topk_group", topk_group},
              {"num_experts_per_tok", top_k},
              {"shared_intermediate_size", shared}};
  TensorMap m;
  m["gate_weight"] = torch::randn({experts, hidden}) * 0.25;
  m["e_score_correction_bias"] = torch::rand({experts}) * 0.1 - 0.05;
  m["experts_gate_proj"] = torch::randn({experts, inter, hidden}) * 0.2;
  m["experts_up_proj"] = torch::randn({experts, inter, hidden}) * 0.2;
  m["experts_down_proj"] = torch::randn({experts, hidden, inter}) * 0.3;
  m["shared_gate_proj"] = torch::randn({shared, hidden}) * 0.2;
  m["shared_up_proj"] = torch::randn({shared, hidden}) * 0.2;
  m["shared_down_proj"] = torch::randn({hidden, shared}) * 0.3;
  {
    kernrl::RefContext ctx{
        m, sizes, {{"routed_scaling_factor", scale}}, torch::Device(torch::kCPU)};
    m["x"] = entry("L4_2_DeepSeek_MoE").generate(ctx).at("x");  // drawn with routing margins
  }
  auto out =
      run_reference("L4_2_DeepSeek_MoE", m, sizes, {{"routed_scaling_factor", scale}}).at("out");

  auto xd = m["x"].to(torch::kFloat64).view({t, hidden});
  auto gw = m["gate_weight"].to(torch::kFloat64),
       bias = m["e_score_correction_bias"].to(torch::kFloat64);
  auto want = torch::zeros({1, t, hidden}, torch::kFloat64);
  const int64_t per = experts / groups;
  for (int64_t i = 0; i < t; i++) {
    std::vector<double> score(experts), choice(experts);
    for (int64_t e = 0; e < experts; e++) {
      double l = 0;
      for (int64_t c = 0; c < hidden; c++) l += xd[i][c].item<double>() * gw[e][c].item<double>();
      score[e] = sigmoid(l);
      choice[e] = score[e] + bias[e].item<double>();
    }
    std::vector<std::pair<double, int64_t>> gsc;
    for (int64_t g = 0; g < groups; g++) {
      std::vector<double> v(choice.begin() + g * per, choice.begin() + (g + 1) * per);
      std::sort(v.rbegin(), v.rend());
      gsc.push_back({v[0] + v[1], g});
    }
    std::sort(gsc.rbegin(), gsc.rend());
    std::vector<bool> kept(groups, false);
    for (int64_t r = 0; r < topk_group; r++) kept[gsc[r].second] = true;
    std::vector<std::pair<double, int64_t>> cand;  // experts outside the kept groups count as 0
    for (int64_t e = 0; e < experts; e++) cand.push_back({kept[e / per] ? choice[e] : 0.0, e});
    std::sort(cand.rbegin(), cand.rend());
    double sum = 0;
    for (int64_t r = 0; r < top_k; r++) sum += score[cand[r].second];
    std::vector<double> routed(hidden, 0.0);
    for (int64_t r = 0; r < top_k; r++) {
      const int64_t e = cand[r].second;
      auto y = expert_double(m["x"][0][i], m["experts_gate_proj"][e], m["experts_up_proj"][e],
                             m["experts_down_proj"][e]);
      for (int64_t c = 0; c < hidden; c++) routed[c] += score[e] / sum * scale * y[c];
    }
    auto sy = expert_double(m["x"][0][i], m["shared_gate_proj"], m["shared_up_proj"],
                            m["shared_down_proj"]);
    for (int64_t c = 0; c < hidden; c++) want[0][i][c] = routed[c] + sy[c];
  }
  expect_close(out, want, 1e-5, 2e-4, 1e-2);
}

// ------------------------------------------------------------------------------------------------
// Delta-rule layers: the whole layer with the recurrence run step by step in double.

struct DeltaCase {
  const char* id;
  bool channel_decay;  // KDA: one decay per key channel; Gated DeltaNet: one per head
};

DOCTEST_TEST_CASE(
    "L4_7 / L4_8 delta-rule layers: chunked references match the step-by-step recurrence") {
  for (const DeltaCase dc :
       {DeltaCase{"L4_7_GatedDeltaNet", false}, DeltaCase{"L4_8_KimiDeltaAttention", true}}) {
    DOCTEST_INFO("problem ", dc.id);
    torch::manual_seed(dc.channel_decay ? 72 : 71);
    // 150 steps: two full chunks of 64 and a padded one.
    const int64_t b = 2, t = 150, hidden = 24, nh = 2, hd = 16, conv = 4, d = nh * hd;
    const int64_t na = dc.channel_decay ? d : nh;
    const double eps = 1e-5;
    TensorMap m;
    m["x"] = torch::randn({b, t, hidden});
    for (const char* w : {"q_proj_weight", "k_proj_weight", "v_proj_weight", "g_proj_weight"})
      m[w] = torch::randn({d, hidden}) * 0.3;
    m["a_proj_weight"] = torch::randn({na, hidden}) * 0.3;
    m["a_proj_bias"] = torch::rand({na}) - 0.5;
    m["a_proj_bias"][0] = -20.0f;  // sigmoid below 1e-6: the gate clamps at log(1e-6)
    m["b_proj_weight"] = torch::randn({nh, hidden}) * 0.3;
    m["b_proj_bias"] = torch::rand({nh}) - 0.5;
    for (const char* w : {"q_conv", "k_conv", "v_conv"}) {
      m[std::string(w) + "_weight"] = torch::rand({d, conv}) - 0.5;
      m[std::string(w) + "_bias"] = torch::rand({d}) - 0.5;
    }
    m["o_norm_weight"] = torch::rand({hd}) + 0.5;
    m["o_norm_bias"] = torch::rand({hd}) - 0.5;
    m["o_proj_weight"] = torch::randn({hidden, d}) * 0.3;
    Sizes sizes{{"batch_size", b}, {"seq_len", t},   {"hidden_size", hidden},
                {"num_heads", nh}, {"head_dim", hd}, {"conv_size", conv}};
    auto out = run_reference(dc.id, m, sizes, {{"norm_eps", eps}}).at("out");

    // The whole layer in double, per element, with the recurrence run step by step.
    auto dbl = [&](const std::string& n) { return m[n].to(torch::kFloat64); };
    auto x = dbl("x");
    auto proj = [&](const char* w) { return torch::matmul(x, dbl(w).t()).contiguous(); };
    auto pq = proj("q_proj_weight"), pk = proj("k_proj_weight"), pv = proj("v_proj_weight"),
         pg = proj("g_proj_weight");
    auto pa = proj("a_proj_weight"), pb = proj("b_proj_weight");
    auto conv_silu = [&](const torch::Tensor& u, const std::string& w) {
      auto wd = dbl(w + "_weight"), bd = dbl(w + "_bias");
      auto y = torch::zeros({b, t, d}, torch::kFloat64);
      auto pu = u.accessor<double, 3>();
      auto pw = wd.accessor<double, 2>();
      auto pbias = bd.accessor<double, 1>();
      auto py = y.accessor<double, 3>();
      for (int64_t i = 0; i < b; i++)
        for (int64_t s = 0; s < t; s++)
          for (int64_t c = 0; c < d; c++) {
            double acc = pbias[c];
            for (int64_t j = 0; j < conv; j++) {
              const int64_t src = s - (conv - 1) + j;
              if (src >= 0) acc += pw[c][j] * pu[i][src][c];
            }
            py[i][s][c] = silu(acc);
          }
      return y;
    };
    auto q = conv_silu(pq, "q_conv"), k = conv_silu(pk, "k_conv"), v = conv_silu(pv, "v_conv");
    auto aq = q.accessor<double, 3>(), ak = k.accessor<double, 3>(), av = v.accessor<double, 3>();
    auto aa = pa.accessor<double, 3>(), ab = pb.accessor<double, 3>(),
         ag = pg.accessor<double, 3>();
    auto abias = dbl("a_proj_bias"), bbias = dbl("b_proj_bias");
    auto anw = dbl("o_norm_weight"), anb = dbl("o_norm_bias");
    auto o = torch::zeros({b, t, d}, torch::kFloat64);
    auto ao = o.accessor<double, 3>();
    for (int64_t i = 0; i < b; i++)
      for (int64_t h = 0; h < nh; h++) {
        std::vector<double> st(hd * hd, 0.0);  // S[key][value]
        for (int64_t s = 0; s < t; s++) {
          std::vector<double> qq(hd), kk(hd), vv(hd), decay(hd);
          for (int64_t c = 0; c < hd; c++) {
            qq[c] = aq[i][s][h * hd + c] / std::sqrt((double)hd);
            kk[c] = ak[i][s][h * hd + c];
            vv[c] = av[i][s][h * hd + c];
            const int64_t ai = dc.channel_decay ? h * hd + c : h;
            decay[c] = std::max(sigmoid(aa[i][s][ai] + abias[ai].item<double>()), 1e-6);
          }
          const double beta = sigmoid(ab[i][s][h] + bbias[h].item<double>());
          for (int64_t r = 0; r < hd; r++)
            for (int64_t c = 0; c < hd; c++) st[r * hd + c] *= decay[r];
          for (int64_t c = 0; c < hd; c++) {
            double kv = 0;
            for (int64_t r = 0; r < hd; r++) kv += st[r * hd + c] * kk[r];
            const double delta = beta * (vv[c] - kv);
            for (int64_t r = 0; r < hd; r++) st[r * hd + c] += kk[r] * delta;
          }
          std::vector<double> oo(hd, 0.0);
          double mean = 0, var = 0;
          for (int64_t c = 0; c < hd; c++) {
            for (int64_t r = 0; r < hd; r++) oo[c] += st[r * hd + c] * qq[r];
            mean += oo[c] / hd;
          }
          for (int64_t c = 0; c < hd; c++) var += (oo[c] - mean) * (oo[c] - mean) / hd;
          for (int64_t c = 0; c < hd; c++)
            ao[i][s][h * hd + c] = ((oo[c] - mean) / std::sqrt(var + eps) * anw[c].item<double>() +
                                    anb[c].item<double>()) *
                                   sigmoid(ag[i][s][h * hd + c]);
        }
      }
    auto want = torch::matmul(o, dbl("o_proj_weight").t());
    expect_close(out, want, 1e-5, 1e-3, 1e-2);
    // Closer than that in fact: the two differ only by float32 rounding.
    const double l2 = ((out.to(torch::kFloat64) - want).norm() / want.norm()).item<double>();
    DOCTEST_CHECK(l2 < 1e-5);
  }
}

// ------------------------------------------------------------------------------------------------
// Attention layers: RoPE, head mapping, causal softmax and the weighted sum as loops in double.

// Causal softmax attention of one head in double: q [S, Dq], k [S, Dq], v [S, Dv] -> [S, Dv].
static std::vector<std::vector<double>> attend(const std::vector<std::vector<double>>& q,
                                               const std::vector<std::vector<double>>& k,
                                               const std::vector<std::vector<double>>& v,
                                               double scale) {
  const size_t s = q.size(), dv = v[0].size();
  std::vector<std::vector<double>> o(s, std::vector<double>(dv, 0.0));
  for (size_t i = 0; i < s; i++) {
    std::vector<double> w(i + 1);
    double mx = -1e300, sum = 0;
    for (size_t j = 0; j <= i; j++) {
      double d = 0;
      for (size_t c = 0; c < q[i].size(); c++) d += q[i][c] * k[j][c];
      w[j] = d * scale;
      mx = std::max(mx, w[j]);
    }
    for (size_t j = 0; j <= i; j++) sum += (w[j] = std::exp(w[j] - mx));
    for (size_t j = 0; j <= i; j++)
      for (size_t c = 0; c < dv; c++) o[i][c] += w[j] / sum * v[j][c];
  }
  return o;
}

// Rows [t][col0 .. col0 + n) of a [S, N] double tensor.
static std::vector<std::vector<double>> cols(const torch::Tensor& m, int64_t col0, int64_t n) {
  auto a = m.accessor<double, 2>();
  std::vector<std::vector<double>> r(m.size(0), std::vector<double>(n));
  for (int64_t t = 0; t < m.size(0); t++)
    for (int64_t c = 0; c < n; c++) r[t][c] = a[t][col0 + c];
  return r;
}

// RoPE angle as PyTorch computes it: inv_freq = 1 / theta^(2i / d) and position * inv_freq, both
// rounded to float32.
static double rope_angle(int64_t t, int64_t i, int64_t d, double theta) {
  const float inv_freq = 1.0f / std::pow((float)theta, (float)(2 * i) / (float)d);
  return (double)((float)t * inv_freq);
}

DOCTEST_TEST_CASE(
    "L4_3_GroupedQueryAttention: rotate-half RoPE, GQA head mapping and causal softmax") {
  torch::manual_seed(31);
  const int64_t s = 11, hidden = 16, nh = 4, nkv = 2, hd = 8;
  const double theta = 10000.0;
  TensorMap m{{"x", torch::randn({1, s, hidden})},
              {"q_proj_weight", torch::randn({nh * hd, hidden}) * 0.4},
              {"k_proj_weight", torch::randn({nkv * hd, hidden}) * 0.4},
              {"v_proj_weight", torch::randn({nkv * hd, hidden}) * 0.4},
              {"o_proj_weight", torch::randn({hidden, nh * hd}) * 0.4}};
  auto out = run_reference("L4_3_GroupedQueryAttention", m,
                           {{"batch_size", 1},
                            {"seq_len", s},
                            {"hidden_size", hidden},
                            {"num_heads", nh},
                            {"num_kv_heads", nkv},
                            {"head_dim", hd}},
                           {{"rope_theta", theta}})
                 .at("out");
  auto d = [&](const char* n) { return m[n].to(torch::kFloat64); };
  auto x = d("x")[0];
  auto proj = [&](const char* w) { return torch::matmul(x, d(w).t()).contiguous(); };
  auto pq = proj("q_proj_weight"), pk = proj("k_proj_weight"), pv = proj("v_proj_weight");
  auto rope = [&](std::vector<std::vector<double>> u) {
    for (int64_t t = 0; t < s; t++) {
      auto r = u[t];
      for (int64_t i = 0; i < hd / 2; i++) {
        const double ang = rope_angle(t, i, hd, theta);
        r[i] = u[t][i] * std::cos(ang) - u[t][i + hd / 2] * std::sin(ang);
        r[i + hd / 2] = u[t][i + hd / 2] * std::cos(ang) + u[t][i] * std::sin(ang);
      }
      u[t] = r;
    }
    return u;
  };
  auto attn = torch::zeros({s, nh * hd}, torch::kFloat64);
  for (int64_t h = 0; h < nh; h++) {
    const int64_t g = h / (nh / nkv);  // query heads 2g, 2g+1 share key/value head g
    auto o = attend(rope(cols(pq, h * hd, hd)), rope(cols(pk, g * hd, hd)), cols(pv, g * hd, hd),
                    1.0 / std::sqrt((double)hd));
    for (int64_t t = 0; t < s; t++)
      for (int64_t c = 0; c < hd; c++) attn[t][h * hd + c] = o[t][c];
  }
  auto want = torch::matmul(attn, d("o_proj_weight").t()).unsqueeze(0);
  expect_close(out, want, 1e-5, 5e-4, 1e-2);
}

DOCTEST_TEST_CASE(
    "L4_1_DeepSeek_MLA: latent RMSNorms, rotate-half RoPE on the shared rope key, causal softmax") {
  torch::manual_seed(32);
  const int64_t s = 9, hidden = 16, nh = 2, qr = 12, kr = 10, nope = 8, rope = 4, vd = 6;
  const double eps = 1e-6, theta = 10000.0, scale = 1.0 / std::sqrt((double)(nope + rope));
  TensorMap m{{"x", torch::randn({1, s, hidden})},
              {"q_a_proj_weight", torch::randn({qr, hidden}) * 0.4},
              {"q_a_layernorm_weight", torch::rand({qr}) + 0.5},
              {"q_b_proj_weight", torch::randn({nh * (nope + rope), qr}) * 0.4},
              {"kv_a_proj_with_mqa_weight", torch::randn({kr + rope, hidden}) * 0.4},
              {"kv_a_layernorm_weight", torch::rand({kr}) + 0.5},
              {"kv_b_proj_weight", torch::randn({nh * (nope + vd), kr}) * 0.4},
              {"o_proj_weight", torch::randn({hidden, nh * vd}) * 0.4}};
  auto out = run_reference("L4_1_DeepSeek_MLA", m,
                           {{"batch_size", 1},
                            {"seq_len", s},
                            {"hidden_size", hidden},
                            {"num_heads", nh},
                            {"q_lora_rank", qr},
                            {"kv_lora_rank", kr},
                            {"qk_nope_head_dim", nope},
                            {"qk_rope_head_dim", rope},
                            {"v_head_dim", vd}},
                           {{"rms_norm_eps", eps}, {"rope_theta", theta}, {"softmax_scale", scale}})
                 .at("out");
  auto d = [&](const char* n) { return m[n].to(torch::kFloat64); };
  auto x = d("x")[0];
  // RMSNorm of columns [0, n) of u in double.
  auto rmsnorm = [&](const torch::Tensor& u, int64_t n, const torch::Tensor& w) {
    auto r = torch::zeros({s, n}, torch::kFloat64);
    for (int64_t t = 0; t < s; t++) {
      double ms = 0;
      for (int64_t c = 0; c < n; c++) ms += u[t][c].item<double>() * u[t][c].item<double>() / n;
      for (int64_t c = 0; c < n; c++)
        r[t][c] = u[t][c].item<double>() / std::sqrt(ms + eps) * w[c].item<double>();
    }
    return r;
  };
  auto q = torch::matmul(
               rmsnorm(torch::matmul(x, d("q_a_proj_weight").t()), qr, d("q_a_layernorm_weight")),
               d("q_b_proj_weight").t())
               .contiguous();
  auto ckv = torch::matmul(x, d("kv_a_proj_with_mqa_weight").t()).contiguous();
  auto kv = torch::matmul(rmsnorm(ckv, kr, d("kv_a_layernorm_weight")), d("kv_b_proj_weight").t())
                .contiguous();
  auto k_pe = cols(ckv, kr, rope);
  // Rotate-half RoPE on the rope dims: pairs (i, i + rope/2).
  auto rot = [&](std::vector<std::vector<double>> u) {
    for (int64_t t = 0; t < s; t++)
      for (int64_t i = 0; i < rope / 2; i++) {
        const double ang = rope_angle(t, i, rope, theta);
        const double a = u[t][i], b = u[t][i + rope / 2];
        u[t][i] = a * std::cos(ang) - b * std::sin(ang);
        u[t][i + rope / 2] = b * std::cos(ang) + a * std::sin(ang);
      }
    return u;
  };
  auto kpe = rot(k_pe);
  auto attn = torch::zeros({s, nh * vd}, torch::kFloat64);
  for (int64_t h = 0; h < nh; h++) {
    auto qn = cols(q, h * (nope + rope), nope), qp = rot(cols(q, h * (nope + rope) + nope, rope));
    auto kn = cols(kv, h * (nope + vd), nope), vv = cols(kv, h * (nope + vd) + nope, vd);
    for (int64_t t = 0; t < s; t++) {
      qn[t].insert(qn[t].end(), qp[t].begin(), qp[t].end());
      kn[t].insert(kn[t].end(), kpe[t].begin(), kpe[t].end());
    }
    auto o = attend(qn, kn, vv, scale);
    for (int64_t t = 0; t < s; t++)
      for (int64_t c = 0; c < vd; c++) attn[t][h * vd + c] = o[t][c];
  }
  auto want = torch::matmul(attn, d("o_proj_weight").t()).unsqueeze(0);
  expect_close(out, want, 1e-5, 5e-4, 1e-2);
}

}  // namespace kernrl_checks_L4
