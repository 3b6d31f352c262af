// How the commands present a record: `kernrl eval`'s summary and exit code.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "record/trace_record.h"

namespace kernrl {

// Exit code of `kernrl eval` for a record's status: 0 correct (or compiled with --compile-only), 4
// for the grader's own failure, 1 otherwise (a record without a known status included).
int exit_code_for(const TraceRecord& rec);

// The human summary printed by `kernrl eval`.
std::string human_summary(const TraceRecord& rec, bool color);
// The same for a record as JSON.
std::string human_summary(const nlohmann::json& rec, bool color);

}  // namespace kernrl
