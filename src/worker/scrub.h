// Overwriting what the grader's own computations leave in freed device memory. libtorch's caching
// allocator keeps freed blocks mapped and hands them out again without clearing them, so the
// outputs and temporaries of a reference or a baseline stay readable by any kernel that scans the
// worker's memory until the block is reused. scrub_free_device_memory() zeroes every block the
// allocator holds free, before a kernel may run again (docs/security.md, "Leftovers of the
// grader's own computations").
#pragma once

#include <cstdint>
#include <vector>

namespace kernrl {

// One block of a segment of the caching allocator, as its snapshot lists them: the blocks of a
// segment lie one after the other from the segment's address.
struct CachedBlock {
  uint64_t bytes = 0;
  bool in_use = false;  // handed out to a tensor, or still used by a stream
};

struct CachedSegment {
  uint64_t address = 0;
  std::vector<CachedBlock> blocks;
};

struct DeviceRange {
  uint64_t address = 0;
  uint64_t bytes = 0;
  bool operator==(const DeviceRange& o) const { return address == o.address && bytes == o.bytes; }
};

// The free blocks of `segments` as address ranges, neighbouring free blocks of a segment merged
// into one range, in the order of the segments.
inline std::vector<DeviceRange> free_ranges(const std::vector<CachedSegment>& segments) {
  std::vector<DeviceRange> out;
  for (const CachedSegment& s : segments) {
    uint64_t at = s.address;
    bool open = false;  // the last range in `out` ends at `at` and may grow
    for (const CachedBlock& b : s.blocks) {
      if (!b.in_use && b.bytes > 0) {
        if (open)
          out.back().bytes += b.bytes;
        else
          out.push_back({at, b.bytes});
        open = true;
      } else {
        open = false;
      }
      at += b.bytes;
    }
  }
  return out;
}

// Zeroes every block libtorch's caching allocator holds free on the worker's device, on the
// stream each segment belongs to, and waits for it. Returns the bytes overwritten. A CUDA error
// is thrown as CudaError (worker/cuda_check.h).
uint64_t scrub_free_device_memory();

}  // namespace kernrl
