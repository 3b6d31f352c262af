#include "protocol/worker.h"

#include <stdexcept>

namespace kernrl {
using nlohmann::json;

namespace {

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
  json j = {
      {"cmd", "eval"},          {"problem_dir", problem_dir},
      {"cubin", cubin},         {"lowered", lowered},
      {"plan", plan.to_json()}, {"sizes", sizes ? json(*sizes) : json(nullptr)},
      {"seed", seed},           {"config", cfg.to_json()},
      {"time", time},           {"baseline", baseline ? write_object(*baseline) : json(nullptr)}};
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
  if (j.contains("baseline") && !j["baseline"].is_null())
    r.baseline = read_message<trace::Stats>(j["baseline"], "eval request's baseline");
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

json EvalAnswer::to_json() const {
  return write_object(*this);
}

EvalAnswer EvalAnswer::from_json(const json& j) {
  return read_message<EvalAnswer>(j, "eval answer");
}

json BenchAnswer::to_json() const {
  return write_object(*this);
}

BenchAnswer BenchAnswer::from_json(const json& j) {
  return read_message<BenchAnswer>(j, "bench answer");
}

}  // namespace kernrl
