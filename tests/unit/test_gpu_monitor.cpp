#include <dlfcn.h>
#include <doctest/doctest.h>

#include "grading/gpu_monitor.h"

using namespace kernrl;

TEST_CASE("gpu monitor: without NVML (or for unknown GPUs) it reports nothing and says why") {
  GpuMonitor m;
  bool nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
  // A UUID no machine has: even with NVML present the monitor must refuse, not invent samples.
  CHECK_FALSE(m.start({"GPU-00000000-0000-0000-0000-000000000000"}));
  CHECK_FALSE(m.why().empty());
  if (!nvml) CHECK(m.why().find("libnvidia-ml") != std::string::npos);
  CHECK_FALSE(m.mean_utilization("GPU-00000000-0000-0000-0000-000000000000").has_value());
}
