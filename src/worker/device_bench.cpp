#include "worker/device_bench.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <torch/torch.h>

#include "references/reference.h"
#include "worker/cuda_check.h"
#include "worker/gpu_module.h"
#include "worker/inputs.h"
#include "worker/timer.h"
#include "worker/torchscript_reference.h"

namespace kernrl {
using nlohmann::json;

namespace {

// Median time of `fn` over `iters` runs between events, after two warm-ups.
template <typename F>
double median_ms(F&& fn, int iters) {
  CuEvent a, b;
  std::vector<double> t;
  for (int i = 0; i < iters + 2; ++i) {
    CU_CHECK(cuEventRecord(a.get(), nullptr));
    fn();
    CU_CHECK(cuEventRecord(b.get(), nullptr));
    CU_CHECK(cuEventSynchronize(b.get()));
    float ms = elapsed_ms(a, b);
    if (i >= 2) t.push_back(ms);
  }
  return *trace::stats_of(t).median_ms;
}

// Device memory from cuMemAlloc, freed with its scope. Throws CudaError when it cannot be had.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) { CU_CHECK(cuMemAlloc(&ptr_, bytes)); }
  ~DeviceBuffer() { CU_CLEANUP(cuMemFree(ptr_)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr get() const { return ptr_; }

 private:
  CUdeviceptr ptr_ = 0;
};

double copy_bandwidth_gbs() {
  const size_t bytes = size_t{2} << 30;  // 2 GiB each way: far beyond L2
  DeviceBuffer src(bytes), dst(bytes);
  CU_CHECK(cuMemsetD32(src.get(), 0x3f800000, bytes / 4));
  double ms =
      median_ms([&] { CU_CHECK(cuMemcpyDtoDAsync(dst.get(), src.get(), bytes, nullptr)); }, 20);
  return 2.0 * bytes / (ms * 1e-3) / 1e9;  // bytes read plus bytes written
}

double gemm_tflops(cublasHandle_t h, cudaDataType_t type, cublasComputeType_t compute, int n) {
  torch::Dtype dt = type == CUDA_R_32F   ? torch::kFloat32
                    : type == CUDA_R_16F ? torch::kFloat16
                                         : torch::kBFloat16;
  auto opts = torch::TensorOptions().dtype(dt).device(torch::kCUDA, 0);
  torch::Tensor A = torch::randn({n, n}, opts), B = torch::randn({n, n}, opts),
                C = torch::empty({n, n}, opts);
  float alpha = 1, beta = 0;
  double ms = median_ms(
      [&] {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A.data_ptr(), type, n,
                     B.data_ptr(), type, n, &beta, C.data_ptr(), type, n, compute,
                     CUBLAS_GEMM_DEFAULT);
      },
      20);
  return 2.0 * n * n * n / (ms * 1e-3) / 1e12;
}

// FP8 (E4M3) through cuBLASLt, where the GPU has it (compute capability 8.9 and later): the "TN"
// layout cuBLASLt requires for FP8, fp32 accumulation, bf16 output. 0 when no algorithm is offered.
double fp8_tflops(const DeviceInfo& dev, int n) {
  if (dev.cc_major * 10 + dev.cc_minor < 89) return 0;
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 0;
  auto cuda = torch::TensorOptions().device(torch::kCUDA, 0);
  // Bytes below 0x70 are finite, positive E4M3 values (0x7F would be NaN).
  torch::Tensor A = torch::randint(0, 0x70, {n, n}, cuda.dtype(torch::kUInt8));
  torch::Tensor B = torch::randint(0, 0x70, {n, n}, cuda.dtype(torch::kUInt8));
  torch::Tensor D = torch::empty({n, n}, cuda.dtype(torch::kBFloat16));
  size_t ws_bytes = size_t{32} << 20;
  torch::Tensor ws = torch::empty({static_cast<int64_t>(ws_bytes)}, cuda.dtype(torch::kUInt8));
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasOperation_t trans = CUBLAS_OP_T, none = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none);
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n);
  cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n);
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                       sizeof ws_bytes);
  cublasLtMatmulHeuristicResult_t algo{};
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &algo, &found);
  double tflops = 0;
  if (found > 0) {
    float alpha = 1, beta = 0;
    bool ok = true;
    double ms = median_ms(
        [&] {
          ok &= cublasLtMatmul(lt, op, &alpha, A.data_ptr(), la, B.data_ptr(), lb, &beta,
                               D.data_ptr(), ld, D.data_ptr(), ld, &algo.algo, ws.data_ptr(),
                               ws_bytes, nullptr) == CUBLAS_STATUS_SUCCESS;
        },
        20);
    if (ok && ms > 0) tflops = 2.0 * n * n * n / (ms * 1e-3) / 1e12;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  return tflops;
}

double launch_latency_us() {
  static const char* ptx =
      ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry kernrl_empty()\n{\n "
      "ret;\n}\n";
  CUmodule m;
  CU_CHECK(cuModuleLoadData(&m, ptx));
  struct Unload {
    CUmodule m;
    ~Unload() { CU_CLEANUP(cuModuleUnload(m)); }
  } unload{m};
  CUfunction f;
  CU_CHECK(cuModuleGetFunction(&f, m, "kernrl_empty"));
  const int launches = 1000;
  double ms = median_ms(
      [&] {
        for (int i = 0; i < launches; ++i)
          CU_CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
      },
      10);
  return ms * 1000.0 / launches;
}

}  // namespace

json bench_device(const DeviceInfo& dev, int repeats) {
  cublasHandle_t h;
  cublasCreate(&h);
  json runs = json::array();
  for (int r = 0; r < std::max(1, repeats); ++r) {
    runs.push_back({{"bandwidth_gbs", copy_bandwidth_gbs()},
                    {"matmul_tflops",
                     {{"fp32", gemm_tflops(h, CUDA_R_32F, CUBLAS_COMPUTE_32F, 8192)},
                      {"tf32", gemm_tflops(h, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 8192)},
                      {"fp16", gemm_tflops(h, CUDA_R_16F, CUBLAS_COMPUTE_32F, 8192)},
                      {"bf16", gemm_tflops(h, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 8192)},
                      {"fp8", fp8_tflops(dev, 8192)}}},
                    {"launch_us", launch_latency_us()}});
  }
  cublasDestroy(h);
  // The best of the repeats is the ceiling; the spread is reported beside it.
  json best = runs[0];
  for (const auto& r : runs) {
    best["bandwidth_gbs"] =
        std::max(best["bandwidth_gbs"].get<double>(), r["bandwidth_gbs"].get<double>());
    best["launch_us"] = std::min(best["launch_us"].get<double>(), r["launch_us"].get<double>());
    for (auto& [k, v] : best["matmul_tflops"].items())  // fp8 is 0 where the GPU has none
      v = std::max(v.get<double>(), r["matmul_tflops"][k].get<double>());
  }
  return {{"device", dev.to_json()}, {"ceilings", best}, {"repeats", runs}};
}

json bench_reference(const BenchReferenceRequest& request, const DeviceInfo& dev) {
  ProblemSpec p = load_problem(*request.problem_dir);
  const Config& cfg = *request.cfg;
  uint64_t seed = request.seed.value_or(uint64_t{1});
  if (!reference_for(p)) throw std::runtime_error("no reference is registered for " + p.id);
  std::vector<TensorMap> inputs;
  for (int k = 0; k < std::max(1, cfg.input_sets); ++k)
    inputs.push_back(make_inputs(p, p.bench, derive_seed(seed, "timing" + std::to_string(k)),
                                 torch::Device(torch::kCUDA, 0)));
  CUresult err = CUDA_SUCCESS;
  trace::Stats t = time_reference(p, inputs, p.bench, cfg, &L2Flusher::shared(dev.l2_bytes), &err);
  if (err != CUDA_SUCCESS) throw std::runtime_error("timing the reference: " + cu_error_text(err));
  return {{"problem", p.id}, {"baseline", write_object(t)}};
}

}  // namespace kernrl
