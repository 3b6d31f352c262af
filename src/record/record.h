// Step 7: the trace record (schema kernrl.trace.v1, docs/trace-format.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "protocol/status.h"
#include "record/reward.h"
#include "record/trace_record.h"

namespace kernrl {

// Fills the derived fields: speedup, speed of light (when the device ceilings are known), reward
// and feedback.
void finalize_record(TraceRecord& rec, const RewardPreset& preset, const nlohmann::json& ceilings);
// The same for a record as JSON (read, finalised and written back).
void finalize_record(nlohmann::json& rec, const RewardPreset& preset,
                     const nlohmann::json& ceilings);

// Speed-of-light time in ms for `flops` and `bytes` on a device with these ceilings, using the
// matrix throughput of `dtype_class` (fp32 | fp16 | bf16 | int). 0 when unknown.
double sol_ms(double flops, double bytes, const nlohmann::json& ceilings,
              const std::string& dtype_class);

// ISO-8601 UTC time of now.
std::string now_iso8601();

}  // namespace kernrl
