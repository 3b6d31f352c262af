#include "serve/api_prompt.h"

#include <stdexcept>

#include "record/trace_file.h"
#include "serve/openenv.h"

namespace kernrl::serve {
using nlohmann::json;

namespace {

HttpResponse answer(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = json_line(body);
  return r;
}

HttpResponse failure(int status, const std::string& code, const std::string& message) {
  return answer(status, {{"error", {{"code", code}, {"message", message}}}});
}

// The request's fields, checked; an empty string when valid, else why.
std::string check(const json& j) {
  if (!j.is_object()) return "a prompt request is a JSON object {\"problem\": ...}";
  static const char* const known[] = {"problem",  "previous", "record",      "turn",
                                      "language", "examples", "include_own", "suite"};
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok)
      return "unknown field '" + k +
             "' (fields: problem, suite, previous, record, turn, language, examples, "
             "include_own)";
  }
  auto present = [&](const char* k) { return j.contains(k) && !j[k].is_null(); };
  if (!present("problem") || !j["problem"].is_string())
    return "'problem' (a problem id, a string) is required";
  if (present("previous") && !j["previous"].is_string())
    return "'previous' must be a string (the previous answer's text)";
  if (present("record") && !j["record"].is_object())
    return "'record' must be an object (the previous answer's trace record)";
  if (present("record") && !present("previous")) return "'record' needs 'previous'";
  if (present("turn") && (!j["turn"].is_number_integer() || j["turn"].get<int64_t>() < 0 ||
                          j["turn"].get<int64_t>() > 1000000))
    return "'turn' must be a whole number from 0";
  if (present("language") && !j["language"].is_string()) return "'language' must be a string";
  if (present("suite") && !j["suite"].is_string())
    return "'suite' must be a string (a suite this server offers)";
  if (present("examples") &&
      (!j["examples"].is_number_integer() || j["examples"].get<int64_t>() < 0 ||
       j["examples"].get<int64_t>() > 16))
    return "'examples' must be a whole number from 0 to 16";
  if (present("include_own") && !j["include_own"].is_boolean())
    return "'include_own' must be true or false";
  return "";
}

}  // namespace

HttpResponse v1_prompt(const Service& svc, const std::string& body) {
  json j;
  try {
    j = parse_client_json(body);
  } catch (const std::exception& e) {
    return failure(400, "INVALID_JSON", std::string("Invalid JSON: ") + e.what());
  }
  if (std::string why = check(j); !why.empty()) return failure(400, "VALIDATION_ERROR", why);
  std::string error;
  const std::string suite =
      j.contains("suite") && j["suite"].is_string() ? j["suite"].get<std::string>() : "";
  const ProblemCatalog* cat = svc.problems(suite);
  if (!cat) return failure(404, "UNKNOWN_SUITE", svc.unknown_suite(suite));
  const ProblemInfo* p = cat->find_kernrl(j["problem"].get<std::string>(), &error);
  if (!p) return failure(404, "UNKNOWN_PROBLEM", error);
  auto get = [&](const char* k, auto def) {
    return j.contains(k) && !j[k].is_null() ? j[k].get<decltype(def)>() : def;
  };
  int k = get("examples", -1);
  bool own = get("include_own", false);
  BuiltPrompt b;
  try {
    if (j.contains("previous") && j["previous"].is_string()) {
      TraceRecord rec;
      bool has_record = j.contains("record") && j["record"].is_object();
      if (has_record) rec = TraceRecord::from_json(j["record"]);
      b = svc.prompts().next_turn(*p, j["previous"].get<std::string>(), has_record ? &rec : nullptr,
                                  get("turn", 0), get("language", std::string("cuda")), k, own);
    } else {
      b = svc.prompts().task(*p, k, own);
    }
  } catch (const std::invalid_argument& e) {
    return failure(400, "VALIDATION_ERROR", e.what());
  }
  return answer(200, {{"schema", kServeSchema},
                      {"prompt", b.text},
                      {"prompt_name", b.name},
                      {"prompt_version", b.version},
                      {"examples", b.examples}});
}

}  // namespace kernrl::serve
