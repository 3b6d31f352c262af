#include "record/training.h"

namespace kernrl {
using nlohmann::json;

void TrainingTags::apply(TraceRecord& r) const {
  if (trajectory) r.trajectory = *trajectory;
  if (turn) r.turn = *turn;
  if (step || run) {
    trace::Training t = r.training ? *r.training : trace::Training{};
    if (step) t.step = *step;
    if (run) t.run = *run;
    r.training = t;
  }
  if (examples) r.prompt_examples = *examples;
}

namespace {

bool short_string(const json& v) {
  return v.is_string() && !v.get_ref<const std::string&>().empty() &&
         v.get_ref<const std::string&>().size() <= kMaxTagBytes;
}

bool whole_from(const json& v, int64_t lo) {
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX) &&
           static_cast<int64_t>(v.get<uint64_t>()) >= lo;
  return v.is_number_integer() && v.get<int64_t>() >= lo;
}

}  // namespace

void read_action_metadata(const json& metadata, TrainingTags* out) {
  if (!metadata.is_object()) return;
  if (metadata.contains("step") && whole_from(metadata["step"], 0))
    out->step = metadata["step"].get<int64_t>();
  if (metadata.contains("run") && short_string(metadata["run"]))
    out->run = metadata["run"].get<std::string>();
}

bool read_request_tags(const json& j, TrainingTags* out, std::string* error) {
  auto present = [&](const char* k) { return j.contains(k) && !j[k].is_null(); };
  const std::string bytes = std::to_string(kMaxTagBytes);
  if (present("trajectory")) {
    if (!short_string(j["trajectory"])) {
      *error = "'trajectory' must be a non-empty string of at most " + bytes + " bytes";
      return false;
    }
    out->trajectory = j["trajectory"].get<std::string>();
  }
  if (present("turn")) {
    if (!whole_from(j["turn"], 1) || j["turn"].get<int64_t>() > INT32_MAX) {
      *error = "'turn' must be a whole number from 1";
      return false;
    }
    out->turn = static_cast<int>(j["turn"].get<int64_t>());
  }
  if (present("training")) {
    const json& t = j["training"];
    bool ok = t.is_object();
    if (ok)
      for (const auto& [k, v] : t.items())
        ok = ok && ((k == "step" && (v.is_null() || whole_from(v, 0))) ||
                    (k == "run" && (v.is_null() || short_string(v))));
    if (!ok) {
      *error =
          "'training' must be an object {\"step\": a whole number from 0, \"run\": a string "
          "of at most " +
          bytes + " bytes}";
      return false;
    }
    if (t.contains("step") && !t["step"].is_null()) out->step = t["step"].get<int64_t>();
    if (t.contains("run") && !t["run"].is_null()) out->run = t["run"].get<std::string>();
  }
  if (present("prompt_examples")) {
    const json& e = j["prompt_examples"];
    bool ok = e.is_array() && e.size() <= kMaxPromptExamples;
    if (ok)
      for (const auto& v : e) ok = ok && short_string(v);
    if (!ok) {
      *error = "'prompt_examples' must be an array of at most " +
               std::to_string(kMaxPromptExamples) + " example ids (strings)";
      return false;
    }
    out->examples = e.get<std::vector<std::string>>();
  }
  return true;
}

const std::vector<std::string>& request_tag_keys() {
  static const std::vector<std::string> keys = {"trajectory", "turn", "training",
                                                "prompt_examples"};
  return keys;
}

}  // namespace kernrl
