// The short text an RL loop feeds back to the model after an attempt (at most 2000 characters).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "record/trace_record.h"

namespace kernrl {

constexpr size_t kMaxFeedbackChars = 2000;

std::string make_feedback(const TraceRecord& record);
// The same for a record as JSON.
std::string make_feedback(const nlohmann::json& record);

// The lines of a compiler log that matter: errors with their context, no warnings or noise.
std::string key_log_lines(const std::string& log, int max_lines);

}  // namespace kernrl
