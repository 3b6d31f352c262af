#include "worker/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace kernrl {

nlohmann::json TimingStats::to_json() const {
  return {{"median_ms", median_ms},
          {"mean_ms", mean_ms},
          {"std_ms", std_ms},
          {"min_ms", min_ms},
          {"max_ms", max_ms},
          {"mad_ms", mad_ms},
          {"n", n},
          {"rel_stderr", rel_stderr}};
}

TimingStats TimingStats::from_json(const nlohmann::json& j) {
  TimingStats s;
  s.median_ms = j.at("median_ms");
  s.mean_ms = j.at("mean_ms");
  s.std_ms = j.at("std_ms");
  s.min_ms = j.at("min_ms");
  s.max_ms = j.at("max_ms");
  s.n = j.at("n");
  s.rel_stderr = j.value("rel_stderr", 0.0);
  s.mad_ms = j.value("mad_ms", 0.0);
  return s;
}

TimingStats TimingStats::from_samples(std::vector<double> ms) {
  TimingStats s;
  s.n = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  s.median_ms =
      ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / s.n;
  double var = 0;
  for (double v : ms) var += (v - s.mean_ms) * (v - s.mean_ms);
  s.std_ms = s.n > 1 ? std::sqrt(var / (s.n - 1)) : 0;
  s.rel_stderr = s.mean_ms > 0 ? s.std_ms / std::sqrt(static_cast<double>(s.n)) / s.mean_ms : 0;
  std::vector<double> dev;
  for (double v : ms) dev.push_back(std::abs(v - s.median_ms));
  std::sort(dev.begin(), dev.end());
  s.mad_ms =
      dev.size() % 2 ? dev[dev.size() / 2] : 0.5 * (dev[dev.size() / 2 - 1] + dev[dev.size() / 2]);
  return s;
}

CuEvent::CuEvent() {
  CU_CHECK(cuEventCreate(&event_, CU_EVENT_DEFAULT));
}

CuEvent::~CuEvent() {
  if (event_) CU_CLEANUP(cuEventDestroy(event_));
}

float elapsed_ms(const CuEvent& from, const CuEvent& to) {
  float ms = 0;
  CU_CHECK(cuEventElapsedTime(&ms, from.get(), to.get()));
  return ms;
}

L2Flusher::L2Flusher(size_t l2_bytes) : bytes_(2 * l2_bytes) {
  if (bytes_) CU_CHECK(cuMemAlloc(&buf_, bytes_));
}

L2Flusher::~L2Flusher() {
  if (buf_) CU_CLEANUP(cuMemFree(buf_));
}

L2Flusher& L2Flusher::shared(size_t l2_bytes) {
  static L2Flusher flusher(l2_bytes);
  return flusher;
}

void L2Flusher::flush(CUstream stream) {
  if (buf_) CU_CHECK(cuMemsetD32Async(buf_, ++value_, bytes_ / 4, stream));
}

TimingStats time_runs(const std::function<CUresult(int)>& run,
                      const std::function<void(int, bool)>& prepare, int sets, const Config& cfg,
                      CUstream stream, L2Flusher* flusher, CUresult* err) {
  *err = CUDA_SUCCESS;
  CuEvent start, stop;
  std::vector<double> samples;
  auto wall0 = std::chrono::steady_clock::now();
  double timed_total_ms = 0;
  for (int i = 0; i < cfg.warmup + cfg.max_samples; ++i) {
    int k = i % sets;
    prepare(k, i >= cfg.warmup);
    if (flusher && cfg.flush_l2) flusher->flush(stream);
    CU_CHECK(cuEventRecord(start.get(), stream));
    CUresult r = run(k);
    // After a failed run the stop event is recorded all the same (or fails with the run's error):
    // the run's result is the one that counts.
    CuResult recorded = CU_RESULT(cuEventRecord(stop.get(), stream));
    if (r == CUDA_SUCCESS && !recorded && !recorded.sticky()) recorded.check();
    // The synchronisation reports what the run did (a fault is the kernel's): returned in *err.
    if (r == CUDA_SUCCESS) r = CU_RESULT(cuEventSynchronize(stop.get())).code;
    if (r != CUDA_SUCCESS) {
      *err = r;
      break;
    }
    if (i < cfg.warmup) continue;
    float ms = elapsed_ms(start, stop);
    samples.push_back(ms);
    timed_total_ms += ms;
    int n = static_cast<int>(samples.size());
    if (n < cfg.min_samples || n % sets)
      continue;  // finish a round so every input set counts equally
    TimingStats s = TimingStats::from_samples(samples);
    double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (s.rel_stderr < cfg.target_rel_stderr || timed_total_ms / 1000.0 > cfg.time_cap_s ||
        wall_s > 3 * cfg.time_cap_s)
      break;
  }
  return TimingStats::from_samples(samples);
}

}  // namespace kernrl
