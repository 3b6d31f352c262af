// How busy each GPU is, as NVML measures it: the share of time a kernel was running, sampled every
// 100 ms on a thread. NVML (libnvidia-ml, part of the NVIDIA driver) is loaded at run time, so
// kernrl needs nothing of it where there is no GPU; without it the monitor says why and reports
// nothing. GPUs are named by UUID ("GPU-8c9f..."), as the workers' hellos report them, so that
// NVML's numbering and CUDA_VISIBLE_DEVICES never need to agree.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kernrl {

class GpuMonitor {
 public:
  GpuMonitor() = default;
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  // Starts sampling the GPUs with these UUIDs. Returns false (and why()) when NVML is not usable.
  bool start(const std::vector<std::string>& uuids);
  // Mean utilisation (0-100) of one GPU since start(), or nullopt without samples.
  std::optional<double> mean_utilization(const std::string& uuid);
  const std::string& why() const { return why_; }

 private:
  struct Series {
    void* handle = nullptr;
    double sum = 0;
    long samples = 0;
  };
  void sample_loop();
  void* lib_ = nullptr;
  std::string why_;
  std::mutex mu_;
  std::map<std::string, Series> series_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace kernrl
