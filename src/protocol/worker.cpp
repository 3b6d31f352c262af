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
  return write_object(*this);
}

Hello Hello::from_json(const json& j) {
  Hello h = read_message<Hello>(j, "hello");
  if (h.ok())
    for (const char* key : {"device", "versions"})
      if (!j.contains(key) || j[key].is_null())
        throw ProtocolError(std::string("hello: key '") + key + "' is missing");
  return h;
}

json EvalRequest::to_json() const {
  return write_object(*this);
}

EvalRequest EvalRequest::from_json(const json& j) {
  check_command(j, "eval");
  return read_message<EvalRequest>(j, "eval request");
}

json BenchDeviceRequest::to_json() const {
  return write_object(*this);
}

BenchDeviceRequest BenchDeviceRequest::from_json(const json& j) {
  check_command(j, "bench_device");
  return read_message<BenchDeviceRequest>(j, "bench_device request");
}

json BenchReferenceRequest::to_json() const {
  return write_object(*this);
}

BenchReferenceRequest BenchReferenceRequest::from_json(const json& j) {
  check_command(j, "bench_reference");
  return read_message<BenchReferenceRequest>(j, "bench_reference request");
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
