#include "worker/compare.h"

#include <cmath>
#include <limits>

namespace kernrl {
using nlohmann::json;

namespace {

// JSON has no NaN or infinity: write those as strings.
json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json unravel(int64_t flat, at::IntArrayRef shape) {
  json idx = json::array();
  std::vector<int64_t> out(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    out[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  for (auto v : out) idx.push_back(v);
  return idx;
}

torch::Tensor as_bits(const torch::Tensor& t) {
  switch (t.element_size()) {
    case 1:
      return t.view(torch::kUInt8);
    case 2:
      return t.view(torch::kInt16);
    case 4:
      return t.view(torch::kInt32);
    default:
      return t.view(torch::kInt64);
  }
}

FloatStatsFn g_float_stats = nullptr;

}  // namespace

void set_float_stats_fn(FloatStatsFn fn) {
  g_float_stats = fn;
}

FloatStats float_stats_torch(const torch::Tensor& got, const torch::Tensor& want,
                             const Tolerance& tol, bool full) {
  torch::NoGradGuard no_grad;
  FloatStats st;
  torch::Tensor g = got.to(torch::kFloat64), w = want.to(torch::kFloat64);
  torch::Tensor diff = (g - w).abs();
  torch::Tensor finite = torch::isfinite(w);
  torch::Tensor nan_w = torch::isnan(w), nan_g = torch::isnan(g);
  torch::Tensor inf_w = torch::isinf(w);
  torch::Tensor within = diff <= (tol.atol + tol.rtol * w.abs());
  torch::Tensor bad = nan_w.ne(nan_g) | (inf_w & g.ne(w)) | (finite & within.logical_not());
  st.mismatches = bad.sum().item<int64_t>();
  if (st.mismatches) st.first_bad = bad.flatten().nonzero()[0][0].item<int64_t>();
  if (g.numel() == 0) return st;
  if (full) {
    torch::Tensor fd = torch::where(finite, diff, torch::zeros_like(diff));
    st.max_abs = fd.max().item<double>();
    if (torch::isnan(fd).any().item<bool>()) st.max_abs = std::numeric_limits<double>::quiet_NaN();
    torch::Tensor nz = finite & w.ne(0);
    if (nz.any().item<bool>())
      st.max_rel = (diff.masked_select(nz) / w.masked_select(nz).abs()).max().item<double>();
  }
  torch::Tensor wf = torch::where(finite, w, torch::zeros_like(w));
  torch::Tensor gf = torch::where(finite, g, torch::zeros_like(g));
  st.err_norm = (gf - wf).norm().item<double>();
  st.ref_norm = wf.norm().item<double>();
  return st;
}

double relative_l2(const FloatStats& st, const Tolerance& tol, int64_t compared) {
  if (st.ref_norm > 0) return st.err_norm / st.ref_norm;
  return st.err_norm <= tol.atol * std::sqrt(static_cast<double>(compared))
             ? 0.0
             : std::numeric_limits<double>::infinity();
}

bool float_passes(const FloatStats& st, const Tolerance& tol, int64_t compared) {
  return st.mismatches == 0 && (compared == 0 || relative_l2(st, tol, compared) <= tol.rel_l2);
}

json OutputCheck::to_json() const {
  return {{"name", name},
          {"passed", passed},
          {"compared", compared},
          {"mismatches", mismatches},
          {"max_abs_err", number(max_abs_err)},
          {"max_rel_err", number(max_rel_err)},
          {"rel_l2", number(rel_l2)},
          {"first_mismatch", first_mismatch},
          {"reason", reason}};
}

namespace {

// The end of every comparison: `r` has its counts; the first mismatch, the reason and the verdict
// are added. `got` and `want` are the tensors as compared; `first_bad` is the first failing flat
// index when known, else the first set element of `bad`.
OutputCheck finish_check(OutputCheck r, const TensorSpec& spec, const Tolerance& tol,
                         const torch::Tensor& got, const torch::Tensor& want, int64_t first_bad,
                         const torch::Tensor& bad) {
  if (r.mismatches > 0) {
    int64_t i = first_bad >= 0 ? first_bad : bad.flatten().nonzero()[0][0].item<int64_t>();
    double gv = got.flatten()[i].to(torch::kCPU).to(torch::kFloat64).item<double>();
    double wv = want.flatten()[i].to(torch::kCPU).to(torch::kFloat64).item<double>();
    r.first_mismatch = {
        {"index", unravel(i, got.sizes())}, {"got", number(gv)}, {"want", number(wv)}};
    r.reason =
        std::to_string(r.mismatches) + " of " + std::to_string(r.compared) + " elements differ";
    if (spec.compare == "allclose" && spec.dtype.is_float)
      r.reason +=
          " beyond atol " + json(tol.atol).dump() + " + rtol " + json(tol.rtol).dump() + " * |ref|";
  } else if (spec.compare == "allclose" && spec.dtype.is_float && !(r.rel_l2 <= tol.rel_l2)) {
    r.reason = "relative L2 error " + json(number(r.rel_l2)).dump() + " exceeds " +
               json(tol.rel_l2).dump();
  } else {
    r.passed = true;
  }
  return r;
}

}  // namespace

OutputCheck float_output_check(const TensorSpec& spec, const torch::Tensor& got,
                               const torch::Tensor& want, const Tolerance& tol,
                               const FloatStats& st, bool full) {
  OutputCheck r;
  r.name = spec.name;
  r.compared = got.numel();
  r.mismatches = st.mismatches;
  if (r.compared && full) {
    r.max_abs_err = st.max_abs;
    r.max_rel_err = st.max_rel;
  }
  if (r.compared) r.rel_l2 = relative_l2(st, tol, r.compared);
  return finish_check(r, spec, tol, got, want, st.first_bad, torch::Tensor());
}

OutputCheck compare_output(const TensorSpec& spec, const torch::Tensor& got_in,
                           const torch::Tensor& want_in, const Tolerance& tol, int64_t rows,
                           bool full) {
  torch::NoGradGuard no_grad;
  OutputCheck r;
  r.name = spec.name;
  torch::Tensor got = got_in.contiguous(), want = want_in.contiguous();
  if (rows >= 0 && got.dim() > 0) {
    got = got.narrow(0, 0, std::min<int64_t>(rows, got.size(0)));
    want = want.narrow(0, 0, std::min<int64_t>(rows, want.size(0)));
  }
  if (got.sizes() != want.sizes()) {
    r.reason = "shape differs from the reference";
    return r;
  }
  if (got.is_complex()) {
    got = torch::view_as_real(got);
    want = torch::view_as_real(want);
  }
  if (spec.compare == "allclose" && spec.dtype.is_float) {
    FloatStats st;
    if (!g_float_stats || !g_float_stats(got, want, tol, full, &st))
      st = float_stats_torch(got, want, tol, full);
    return float_output_check(spec, got, want, tol, st, full);
  }
  // Bit for bit: the mask of differing elements.
  r.compared = got.numel();
  torch::Tensor bad = as_bits(got).ne(as_bits(want));
  if (spec.dtype.name == "bool") bad = got.view(torch::kUInt8).ne(want.view(torch::kUInt8));
  r.mismatches = bad.sum().item<int64_t>();
  if (r.mismatches) {
    auto diff = (got.to(torch::kFloat64) - want.to(torch::kFloat64)).abs();
    r.max_abs_err = diff.max().item<double>();
  }
  return finish_check(r, spec, tol, got, want, -1, bad);
}

std::vector<OutputCheck> compare_outputs(const ProblemSpec& p, const TensorMap& got,
                                         const TensorMap& want, const Tolerance* override_tol,
                                         bool full) {
  std::vector<OutputCheck> checks;
  std::map<std::string, int64_t> counts;
  std::map<std::string, bool> count_ok;
  // Count outputs first: the outputs they size compare only their first `count` rows.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& t : p.outputs) {
      bool is_count_target = false;
      for (const auto& o : p.outputs) is_count_target |= (o.count == t.name);
      if ((pass == 0) != is_count_target) continue;
      Tolerance tol = override_tol ? *override_tol : t.tolerance;
      int64_t rows = -1;
      if (!t.count.empty()) {
        if (!count_ok[t.count]) {
          OutputCheck c;
          c.name = t.name;
          c.reason = "not compared: its count output '" + t.count + "' is wrong";
          checks.push_back(c);
          continue;
        }
        rows = counts[t.count];
      }
      OutputCheck c = compare_output(t, got.at(t.name), want.at(t.name), tol, rows, full);
      if (is_count_target) {
        count_ok[t.name] = c.passed;
        counts[t.name] = want.at(t.name).flatten()[0].item<int64_t>();
      }
      checks.push_back(c);
    }
  }
  return checks;
}

}  // namespace kernrl
