// Step 7: the trace record (schema kernrl.trace.v1, docs/trace-format.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "record/reward.h"

namespace kernrl {

constexpr const char* kTraceSchema = "kernrl.trace.v1";
constexpr int kKernelFormatVersion = 1;

// Every status a record can carry, best first: the names of protocol/status.h's list, in its order
// (tests/unit/test_protocol.cpp checks they agree).
inline const char* const kStatuses[] = {"correct",       "incorrect",     "compiled",
                                        "format_error",  "compile_error", "launch_error",
                                        "runtime_error", "timeout",       "internal_error"};

// Exit code of `kernrl eval` for a record's status: 0 correct (or compiled with --compile-only), 1
// otherwise.
int exit_code_for(const std::string& status);

// Fills the derived fields: speedup, speed of light (when the device ceilings are known), reward
// and feedback.
void finalize_record(nlohmann::json& rec, const RewardPreset& preset,
                     const nlohmann::json& ceilings);

// Speed-of-light time in ms for `flops` and `bytes` on a device with these ceilings, using the
// matrix throughput of `dtype_class` (fp32 | fp16 | bf16 | int). 0 when unknown.
double sol_ms(double flops, double bytes, const nlohmann::json& ceilings,
              const std::string& dtype_class);

// The human summary printed by `kernrl eval`.
std::string human_summary(const nlohmann::json& rec, bool color);

// ISO-8601 UTC time of now.
std::string now_iso8601();

}  // namespace kernrl
