// NVRTC's compile time by phase for header-heavy kernels, without and with its automatic
// precompiled headers (scripts/nvrtc-pch-bench.sh builds and runs this; no GPU needed).
//   pch_bench KERNEL cold           one compile as kernrl makes it (`--time=-`: phases)
//   pch_bench KERNEL pch HEADER...  a trusted anchor compile that pre-includes HEADER... with
//                                   `-pch` (the PCH is made from kernrl's own text), then the
//                                   kernel compiled in the same process with the same pre-includes
// Prints one JSON line: total seconds and the phases (ms) of each compile.
#include <nvrtc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "headers/prelude.h"

namespace {

std::map<std::string, std::string> kKernels = {
    {"plain", R"(__global__ void scale(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
})"},
    {"cub_block_reduce", R"(#include <cub/block/block_reduce.cuh>
__global__ void row_sum(const float* x, float* y, int n) {
  using R = cub::BlockReduce<float, 256>;
  __shared__ typename R::TempStorage t;
  float v = 0;
  for (int i = threadIdx.x; i < n; i += 256) v += x[blockIdx.x * n + i];
  float s = R(t).Sum(v);
  if (threadIdx.x == 0) y[blockIdx.x] = s;
})"},
    {"cub_radix_sort_scan", R"(#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
__global__ void sort_scan(const unsigned* in, unsigned* out, unsigned* sums) {
  using Sort = cub::BlockRadixSort<unsigned, 128, 4>;
  using Scan = cub::BlockScan<unsigned, 128>;
  __shared__ union { typename Sort::TempStorage s; typename Scan::TempStorage c; } t;
  unsigned k[4];
  for (int i = 0; i < 4; ++i) k[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i];
  Sort(t.s).Sort(k);
  __syncthreads();
  Scan(t.c).ExclusiveSum(k, k);
  for (int i = 0; i < 4; ++i) out[blockIdx.x * 512 + threadIdx.x * 4 + i] = k[i];
  if (threadIdx.x == 0) sums[blockIdx.x] = k[0];
})"},
    {"cooperative_groups_reduce", R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void warp_sums(const float* x, float* y, int n) {
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  float s = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(y, s);
})"},
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One compile; appends {"s": seconds, "phases": {...}, "log": "..."} to `out`.
// *heap_needed: the PCH heap the compile needed when it ran out of it (0 otherwise).
bool compile(const std::string& name, const std::string& src, const std::vector<std::string>& extra,
             std::ostringstream& out, size_t* heap_needed = nullptr) {
  std::string inc = KERNRL_CUDA_INCLUDE;
  std::vector<std::string> opts = {"-arch=sm_90a",       "-std=c++17",
                                   "-default-device",    "-I" + inc,
                                   "-I" + inc + "/cccl", "--pre-include=kernrl_prelude.h",
                                   "-DKERNRL=1",         "--time=-"};
  opts.insert(opts.end(), extra.begin(), extra.end());
  // PCH_BENCH_OPTS: further NVRTC options, space-separated, for every compile (e.g. to compare
  // -split-compile=0 or -Xptxas settings against kernrl's defaults).
  if (const char* more = std::getenv("PCH_BENCH_OPTS")) {
    std::istringstream words(more);
    for (std::string w; words >> w;) opts.push_back(w);
  }
  std::vector<const char*> copts;
  for (const auto& o : opts) copts.push_back(o.c_str());
  const char* hdr[] = {kernrl::kPrelude};
  const char* hdr_name[] = {kernrl::kPreludeName};
  double t0 = now_s();
  nvrtcProgram p;
  nvrtcCreateProgram(&p, src.c_str(), (name + ".cu").c_str(), 1, hdr, hdr_name);
  // PCH_BENCH_NAME: a name expression to instantiate, as kernrl adds one per launched kernel.
  if (const char* expr = std::getenv("PCH_BENCH_NAME"); expr && name != "kernrl_pch_anchor")
    nvrtcAddNameExpression(p, expr);
  nvrtcResult rc = nvrtcCompileProgram(p, static_cast<int>(copts.size()), copts.data());
  size_t n = 0;
  nvrtcGetCUBINSize(p, &n);
  double s = now_s() - t0;
  size_t log_n = 0;
  nvrtcGetProgramLogSize(p, &log_n);
  std::string log(log_n, '\0');
  if (log_n) nvrtcGetProgramLog(p, log.data());
  nvrtcResult pch = nvrtcGetPCHCreateStatus(p);
  if (heap_needed) {
    *heap_needed = 0;
    if (pch == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) nvrtcGetPCHHeapSizeRequired(p, heap_needed);
  }
  nvrtcDestroyProgram(&p);
  // "FILE, phase, ms, ms" rows of --time=-.
  out << "{\"s\": " << s << ", \"ok\": " << (rc == NVRTC_SUCCESS ? "true" : "false")
      << ", \"pch_created\": " << (pch == NVRTC_SUCCESS ? "true" : "false")
      << ", \"pch_status\": \"" << nvrtcGetErrorString(pch) << "\""
      << ", \"pch_used\": "
      << (log.find("using precompiled header") != std::string::npos ? "true" : "false")
      << ", \"phases\": {";
  std::istringstream rows(log);
  std::string row;
  bool first = true;
  while (std::getline(rows, row)) {
    size_t a = row.find(", "), b = row.find(", ", a + 2), c = row.find(", ", b + 2);
    if (a == std::string::npos || b == std::string::npos || c == std::string::npos) continue;
    std::string phase = row.substr(a + 2, b - a - 2), ms = row.substr(b + 2, c - b - 2);
    if (ms.empty() || !std::isdigit(static_cast<unsigned char>(ms[0]))) continue;
    out << (first ? "" : ", ") << "\"" << phase << "\": " << ms;
    first = false;
  }
  out << "}}";
  if (std::getenv("PCH_BENCH_LOG"))
    std::fprintf(stderr, "%s log:\n%s\n", name.c_str(), log.c_str());
  if (rc != NVRTC_SUCCESS)
    std::fprintf(stderr, "%s: %s\n%s\n", name.c_str(), nvrtcGetErrorString(rc), log.c_str());
  return rc == NVRTC_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  // PCH_BENCH_SOURCE=FILE: FILE's text is the kernel (named by the first argument).
  if (const char* file = std::getenv("PCH_BENCH_SOURCE")) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    if (argc > 1) kKernels[argv[1]] = text.str();
  }
  if (argc < 3 || !kKernels.count(argv[1])) {
    std::fprintf(stderr, "usage: pch_bench KERNEL cold|pch [HEADER...]\n");
    return 2;
  }
  std::string name = argv[1], mode = argv[2];
  std::ostringstream out;
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  out << "{\"kernel\": \"" << name << "\", \"mode\": \"" << mode << "\", \"nvrtc\": \"" << major
      << "." << minor << "\", ";
  bool ok = true;
  if (mode == "cold") {
    out << "\"compile\": ";
    ok = compile(name, kKernels.at(name), {}, out);
  } else {
    // pch: NVRTC's automatic mode; explicit: --create-pch FILE, then --use-pch FILE.
    std::string file = std::getenv("PCH_FILE")
                           ? std::getenv("PCH_FILE")
                           : "/tmp/kernrl-pch-bench-" + std::to_string(getpid()) + ".pch";
    std::vector<std::string> pre = {"--pch-messages=true"};
    if (mode == "pch") pre.push_back("-pch");
    for (int i = 3; i < argc; ++i) pre.push_back(std::string("--pre-include=") + argv[i]);
    std::vector<std::string> use = pre;
    if (mode == "use") {  // a PCH file another process made (PCH_FILE): this kernel only
      use.push_back("--use-pch=" + file);
      out << "\"compile\": ";
      ok = compile(name, "#line 1 \"" + name + ".cu\"\n" + kKernels.at(name), use, out);
      out << "}";
      std::printf("%s\n", out.str().c_str());
      return ok ? 0 : 1;
    }
    if (mode == "explicit") {
      pre.push_back("--create-pch=" + file);
      use.push_back("--use-pch=" + file);
    }
    out << "\"anchor\": ";
    const std::string anchor = "__global__ void kernrl_pch_anchor() {}\n";
    size_t heap = 0;
    ok = compile("kernrl_pch_anchor", anchor, pre, out, &heap);
    if (ok && heap > 0) {  // the PCH heap was too small: grown to what it needs, made again
      nvrtcSetPCHHeapSize(heap);
      out << ", \"heap_bytes\": " << heap << ", \"anchor_again\": ";
      ok = compile("kernrl_pch_anchor", anchor, pre, out);
    }
    out << ", \"compile\": ";
    // The kernel as kernrl sends it: a #line first (it keeps a model's line numbers).
    ok = ok && compile(name, "#line 1 \"" + name + ".cu\"\n" + kKernels.at(name), use, out);
    if (!std::getenv("PCH_FILE")) std::remove(file.c_str());
  }
  out << "}";
  std::printf("%s\n", out.str().c_str());
  return ok ? 0 : 1;
}
