// What a training loop adds to a record (docs/training.md): the trajectory and turn an answer
// belongs to, the trainer's step and run, and the retrieved examples its prompt carried. Filled by
// `serve` (an episode, an action's metadata, a grade request's fields) and `grade-dir` (a
// trajectory layout), and written into the record as `trajectory`, `turn`, `training` and
// `prompt_examples` (docs/trace-format.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "record/trace_record.h"

namespace kernrl {

// The longest trajectory id, training run name and example id accepted from a client.
constexpr size_t kMaxTagBytes = 255;
// The most example ids a record keeps.
constexpr size_t kMaxPromptExamples = 64;

struct TrainingTags {
  std::optional<std::string> trajectory;
  std::optional<int> turn;  // 1-based
  std::optional<int64_t> step;
  std::optional<std::string> run;
  std::optional<std::vector<std::string>> examples;

  // Sets the record's fields that are given here; leaves the others as they are.
  void apply(TraceRecord& r) const;
  bool empty() const { return !trajectory && !turn && !step && !run && !examples; }
};

// An OpenEnv action's `metadata`: `step` (a whole number from 0) and `run` (a string), when they
// have those types; anything else in it is the client's and ignored.
void read_action_metadata(const nlohmann::json& metadata, TrainingTags* out);

// The training fields of a kernrl grade request (docs/serve.md): `trajectory` (string), `turn`
// (whole number from 1), `training` ({step?, run?}) and `prompt_examples` (array of strings). Only
// the keys present are read. False with *error naming the field when one has the wrong type or
// size.
bool read_request_tags(const nlohmann::json& request, TrainingTags* out, std::string* error);

// The keys read_request_tags reads.
const std::vector<std::string>& request_tag_keys();

}  // namespace kernrl
