#include "protocol/worker.h"

#include <stdexcept>

namespace kernrl {
using nlohmann::json;

namespace {

Status parse_status(const json& j, const char* key) {
  std::string name = j.at(key).get<std::string>();
  auto s = status_from_string(name);
  if (!s) throw std::runtime_error("unknown status '" + name + "'");
  return *s;
}

void check_command(const json& j, const char* cmd) {
  if (request_command(j) != cmd)
    throw std::runtime_error(std::string("expected a '") + cmd + "' request");
}

}  // namespace

std::string DeviceInfo::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + (cc_major >= 9 ? "a" : "");
}

json DeviceInfo::to_json() const {
  return {{"name", name},
          {"compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor)},
          {"sms", sms},
          {"l2_bytes", l2_bytes},
          {"memory_bytes", memory_bytes},
          {"driver", driver},
          {"arch", arch()}};
}

DeviceInfo DeviceInfo::from_json(const json& j) {
  DeviceInfo d;
  d.name = j.at("name").get<std::string>();
  std::string cc = j.at("compute_capability").get<std::string>();
  size_t dot = cc.find('.');
  if (dot == std::string::npos) throw std::runtime_error("bad compute_capability '" + cc + "'");
  d.cc_major = std::stoi(cc.substr(0, dot));
  d.cc_minor = std::stoi(cc.substr(dot + 1));
  d.sms = j.at("sms").get<int>();
  d.l2_bytes = j.at("l2_bytes").get<uint64_t>();
  d.memory_bytes = j.at("memory_bytes").get<uint64_t>();
  d.driver = j.at("driver").get<int>();
  return d;
}

json Hello::to_json() const {
  if (!ok)
    return {{"hello", false}, {"protocol", protocol}, {"build_id", build_id}, {"error", error}};
  return {{"hello", true},
          {"protocol", protocol},
          {"build_id", build_id},
          {"device", device.to_json()},
          {"uuid", uuid},
          {"versions", versions},
          {"startup_ms", startup_ms}};
}

Hello Hello::from_json(const json& j) {
  Hello h;
  h.ok = j.at("hello").get<bool>();
  h.protocol = j.value("protocol", 0);
  h.build_id = j.value("build_id", "");
  if (!h.ok) {
    h.error = j.value("error", "no GPU");
    return h;
  }
  h.device = DeviceInfo::from_json(j.at("device"));
  h.uuid = j.value("uuid", "");
  h.versions = j.at("versions").get<std::map<std::string, std::string>>();
  if (j.contains("startup_ms"))
    h.startup_ms = j.at("startup_ms").get<std::map<std::string, double>>();
  return h;
}

json EvalRequest::to_json() const {
  json j = {{"cmd", "eval"},          {"problem_dir", problem_dir},
            {"cubin", cubin},         {"lowered", lowered},
            {"plan", plan.to_json()}, {"sizes", sizes ? json(*sizes) : json(nullptr)},
            {"seed", seed},           {"config", cfg.to_json()},
            {"time", time},           {"baseline", baseline ? *baseline : json(nullptr)}};
  if (!modules.empty()) j["modules"] = modules;
  return j;
}

EvalRequest EvalRequest::from_json(const json& j) {
  check_command(j, "eval");
  EvalRequest r;
  r.problem_dir = j.at("problem_dir").get<std::string>();
  r.cubin = j.at("cubin").get<std::string>();
  r.lowered = j.at("lowered").get<std::map<std::string, std::string>>();
  if (j.contains("modules")) r.modules = j.at("modules").get<std::map<std::string, std::string>>();
  r.plan = LaunchPlan::from_json(j.at("plan"));
  if (j.contains("sizes") && !j["sizes"].is_null()) r.sizes = j["sizes"].get<Vars>();
  r.seed = j.at("seed").get<uint64_t>();
  r.cfg = Config::from_json(j.at("config"));
  r.time = j.value("time", true);
  if (j.contains("baseline") && !j["baseline"].is_null()) r.baseline = j["baseline"];
  return r;
}

json BenchDeviceRequest::to_json() const {
  return {{"cmd", "bench_device"}, {"repeats", repeats}};
}

BenchDeviceRequest BenchDeviceRequest::from_json(const json& j) {
  check_command(j, "bench_device");
  BenchDeviceRequest r;
  r.repeats = j.value("repeats", 1);
  return r;
}

json BenchReferenceRequest::to_json() const {
  return {{"cmd", "bench_reference"},
          {"problem_dir", problem_dir},
          {"config", cfg.to_json()},
          {"seed", seed}};
}

BenchReferenceRequest BenchReferenceRequest::from_json(const json& j) {
  check_command(j, "bench_reference");
  BenchReferenceRequest r;
  r.problem_dir = j.at("problem_dir").get<std::string>();
  r.cfg = Config::from_json(j.at("config"));
  r.seed = j.value("seed", uint64_t{1});
  return r;
}

json quit_request() {
  return {{"cmd", "quit"}};
}

std::string request_command(const json& j) {
  auto it = j.find("cmd");
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

json ErrorInfo::to_json() const {
  json e = {{"category", to_string(category)}, {"message", message}};
  if (line) e["line"] = line;
  if (!log.empty()) e["log"] = log;
  return e;
}

ErrorInfo ErrorInfo::from_json(const json& j, Status fallback) {
  ErrorInfo e;
  auto cat = j.contains("category") && j["category"].is_string()
                 ? status_from_string(j["category"].get<std::string>())
                 : std::nullopt;
  e.category = cat ? *cat : fallback;
  e.message = j.value("message", "");
  e.line = j.value("line", 0);
  e.log = j.value("log", "");
  return e;
}

json LaunchOccupancy::to_json() const {
  return {{"active_blocks_per_sm", active_blocks_per_sm},
          {"active_warps_per_sm", active_warps_per_sm},
          {"max_warps_per_sm", max_warps_per_sm},
          {"fraction", fraction},
          {"limited_by", limited_by},
          {"block_limits", block_limits}};
}

LaunchOccupancy LaunchOccupancy::from_json(const json& j) {
  LaunchOccupancy o;
  o.active_blocks_per_sm = j.at("active_blocks_per_sm").get<int>();
  o.active_warps_per_sm = j.at("active_warps_per_sm").get<int>();
  o.max_warps_per_sm = j.at("max_warps_per_sm").get<int>();
  o.fraction = j.at("fraction").get<double>();
  o.limited_by = j.value("limited_by", std::vector<std::string>{});
  o.block_limits = j.value("block_limits", std::map<std::string, int>{});
  return o;
}

json LaunchFacts::to_json() const {
  json j = {{"index", index}, {"kernel", kernel}, {"line", line}, {"repeats", repeats}};
  if (repeats <= 0) return j;
  j["grid"] = grid;
  j["block"] = block;
  if (cluster[0]) j["cluster"] = cluster;
  j["dynamic_shared_bytes"] = dynamic_shared_bytes;
  j["static_shared_bytes"] = static_shared_bytes;
  j["registers"] = registers;
  j["local_bytes"] = local_bytes;
  j["max_threads_per_block"] = max_threads_per_block;
  if (occupancy) j["occupancy"] = occupancy->to_json();
  if (ms) j["ms"] = *ms;
  if (share) j["share"] = *share;
  return j;
}

LaunchFacts LaunchFacts::from_json(const json& j) {
  LaunchFacts f;
  f.index = j.at("index").get<int>();
  f.kernel = j.at("kernel").get<std::string>();
  f.line = j.value("line", 0);
  f.repeats = j.at("repeats").get<int64_t>();
  if (f.repeats <= 0) return f;
  f.grid = j.at("grid").get<std::array<unsigned, 3>>();
  f.block = j.at("block").get<std::array<unsigned, 3>>();
  if (j.contains("cluster")) f.cluster = j["cluster"].get<std::array<unsigned, 3>>();
  f.dynamic_shared_bytes = j.at("dynamic_shared_bytes").get<int64_t>();
  f.static_shared_bytes = j.at("static_shared_bytes").get<int>();
  f.registers = j.at("registers").get<int>();
  f.local_bytes = j.at("local_bytes").get<int>();
  f.max_threads_per_block = j.at("max_threads_per_block").get<int>();
  if (j.contains("occupancy")) f.occupancy = LaunchOccupancy::from_json(j["occupancy"]);
  if (j.contains("ms") && j["ms"].is_number()) f.ms = j["ms"].get<double>();
  if (j.contains("share") && j["share"].is_number()) f.share = j["share"].get<double>();
  return f;
}

json launches_to_json(const std::vector<LaunchFacts>& launches) {
  json a = json::array();
  for (const auto& l : launches) a.push_back(l.to_json());
  return a;
}

void to_json(json& j, const AutotuneChoice& c) {
  j = c.to_json();
}

json AutotuneChoice::to_json() const {
  json times = json::array();
  for (const auto& t : times_ms) times.push_back(t ? json(*t) : json(nullptr));
  return {{"group", group}, {"config", config}, {"times_ms", times}};
}

AutotuneChoice AutotuneChoice::from_json(const json& j) {
  AutotuneChoice c;
  c.group = j.at("group").get<std::string>();
  c.config = j.at("config").get<int>();
  for (const auto& t : j.at("times_ms"))
    c.times_ms.push_back(t.is_number() ? std::optional<double>(t.get<double>()) : std::nullopt);
  return c;
}

json EvalAnswer::to_json() const {
  json j = {{"status", to_string(status)},
            {"error", error ? error->to_json() : json(nullptr)},
            {"fatal", fatal},
            {"phases_ms", phases_ms}};
  if (!correctness.is_null()) j["correctness"] = correctness;
  if (!timing.is_null()) j["timing"] = timing;
  if (!launches.empty()) j["launches"] = launches_to_json(launches);
  if (!watchdog.is_null()) j["watchdog"] = watchdog;
  if (!autotune.empty()) j["autotune"] = autotune;
  return j;
}

EvalAnswer EvalAnswer::from_json(const json& j) {
  EvalAnswer a;
  a.status = parse_status(j, "status");
  if (j.contains("error") && j["error"].is_object())
    a.error = ErrorInfo::from_json(j["error"], a.status);
  if (j.contains("correctness")) a.correctness = j["correctness"];
  if (j.contains("timing")) a.timing = j["timing"];
  if (j.contains("phases_ms")) a.phases_ms = j["phases_ms"].get<std::map<std::string, double>>();
  if (j.contains("launches"))
    for (const auto& l : j["launches"]) a.launches.push_back(LaunchFacts::from_json(l));
  if (j.contains("watchdog") && j["watchdog"].is_object()) a.watchdog = j["watchdog"];
  if (j.contains("autotune") && j["autotune"].is_array())
    for (const auto& t : j["autotune"]) a.autotune.push_back(AutotuneChoice::from_json(t));
  a.fatal = j.value("fatal", false);
  return a;
}

json BenchAnswer::to_json() const {
  json j = {{"ok", ok}, {"fatal", fatal}, {"result", result}};
  if (!ok) j["error"] = error;
  return j;
}

BenchAnswer BenchAnswer::from_json(const json& j) {
  BenchAnswer a;
  a.ok = j.at("ok").get<bool>();
  a.error = j.value("error", "");
  a.result = j.value("result", json(nullptr));
  a.fatal = j.value("fatal", false);
  return a;
}

}  // namespace kernrl
