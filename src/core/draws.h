// The seed of every draw of inputs one evaluation makes, each derived from the evaluation's seed
// under a tag of its own (derive_seed), so that no two draws of one evaluation are the same inputs
// and no draw of the reference kernel's evaluation (reference_kernel) is a draw of the submission
// it is the baseline of. The worker draws with these; the grading session derives the reference
// kernel's seed with reference_kernel. The tags are part of what a record's seed reproduces:
// changing one changes the inputs every seed gives.
#pragma once

#include <cstdint>
#include <string>

#include "core/hash.h"

namespace kernrl::draws {

// The order of the correctness trials (a shuffle, not a draw of inputs).
inline uint64_t trial_order(uint64_t seed) {
  return derive_seed(seed, "order");
}

// Correctness trial t (0-based).
inline uint64_t trial(uint64_t seed, int t) {
  return derive_seed(seed, "trial" + std::to_string(t));
}

// Timing input set k's first draw (the warm-up runs').
inline uint64_t timing_set(uint64_t seed, int k) {
  return derive_seed(seed, "timing" + std::to_string(k));
}

// The draw before the timed run that is sample n of the loop (0-based).
inline uint64_t sample(uint64_t seed, int n) {
  return derive_seed(seed, "sample" + std::to_string(n));
}

// Input set k's draw for timing the PyTorch baseline, after the kernel's last timed run: inputs
// no run of the kernel gets.
inline uint64_t baseline(uint64_t seed, int k) {
  return derive_seed(seed, "baseline" + std::to_string(k));
}

// The reference's run that measures its time for the plan-run deadline, before the kernel runs.
inline uint64_t bound(uint64_t seed) {
  return derive_seed(seed, "bound");
}

// The untimed run that measures each launch's share (the record's `launches`).
inline uint64_t launches(uint64_t seed) {
  return derive_seed(seed, "launches");
}

// The draw the autotuned launches' configs are timed on (Triton's @triton.autotune), before the
// kept config's correctness trials.
inline uint64_t autotune(uint64_t seed) {
  return derive_seed(seed, "autotune");
}

// The seed of the evaluation of the problem's reference kernel (timing.kernel_baseline) graded
// before a submission with `seed`: every draw of that evaluation derives from it.
inline uint64_t reference_kernel(uint64_t seed) {
  return derive_seed(seed, "kernel-baseline");
}

}  // namespace kernrl::draws
