// Step 6: timing with CUDA events on one stream. L2 is flushed before every sample outside the
// timed region; samples continue until the standard error is small or the time cap is reached.
#pragma once

#include <cuda.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/config.h"
#include "protocol/parts.h"
#include "worker/cuda_check.h"

namespace kernrl {

// A CUDA event (CU_EVENT_DEFAULT), destroyed with its scope. Throws CudaError when it cannot be
// created.
class CuEvent {
 public:
  CuEvent();
  ~CuEvent();
  CuEvent(CuEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  CuEvent& operator=(CuEvent&&) = delete;
  CuEvent(const CuEvent&) = delete;
  CuEvent& operator=(const CuEvent&) = delete;
  CUevent get() const { return event_; }

 private:
  CUevent event_ = nullptr;
};

// Milliseconds between two completed events (cuEventElapsedTime); throws CudaError.
float elapsed_ms(const CuEvent& from, const CuEvent& to);

// Writes twice the L2 size through a scratch buffer, evicting whatever a previous run left there.
// Throws CudaError when the buffer cannot be allocated (timing without the flush would not be the
// documented protocol) or a flush cannot be enqueued.
class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(CUstream stream);
  // The worker's flusher, allocated on first use and kept (allocating and freeing its buffer per
  // evaluation would synchronise the device each time).
  static L2Flusher& shared(size_t l2_bytes);

 private:
  CUdeviceptr buf_ = 0;
  size_t bytes_ = 0;
  unsigned value_ = 0;
};

// Calls prepare(k, timed) (untimed; `timed` is false before a warm-up run), then times run(k)
// between events, alternating k over `sets` input sets. Warm-up runs come first. A failing run (its
// launch, or the event after it) stops everything and its CUresult is returned in *err; a failing
// event call of the timing itself throws CudaError.
// The statistics are the record's (trace::Stats, trace::stats_of).
trace::Stats time_runs(const std::function<CUresult(int)>& run,
                       const std::function<void(int, bool)>& prepare, int sets, const Config& cfg,
                       CUstream stream, L2Flusher* flusher, CUresult* err);

}  // namespace kernrl
