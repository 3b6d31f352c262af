// How long a GPU takes to report a kernel's fault, measured from the launch to the moment the
// host sees the error, for the faults kernrl grades (trap, misaligned access, illegal addresses),
// and how a kernel that never ends looks meanwhile. Built and run by scripts/fault_latency.py;
// one fault per process (a fault leaves the CUDA context unusable).
//
//   fault_latency KIND WAIT [LIMIT_S]
//     KIND: ok | trap | trap1 | misaligned | illegal_write | illegal_read | read_past | hang
//     WAIT: query (cudaStreamQuery in a loop) | event (cudaEventQuery in a loop)
//           | sync (cudaStreamSynchronize) | blocking (the same, blocking-sync scheduling)
//   fault_latency neighbour SECONDS   short kernels back to back: the longest stall seen
//
// Prints one JSON line: init_ms (CUDA start and context), result_ms (launch to the answer),
// result (the error's name, or "still_running" after LIMIT_S).
#include <cuda_runtime.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static double now_ms() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__global__ void k_ok(float* x) {
  x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}
__global__ void k_trap(float* x) {
  if (threadIdx.x == 0) __trap();
  x[0] = 1.0f;
}
__global__ void k_misaligned(const float* x, float* out) {
  const float4 v = *reinterpret_cast<const float4*>(x + 1 + 4 * threadIdx.x);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v.x + v.w;
}
__global__ void k_illegal_write(float* x) {
  x[(size_t)1 << 40] = 1.0f;
}
__global__ void k_illegal_read(const float* x, float* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = x[((size_t)1 << 40) + threadIdx.x];
}
// Reads ever further past a 4 MiB buffer, as a kernel with a hard-coded size does.
__global__ void k_read_past(const float* x, float* out) {
  float s = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < ((size_t)1 << 34);
       i += (size_t)gridDim.x * blockDim.x * 1024)
    s += x[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void k_hang(const float* x) {
  while (*(volatile const float*)x == *(volatile const float*)x) {
  }
}

static int neighbour(double seconds) {
  float* x;
  double t0 = now_ms();
  if (cudaMalloc(&x, 1 << 20) != cudaSuccess) return 1;
  double init = now_ms() - t0, worst = 0, total = 0;
  long n = 0, over1 = 0, over10 = 0;
  for (double end = now_ms() + seconds * 1e3; now_ms() < end; ++n) {
    double t = now_ms();
    k_ok<<<64, 256>>>(x);
    cudaError_t e = cudaStreamSynchronize(0);
    double d = now_ms() - t;
    if (e != cudaSuccess) {
      printf("{\"kind\":\"neighbour\",\"result\":\"%s\"}\n", cudaGetErrorName(e));
      return 1;
    }
    total += d;
    worst = d > worst ? d : worst;
    over1 += d > 1;
    over10 += d > 10;
  }
  printf(
      "{\"kind\":\"neighbour\",\"init_ms\":%.2f,\"launches\":%ld,\"mean_ms\":%.4f,"
      "\"max_ms\":%.2f,\"over_1ms\":%ld,\"over_10ms\":%ld}\n",
      init, n, total / (n ? n : 1), worst, over1, over10);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && !strcmp(argv[1], "neighbour")) return neighbour(atof(argv[2]));
  if (argc < 3) {
    fprintf(stderr, "usage: fault_latency KIND WAIT [LIMIT_S] | neighbour SECONDS\n");
    return 2;
  }
  const char* kind = argv[1];
  const char* wait = argv[2];
  double limit_ms = (argc > 3 ? atof(argv[3]) : 10) * 1e3;
  double t0 = now_ms();
  if (!strcmp(wait, "blocking")) cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  float *x, *out;
  const int blocks = 4096, threads = 256;
  if (cudaMalloc(&x, 4 << 20) != cudaSuccess ||
      cudaMalloc(&out, blocks * threads * 4) != cudaSuccess)
    return 1;
  cudaMemset(x, 0, 4 << 20);
  cudaEvent_t done;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  cudaDeviceSynchronize();
  double init = now_ms() - t0;

  double t = now_ms();
  if (!strcmp(kind, "ok"))
    k_ok<<<blocks, threads>>>(out);
  else if (!strcmp(kind, "trap"))
    k_trap<<<blocks, threads>>>(out);
  else if (!strcmp(kind, "trap1"))
    k_trap<<<1, threads>>>(out);
  else if (!strcmp(kind, "misaligned"))
    k_misaligned<<<blocks, threads>>>(x, out);
  else if (!strcmp(kind, "illegal_write"))
    k_illegal_write<<<blocks, threads>>>(out);
  else if (!strcmp(kind, "illegal_read"))
    k_illegal_read<<<blocks, threads>>>(x, out);
  else if (!strcmp(kind, "read_past"))
    k_read_past<<<256, threads>>>(x, out);
  else if (!strcmp(kind, "hang"))
    k_hang<<<blocks, threads>>>(x);
  else
    return 2;
  cudaEventRecord(done, 0);
  cudaError_t e = cudaSuccess;
  long polls = 0;
  bool still = false;
  if (!strcmp(wait, "query") || !strcmp(wait, "event") || !strcmp(kind, "hang")) {
    for (;; ++polls) {
      e = !strcmp(wait, "event") ? cudaEventQuery(done) : cudaStreamQuery(0);
      if (e != cudaErrorNotReady) break;
      if (now_ms() - t > limit_ms) {
        still = true;
        break;
      }
    }
  } else {
    e = cudaStreamSynchronize(0);
  }
  double took = now_ms() - t;
  printf(
      "{\"kind\":\"%s\",\"wait\":\"%s\",\"init_ms\":%.2f,\"result_ms\":%.3f,\"polls\":%ld,"
      "\"result\":\"%s\"}\n",
      kind, wait, init, took, polls, still ? "still_running" : cudaGetErrorName(e));
  fflush(stdout);
  // The exit (and the context's teardown) is timed by the caller.
  return 0;
}
