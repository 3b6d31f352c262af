// `kernrl bench`: the GPU's ceilings (memory bandwidth, matrix throughput through cuBLAS, launch
// latency) and reference timings for baseline files.
#pragma once

#include <nlohmann/json.hpp>

#include "worker/evaluate.h"

namespace kernrl {

// {"bandwidth_gbs", "matmul_tflops": {fp32, tf32, fp16, bf16, fp8}, "launch_us", "repeats": [...]}
// (fp8 is 0 on GPUs without FP8 tensor cores)
nlohmann::json bench_device(const DeviceInfo& dev, int repeats);

// Times the reference of the request's problem at its bench size with the grading protocol:
// {"problem", "baseline"}. Throws when it cannot.
nlohmann::json bench_reference(const BenchReferenceRequest& request, const DeviceInfo& dev);

}  // namespace kernrl
