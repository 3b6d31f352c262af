// How many blocks of a launch one SM can hold by each of its resources, after CUDA's occupancy
// calculator (cuda_occupancy.h: registers allocated per warp in units of 256 across 4
// sub-partitions, shared memory in units of 128 bytes plus the driver's reserve per block, warp and
// block slots). The driver's cuOccupancyMaxActiveBlocksPerMultiprocessor gives the occupancy
// itself; these limits say which resource it is that stops the SM holding more. Plain arithmetic
// without CUDA, so the unit tests check it.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kernrl {

// One SM's resources (device attributes; the defaults are an H100's).
struct SmResources {
  int cc_major = 9;
  int warp_size = 32;
  int max_threads_per_sm = 2048;
  int max_threads_per_block = 1024;
  int max_blocks_per_sm = 32;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int64_t shared_per_sm = 233472;
  int64_t shared_per_block_optin = 232448;
  int64_t reserved_shared_per_block = 1024;
};

// What one block of a launch needs.
struct BlockNeeds {
  int threads = 0;
  int regs_per_thread = 0;
  int64_t static_shared = 0;
  int64_t dynamic_shared = 0;
};

// Blocks per SM each resource allows, by name: "registers", "shared_memory", "warps", "blocks".
// A resource the block does not use is left out (no limit).
inline std::map<std::string, int> sm_block_limits(const SmResources& sm, const BlockNeeds& b) {
  std::map<std::string, int> out;
  if (b.threads <= 0 || sm.warp_size <= 0) return out;
  auto round_up = [](int64_t x, int64_t unit) { return (x + unit - 1) / unit * unit; };
  const int64_t warps = (b.threads + sm.warp_size - 1) / sm.warp_size;
  // Warp slots: the block's warps against the SM's; a block over the per-block limit never fits.
  out["warps"] = b.threads > sm.max_threads_per_block
                     ? 0
                     : static_cast<int>(sm.max_threads_per_sm / sm.warp_size / warps);
  out["blocks"] = sm.max_blocks_per_sm;
  // Registers: allocated per warp in units of 256, in each of 4 sub-partitions.
  if (b.regs_per_thread > 0) {
    const int64_t unit = 256, partitions = 4;
    const int64_t per_warp = round_up(int64_t{b.regs_per_thread} * sm.warp_size, unit);
    bool fits = per_warp * warps <= sm.regs_per_block &&
                per_warp * round_up(warps, partitions) <= sm.regs_per_block &&
                b.regs_per_thread <= 256;
    out["registers"] =
        fits ? static_cast<int>(sm.regs_per_sm / partitions / per_warp * partitions / warps) : 0;
  }
  // Shared memory: static + dynamic + the driver's reserve per block, in units of 128 bytes (256
  // before compute capability 8).
  const int64_t used = b.static_shared + b.dynamic_shared;
  if (used > 0 || sm.reserved_shared_per_block > 0) {
    const int64_t unit = sm.cc_major >= 8 ? 128 : 256;
    const int64_t per_block = round_up(used + sm.reserved_shared_per_block, unit);
    const int64_t most =
        std::max(sm.shared_per_block_optin, int64_t{0}) + sm.reserved_shared_per_block;
    out["shared_memory"] =
        per_block > most
            ? 0
            : static_cast<int>(std::min<int64_t>(sm.shared_per_sm / per_block, INT_MAX));
  }
  return out;
}

// The resources whose limit equals the blocks the SM actually holds (`active`, from the driver),
// in a fixed order; {"other"} when none does.
inline std::vector<std::string> limiting_resources(const std::map<std::string, int>& limits,
                                                   int active) {
  std::vector<std::string> out;
  for (const char* name : {"registers", "shared_memory", "warps", "blocks"}) {
    auto it = limits.find(name);
    if (it != limits.end() && it->second == active) out.push_back(name);
  }
  if (out.empty()) out.push_back("other");
  return out;
}

}  // namespace kernrl
