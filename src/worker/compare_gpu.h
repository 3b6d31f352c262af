// The fused GPU evaluator of the float pass rule (compare_kernels.cu), installed into
// worker/compare.h by the worker at start-up, and its check against the torch definition.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "worker/compare.h"

namespace kernrl {

// Comparisons queued on the GPU (on the legacy default stream, after the work that produced their
// tensors) and read back together: one copy and one synchronisation for any number of them. The
// worker has one, with its device and pinned host memory allocated once.
class GpuTally {
 public:
  static GpuTally& get();
  // Forgets the comparisons queued or read so far.
  void clear();
  // Queues the float pass rule over `got` and `want` (float_stats_gpu's conditions); returns the
  // comparison's slot, or -1 when the tensors are not handled or the tally is full.
  int add_float(const torch::Tensor& got, const torch::Tensor& want, const Tolerance& tol,
                bool full);
  // Queues a bit-for-bit comparison of two contiguous CUDA tensors of the same size in bytes;
  // returns its slot, or -1 as above.
  int add_bits(const torch::Tensor& a, const torch::Tensor& b);
  // Queues a keyed fingerprint of a contiguous CUDA tensor's bytes (compare_kernels.cu): the same
  // bytes and key give the same value; any change of the bytes changes it except with a chance of
  // about 2^-64. Returns its slot, or -1 as above.
  int add_fingerprint(const torch::Tensor& t, uint64_t key);
  // Copies the results of everything queued back and waits for them. Throws CudaError.
  void read();
  // After read(): a float comparison's numbers, and whether a bit comparison found a difference.
  FloatStats float_stats(int slot, bool full) const;
  bool differs(int slot) const;
  uint64_t fingerprint(int slot) const;

 private:
  GpuTally();
  static constexpr int kSlots = 256;
  CUdeviceptr device_ = 0;
  int64_t* host_ = nullptr;     // pinned: the results, read back
  int64_t* initial_ = nullptr;  // pinned: each slot's starting values
  int used_ = 0;
  int queued_from_ = 0;  // the slots not initialised on the device yet start here
  int claim();
};

// FloatStatsFn for CUDA tensors of float, double, half and bfloat16; false for anything else.
bool float_stats_gpu(const torch::Tensor& got, const torch::Tensor& want, const Tolerance& tol,
                     bool full, FloatStats* out);

// Compares float_stats_gpu with float_stats_torch on generated tensors (every dtype, NaN and
// infinities on either side, values on the tolerance's edge, empty and odd sizes), and the bit
// comparisons with known answers (many queued before one read-back, aligned and unaligned, one
// byte changed at the start, middle or end). Returns the failures in words, one per line; empty
// when all agree. `kernrl-worker --self-test` runs it.
std::string self_test_float_stats();

}  // namespace kernrl
