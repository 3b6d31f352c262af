#include "worker/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace kernrl {

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

trace::Stats time_runs(const std::function<CUresult(int)>& run,
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
    trace::Stats s = trace::stats_of(samples);
    double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    if (*s.rel_stderr < cfg.target_rel_stderr || timed_total_ms / 1000.0 > cfg.time_cap_s ||
        wall_s > 3 * cfg.time_cap_s)
      break;
  }
  return trace::stats_of(samples);
}

}  // namespace kernrl
