#include "serve/openenv.h"

#include <cmath>
#include <cstdio>
#include <random>

#include "record/feedback.h"
#include "record/trace_file.h"

namespace kernrl::serve {
using nlohmann::json;

namespace {

std::string uuid4() {
  std::random_device rd;
  unsigned char b[16];
  for (int i = 0; i < 16; i += 4) {
    uint32_t r = rd();
    for (int k = 0; k < 4; ++k) b[i + k] = static_cast<unsigned char>(r >> (8 * k));
  }
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char s[37];
  std::snprintf(s, sizeof s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                b[13], b[14], b[15]);
  return s;
}

json base_observation(const ProblemInfo& p, const std::string& gpu_info, int turn, int max_turns,
                      const std::string& language = "cuda") {
  return {{"problem_id", p.id},
          {"problem_description", p.prompt_for(language)},
          {"reference_code", p.reference_code},
          {"gpu_info", gpu_info},
          {"turn", turn},
          {"max_turns", max_turns},
          {"feedback", ""},
          {"compilation_success", false},
          {"compilation_error", nullptr},
          {"correctness_pass", nullptr},
          {"max_diff", nullptr},
          {"speedup", nullptr}};
}

// The largest absolute error of any output in any trial (finite values only); null when none.
json max_diff(const TraceRecord& rec) {
  const json* c = rec.correctness.get();
  if (!c || !c->is_object() || !c->contains("trials") || !(*c)["trials"].is_array()) return nullptr;
  std::optional<double> m;
  for (const auto& t : (*c)["trials"]) {
    if (!t.is_object() || !t.contains("outputs") || !t["outputs"].is_array()) continue;
    for (const auto& o : t["outputs"]) {
      if (!o.is_object() || !o.contains("max_abs_err") || !o["max_abs_err"].is_number()) continue;
      double v = o["max_abs_err"].get<double>();
      if (std::isfinite(v) && (!m || v > *m)) m = v;
    }
  }
  return m ? json(*m) : json(nullptr);
}

bool is_correct(const TraceRecord& rec) {
  return rec.status_is(Status::Correct) && !rec.suspicious.value_or(false);
}

}  // namespace

json small_input(const json& v) {
  if (v.is_string()) {
    const std::string& t = v.get_ref<const std::string&>();
    if (t.size() <= 256) return v;
    size_t cut = 256;
    while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;
    return t.substr(0, cut) + "...";
  }
  if (!v.is_structured()) return v;
  if (v.size() > 16) return nullptr;
  for (const auto& e : v)
    if (e.is_structured() || (e.is_string() && e.get_ref<const std::string&>().size() > 256))
      return nullptr;
  return v;
}

namespace {

json pyd_error(const char* type, const json& loc, const std::string& msg,
               const json& input = json()) {
  json e = {{"type", type}, {"loc", loc}, {"msg", msg}};
  json shown = small_input(input);
  if (!shown.is_null()) e["input"] = shown;
  return e;
}

// Pydantic's "extra_forbidden" errors for keys of `j` outside `allowed`.
void extra_keys(const json& j, std::initializer_list<const char*> allowed, const json& prefix,
                json& errors) {
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (ok) continue;
    json loc = prefix;
    loc.push_back(k);
    errors.push_back(pyd_error("extra_forbidden", loc, "Extra inputs are not permitted", v));
  }
}

json validation_error(const json& errors) {
  return ws_error_message(ws_error::kValidation, "Invalid message", {{"errors", errors}});
}

}  // namespace

json parse_client_json(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw std::invalid_argument("JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                    " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return json::parse(text);
}

json Episode::state() const {
  json s = {{"episode_id", episode_id.empty() ? json(nullptr) : json(episode_id)},
            {"step_count", step_count},
            {"problem_id", problem_id.empty() ? json(nullptr) : json(problem_id)},
            {"turn", turn},
            {"max_turns", max_turns},
            {"best_speedup", best_speedup},
            {"solved", solved}};
  if (!suite.empty()) s["suite"] = suite;
  return s;
}

void Episode::count(const TraceRecord& rec) {
  ++turn;
  ++step_count;
  if (is_correct(rec) && rec.speedup) {
    double s = *rec.speedup;
    if (s > best_speedup) best_speedup = s;
    if (s > 1.05) solved = true;
  }
}

json reset_payload(const ProblemInfo& p, const std::string& gpu_info, int max_turns,
                   const std::string& language) {
  json o = base_observation(p, gpu_info, 0, max_turns, language);
  o["compilation_success"] = true;
  return {{"observation", o}, {"reward", 0.0}, {"done", false}};
}

json step_payload(const ProblemInfo* p, const Episode& e, const TraceRecord& rec,
                  const std::string& gpu_info) {
  ProblemInfo none;
  if (!p) none.id = rec.problem.value_or("");
  json o = base_observation(p ? *p : none, gpu_info, e.turn, e.max_turns, e.language);
  std::string status = rec.status_text();
  o["feedback"] = rec.feedback.value_or("");
  bool compiled = rec.compile && !rec.status_is(Status::CompileError);
  o["compilation_success"] = compiled;
  if (!compiled) {
    std::string msg;
    if (const trace::Error* err = rec.error.get()) {
      msg = err->message.value_or("");
      if (err->line) msg = "line " + std::to_string(*err->line) + ": " + msg;
      if (rec.status_is(Status::CompileError) && err->log) {
        std::string key = key_log_lines(*err->log, 20);
        if (!key.empty()) msg += "\n" + key;
      }
    }
    o["compilation_error"] = msg.empty() ? json(status) : json(msg);
  }
  if (rec.ran.value_or(false)) {
    o["correctness_pass"] = is_correct(rec);
    o["max_diff"] = max_diff(rec);
  }
  // As the record has it (a number).
  if (rec.speedup) o["speedup"] = rec.speedup.to_json();
  o["status"] = status;
  json reward = rec.reward ? rec.reward.to_json() : json(nullptr);
  return {{"observation", o}, {"reward", reward}, {"done", e.done()}};
}

json ws_error_message(const char* code, const std::string& message, const json& extra) {
  json data = {{"message", message}, {"code", code}};
  for (const auto& [k, v] : extra.items()) data[k] = v;
  return {{"type", "error"}, {"data", data}};
}

json validate_action(const json& a, bool allow_problem_id) {
  json errors = json::array();
  if (!a.is_object()) {
    errors.push_back(pyd_error("model_type", json::array(),
                               "Input should be a valid dictionary or instance of KernelAction",
                               a));
    return errors;
  }
  if (!a.contains("code"))
    errors.push_back(pyd_error("missing", {"code"}, "Field required", a));
  else if (!a["code"].is_string())
    errors.push_back(
        pyd_error("string_type", {"code"}, "Input should be a valid string", a["code"]));
  else if (a["code"].get_ref<const std::string&>().empty())
    errors.push_back(pyd_error("string_too_short", {"code"},
                               "String should have at least 1 character", a["code"]));
  if (a.contains("metadata") && !a["metadata"].is_object())
    errors.push_back(
        pyd_error("dict_type", {"metadata"}, "Input should be a valid dictionary", a["metadata"]));
  if (allow_problem_id) {
    if (a.contains("problem_id") && !a["problem_id"].is_string() && !a["problem_id"].is_null())
      errors.push_back(pyd_error("string_type", {"problem_id"}, "Input should be a valid string",
                                 a["problem_id"]));
    extra_keys(a, {"code", "metadata", "problem_id"}, json::array(), errors);
  } else {
    extra_keys(a, {"code", "metadata"}, json::array(), errors);
  }
  return errors;
}

json openenv_schema() {
  auto str = [](const char* title, const char* desc) {
    return json{{"title", title}, {"description", desc}, {"type", "string"}};
  };
  auto opt = [](const char* type, const char* title, const char* desc) {
    return json{{"title", title},
                {"description", desc},
                {"anyOf", {{{"type", type}}, {{"type", "null"}}}},
                {"default", nullptr}};
  };
  auto integer = [](const char* title, const char* desc, int def, int min) {
    return json{{"title", title},
                {"description", desc},
                {"type", "integer"},
                {"default", def},
                {"minimum", min}};
  };
  json metadata = {{"title", "Metadata"},
                   {"description", "Additional metadata"},
                   {"type", "object"},
                   {"additionalProperties", true}};
  json code = str("Code",
                  "The kernel answer: a kernrl kernel file (CUDA device code with a /* "
                  "kernrl launch block) or a model's markdown answer holding one");
  code["minLength"] = 1;
  json action = {{"title", "KernelAction"},
                 {"description", "Action for the kernrl environment - kernel code submission."},
                 {"type", "object"},
                 {"additionalProperties", false},
                 {"properties", {{"metadata", metadata}, {"code", code}}},
                 {"required", {"code"}}};
  json observation = {
      {"title", "KernelObservation"},
      {"description", "Observation from the kernrl environment - evaluation results."},
      {"type", "object"},
      {"additionalProperties", false},
      {"properties",
       {{"done",
         {{"title", "Done"},
          {"description", "Whether the episode has terminated"},
          {"type", "boolean"},
          {"default", false}}},
        {"reward",
         {{"title", "Reward"},
          {"description", "Reward signal from the last action"},
          {"anyOf",
           {{{"type", "boolean"}},
            {{"type", "integer"}},
            {{"type", "number"}},
            {{"type", "null"}}}},
          {"default", nullptr}}},
        {"metadata", metadata},
        {"problem_id", str("Problem Id", "Unique identifier for the problem")},
        {"problem_description",
         str("Problem Description", "Full problem description with requirements")},
        {"reference_code", str("Reference Code", "PyTorch reference implementation")},
        {"gpu_info", str("Gpu Info", "GPU device information")},
        {"turn", integer("Turn", "Current turn number", 0, 0)},
        {"max_turns", integer("Max Turns", "Maximum turns allowed", 10, 1)},
        {"feedback",
         {{"title", "Feedback"},
          {"description", "Evaluation feedback for the agent"},
          {"type", "string"},
          {"default", ""}}},
        {"compilation_success",
         {{"title", "Compilation Success"},
          {"description", "Whether the code compiled successfully"},
          {"type", "boolean"},
          {"default", false}}},
        {"compilation_error",
         opt("string", "Compilation Error", "Compilation error message if failed")},
        {"correctness_pass",
         opt("boolean", "Correctness Pass", "Whether output matches reference")},
        {"max_diff", opt("number", "Max Diff", "Maximum difference from reference output")},
        {"speedup", opt("number", "Speedup", "Speedup factor vs PyTorch baseline")},
        {"status", opt("string", "Status", "kernrl's status of the graded answer")},
        {"prompt",
         opt("string", "Prompt",
             "The next turn's prompt: the problem, this answer, what became of it and what to "
             "fix")}}},
      {"required", {"problem_id", "problem_description", "reference_code", "gpu_info"}}};
  json state = {
      {"title", "KernelState"},
      {"description", "State for the kernrl environment."},
      {"type", "object"},
      {"additionalProperties", true},
      {"properties",
       {{"episode_id", opt("string", "Episode Id", "Unique identifier for the current episode")},
        {"step_count", integer("Step Count", "Number of steps taken in the current episode", 0, 0)},
        {"problem_id", opt("string", "Problem Id", "Current problem ID")},
        {"turn", integer("Turn", "Current turn number", 0, 0)},
        {"max_turns", integer("Max Turns", "Maximum turns allowed", 10, 1)},
        {"best_speedup",
         {{"title", "Best Speedup"},
          {"description", "Best speedup achieved so far"},
          {"type", "number"},
          {"default", 0.0},
          {"minimum", 0.0}}},
        {"solved",
         {{"title", "Solved"},
          {"description", "Whether the problem has been solved"},
          {"type", "boolean"},
          {"default", false}}}}}};
  return {{"action", action}, {"observation", observation}, {"state", state}};
}

json openenv_metadata() {
  return {{"name", "kernrl"},
          {"description",
           "kernrl: write a fast CUDA kernel for a PyTorch problem; each step compiles it, checks "
           "it on fresh random inputs and times it against PyTorch"},
          {"readme_content", nullptr},
          {"version", KERNRL_VERSION},
          {"author", nullptr},
          {"documentation_url", nullptr}};
}

json openenv_fresh_state(int max_turns) {
  Episode e;
  e.max_turns = max_turns;
  return e.state();
}

WsSession::WsSession(Service& svc) : svc_(svc) {
  ep_.max_turns = svc.options().max_turns;
}

Episode WsSession::episode() const {
  std::lock_guard<std::mutex> l(mu_);
  return ep_;
}

void WsSession::handle(const std::string& text, Reply reply) {
  json msg;
  try {
    msg = parse_client_json(text);
  } catch (const std::exception& e) {
    reply(json_line(
              ws_error_message(ws_error::kInvalidJson, std::string("Invalid JSON: ") + e.what())),
          false);
    return;
  }
  if (!msg.is_object()) {
    reply(json_line(validation_error(
              {pyd_error("model_type", json::array(), "Input should be a valid dictionary", msg)})),
          false);
    return;
  }
  std::string type =
      msg.contains("type") && msg["type"].is_string() ? msg["type"].get<std::string>() : "";
  auto check = [&](std::initializer_list<const char*> keys, bool data_required) {
    json errors = json::array();
    extra_keys(msg, keys, json::array(), errors);
    if (data_required && !msg.contains("data"))
      errors.push_back(pyd_error("missing", {"data"}, "Field required", msg));
    if (msg.contains("data") && !msg["data"].is_object())
      errors.push_back(
          pyd_error("dict_type", {"data"}, "Input should be a valid dictionary", msg["data"]));
    return errors;
  };
  if (type == "reset") {
    json errors = check({"type", "data"}, false);
    if (!errors.empty()) return reply(json_line(validation_error(errors)), false);
    reset(msg.value("data", json::object()), reply);
  } else if (type == "step") {
    json errors = check({"type", "data"}, true);
    if (!errors.empty()) return reply(json_line(validation_error(errors)), false);
    step(msg["data"], reply);
  } else if (type == "state") {
    json errors = check({"type"}, false);
    if (!errors.empty()) return reply(json_line(validation_error(errors)), false);
    reply(json_line({{"type", "state"}, {"data", episode().state()}}), false);
  } else if (type == "close") {
    json errors = check({"type"}, false);
    if (!errors.empty()) return reply(json_line(validation_error(errors)), false);
    reply("", true);
  } else {
    std::string shown =
        msg.contains("type") && !msg["type"].is_string() ? msg["type"].dump() : type;
    reply(json_line(ws_error_message(ws_error::kUnknownType, "Unknown message type: " + shown)),
          false);
  }
}

void WsSession::reset(const json& data, const Reply& reply) {
  json errors = json::array();
  if (data.contains("problem_id") && !data["problem_id"].is_string() &&
      !data["problem_id"].is_null())
    errors.push_back(pyd_error("string_type", {"data", "problem_id"},
                               "Input should be a valid string", data["problem_id"]));
  if (data.contains("seed") && !data["seed"].is_null() && !is_seed(data["seed"]))
    errors.push_back(pyd_error("int_type", {"data", "seed"},
                               "Input should be a non-negative integer", data["seed"]));
  if (data.contains("episode_id") && !data["episode_id"].is_null() &&
      (!data["episode_id"].is_string() ||
       data["episode_id"].get_ref<const std::string&>().size() > 255))
    errors.push_back(pyd_error("string_type", {"data", "episode_id"},
                               "Input should be a string of at most 255 characters",
                               data["episode_id"]));
  if (data.contains("language") && !data["language"].is_null() &&
      (!data["language"].is_string() ||
       (data["language"] != "cuda" && data["language"] != "triton")))
    errors.push_back(pyd_error("literal_error", {"data", "language"},
                               "Input should be 'cuda' or 'triton'", data["language"]));
  if (data.contains("suite") && !data["suite"].is_null() && !data["suite"].is_string())
    errors.push_back(pyd_error("string_type", {"data", "suite"}, "Input should be a valid string",
                               data["suite"]));
  if (!errors.empty()) return reply(json_line(validation_error(errors)), false);
  std::string language = data.contains("language") && data["language"].is_string()
                             ? data["language"].get<std::string>()
                             : "cuda";
  std::string suite =
      data.contains("suite") && data["suite"].is_string() ? data["suite"].get<std::string>() : "";
  const ProblemCatalog* suite_cat = svc_.problems(suite);
  if (!suite_cat)
    return reply(json_line(ws_error_message(ws_error::kExecution, svc_.unknown_suite(suite))),
                 false);
  const ProblemCatalog& cat = *suite_cat;
  const ProblemInfo* p = nullptr;
  std::string wanted = data.contains("problem_id") && data["problem_id"].is_string()
                           ? data["problem_id"].get<std::string>()
                           : "";
  if (!wanted.empty()) {
    p = cat.find_openenv(wanted);
    if (!p)
      return reply(
          json_line(ws_error_message(ws_error::kExecution, "Problem " + wanted + " not found")),
          false);
  } else {
    uint64_t seed = data.contains("seed") && is_seed(data["seed"]) ? data["seed"].get<uint64_t>()
                                                                   : std::random_device{}();
    p = &cat.pick(seed);
  }
  std::string gpu = svc_.grader().gpu_info();
  int max_turns = svc_.options().max_turns;
  BuiltPrompt task = svc_.prompts().task(*p, -1, false, language);
  {
    std::lock_guard<std::mutex> l(mu_);
    problem_ = p;
    examples_ = task.examples;
    ep_ = Episode{};
    ep_.max_turns = svc_.options().max_turns;
    ep_.problem_id = p->id;
    ep_.language = language;
    ep_.suite = suite;
    ep_.episode_id = data.contains("episode_id") && data["episode_id"].is_string()
                         ? data["episode_id"].get<std::string>()
                         : uuid4();
  }
  json payload = reset_payload(*p, gpu, max_turns, language);
  if (!task.examples.empty()) payload["observation"]["problem_description"] = task.text;
  reply(json_line({{"type", "observation"}, {"data", payload}}), false);
}

void WsSession::step(const json& data, const Reply& reply) {
  json errors = validate_action(data, false);
  if (!errors.empty()) {
    for (auto& e : errors) e["loc"].insert(e["loc"].begin(), "data");
    return reply(json_line(validation_error(errors)), false);
  }
  GradeRequest req;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!problem_)
      return reply(
          json_line(ws_error_message(ws_error::kExecution, "Must call reset() before step()")),
          false);
    req.problem = problem_->id;
    req.suite = ep_.suite;
    req.label = "ws/" + ep_.episode_id + "/turn-" + std::to_string(ep_.turn + 1);
    req.tags.trajectory = ep_.episode_id;
    req.tags.turn = ep_.turn + 1;
    if (!examples_.empty()) req.tags.examples = examples_;
  }
  if (data.contains("metadata")) read_action_metadata(data["metadata"], &req.tags);
  std::string source = data["code"].get<std::string>();
  req.source = source;
  std::string gpu = svc_.grader().gpu_info();
  svc_.grade(std::move(req), [this, reply, gpu, source](GradeResult r) {
    if (r.kind != GradeResult::Graded) {
      json extra = {{"reason", r.reason()}};
      if (r.kind == GradeResult::Refused) extra["max_queue"] = svc_.options().max_queue;
      reply(json_line(ws_error_message(r.code(), r.message, extra)), false);
      return;
    }
    json payload;
    {
      std::lock_guard<std::mutex> l(mu_);
      ep_.count(r.record);
      payload = step_payload(problem_, ep_, r.record, gpu);
      if (problem_)
        payload["observation"]["prompt"] =
            svc_.prompts().next_turn(*problem_, source, &r.record, ep_.turn, ep_.language).text;
    }
    reply(json_line({{"type", "observation"}, {"data", payload}}), false);
  });
}

}  // namespace kernrl::serve
