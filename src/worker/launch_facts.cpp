#include "worker/launch_facts.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <utility>

#include "protocol/struct_arg.h"
#include "protocol/tensor_accessor.h"
#include "worker/occupancy.h"
#include "worker/timer.h"

namespace kernrl {

namespace {

SmResources query_sm_resources() {
  CUdevice dev;
  CU_CHECK(cuCtxGetDevice(&dev));
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    CU_CHECK(cuDeviceGetAttribute(&v, a, dev));
    return v;
  };
  SmResources sm;
  sm.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  sm.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  sm.max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  sm.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  sm.max_blocks_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  sm.regs_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  sm.regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  sm.shared_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  sm.shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  sm.reserved_shared_per_block = attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  return sm;
}

// The worker drives one device: its attributes are read once.
const SmResources& sm_resources() {
  static const SmResources sm = query_sm_resources();
  return sm;
}

int function_attribute(CUfunction f, CUfunction_attribute a) {
  int v = 0;
  CU_CHECK(cuFuncGetAttribute(&v, a, f));
  return v;
}

// The driver's occupancy for the launch's block size and dynamic shared memory, and the limit of
// each resource; none when the driver cannot tell (a block it would refuse to launch).
std::optional<trace::Occupancy> occupancy_of(const ReadyLaunch& l, int registers,
                                             int static_shared_bytes) {
  const SmResources& sm = sm_resources();
  int64_t threads = int64_t{l.block[0]} * l.block[1] * l.block[2];
  if (threads <= 0 || threads > INT_MAX || sm.warp_size <= 0) return std::nullopt;
  int active = 0;
  CuResult r = CU_RESULT(cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &active, l.fn, static_cast<int>(threads), l.shared_bytes));
  if (!r) {
    if (r.sticky()) r.check();
    return std::nullopt;
  }
  trace::Occupancy o;
  int warps_per_block = static_cast<int>((threads + sm.warp_size - 1) / sm.warp_size);
  int active_warps = active * warps_per_block;
  int max_warps = sm.max_threads_per_sm / sm.warp_size;
  o.active_blocks_per_sm = active;
  o.active_warps_per_sm = active_warps;
  o.max_warps_per_sm = max_warps;
  o.fraction = max_warps > 0 ? std::min(1.0, static_cast<double>(active_warps) / max_warps) : 0.0;
  BlockNeeds needs;
  needs.threads = static_cast<int>(threads);
  needs.regs_per_thread = registers;
  needs.static_shared = static_shared_bytes;
  needs.dynamic_shared = l.shared_bytes;
  std::map<std::string, int> limits = sm_block_limits(sm, needs);
  o.limited_by = limiting_resources(limits, active);
  o.block_limits = std::move(limits);
  return o;
}

// The configuration and resources of an entry's first launch (the part of its facts present only
// when it launched at all).
void describe_first_launch(const ReadyLaunch& first, trace::Launch& f) {
  auto dims = [](const auto& xyz) {
    return std::vector<int64_t>{int64_t{xyz[0]}, int64_t{xyz[1]}, int64_t{xyz[2]}};
  };
  f.grid = dims(first.grid);
  f.block = dims(first.block);
  if (first.cluster[0]) f.cluster = dims(first.cluster);  // none: no cluster
  f.dynamic_shared_bytes = int64_t{first.shared_bytes};
  int registers = function_attribute(first.fn, CU_FUNC_ATTRIBUTE_NUM_REGS);
  int static_shared = function_attribute(first.fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  f.registers = int64_t{registers};
  f.local_bytes = int64_t{function_attribute(first.fn, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)};
  f.static_shared_bytes = int64_t{static_shared};
  f.max_threads_per_block =
      int64_t{function_attribute(first.fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)};
  if (auto o = occupancy_of(first, registers, static_shared)) f.occupancy = std::move(*o);
}

}  // namespace

std::vector<trace::Launch> describe_launches(const LaunchPlan& plan,
                                             const std::vector<ReadyLaunch>& launches) {
  std::vector<trace::Launch> out;
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    const LaunchSpec& spec = plan.launches[i];
    trace::Launch f;
    f.index = static_cast<int>(i + 1);
    f.kernel = spec.torch.empty() ? spec.kernel : "torch:" + spec.torch;
    f.line = spec.line;
    const ReadyLaunch* first = nullptr;
    int64_t repeats = 0;
    for (const auto& l : launches)
      if (l.plan_index == i) {
        if (!first) first = &l;
        ++repeats;
      }
    f.repeats = repeats;
    if (first && first->fn) describe_first_launch(*first, f);  // a torch step has no CUfunction
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<ReadyLaunch> launches_without_buffers(const LaunchPlan& plan, const GpuModule& mod,
                                                  const ProblemSpec& p, const Vars& vars) {
  PtrMap ptrs;
  for (const auto& spec : plan.launches)
    for (const auto& a : spec.args)
      if (a.kind == ArgKind::Tensor || a.kind == ArgKind::Scratch)
        ptrs[a.text] = 0;
      else if (a.kind == ArgKind::Offset)
        ptrs[split_offset_arg(a.text)->buffer] = 0;
      else if (auto acc = a.kind == ArgKind::Accessor ? parse_accessor_arg(a.text) : std::nullopt)
        ptrs[acc->buffer] = 0;
      else if (auto st = a.kind == ArgKind::Struct ? parse_struct_arg(a.text) : std::nullopt)
        for (const auto& f : st->fields)
          if (f.type == FieldType::Ptr && !is_null_pointer_word(f.value)) {
            auto o = split_offset_arg(f.value);
            ptrs[o ? o->buffer : f.value] = 0;
          }
  return prepare_launches(plan, mod, p, vars, ptrs);
}

void time_launches(const ProblemSpec& p, Buffers& b, const DeviceInfo& dev,
                   std::vector<trace::Launch>* facts) {
  if (b.launches.empty()) return;
  // One event before the plan and one after the last launch of each entry (its repetitions run
  // back to back), all created before anything is enqueued.
  std::vector<size_t> ends;  // index in b.launches of each entry's last launch
  for (size_t k = 0; k < b.launches.size(); ++k)
    if (k + 1 == b.launches.size() || b.launches[k + 1].plan_index != b.launches[k].plan_index)
      ends.push_back(k);
  std::vector<CuEvent> events(ends.size() + 1);
  poison_outputs(p, b, nullptr);
  L2Flusher::shared(dev.l2_bytes).flush(nullptr);
  CU_CHECK(cuEventRecord(events[0].get(), nullptr));
  size_t next = 0;
  for (size_t k = 0; k < b.launches.size(); ++k) {
    ReadyLaunch& l = b.launches[k];
    CUresult r = enqueue_launch(l, nullptr);
    if (r != CUDA_SUCCESS && !l.error.empty() && !cu_error_is_sticky(r))
      throw KernelFault{Status::LaunchError, "launching " + l.kernel + ": " + l.error, l.line,
                        false};
    check_kernel_result(r, "launching " + l.kernel);
    if (k == ends[next]) {
      ++next;
      CU_CHECK(cuEventRecord(events[next].get(), nullptr));
    }
  }
  check_kernel_result(CU_RESULT(cuEventSynchronize(events.back().get())).code,
                      "while the kernels ran");
  double total = elapsed_ms(events.front(), events.back());
  std::vector<std::pair<size_t, double>> times;  // plan index, ms
  for (size_t g = 0; g < ends.size(); ++g)
    times.emplace_back(b.launches[ends[g]].plan_index, elapsed_ms(events[g], events[g + 1]));
  for (const auto& [index, ms] : times) {
    if (index >= facts->size() || !std::isfinite(ms)) continue;
    trace::Launch& f = (*facts)[index];
    f.ms = ms;
    if (total > 0) f.share = ms / total;
  }
}

}  // namespace kernrl
