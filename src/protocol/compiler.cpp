#include "protocol/compiler.h"

#include <stdexcept>

namespace kernrl {
using nlohmann::json;

namespace {

// Both sides write their messages so: one line, bytes that are not UTF-8 replaced rather than
// thrown on (a kernel's log or source may hold any bytes).
std::string dump_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

json CompileRequest::to_json() const {
  return {{"source", source},
          {"filename", filename},
          {"options", options},
          {"names", names},
          {"include_dirs", include_dirs},
          {"sandbox", sandbox},
          {"max_log_bytes", max_log_bytes},
          {"max_cubin_bytes", max_cubin_bytes}};
}

CompileRequest CompileRequest::from_json(const json& j) {
  CompileRequest r;
  r.source = j.at("source").get<std::string>();
  r.filename = j.at("filename").get<std::string>();
  r.options = j.at("options").get<std::vector<std::string>>();
  r.names = j.at("names").get<std::vector<std::string>>();
  r.sandbox = j.value("sandbox", true);
  // The include directories matter only to the sandbox.
  if (r.sandbox || j.contains("include_dirs"))
    r.include_dirs = j.at("include_dirs").get<std::vector<std::string>>();
  r.max_log_bytes = j.value("max_log_bytes", r.max_log_bytes);
  r.max_cubin_bytes = j.value("max_cubin_bytes", r.max_cubin_bytes);
  return r;
}

json CompileAnswer::to_json() const {
  json j = {{"ok", ok}, {"log", log}, {"lowered", lowered}, {"cubin_bytes", cubin_bytes}};
  if (!error.empty()) j["error"] = error;
  if (log_bytes) j["log_bytes"] = *log_bytes;
  if (!sandbox.empty()) j["sandbox"] = sandbox;
  if (!sandbox_error.empty()) j["sandbox_error"] = sandbox_error;
  return j;
}

CompileAnswer CompileAnswer::from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("a compile answer is a JSON object");
  CompileAnswer a;
  a.ok = j.value("ok", false);
  a.error = j.value("error", "");
  a.log = j.value("log", "");
  if (j.contains("log_bytes")) a.log_bytes = j["log_bytes"].get<size_t>();
  if (a.ok || j.contains("lowered"))
    a.lowered = j.at("lowered").get<std::map<std::string, std::string>>();
  a.sandbox = j.value("sandbox", "");
  a.sandbox_error = j.value("sandbox_error", "");
  a.cubin_bytes = j.value("cubin_bytes", size_t{0});
  return a;
}

std::string write_compile_request(const CompileRequest& request) {
  return dump_line(request.to_json());
}

CompileRequest read_compile_request(const std::string& text) {
  return CompileRequest::from_json(json::parse(text));
}

std::string write_compile_output(CompileAnswer answer, const std::string& cubin) {
  answer.cubin_bytes = cubin.size();
  return dump_line(answer.to_json()) + "\n" + cubin;
}

CompileAnswer read_compile_output(const std::string& out, std::string* cubin) {
  size_t nl = out.find('\n');
  CompileAnswer a = CompileAnswer::from_json(json::parse(out.substr(0, nl)));
  cubin->clear();
  if (a.cubin_bytes) {
    if (nl == std::string::npos || out.size() - nl - 1 != a.cubin_bytes)
      throw std::runtime_error("truncated cubin");
    *cubin = out.substr(nl + 1);
  }
  return a;
}

json VersionAnswer::to_json() const {
  return {{"nvrtc", nvrtc}};
}

VersionAnswer VersionAnswer::from_json(const json& j) {
  VersionAnswer v;
  v.nvrtc = j.at("nvrtc").get<std::string>();
  return v;
}

json SandboxCheckAnswer::to_json() const {
  json j = {{"ok", ok}, {"landlock_abi", landlock_abi}, {"sandbox", sandbox}, {"error", error}};
  if (checks) j["checks"] = *checks;
  return j;
}

SandboxCheckAnswer SandboxCheckAnswer::from_json(const json& j) {
  SandboxCheckAnswer a;
  a.ok = j.at("ok").get<bool>();
  a.landlock_abi = j.value("landlock_abi", 0);
  a.sandbox = j.value("sandbox", "");
  a.error = j.value("error", "");
  if (j.contains("checks")) a.checks = j["checks"];
  return a;
}

json ServerJob::to_json() const {
  return {{"id", id},
          {"kind", kind == CheckSandbox ? "check_sandbox"
                   : kind == Prepare    ? "prepare"
                                        : "compile"},
          {"include_dirs", include_dirs},
          {"sandbox", sandbox},
          {"timeout_s", timeout_s},
          {"memory_limit_mb", memory_limit_mb},
          {"max_output_bytes", max_output_bytes},
          {"options", options},
          {"pch_headers", pch_headers}};
}

ServerJob ServerJob::from_json(const json& j) {
  ServerJob s;
  s.id = j.at("id").get<uint64_t>();
  std::string kind = j.value("kind", "compile");
  if (kind != "compile" && kind != "check_sandbox" && kind != "prepare")
    throw std::runtime_error("unknown job kind " + kind);
  s.kind = kind == "compile" ? Compile : kind == "prepare" ? Prepare : CheckSandbox;
  s.include_dirs = j.at("include_dirs").get<std::vector<std::string>>();
  s.sandbox = j.value("sandbox", true);
  s.timeout_s = j.at("timeout_s").get<double>();
  s.memory_limit_mb = j.value("memory_limit_mb", 0L);
  s.max_output_bytes = j.value("max_output_bytes", size_t{0});
  s.options = j.value("options", std::vector<std::string>{});
  s.pch_headers = j.value("pch_headers", std::vector<std::string>{});
  return s;
}

json ServerReply::to_json() const {
  return {{"id", id},         {"bytes", bytes},         {"exit_code", exit_code},
          {"signal", signal}, {"timed_out", timed_out}, {"output_overflow", output_overflow},
          {"pch", pch}};
}

ServerReply ServerReply::from_json(const json& j) {
  ServerReply r;
  r.id = j.at("id").get<uint64_t>();
  r.bytes = j.at("bytes").get<size_t>();
  r.exit_code = j.value("exit_code", -1);
  r.signal = j.value("signal", 0);
  r.timed_out = j.value("timed_out", false);
  r.output_overflow = j.value("output_overflow", false);
  r.pch = j.value("pch", "none");
  return r;
}

}  // namespace kernrl
