#include "grading/gpu_monitor.h"

#include <dlfcn.h>

#include <chrono>

namespace kernrl {
namespace {

// The few NVML entry points used, with NVML's C signatures (nvml.h): every call returns 0 on
// success; a device is an opaque handle; utilisation is {gpu %, memory %}.
using NvmlReturn = int;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ByUuidFn = NvmlReturn (*)(const char*, void**);
using UtilFn = NvmlReturn (*)(void*, NvmlUtilization*);

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

GpuMonitor::~GpuMonitor() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (lib_) {
    if (auto shutdown = symbol<ShutdownFn>(lib_, "nvmlShutdown")) shutdown();
    dlclose(lib_);
  }
}

bool GpuMonitor::start(const std::vector<std::string>& uuids) {
  if (thread_.joinable()) return true;
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    why_ = "NVML (libnvidia-ml.so.1) is not available";
    return false;
  }
  auto init = symbol<InitFn>(lib_, "nvmlInit_v2");
  auto by_uuid = symbol<ByUuidFn>(lib_, "nvmlDeviceGetHandleByUUID");
  auto util = symbol<UtilFn>(lib_, "nvmlDeviceGetUtilizationRates");
  if (!init || !by_uuid || !util || init() != 0) {
    why_ = "NVML could not be initialised";
    return false;
  }
  for (const auto& u : uuids) {
    void* h = nullptr;
    if (!u.empty() && by_uuid(u.c_str(), &h) == 0) series_[u].handle = h;
  }
  if (series_.empty()) {
    why_ = "NVML does not know the workers' GPUs";
    return false;
  }
  thread_ = std::thread([this] { sample_loop(); });
  return true;
}

void GpuMonitor::sample_loop() {
  auto util = symbol<UtilFn>(lib_, "nvmlDeviceGetUtilizationRates");
  while (!stop_) {
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto& [uuid, s] : series_) {
        NvmlUtilization u{};
        if (util(s.handle, &u) == 0) {
          s.sum += u.gpu;
          ++s.samples;
        }
      }
    }
    for (int i = 0; i < 10 && !stop_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<double> GpuMonitor::mean_utilization(const std::string& uuid) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = series_.find(uuid);
  if (it == series_.end() || it->second.samples == 0) return std::nullopt;
  return it->second.sum / static_cast<double>(it->second.samples);
}

}  // namespace kernrl
