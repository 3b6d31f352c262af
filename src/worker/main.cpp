// kernrl-worker: the only kernrl process that touches a GPU. One runs per GPU; the CLI sends it
// JSON requests, one per line, and it answers one JSON line each. A kernel that corrupts the CUDA
// context gets its answer written, then the worker exits and the CLI starts a fresh one.
#include <ATen/Context.h>
#include <cuda.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "worker/compare_gpu.h"
#include "worker/cuda_check.h"
#include "worker/device_bench.h"
#include "worker/evaluate.h"
#include "worker/gpu_module.h"
#include "worker/watchdog.h"

using nlohmann::json;
using namespace kernrl;

namespace {

FILE* g_protocol = nullptr;
std::mutex g_send;  // the watchdog's thread may answer too

void send(const json& j) {
  std::lock_guard<std::mutex> lock(g_send);
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  fwrite(line.data(), 1, line.size(), g_protocol);
  fflush(g_protocol);
}

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and nvidia-smi write it.
std::string uuid_text(const CUuuid& u) {
  static const char* hex = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    auto b = static_cast<unsigned char>(u.bytes[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Milliseconds from this process's start (exec) to now: the time the dynamic loader spent on
// libtorch and its static initialisers. -1 when /proc cannot tell (tick resolution, ~10 ms).
double ms_since_exec() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  size_t paren = stat.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return -1;
  std::istringstream rest(stat.substr(paren + 2));
  std::string field;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) start_ticks = std::stoull(field);
  long hz = sysconf(_SC_CLK_TCK);
  timespec now{};
  if (start_ticks == 0 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
  double now_ms = static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
  return now_ms - static_cast<double>(start_ticks) * 1e3 / static_cast<double>(hz);
}

bool query_device(DeviceInfo* d, std::string* uuid, std::string* err,
                  std::map<std::string, double>* startup_ms) {
  auto t = Clock::now();
  CuResult r = CU_RESULT(cuInit(0));
  int count = 0;
  if (r) r = CU_RESULT(cuDeviceGetCount(&count));
  if (!r || count == 0) {
    *err = !r ? "no usable CUDA driver: " + r.text() : "no CUDA device is visible";
    return false;
  }
  try {
    CUdevice dev;
    CU_CHECK(cuDeviceGet(&dev, 0));
    char name[256] = {0};
    CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
    d->name = name;
    int v = 0;
    CU_CHECK(cuDeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU_CHECK(cuDeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CU_CHECK(cuDeviceGetAttribute(&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CU_CHECK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev));
    d->l2_bytes = static_cast<size_t>(v);
    CU_CHECK(cuDeviceTotalMem(&d->memory_bytes, dev));
    CU_CHECK(cuDriverGetVersion(&d->driver));
    CUuuid u;
    if (CU_RESULT(cuDeviceGetUuid(&u, dev))) *uuid = uuid_text(u);  // optional: for NVML
    (*startup_ms)["cuda_init"] = ms_since(t);
    t = Clock::now();
    CUcontext ctx;
    r = CU_RESULT(cuDevicePrimaryCtxRetain(&ctx, dev));  // the same primary context libtorch uses
    if (r) r = CU_RESULT(cuCtxSetCurrent(ctx));
    if (!r) {
      *err = "cannot create a CUDA context: " + r.text();
      return false;
    }
    (*startup_ms)["context"] = ms_since(t);
  } catch (const CudaError& e) {
    *err = std::string("cannot query the GPU: ") + e.what();
    return false;
  }
  return true;
}

// What the first request of a worker would otherwise pay, done before the hello of a spare
// (--warm-up) so that it takes over warm: cuBLAS's handle and workspace, and torch's random,
// elementwise and reduction kernels (loaded lazily: CUDA_MODULE_LOADING=LAZY). What torch keeps
// cached is a few MiB; the kernel's own evaluation allocates as before.
void warm_up() {
  auto a = torch::randn({128, 128}, torch::TensorOptions().device(torch::Device(torch::kCUDA, 0)));
  auto b = torch::matmul(a, a) + torch::softmax(a, 1);
  (void)b.abs().sum().item<float>();
}

}  // namespace

int main(int argc, char** argv) {
  // `kernrl-worker --self-test`: checks the fused comparison against its torch definition on
  // this GPU (a CTest test on GPU hosts) and exits 0 when they agree.
  // `kernrl-worker --warm-up`: warms up before its hello (warm_up below); kernrl starts its spare
  // workers so, and the first worker of a GPU without it, so that the first start is not slowed.
  std::string arg = argc > 1 ? argv[1] : "";
  bool self_test = arg == "--self-test";
  bool warm = arg == "--warm-up";
  if (argc > 2 || (argc > 1 && !self_test && !warm)) {
    std::cerr
        << "usage: kernrl-worker [--self-test | --warm-up]   (kernrl starts workers itself)\n";
    return 2;
  }
  // Our answers go to the original stdout; anything else printing to stdout lands in stderr.
  int proto_fd = dup(1);
  dup2(2, 1);
  g_protocol = fdopen(proto_fd, "w");

  Hello hello;
  hello.protocol = kWorkerProtocol;
  hello.build_id = KERNRL_VERSION;
  std::map<std::string, double> startup_ms;
  double exec_ms = ms_since_exec();
  if (exec_ms >= 0) startup_ms["exec"] = exec_ms;
  DeviceInfo dev;
  std::string uuid, err;
  if (!query_device(&dev, &uuid, &err, &startup_ms)) {
    hello.hello = false;
    hello.error = err;
    send(hello.to_json());
    return 0;
  }
  // The references must be full fp32: no TF32 in cuBLAS or cuDNN.
  auto torch_start = Clock::now();
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setAllowTF32CuDNN(false);
  torch::zeros({1}, torch::Device(torch::kCUDA, 0));
  startup_ms["torch"] = ms_since(torch_start);
  set_float_stats_fn(float_stats_gpu);
  if (warm) {
    auto warm_start = Clock::now();
    warm_up();
    startup_ms["warm_up"] = ms_since(warm_start);
  }
  if (self_test) {
    std::string fails = self_test_float_stats();
    std::cerr << (fails.empty() ? "fused comparison agrees with torch\n" : fails);
    return fails.empty() ? 0 : 1;
  }
  int cuda_rt = 0;
#ifdef CUDA_VERSION
  cuda_rt = CUDA_VERSION;
#endif
  hello.hello = true;
  hello.device = dev;
  hello.uuid = uuid;
  hello.versions = std::map<std::string, std::string>{
      {"torch", TORCH_VERSION},
      {"cuda", std::to_string(cuda_rt / 1000) + "." + std::to_string(cuda_rt % 1000 / 10)},
      {"driver", std::to_string(dev.driver / 1000) + "." + std::to_string(dev.driver % 1000 / 10)}};
  hello.startup_ms = startup_ms;
  send(hello.to_json());

  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  Watchdog::start(
      [](const std::string& what, const trace::Watchdog& bound) {
        EvalAnswer a;
        a.status = Status::Timeout;
        a.error = trace::make_error(Status::Timeout, what);
        a.watchdog = bound;
        a.fatal = true;
        send(a.to_json());
      },
      // Whether the plan run's kernels have ended, finished or faulted: the stream of the run
      // (the context's default stream) is no longer busy.
      [ctx] {
        thread_local bool current = CU_RESULT(cuCtxSetCurrent(ctx)).code == CUDA_SUCCESS;
        return current && CU_RESULT(cuStreamQuery(nullptr)).code != CUDA_ERROR_NOT_READY;
      });

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json req;
    std::string cmd;
    try {
      req = json::parse(line);
      cmd = request_command(req);
      if (cmd == "quit") break;
      if (cmd == "eval") {
        EvalAnswer a = evaluate(EvalRequest::from_json(req), dev);
        send(a.to_json());
        if (a.is_fatal()) return 3;
        continue;
      }
      BenchAnswer b;
      if (cmd == "bench_device") {
        b.result = bench_device(dev, BenchDeviceRequest::from_json(req).repeats.value_or(1));
        b.ok = true;
      } else if (cmd == "bench_reference") {
        b.result = bench_reference(BenchReferenceRequest::from_json(req), dev);
        b.ok = true;
      } else {
        b.error = "unknown command '" + cmd + "'";
      }
      send(b.to_json());
    } catch (const std::exception& e) {
      // The grader's own failure on this request (a bad request, a missing reference, a torch
      // error outside the kernel's runs, a failed driver call): answered as such; the worker goes
      // on if CUDA still works.
      const auto* cuda = dynamic_cast<const CudaError*>(&e);
      bool fatal = (cuda && cuda->sticky()) || !CU_RESULT(cuCtxSynchronize());
      if (cmd == "eval") {
        EvalAnswer a;
        a.status = Status::InternalError;
        a.error = trace::make_error(Status::InternalError, e.what());
        a.fatal = fatal;
        send(a.to_json());
      } else {
        BenchAnswer b;
        b.error = e.what();
        b.fatal = fatal;
        send(b.to_json());
      }
      if (fatal) return 3;
    }
  }
  return 0;
}
