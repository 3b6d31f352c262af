// A grade request of kernrl's API (POST /v1/grade, a batch item, a --stdio line) read and checked
// (serve/api.h, docs/serve.md).
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "record/training.h"
#include "serve/api.h"
#include "serve/openenv.h"

namespace kernrl::serve {
using nlohmann::json;

bool parse_grade_request(const json& j, const Service& svc,
                         const std::vector<std::string>& extra_keys, GradeRequest* out,
                         std::string* error, bool* not_found) {
  *not_found = false;
  std::string suite;
  if (j.is_object() && j.contains("suite") && !j["suite"].is_null()) {
    if (!j["suite"].is_string()) {
      *error = "'suite' must be a string (a suite this server offers)";
      return false;
    }
    suite = j["suite"].get<std::string>();
  }
  const ProblemCatalog* cat = svc.problems(suite);
  if (!cat) {
    *error = svc.unknown_suite(suite);
    *not_found = true;
    return false;
  }
  std::vector<std::string> keys = extra_keys;
  keys.push_back("suite");
  if (!parse_grade_request(j, *cat, keys, out, error, not_found)) return false;
  out->suite = suite;
  return true;
}

bool parse_grade_request(const json& j, const ProblemCatalog& problems,
                         const std::vector<std::string>& extra_keys, GradeRequest* out,
                         std::string* error, bool* not_found) {
  *not_found = false;
  if (!j.is_object()) {
    *error = "a grade request is a JSON object {\"source\": ...}";
    return false;
  }
  static const char* const known[] = {"source", "problem",   "label",  "seed",
                                      "sample", "timeout_s", "regrade"};
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    for (const auto& n : request_tag_keys()) ok = ok || k == n;
    for (const auto& n : extra_keys) ok = ok || k == n;
    if (!ok) {
      *error = "unknown field '" + k +
               "' (fields: source, problem, suite, label, seed, sample, timeout_s, regrade, "
               "trajectory, turn, training, prompt_examples)";
      return false;
    }
  }
  if (!read_request_tags(j, &out->tags, error)) return false;
  auto present = [&](const char* k) { return j.contains(k) && !j[k].is_null(); };
  if (!present("source") || !j["source"].is_string()) {
    *error = "'source' (the answer's text, a string) is required";
    return false;
  }
  out->source = j["source"].get<std::string>();
  if (present("problem")) {
    if (!j["problem"].is_string()) {
      *error = "'problem' must be a string (a problem id such as L1_23_Softmax)";
      return false;
    }
    std::string want = j["problem"].get<std::string>();
    if (!want.empty()) {
      const ProblemInfo* p = problems.find_kernrl(want, error);
      if (!p) {
        *not_found = true;
        return false;
      }
      out->problem = p->id;
    }
  }
  if (present("label")) {
    if (!j["label"].is_string() || j["label"].get_ref<const std::string&>().size() > 4096) {
      *error = "'label' must be a string of at most 4096 bytes";
      return false;
    }
    out->label = j["label"].get<std::string>();
  }
  if (present("seed")) {
    if (!is_seed(j["seed"])) {
      *error = "'seed' must be a whole number from 0 to 18446744073709551615";
      return false;
    }
    out->seed = j["seed"].get<uint64_t>();
  }
  if (present("sample")) {
    if (!j["sample"].is_number_integer() || j["sample"].get<int64_t>() < INT32_MIN ||
        j["sample"].get<int64_t>() > INT32_MAX) {
      *error = "'sample' must be a whole number";
      return false;
    }
    out->sample = static_cast<int>(j["sample"].get<int64_t>());
  }
  if (present("regrade")) {
    if (!j["regrade"].is_boolean()) {
      *error = "'regrade' must be true or false";
      return false;
    }
    out->regrade = j["regrade"].get<bool>();
  }
  if (present("timeout_s")) {
    if (!j["timeout_s"].is_number() || !(j["timeout_s"].get<double>() > 0)) {
      *error = "'timeout_s' must be a number of seconds above 0";
      return false;
    }
    out->timeout_s = j["timeout_s"].get<double>();
  }
  return true;
}

}  // namespace kernrl::serve
