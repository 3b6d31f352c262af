#include "worker/scrub.h"

#include <c10/cuda/CUDACachingAllocator.h>

#include <type_traits>

#include "worker/cuda_check.h"

namespace kernrl {
namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;

// The segments of a snapshot: libtorch 1.x returns them as a vector, 2.x in a SnapshotInfo.
template <class Snapshot>
const std::vector<alloc::SegmentInfo>& segments_of(const Snapshot& s) {
  if constexpr (std::is_same_v<Snapshot, std::vector<alloc::SegmentInfo>>)
    return s;
  else
    return s.segments;
}

}  // namespace

uint64_t scrub_free_device_memory() {
  const auto snapshot = alloc::snapshot();
  uint64_t total = 0;
  for (const alloc::SegmentInfo& s : segments_of(snapshot)) {
    if (static_cast<int64_t>(s.device) != 0) continue;  // the worker grades on device 0
    CachedSegment seg;
    seg.address = static_cast<uint64_t>(s.address);
    for (const alloc::BlockInfo& b : s.blocks)
      seg.blocks.push_back({static_cast<uint64_t>(b.size), b.allocated || b.active});
    // A freed block is reused on the stream it was allocated on: the memset there comes before.
    CUstream stream = reinterpret_cast<CUstream>(s.stream);
    for (const DeviceRange& r : free_ranges({seg})) {
      CU_CHECK(cuMemsetD8Async(static_cast<CUdeviceptr>(r.address), 0, r.bytes, stream));
      total += r.bytes;
    }
  }
  if (total > 0) CU_CHECK(cuCtxSynchronize());
  return total;
}

}  // namespace kernrl
