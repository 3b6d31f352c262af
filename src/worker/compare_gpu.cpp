#include "worker/compare_gpu.h"

#include <cuda.h>

#include <algorithm>
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
  CUfunction f32 = nullptr, f64 = nullptr, f16 = nullptr, bf16 = nullptr, differ = nullptr,
             fingerprint = nullptr;
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
    if (r) r = CU_RESULT(cuModuleGetFunction(&k.differ, k.module, "kernrl_count_differ"));
    if (r) r = CU_RESULT(cuModuleGetFunction(&k.fingerprint, k.module, "kernrl_fingerprint"));
    k.status = r.code;
  });
  return k;
}

double from_bits(int64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

const Kernels& loaded_kernels() {
  const Kernels& k = kernels();
  if (k.status != CUDA_SUCCESS)
    throw std::runtime_error("cannot load the comparison kernels: " + cu_error_text(k.status));
  return k;
}

constexpr int kWords = 6;  // per slot: the Stats of compare_kernels.cu, or a count in word 0

// Blocks of 256 threads (the kernels' kThreads), one element or word per thread and round, at most
// 1024 blocks (enough to fill the GPU; each block adds its result with one atomic per value).
unsigned grid_for(long long n) {
  return static_cast<unsigned>(std::max<long long>(1, std::min<long long>((n + 255) / 256, 1024)));
}

}  // namespace

GpuTally& GpuTally::get() {
  static GpuTally tally;
  return tally;
}

GpuTally::GpuTally() {
  size_t bytes = sizeof(int64_t) * kWords * kSlots;
  CU_CHECK(cuMemAlloc(&device_, bytes));
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&host_), bytes));
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&initial_), bytes));
  // mismatches 0, first_bad ~0 (no failing index yet), sums and maxima 0.
  for (int i = 0; i < kSlots; ++i)
    for (int w = 0; w < kWords; ++w) initial_[i * kWords + w] = w == 1 ? -1 : 0;
}

void GpuTally::clear() {
  used_ = 0;
}

int GpuTally::claim() {
  if (used_ == kSlots) return -1;
  // The first slot of a batch initialises them all: one small copy from pinned memory, queued.
  if (used_ == 0)
    CU_CHECK(cuMemcpyHtoDAsync(device_, initial_, sizeof(int64_t) * kWords * kSlots, nullptr));
  return used_++;
}

int GpuTally::add_float(const torch::Tensor& got, const torch::Tensor& want, const Tolerance& tol,
                        bool full) {
  if (!got.is_cuda() || !want.is_cuda() || got.scalar_type() != want.scalar_type() ||
      !got.is_contiguous() || !want.is_contiguous() || got.numel() != want.numel())
    return -1;
  const Kernels& k = loaded_kernels();
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
      return -1;
  }
  int slot = claim();
  if (slot < 0 || got.numel() == 0) return slot;
  long long n = got.numel();
  CUdeviceptr gp = reinterpret_cast<CUdeviceptr>(got.data_ptr());
  CUdeviceptr wp = reinterpret_cast<CUdeviceptr>(want.data_ptr());
  CUdeviceptr sp = device_ + sizeof(int64_t) * kWords * slot;
  double atol = tol.atol, rtol = tol.rtol;
  int full_flag = full ? 1 : 0;
  void* args[] = {&gp, &wp, &n, &atol, &rtol, &full_flag, &sp};
  // The legacy default stream, which torch's default stream is: ordered after the runs that
  // produced both tensors, and before the copy back in read().
  CU_CHECK(cuLaunchKernel(f, grid_for(n), 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  return slot;
}

int GpuTally::add_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.is_cuda() || !b.is_cuda() || !a.is_contiguous() || !b.is_contiguous() ||
      a.nbytes() != b.nbytes())
    return -1;
  const Kernels& k = loaded_kernels();
  int slot = claim();
  long long n = static_cast<long long>(a.nbytes());
  if (slot < 0 || n == 0) return slot;
  CUdeviceptr ap = reinterpret_cast<CUdeviceptr>(a.data_ptr());
  CUdeviceptr bp = reinterpret_cast<CUdeviceptr>(b.data_ptr());
  CUdeviceptr sp = device_ + sizeof(int64_t) * kWords * slot;
  void* args[] = {&ap, &bp, &n, &sp};
  CU_CHECK(
      cuLaunchKernel(k.differ, grid_for(n / 16 + 1), 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  return slot;
}

int GpuTally::add_fingerprint(const torch::Tensor& t, uint64_t key) {
  if (!t.is_cuda() || !t.is_contiguous()) return -1;
  const Kernels& k = loaded_kernels();
  int slot = claim();
  long long n = static_cast<long long>(t.nbytes());
  if (slot < 0 || n == 0) return slot;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(t.data_ptr());
  CUdeviceptr sp = device_ + sizeof(int64_t) * kWords * slot;
  unsigned long long key_arg = key;
  void* args[] = {&p, &n, &key_arg, &sp};
  CU_CHECK(cuLaunchKernel(k.fingerprint, grid_for((n + 7) / 8), 1, 1, 256, 1, 1, 0, nullptr, args,
                          nullptr));
  return slot;
}

void GpuTally::read() {
  if (used_ == 0) return;
  CU_CHECK(cuMemcpyDtoHAsync(host_, device_, sizeof(int64_t) * kWords * used_, nullptr));
  CU_CHECK(cuStreamSynchronize(nullptr));
}

FloatStats GpuTally::float_stats(int slot, bool full) const {
  const int64_t* v = host_ + kWords * slot;
  FloatStats out;
  out.mismatches = v[0];
  out.first_bad = v[0] ? v[1] : -1;
  out.err_norm = std::sqrt(from_bits(v[2]));
  out.ref_norm = std::sqrt(from_bits(v[3]));
  if (full) {
    out.max_abs = from_bits(v[4]);
    out.max_rel = from_bits(v[5]);
  }
  return out;
}

bool GpuTally::differs(int slot) const {
  return host_[kWords * slot] != 0;
}

uint64_t GpuTally::fingerprint(int slot) const {
  return static_cast<uint64_t>(host_[kWords * slot]);
}

bool float_stats_gpu(const torch::Tensor& got, const torch::Tensor& want, const Tolerance& tol,
                     bool full, FloatStats* out) {
  GpuTally& tally = GpuTally::get();
  tally.clear();
  int slot = tally.add_float(got, want, tol, full);
  if (slot < 0) return false;
  tally.read();
  *out = tally.float_stats(slot, full);
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
  // Bit comparisons, many queued before one read-back: every size class, aligned and unaligned
  // views, equal and with one byte changed at the start, the middle or the end.
  GpuTally& tally = GpuTally::get();
  tally.clear();
  struct Bits {
    std::string what;
    int slot;
    bool differs;
  };
  std::vector<Bits> queued;
  auto u8 = torch::TensorOptions().dtype(torch::kUInt8).device(torch::kCUDA);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{4099},
                    (int64_t{1} << 22) + 3}) {
    for (int64_t offset : {0, 1, 4}) {
      torch::Tensor base = torch::randint(0, 256, {n + offset}, u8);
      torch::Tensor a = base.narrow(0, offset, n), b = a.clone();
      for (int where = -1; where < 3 && (where < 0 || n > 0); ++where) {
        torch::Tensor c = b.clone();
        if (where >= 0) {
          int64_t i = where == 0 ? 0 : where == 1 ? n / 2 : n - 1;
          c.index_put_({i}, (c[i].item<int>() + 1) % 256);
        }
        std::ostringstream what;
        what << "bits n=" << n << " offset " << offset << " change " << where;
        queued.push_back({what.str(), tally.add_bits(a, c), where >= 0});
      }
    }
  }
  // Fingerprints: equal bytes in two tensors (aligned or not) give equal values under one key, and
  // one changed byte or another key gives another value.
  struct Print {
    std::string what;
    int a, b;
    bool same;
  };
  std::vector<Print> prints;
  for (int64_t n :
       {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{9}, int64_t{4099}, (int64_t{1} << 22) + 5}) {
    for (int64_t offset : {0, 3}) {
      torch::Tensor base = torch::randint(0, 256, {n + offset}, u8);
      torch::Tensor a = base.narrow(0, offset, n), same = a.clone(), changed = a.clone();
      changed.index_put_({n - 1}, (changed[n - 1].item<int>() + 1) % 256);
      std::ostringstream what;
      what << "fingerprint n=" << n << " offset " << offset;
      uint64_t key = 0x1234567 + static_cast<uint64_t>(n);
      int fa = tally.add_fingerprint(a, key);
      prints.push_back({what.str() + " same bytes", fa, tally.add_fingerprint(same, key), true});
      prints.push_back(
          {what.str() + " last byte changed", fa, tally.add_fingerprint(changed, key), false});
      prints.push_back({what.str() + " another key", fa, tally.add_fingerprint(a, key + 1), false});
    }
  }
  tally.read();
  for (const Print& q : prints) {
    if (q.a < 0 || q.b < 0)
      fails << q.what << ": not handled\n";
    else if ((tally.fingerprint(q.a) == tally.fingerprint(q.b)) != q.same)
      fails << q.what << ": fingerprints " << tally.fingerprint(q.a) << " and "
            << tally.fingerprint(q.b) << "\n";
  }
  for (const Bits& q : queued) {
    if (q.slot < 0)
      fails << q.what << ": not handled\n";
    else if (tally.differs(q.slot) != q.differs)
      fails << q.what << ": differs " << tally.differs(q.slot) << ", want " << q.differs << "\n";
  }
  return fails.str();
}

}  // namespace kernrl
