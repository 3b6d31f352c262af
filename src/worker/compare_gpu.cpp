#include "worker/compare_gpu.h"

#include <cuda.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>

#include "worker/cuda_check.h"
#include "worker/gpu_module.h"

// The fatbin of compare_kernels.cu, embedded at build time (cmake/EmbedFile.cmake).
extern const unsigned char kernrl_compare_fatbin[];
extern const size_t kernrl_compare_fatbin_size;

namespace kernrl {
namespace {

struct Kernels {
  CUresult status = CUDA_ERROR_NOT_INITIALIZED;
  CUmodule module = nullptr;
  CUfunction f32 = nullptr, f64 = nullptr, f16 = nullptr, bf16 = nullptr;
};

// Loaded once into the worker's (primary) context.
const Kernels& kernels() {
  static Kernels k;
  static std::once_flag once;
  std::call_once(once, [] {
    CuResult r = CU_RESULT(cuModuleLoadData(&k.module, kernrl_compare_fatbin));
    if (r) r = CU_RESULT(cuModuleGetFunction(&k.f32, k.module, "kernrl_compare_f32"));
    if (r) r = CU_RESULT(cuModuleGetFunction(&k.f64, k.module, "kernrl_compare_f64"));
    if (r) r = CU_RESULT(cuModuleGetFunction(&k.f16, k.module, "kernrl_compare_f16"));
    if (r) r = CU_RESULT(cuModuleGetFunction(&k.bf16, k.module, "kernrl_compare_bf16"));
    k.status = r.code;
  });
  return k;
}

double from_bits(int64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

}  // namespace

bool float_stats_gpu(const torch::Tensor& got, const torch::Tensor& want, const Tolerance& tol,
                     bool full, FloatStats* out) {
  if (!got.is_cuda() || !want.is_cuda() || got.scalar_type() != want.scalar_type() ||
      !got.is_contiguous() || !want.is_contiguous() || got.numel() != want.numel())
    return false;
  const Kernels& k = kernels();
  if (k.status != CUDA_SUCCESS)
    throw std::runtime_error("cannot load the comparison kernels: " + cu_error_text(k.status));
  CUfunction f = nullptr;
  switch (got.scalar_type()) {
    case torch::kFloat:
      f = k.f32;
      break;
    case torch::kDouble:
      f = k.f64;
      break;
    case torch::kHalf:
      f = k.f16;
      break;
    case torch::kBFloat16:
      f = k.bf16;
      break;
    default:
      return false;
  }
  long long n = got.numel();
  *out = FloatStats{};
  if (n == 0) return true;
  // mismatches, first_bad (~0), err2, ref2, max_abs bits, max_rel bits
  torch::Tensor stats =
      torch::tensor({int64_t{0}, int64_t{-1}, int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0}},
                    torch::kInt64)
          .to(got.device());
  CUdeviceptr gp = reinterpret_cast<CUdeviceptr>(got.data_ptr());
  CUdeviceptr wp = reinterpret_cast<CUdeviceptr>(want.data_ptr());
  CUdeviceptr sp = reinterpret_cast<CUdeviceptr>(stats.data_ptr());
  double atol = tol.atol, rtol = tol.rtol;
  int full_flag = full ? 1 : 0;
  void* args[] = {&gp, &wp, &n, &atol, &rtol, &full_flag, &sp};
  const unsigned threads = 256;
  unsigned blocks = static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 4096));
  // The legacy default stream, which torch's default stream is: ordered after the runs that
  // produced both tensors, and before the copy back below.
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr));
  torch::Tensor h = stats.cpu();
  const int64_t* v = h.data_ptr<int64_t>();
  out->mismatches = v[0];
  out->first_bad = v[0] ? v[1] : -1;
  out->err_norm = std::sqrt(from_bits(v[2]));
  out->ref_norm = std::sqrt(from_bits(v[3]));
  if (full) {
    out->max_abs = from_bits(v[4]);
    out->max_rel = from_bits(v[5]);
  }
  return true;
}

namespace {

bool same(double a, double b, double rel) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

}  // namespace

std::string self_test_float_stats() {
  std::ostringstream fails;
  torch::NoGradGuard no_grad;
  const double inf = std::numeric_limits<double>::infinity();
  torch::manual_seed(7);
  struct Case {
    torch::ScalarType dtype;
    Tolerance tol;
  };
  const Case cases[] = {{torch::kFloat, {1e-5, 1e-4, 1e-3}},
                        {torch::kDouble, {1e-9, 1e-8, 1e-6}},
                        {torch::kHalf, {1e-3, 1e-2, 1e-2}},
                        {torch::kBFloat16, {1e-2, 2e-2, 2e-2}}};
  const int64_t sizes[] = {0, 1, 31, 4097, 1000003, int64_t{1} << 22};
  for (const Case& c : cases) {
    for (int64_t n : sizes) {
      for (int variant = 0; variant < 4; ++variant) {
        auto opt = torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA);
        torch::Tensor w = torch::randn({n}, opt) * 3;
        // Perturbations straddling the bound atol + rtol*|w|: 0.5x, 0.999x, 1.001x, 2x of it.
        torch::Tensor bound = c.tol.atol + c.tol.rtol * w.abs();
        torch::Tensor pick = torch::randint(0, 4, {n}, opt.dtype(torch::kLong));
        torch::Tensor factor = torch::tensor({0.5, 0.999, 1.001, 2.0}, opt).index({pick});
        if (variant == 0) factor = factor * 0.1;  // all within
        torch::Tensor sign = torch::randint(0, 2, {n}, opt) * 2 - 1;
        torch::Tensor g = w + sign * factor * bound;
        torch::Tensor want = w.to(c.dtype), got = g.to(c.dtype);
        if (variant >= 2 && n >= 31) {
          auto put = [&](torch::Tensor& t, int64_t i, double v) { t.index_put_({i}, v); };
          put(got, 3, std::nan(""));   // NaN where the reference has none
          put(want, 5, std::nan(""));  // and the other way round
          put(want, 7, std::nan(""));  // NaN on both sides: fine
          put(got, 7, std::nan(""));
          put(want, 11, inf);  // the same infinity: fine
          put(got, 11, inf);
          put(want, 13, inf);  // a different infinity
          put(got, 13, -inf);
          put(want, 17, 0.0);  // zero reference (no relative error)
          put(got, 19, inf);   // infinity where the reference is finite
        }
        if (variant == 3 && n >= 31) got.index_put_({torch::indexing::Slice(0, n / 2)}, 0.0);
        for (bool full : {false, true}) {
          FloatStats a = float_stats_torch(got, want, c.tol, full), b;
          if (!float_stats_gpu(got, want, c.tol, full, &b)) {
            fails << "dtype " << c10::toString(c.dtype) << ": not handled\n";
            continue;
          }
          std::ostringstream where;
          where << c10::toString(c.dtype) << " n=" << n << " variant " << variant
                << (full ? " full" : "") << ": ";
          if (a.mismatches != b.mismatches)
            fails << where.str() << "mismatches " << a.mismatches << " vs " << b.mismatches << "\n";
          if (a.first_bad != b.first_bad)
            fails << where.str() << "first_bad " << a.first_bad << " vs " << b.first_bad << "\n";
          if (!same(a.err_norm, b.err_norm, 1e-9) || !same(a.ref_norm, b.ref_norm, 1e-9))
            fails << where.str() << "norms " << a.err_norm << "/" << a.ref_norm << " vs "
                  << b.err_norm << "/" << b.ref_norm << "\n";
          if (full && (!same(a.max_abs, b.max_abs, 0) || !same(a.max_rel, b.max_rel, 0)))
            fails << where.str() << "max " << a.max_abs << "/" << a.max_rel << " vs " << b.max_abs
                  << "/" << b.max_rel << "\n";
        }
      }
    }
  }
  return fails.str();
}

}  // namespace kernrl
