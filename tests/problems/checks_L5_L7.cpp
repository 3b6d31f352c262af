// Independent CPU checks of the Level 5-7 references (scientific computing, graphics, signal
// processing): each reference is run at a tiny size and compared with a plain scalar loop written
// from the problem's definition (in double precision), a direct DFT for the transforms, sorting for
// the median, a stack-based BVH walk, and structural checks of the custom input generators.
// torch first: its logging header defines CHECK too, and doctest's definition must win.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "references/reference.h"

namespace kernrl_checks_l5_l7 {

using kernrl::TensorMap;
using cd = std::complex<double>;

struct Case {
  TensorMap tensors;
  std::map<std::string, int64_t> sizes;
  std::map<std::string, double> scalars;

  const kernrl::ReferenceEntry& entry(const std::string& id) const {
    const auto* e = kernrl::find_reference(id);
    REQUIRE_MESSAGE(e != nullptr, "no reference for " << id);
    return *e;
  }
  TensorMap run(const std::string& id) const {
    kernrl::RefContext ctx{tensors, sizes, scalars, torch::Device(torch::kCPU)};
    torch::NoGradGuard no_grad;
    return entry(id).run(ctx);
  }
  // Draws the custom inputs of `id` into `tensors`.
  void generate(const std::string& id, uint64_t seed) {
    const auto& e = entry(id);
    REQUIRE(static_cast<bool>(e.generate));
    torch::manual_seed(seed);
    kernrl::RefContext ctx{tensors, sizes, scalars, torch::Device(torch::kCPU)};
    TensorMap extra = e.generate(ctx);
    for (auto& kv : extra) tensors[kv.first] = kv.second.contiguous();
  }
};

static std::vector<double> vec(const torch::Tensor& t) {
  auto d = t.detach().to(torch::kFloat64).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

static std::vector<int64_t> ivec(const torch::Tensor& t) {
  auto d = t.detach().to(torch::kInt64).contiguous();
  return std::vector<int64_t>(d.data_ptr<int64_t>(), d.data_ptr<int64_t>() + d.numel());
}

static std::vector<cd> cvec(const torch::Tensor& t) {
  auto d = torch::view_as_real(t.detach().contiguous()).to(torch::kFloat64).contiguous();
  std::vector<cd> out(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    out[i] = cd(d.data_ptr<double>()[2 * i], d.data_ptr<double>()[2 * i + 1]);
  return out;
}

// max |got - want| / (atol + rtol |want|) <= 1, element by element.
static void check_close(const std::vector<double>& got, const std::vector<double>& want,
                        double atol, double rtol, const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      CHECK_MESSAGE(got[i] == want[i], what << " [" << i << "]: " << got[i] << " vs " << want[i]);
      continue;
    }
    CHECK_MESSAGE(std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i]),
                  what << " [" << i << "]: " << got[i] << " vs " << want[i]);
  }
}

static void check_close(const std::vector<cd>& got, const std::vector<cd>& want, double atol,
                        const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::abs(got[i] - want[i]) <= atol,
                  what << " [" << i << "]: " << got[i] << " vs " << want[i]);
}

static torch::Tensor randn(std::vector<int64_t> shape) {
  return torch::randn(shape, torch::kFloat32);
}
static torch::Tensor rand(std::vector<int64_t> shape) {
  return torch::rand(shape, torch::kFloat32);
}

static int reflect(int i, int n) {
  if (i < 0) i = -i;
  if (i >= n) i = 2 * n - 2 - i;
  return i;
}

}  // namespace kernrl_checks_l5_l7

using namespace kernrl_checks_l5_l7;

// ---------------------------------------------------------------------------------------------
// Level 5

TEST_CASE("L5_1 N-body accelerations against the pairwise sum") {
  torch::manual_seed(1);
  const int n = 23;
  Case c;
  c.tensors = {{"positions", randn({n, 3})}, {"masses", rand({n}) + 0.1}};
  c.sizes = {{"num_particles", n}};
  c.scalars = {{"softening", 0.01}};
  auto got = vec(c.run("L5_1_NBody_Gravitational").at("out"));
  auto p = vec(c.tensors["positions"]), m = vec(c.tensors["masses"]);
  std::vector<double> want(3 * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double d[3], d2 = 1e-4;
      for (int k = 0; k < 3; ++k) {
        d[k] = p[3 * j + k] - p[3 * i + k];
        d2 += d[k] * d[k];
      }
      for (int k = 0; k < 3; ++k) want[3 * i + k] += m[j] * d[k] / std::pow(d2, 1.5);
    }
  check_close(got, want, 1e-3, 1e-4, "acceleration");
}

TEST_CASE("L5_2 Jacobi step: interior average, boundary copied") {
  torch::manual_seed(2);
  const int h = 7, w = 9;
  Case c;
  c.tensors = {{"u", randn({h, w})}};
  c.sizes = {{"grid_height", h}, {"grid_width", w}};
  auto got = vec(c.run("L5_2_Stencil_2D_Heat").at("out"));
  auto u = vec(c.tensors["u"]);
  std::vector<double> want(u);
  for (int i = 1; i < h - 1; ++i)
    for (int j = 1; j < w - 1; ++j)
      want[i * w + j] =
          0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
  check_close(got, want, 1e-6, 1e-6, "u_new");
}

TEST_CASE("L5_3 CSR generator structure and SpMV against the row loop") {
  const int rows = 37, cols = 101;
  Case c;
  c.sizes = {{"num_rows", rows}, {"num_cols", cols}};
  c.generate("L5_3_SpMV_CSR", 3);
  torch::manual_seed(33);
  c.tensors["values"] = randn({50 * rows});
  c.tensors["x"] = randn({cols});
  auto rp = ivec(c.tensors["row_ptrs"]), col = ivec(c.tensors["col_indices"]);
  REQUIRE(rp.size() == rows + 1);
  CHECK(rp[0] == 0);
  CHECK(rp[rows] == 50 * rows);
  for (int r = 0; r < rows; ++r) {
    int64_t len = rp[r + 1] - rp[r];
    CHECK(len >= 1);
    CHECK(len <= 99);
    for (int64_t k = rp[r]; k < rp[r + 1]; ++k) {
      CHECK(col[k] >= 0);
      CHECK(col[k] < cols);
      if (k > rp[r]) CHECK(col[k] > col[k - 1]);
    }
  }
  auto got = vec(c.run("L5_3_SpMV_CSR").at("out"));
  auto v = vec(c.tensors["values"]), x = vec(c.tensors["x"]);
  std::vector<double> want(rows, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int64_t k = rp[r]; k < rp[r + 1]; ++k) want[r] += v[k] * x[col[k]];
  check_close(got, want, 1e-4, 1e-5, "y");
}

TEST_CASE(
    "L5_4 CG step against its definition; generator gives an SPD matrix and a consistent state") {
  const int n = 30;
  Case c;
  c.sizes = {{"matrix_size", n}};
  c.generate("L5_4_ConjugateGradient_Step", 4);
  auto A = c.tensors["A"];
  CHECK(torch::equal(A, A.t()));
  auto eig = vec(torch::linalg_eigvalsh(A.to(torch::kFloat64), "L"));
  CHECK(*std::min_element(eig.begin(), eig.end()) > 0.05);
  CHECK(*std::max_element(eig.begin(), eig.end()) < 1.2);
  auto a = vec(A), x = vec(c.tensors["x"]), r = vec(c.tensors["r"]), p = vec(c.tensors["p"]);
  double rsold = c.tensors["rsold"].item<double>(), rr = 0;
  for (double v : r) rr += v * v;
  CHECK(rsold == doctest::Approx(rr).epsilon(1e-6));
  auto out = c.run("L5_4_ConjugateGradient_Step");
  std::vector<double> Ap(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) Ap[i] += a[i * n + j] * p[j];
  double pAp = 0;
  for (int i = 0; i < n; ++i) pAp += p[i] * Ap[i];
  double alpha = rsold / pAp, rsnew = 0;
  std::vector<double> xn(n), rn(n), pn(n);
  for (int i = 0; i < n; ++i) {
    xn[i] = x[i] + alpha * p[i];
    rn[i] = r[i] - alpha * Ap[i];
    rsnew += rn[i] * rn[i];
  }
  for (int i = 0; i < n; ++i) pn[i] = rn[i] + rsnew / rsold * p[i];
  check_close(vec(out.at("x_new")), xn, 1e-5, 1e-5, "x_new");
  check_close(vec(out.at("r_new")), rn, 1e-5, 1e-5, "r_new");
  check_close(vec(out.at("p_new")), pn, 1e-5, 1e-5, "p_new");
  CHECK(out.at("rsnew").dim() == 0);
  CHECK(out.at("rsnew").item<double>() == doctest::Approx(rsnew).epsilon(1e-5));
  // CG makes the new residual orthogonal to the old search direction.
  double rp = 0, scale = 0;
  for (int i = 0; i < n; ++i) {
    rp += rn[i] * p[i];
    scale += std::abs(rn[i] * p[i]);
  }
  CHECK(std::abs(rp) < 1e-4 * scale);
}

TEST_CASE("L5_5 cloud-in-cell deposit against the particle loop; charge is conserved") {
  const int n = 50, g = 6;
  Case c;
  c.sizes = {{"num_particles", n}, {"grid_size", g}};
  c.generate("L5_5_ParticleInCell_Deposit", 5);
  torch::manual_seed(55);
  c.tensors["charges"] = randn({n});
  auto pos = vec(c.tensors["positions"]), q = vec(c.tensors["charges"]);
  for (double v : pos) {
    CHECK(v >= 0);
    CHECK(v < g - 1);
  }
  auto got = vec(c.run("L5_5_ParticleInCell_Deposit").at("out"));
  std::vector<double> want(g * g, 0.0);
  double total = 0;
  for (int i = 0; i < n; ++i) {
    double px = pos[2 * i], py = pos[2 * i + 1];
    int ix = (int)std::floor(px), iy = (int)std::floor(py);
    double fx = px - ix, fy = py - iy;
    ix = std::min(std::max(ix, 0), g - 2);
    iy = std::min(std::max(iy, 0), g - 2);
    want[ix * g + iy] += (1 - fx) * (1 - fy) * q[i];
    want[(ix + 1) * g + iy] += fx * (1 - fy) * q[i];
    want[ix * g + iy + 1] += (1 - fx) * fy * q[i];
    want[(ix + 1) * g + iy + 1] += fx * fy * q[i];
    total += q[i];
  }
  check_close(got, want, 1e-5, 1e-5, "grid");
  double sum = 0;
  for (double v : got) sum += v;
  CHECK(sum == doctest::Approx(total).epsilon(1e-5));
}

TEST_CASE("L5_6 leapfrog wave step against the stencil loop") {
  torch::manual_seed(6);
  const int h = 6, w = 11;
  Case c;
  c.tensors = {{"u_curr", randn({h, w})}, {"u_prev", randn({h, w})}};
  c.sizes = {{"grid_height", h}, {"grid_width", w}};
  c.scalars = {{"c", 1.0}, {"dt", 0.001}, {"dx", 0.01}};
  auto got = vec(c.run("L5_6_WaveEquation_2D").at("out"));
  auto u = vec(c.tensors["u_curr"]), up = vec(c.tensors["u_prev"]);
  std::vector<double> want(h * w, 0.0);
  for (int i = 1; i < h - 1; ++i)
    for (int j = 1; j < w - 1; ++j) {
      double lap = u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1] -
                   4 * u[i * w + j];
      want[i * w + j] = 2 * u[i * w + j] - up[i * w + j] + 0.01 * lap;
    }
  check_close(got, want, 1e-5, 1e-5, "u_next");
}

TEST_CASE("L5_7 Monte Carlo pi counts points inside the unit circle") {
  // 3 of 5 points inside (one exactly on the circle counts as inside).
  Case c;
  c.tensors = {
      {"random_points",
       torch::tensor({0.1f, 0.2f, 0.9f, 0.9f, 1.0f, 0.0f, 0.5f, 0.5f, 1.2f, 0.1f}).view({5, 2})}};
  c.sizes = {{"num_samples", 5}};
  auto out = c.run("L5_7_MonteCarlo_Pi").at("out");
  CHECK(out.dim() == 0);
  CHECK(out.item<double>() == doctest::Approx(4.0 * 3 / 5));
  // The generator's scale makes draws differ: the estimate is about pi / s^2 with s in [1, 2).
  Case g;
  g.sizes = {{"num_samples", 20000}};
  g.generate("L5_7_MonteCarlo_Pi", 7);
  auto pts = vec(g.tensors["random_points"]);
  double mx = *std::max_element(pts.begin(), pts.end());
  CHECK(mx >= 0.9);
  CHECK(mx < 2.0);
}

namespace kernrl_checks_l5_l7 {
// The slab test in float32, as the problem states it.
static bool slab(const float* bmin, const float* bmax, const float* o, const float* inv, float& tn,
                 float& tf) {
  tn = -INFINITY;
  tf = INFINITY;
  for (int a = 0; a < 3; ++a) {
    float t1 = (bmin[a] - o[a]) * inv[a], t2 = (bmax[a] - o[a]) * inv[a];
    tn = std::max(tn, std::min(t1, t2));
    tf = std::min(tf, std::max(t1, t2));
  }
  return tn <= tf && tf >= 0;
}
}  // namespace kernrl_checks_l5_l7

TEST_CASE("L5_8 BVH: valid tree from the generator, reference equals a stack traversal") {
  const int rays = 300, nodes = 63;
  Case c;
  c.sizes = {{"num_rays", rays}, {"num_nodes", nodes}};
  c.generate("L5_8_BVH_Traversal", 8);
  auto bmin = c.tensors["bvh_min"].contiguous(), bmax = c.tensors["bvh_max"].contiguous();
  auto left = ivec(c.tensors["bvh_left"]), right = ivec(c.tensors["bvh_right"]);
  auto leaf = c.tensors["bvh_is_leaf"].contiguous();
  const float* mn = bmin.data_ptr<float>();
  const float* mx = bmax.data_ptr<float>();
  const bool* lf = leaf.data_ptr<bool>();
  for (int i = 0; i < nodes; ++i) {
    bool is_leaf = 2 * i + 1 >= nodes;
    CHECK(lf[i] == is_leaf);
    CHECK(left[i] == (is_leaf ? -1 : 2 * i + 1));
    CHECK(right[i] == (is_leaf ? -1 : 2 * i + 2));
    for (int a = 0; a < 3; ++a) {
      CHECK(mn[3 * i + a] <= mx[3 * i + a]);
      if (!is_leaf) {
        CHECK(mn[3 * i + a] == std::min(mn[3 * (2 * i + 1) + a], mn[3 * (2 * i + 2) + a]));
        CHECK(mx[3 * i + a] == std::max(mx[3 * (2 * i + 1) + a], mx[3 * (2 * i + 2) + a]));
      }
    }
  }
  auto got = vec(c.run("L5_8_BVH_Traversal").at("out"));
  auto o = c.tensors["ray_origins"].contiguous(), d = c.tensors["ray_directions"].contiguous();
  int hits = 0;
  for (int r = 0; r < rays; ++r) {
    const float* ro = o.data_ptr<float>() + 3 * r;
    float inv[3];
    for (int a = 0; a < 3; ++a) inv[a] = 1.0f / (d.data_ptr<float>()[3 * r + a] + 1e-10f);
    float closest = INFINITY;
    std::vector<int> stack{0};
    while (!stack.empty()) {
      int node = stack.back();
      stack.pop_back();
      float tn, tf;
      if (!slab(mn + 3 * node, mx + 3 * node, ro, inv, tn, tf) || !(tn < closest)) continue;
      if (lf[node])
        closest = std::min(closest, std::max(tn, 0.0f));
      else {
        stack.push_back((int)left[node]);
        stack.push_back((int)right[node]);
      }
    }
    hits += std::isfinite(closest);
    if (std::isinf(closest))
      CHECK(std::isinf(got[r]));
    else
      CHECK(got[r] == doctest::Approx(closest).epsilon(1e-6));
  }
  CHECK(hits > rays / 10);
  CHECK(hits < rays);
}

// ---------------------------------------------------------------------------------------------
// Level 6

TEST_CASE("L6_1 ray-sphere closest hits against the per-pair loop") {
  const int w = 9, h = 7, m = 12;
  Case c;
  c.sizes = {{"image_width", w}, {"image_height", h}, {"num_spheres", m}};
  c.generate("L6_1_RayTracing_Spheres", 61);
  // Add spheres right in front of the camera so that most rays hit something.
  auto centers = c.tensors["sphere_centers"].clone(), radii = c.tensors["sphere_radii"].clone();
  centers[0] = torch::tensor({0.5f, -0.3f, 2.0f});
  radii[0] = 1.5f;
  centers[1] = torch::tensor({-1.0f, 1.0f, 0.0f});
  radii[1] = 2.0f;
  c.tensors["sphere_centers"] = centers;
  c.tensors["sphere_radii"] = radii;
  auto out = c.run("L6_1_RayTracing_Spheres");
  auto t = vec(out.at("t_hit")), pts = vec(out.at("hit_points")), nrm = vec(out.at("hit_normals"));
  auto idx = ivec(out.at("sphere_idx"));
  auto o = vec(c.tensors["ray_origins"]), d = vec(c.tensors["ray_directions"]);
  auto C = vec(centers), R = vec(radii);
  int hits = 0;
  for (int n = 0; n < w * h; ++n) {
    double best = INFINITY;
    int bi = -1;
    for (int s = 0; s < m; ++s) {
      double L[3], a = 0, b = 0, cc = 0;
      for (int k = 0; k < 3; ++k) {
        L[k] = o[3 * n + k] - C[3 * s + k];
        a += d[3 * n + k] * d[3 * n + k];
        b += 2 * d[3 * n + k] * L[k];
        cc += L[k] * L[k];
      }
      cc -= R[s] * R[s];
      double disc = b * b - 4 * a * cc;
      if (disc < 0) continue;
      double t1 = (-b - std::sqrt(disc)) / (2 * a), t2 = (-b + std::sqrt(disc)) / (2 * a);
      double tt = t1 > 0 ? t1 : t2;
      if (tt > 0 && tt < best) {
        best = tt;
        bi = s;
      }
    }
    CHECK(idx[n] == bi);
    if (bi < 0) {
      CHECK(std::isinf(t[n]));
      for (int k = 0; k < 3; ++k) CHECK(nrm[3 * n + k] == 0.0);
      continue;
    }
    ++hits;
    CHECK(t[n] == doctest::Approx(best).epsilon(1e-4));
    double len = 0, p[3];
    for (int k = 0; k < 3; ++k) {
      p[k] = o[3 * n + k] + best * d[3 * n + k];
      CHECK(pts[3 * n + k] == doctest::Approx(p[k]).epsilon(1e-4).scale(1.0));
      len += (p[k] - C[3 * bi + k]) * (p[k] - C[3 * bi + k]);
    }
    for (int k = 0; k < 3; ++k)
      CHECK(nrm[3 * n + k] ==
            doctest::Approx((p[k] - C[3 * bi + k]) / std::sqrt(len)).epsilon(1e-3).scale(1.0));
  }
  CHECK(hits > w * h / 8);
}

TEST_CASE("L6_2 histogram against counting") {
  Case c;
  c.sizes = {{"num_pixels", 1000}};
  c.generate("L6_2_Histogram_256", 62);
  auto data = ivec(c.tensors["data"]);
  std::vector<double> want(256, 0.0);
  for (auto v : data) {
    REQUIRE(v >= 0);
    REQUIRE(v <= 255);
    want[v] += 1;
  }
  auto got = vec(c.run("L6_2_Histogram_256").at("out"));
  check_close(got, want, 0, 0, "histogram");
}

TEST_CASE("L6_3 Gaussian blur against the 15 x 15 zero-padded loop") {
  torch::manual_seed(63);
  const int h = 9, w = 20;
  Case c;
  c.tensors = {{"image", rand({h, w})}};
  c.sizes = {{"image_height", h}, {"image_width", w}};
  c.scalars = {{"kernel_size", 15}, {"sigma", 3.0}};
  auto img = vec(c.tensors["image"]);
  double g[15], gs = 0;
  for (int t = 0; t < 15; ++t) gs += g[t] = std::exp(-(t - 7.0) * (t - 7.0) / 18.0);
  std::vector<double> want(h * w, 0.0);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j)
      for (int a = 0; a < 15; ++a)
        for (int b = 0; b < 15; ++b) {
          int ii = i + a - 7, jj = j + b - 7;
          if (ii >= 0 && ii < h && jj >= 0 && jj < w)
            want[i * w + j] += g[a] * g[b] / (gs * gs) * img[ii * w + jj];
        }
  check_close(vec(c.run("L6_3_GaussianBlur_2D").at("out")), want, 1e-6, 1e-5, "blur");
}

TEST_CASE("L6_4 bilateral filter against the windowed loop with reflect padding") {
  torch::manual_seed(64);
  const int h = 7, w = 10;
  Case c;
  c.tensors = {{"image", rand({h, w})}};
  c.sizes = {{"image_height", h}, {"image_width", w}};
  c.scalars = {{"kernel_size", 9}, {"sigma_spatial", 3.0}, {"sigma_range", 0.1}};
  auto img = vec(c.tensors["image"]);
  std::vector<double> want(h * w);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j) {
      double num = 0, den = 0, ctr = img[i * w + j];
      for (int a = -4; a <= 4; ++a)
        for (int b = -4; b <= 4; ++b) {
          double v = img[reflect(i + a, h) * w + reflect(j + b, w)];
          double wt = std::exp(-(a * a + b * b) / 18.0) * std::exp(-(v - ctr) * (v - ctr) / 0.02);
          num += wt * v;
          den += wt;
        }
      want[i * w + j] = num / den;
    }
  check_close(vec(c.run("L6_4_BilateralFilter").at("out")), want, 1e-5, 1e-5, "bilateral");
}

TEST_CASE("L6_5 Sobel magnitude and angle against the 3 x 3 loop") {
  torch::manual_seed(65);
  const int h = 6, w = 8;
  Case c;
  c.tensors = {{"image", torch::randint(0, 256, {h, w}, torch::kFloat32)}};
  c.sizes = {{"image_height", h}, {"image_width", w}};
  auto img = vec(c.tensors["image"]);
  auto I = [&](int i, int j) {
    return (i < 0 || i >= h || j < 0 || j >= w) ? 0.0 : img[i * w + j];
  };
  auto out = c.run("L6_5_Sobel_EdgeDetect");
  std::vector<double> mag(h * w), ang(h * w);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j) {
      double gx = 0, gy = 0;
      const int sx[3][3] = {{-1, 0, 1}, {-2, 0, 2}, {-1, 0, 1}};
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          gx += sx[a][b] * I(i + a - 1, j + b - 1);
          gy += sx[b][a] * I(i + a - 1, j + b - 1);
        }
      mag[i * w + j] = std::sqrt(gx * gx + gy * gy);
      ang[i * w + j] = std::atan2(gy, gx);
    }
  check_close(vec(out.at("magnitude")), mag, 1e-4, 1e-6, "magnitude");
  check_close(vec(out.at("angle")), ang, 1e-5, 1e-6, "angle");
  // A vertical step (dark left, bright right) has angle 0; its mirror has angle +pi.
  Case s;
  s.tensors = {{"image", torch::cat({torch::zeros({4, 2}), torch::full({4, 2}, 255.f)}, 1)}};
  s.sizes = {{"image_height", 4}, {"image_width", 4}};
  auto a2 = vec(s.run("L6_5_Sobel_EdgeDetect").at("angle"));
  CHECK(a2[1 * 4 + 1] == doctest::Approx(0.0));
  s.tensors["image"] = torch::flip(s.tensors["image"], {1});
  auto a3 = vec(s.run("L6_5_Sobel_EdgeDetect").at("angle"));
  CHECK(a3[1 * 4 + 2] == doctest::Approx(M_PI));
}

TEST_CASE("L6_6 erosion is the in-bounds 5 x 5 minimum") {
  torch::manual_seed(66);
  const int h = 6, w = 9;
  Case c;
  c.tensors = {{"image", rand({h, w})}};
  c.sizes = {{"image_height", h}, {"image_width", w}};
  c.scalars = {{"kernel_size", 5}};
  auto img = vec(c.tensors["image"]);
  std::vector<double> want(h * w);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j) {
      double m = INFINITY;
      for (int a = std::max(i - 2, 0); a <= std::min(i + 2, h - 1); ++a)
        for (int b = std::max(j - 2, 0); b <= std::min(j + 2, w - 1); ++b)
          m = std::min(m, img[a * w + b]);
      want[i * w + j] = m;
    }
  check_close(vec(c.run("L6_6_MorphologyErode").at("out")), want, 0, 0, "eroded");
}

TEST_CASE("L6_7 box filter is the zero-padded 11 x 11 sum / 121") {
  torch::manual_seed(67);
  const int h = 8, w = 13;
  Case c;
  c.tensors = {{"image", rand({h, w})}};
  c.sizes = {{"image_height", h}, {"image_width", w}};
  c.scalars = {{"kernel_size", 11}};
  auto img = vec(c.tensors["image"]);
  std::vector<double> want(h * w, 0.0);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j)
      for (int a = std::max(i - 5, 0); a <= std::min(i + 5, h - 1); ++a)
        for (int b = std::max(j - 5, 0); b <= std::min(j + 5, w - 1); ++b)
          want[i * w + j] += img[a * w + b] / 121.0;
  check_close(vec(c.run("L6_7_BoxFilter").at("out")), want, 1e-6, 1e-5, "box");
}

TEST_CASE("L6_8 RGB to YUV: white, primaries and a random pixel") {
  Case c;
  c.tensors = {
      {"rgb", torch::tensor({1.f, 1.f, 1.f, 1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.2f, 0.5f, 0.9f})
                  .view({1, 4, 3})}};
  c.sizes = {{"image_height", 1}, {"image_width", 4}};
  auto got = vec(c.run("L6_8_ColorSpaceConvert_RGB_YUV").at("out"));
  std::vector<double> want = {1.0,
                              0.0,
                              0.0,
                              0.299,
                              -0.147,
                              0.615,
                              0.587,
                              -0.289,
                              -0.515,
                              0.299 * 0.2 + 0.587 * 0.5 + 0.114 * 0.9,
                              -0.147 * 0.2 - 0.289 * 0.5 + 0.436 * 0.9,
                              0.615 * 0.2 - 0.515 * 0.5 - 0.100 * 0.9};
  check_close(got, want, 1e-6, 1e-6, "yuv");
}

// ---------------------------------------------------------------------------------------------
// Level 7

namespace kernrl_checks_l5_l7 {
static std::vector<cd> dft(const std::vector<cd>& x, double sign = -1) {
  size_t n = x.size();
  std::vector<cd> out(n);
  for (size_t k = 0; k < n; ++k)
    for (size_t j = 0; j < n; ++j)
      out[k] += x[j] * std::polar(1.0, sign * 2 * M_PI * (double)((j * k) % n) / n);
  return out;
}

// 2-D DFT of a row-major h x w array by rows then columns.
static std::vector<cd> dft2(std::vector<cd> x, int h, int w, double sign = -1) {
  for (int i = 0; i < h; ++i) {
    auto r = dft(std::vector<cd>(x.begin() + i * w, x.begin() + (i + 1) * w), sign);
    std::copy(r.begin(), r.end(), x.begin() + i * w);
  }
  for (int j = 0; j < w; ++j) {
    std::vector<cd> col(h);
    for (int i = 0; i < h; ++i) col[i] = x[i * w + j];
    col = dft(col, sign);
    for (int i = 0; i < h; ++i) x[i * w + j] = col[i];
  }
  return x;
}
}  // namespace kernrl_checks_l5_l7

TEST_CASE("L7_1 FFT against the direct DFT (power-of-two and odd lengths)") {
  torch::manual_seed(71);
  for (int n : {16, 12, 7}) {
    Case c;
    c.tensors = {{"signal", randn({n})}};
    c.sizes = {{"signal_length", n}};
    auto x = vec(c.tensors["signal"]);
    auto want = dft(std::vector<cd>(x.begin(), x.end()));
    check_close(cvec(c.run("L7_1_FFT_1D").at("out")), want, 1e-5, "fft");
  }
}

TEST_CASE("L7_2 FFT2 against the direct 2-D DFT") {
  torch::manual_seed(72);
  const int h = 5, w = 6;
  Case c;
  c.tensors = {{"image", randn({h, w})}};
  c.sizes = {{"image_height", h}, {"image_width", w}};
  auto x = vec(c.tensors["image"]);
  auto want = dft2(std::vector<cd>(x.begin(), x.end()), h, w);
  check_close(cvec(c.run("L7_2_FFT_2D").at("out")), want, 1e-5, "fft2");
}

TEST_CASE("L7_3 FIR filter against the correlation loop (odd and even kernels)") {
  torch::manual_seed(73);
  for (int k : {7, 4}) {
    const int n = 19;
    Case c;
    c.tensors = {{"signal", randn({n})}, {"kernel", randn({1, 1, k})}};
    c.sizes = {{"signal_length", n}, {"kernel_size", k}};
    auto x = vec(c.tensors["signal"]), t = vec(c.tensors["kernel"]);
    int pad = k / 2, n_out = n + 2 * pad - k + 1;
    std::vector<double> want(n_out, 0.0);
    for (int i = 0; i < n_out; ++i)
      for (int j = 0; j < k; ++j) {
        int s = i + j - pad;
        if (s >= 0 && s < n) want[i] += t[j] * x[s];
      }
    check_close(vec(c.run("L7_3_Convolution_1D").at("out")), want, 1e-5, 1e-5, "fir");
  }
}

TEST_CASE("L7_4 template cross-correlation against the loop") {
  torch::manual_seed(74);
  const int h = 7, w = 9, th = 4, tw = 3;
  Case c;
  c.tensors = {{"image", randn({h, w})}, {"template", randn({1, 1, th, tw})}};
  c.sizes = {
      {"image_height", h}, {"image_width", w}, {"template_height", th}, {"template_width", tw}};
  auto img = vec(c.tensors["image"]), t = vec(c.tensors["template"]);
  int ph = th / 2, pw = tw / 2, oh = h + 2 * ph - th + 1, ow = w + 2 * pw - tw + 1;
  std::vector<double> want(oh * ow, 0.0);
  for (int i = 0; i < oh; ++i)
    for (int j = 0; j < ow; ++j)
      for (int a = 0; a < th; ++a)
        for (int b = 0; b < tw; ++b) {
          int r = i + a - ph, s = j + b - pw;
          if (r >= 0 && r < h && s >= 0 && s < w)
            want[i * ow + j] += t[a * tw + b] * img[r * w + s];
        }
  auto out = c.run("L7_4_CrossCorrelation_2D").at("out");
  CHECK(out.size(0) == oh);
  CHECK(out.size(1) == ow);
  check_close(vec(out), want, 1e-5, 1e-5, "xcorr");
}

TEST_CASE("L7_5 median filter against sorting each reflected window; salt-and-pepper generator") {
  const int h = 9, w = 11;
  Case c;
  c.sizes = {{"image_height", h}, {"image_width", w}};
  c.scalars = {{"kernel_size", 5}};
  c.generate("L7_5_MedianFilter_2D", 75);
  auto img = vec(c.tensors["image"]);
  std::vector<double> want(h * w);
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j) {
      std::vector<double> win;
      for (int a = -2; a <= 2; ++a)
        for (int b = -2; b <= 2; ++b) win.push_back(img[reflect(i + a, h) * w + reflect(j + b, w)]);
      std::sort(win.begin(), win.end());
      want[i * w + j] = win[12];
    }
  check_close(vec(c.run("L7_5_MedianFilter_2D").at("out")), want, 0, 0, "median");
  Case big;
  big.sizes = {{"image_height", 200}, {"image_width", 200}};
  big.generate("L7_5_MedianFilter_2D", 76);
  auto v = vec(big.tensors["image"]);
  double zeros = std::count(v.begin(), v.end(), 0.0) / 40000.0,
         ones = std::count(v.begin(), v.end(), 1.0) / 40000.0;
  CHECK(zeros == doctest::Approx(0.05).epsilon(0.3));
  CHECK(ones == doctest::Approx(0.05).epsilon(0.3));
}

TEST_CASE("L7_6 bilinear resampling against the align_corners=False formula") {
  torch::manual_seed(76);
  const int ch = 2, ih = 5, iw = 7, oh = 9, ow = 3;
  Case c;
  c.tensors = {{"image", rand({ch, ih, iw})}};
  c.sizes = {{"channels", ch},
             {"input_height", ih},
             {"input_width", iw},
             {"output_height", oh},
             {"output_width", ow}};
  auto img = vec(c.tensors["image"]);
  auto axis = [](int dst, int in, int out, int& i0, int& i1, double& l1) {
    double src = std::max((double)in / out * (dst + 0.5) - 0.5, 0.0);
    i0 = (int)src;
    i1 = std::min(i0 + 1, in - 1);
    l1 = src - i0;
  };
  std::vector<double> want(ch * oh * ow);
  for (int q = 0; q < ch; ++q)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x) {
        int y0, y1, x0, x1;
        double ly, lx;
        axis(y, ih, oh, y0, y1, ly);
        axis(x, iw, ow, x0, x1, lx);
        auto I = [&](int r, int s) { return img[(q * ih + r) * iw + s]; };
        want[(q * oh + y) * ow + x] = (1 - ly) * ((1 - lx) * I(y0, x0) + lx * I(y0, x1)) +
                                      ly * ((1 - lx) * I(y1, x0) + lx * I(y1, x1));
      }
  check_close(vec(c.run("L7_6_Resample_Bilinear").at("out")), want, 1e-5, 1e-5, "resampled");
}

TEST_CASE("L7_7 Wiener deconvolution against a direct-DFT evaluation in double") {
  torch::manual_seed(77);
  const int h = 16, w = 15, ks = 15;
  Case c;
  c.tensors = {{"blurred", rand({h, w})}};
  c.sizes = {{"image_height", h}, {"image_width", w}};
  c.scalars = {{"kernel_size", ks}, {"noise_var", 0.01}};
  auto img = vec(c.tensors["blurred"]);
  double sigma = ks / 6.0, psum = 0;
  std::vector<cd> P(h * w);
  for (int a = 0; a < ks; ++a)
    for (int b = 0; b < ks; ++b)
      psum += std::exp(-((a - 7.0) * (a - 7.0) + (b - 7.0) * (b - 7.0)) / (2 * sigma * sigma));
  for (int a = 0; a < ks; ++a)
    for (int b = 0; b < ks; ++b)  // rolled by (-8, -8)
      P[((a - 8 + h) % h) * w + (b - 8 + w) % w] +=
          std::exp(-((a - 7.0) * (a - 7.0) + (b - 7.0) * (b - 7.0)) / (2 * sigma * sigma)) / psum;
  double mean = 0, var = 0;
  for (double v : img) mean += v / (h * w);
  for (double v : img) var += (v - mean) * (v - mean) / (h * w - 1);
  double snr_inv = 0.01 / (var + 1e-10);
  auto F = dft2(P, h, w);
  auto G = dft2(std::vector<cd>(img.begin(), img.end()), h, w);
  for (int i = 0; i < h * w; ++i) G[i] *= std::conj(F[i]) / (std::norm(F[i]) + snr_inv);
  auto r = dft2(G, h, w, +1);
  std::vector<double> want(h * w);
  for (int i = 0; i < h * w; ++i) want[i] = r[i].real() / (h * w);
  check_close(vec(c.run("L7_7_WienerFilter").at("out")), want, 1e-5, 1e-5, "restored");
}

TEST_CASE("L7_8 STFT against windowed direct DFTs of reflect-padded frames") {
  torch::manual_seed(78);
  for (int n_fft : {16, 9}) {
    const int n = 50, hop = 5;
    Case c;
    c.tensors = {{"signal", randn({n})}};
    c.sizes = {{"signal_length", n}, {"n_fft", n_fft}, {"hop_length", hop}};
    auto x = vec(c.tensors["signal"]);
    int pad = n_fft / 2, frames = 1 + (n + 2 * pad - n_fft) / hop, bins = n_fft / 2 + 1;
    auto out = c.run("L7_8_STFT").at("out");
    REQUIRE(out.size(0) == bins);
    REQUIRE(out.size(1) == frames);
    std::vector<cd> want(bins * frames);
    for (int t = 0; t < frames; ++t)
      for (int f = 0; f < bins; ++f)
        for (int k = 0; k < n_fft; ++k) {
          double win = 0.5 - 0.5 * std::cos(2 * M_PI * k / n_fft);
          want[f * frames + t] += win * x[reflect(t * hop + k - pad, n)] *
                                  std::polar(1.0, -2 * M_PI * (double)((f * k) % n_fft) / n_fft);
        }
    check_close(cvec(out), want, 1e-5, "stft");
  }
}
