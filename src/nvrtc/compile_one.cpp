#include "nvrtc/compile_one.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "headers/builtin_headers.h"
#include "sandbox/sandbox.h"

namespace kernrl::nvrtc {
using nlohmann::json;

namespace {

void write_all(const std::string& out) {
  size_t off = 0;
  while (off < out.size()) {
    ssize_t w = write(1, out.data() + off, out.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    off += static_cast<size_t>(w);
  }
}

bool can_open(const std::string& path, int flags) {
  int fd = open(path.c_str(), flags | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

// The escape attempts of check_sandbox(), each true when it succeeded.
json escape_attempts(const SandboxStatus& st, const std::string& pch_dir) {
  json checks = {
      {"read /etc/passwd", can_open("/etc/passwd", O_RDONLY)},
      {"read /proc/self/environ", can_open("/proc/self/environ", O_RDONLY)},
      {"create /tmp file", can_open("/tmp/kernrl-sandbox-probe", O_WRONLY | O_CREAT)},
      {"socket",
       [] {
         int s = socket(AF_INET, SOCK_STREAM, 0);
         if (s >= 0) close(s);
         return s >= 0;
       }()},
      {"environment", environ && environ[0] ? environ[0] : ""},
      {"private root", st.private_root},
      {"see /etc/passwd exists",
       [] {
         struct stat sb;
         return stat("/etc/passwd", &sb) == 0;
       }()},
  };
  if (!pch_dir.empty())
    checks["create a file in the PCH folder"] =
        can_open(pch_dir + "/kernrl-sandbox-probe", O_WRONLY | O_CREAT);
  if (!st.gap.empty()) checks["gap"] = st.gap;
  return checks;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

void preload_nvrtc_builtins() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) || !info.dli_fname) return;
  std::filesystem::path dir = std::filesystem::path(info.dli_fname).parent_path();
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string name = "libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor);
  if (!dlopen((dir / name).c_str(), RTLD_NOW | RTLD_GLOBAL))
    dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

void write_answer(const CompileAnswer& answer, const std::string& cubin) {
  write_all(write_compile_output(answer, cubin));
}

int check_sandbox(const std::vector<std::string>& dirs, const std::string& pch_dir,
                  const std::string& scratch) {
  preload_nvrtc_builtins();
  std::vector<std::string> readable = dirs;
  if (!pch_dir.empty()) readable.push_back(pch_dir);
  SandboxStatus st =
      enter_sandbox(readable, scratch.empty() ? std::vector<std::string>{} : std::vector{scratch});
  SandboxCheckAnswer out;
  out.ok = st.ok;
  out.landlock_abi = st.landlock_abi;
  out.sandbox = st.description;
  out.error = st.error;
  if (st.ok) {
    json checks = escape_attempts(st, pch_dir);
    bool escaped = checks["read /etc/passwd"] || checks["read /proc/self/environ"] ||
                   checks["create /tmp file"] || checks["socket"] ||
                   checks.value("create a file in the PCH folder", false) ||
                   (st.private_root && checks["see /etc/passwd exists"]);
    out.checks = checks;
    if (escaped) out.ok = false, out.error = "the sandbox did not hold";
    bool ok_dirs = !readable.empty();
    for (const auto& d : readable) ok_dirs &= can_open(d, O_RDONLY | O_DIRECTORY);
    if (!ok_dirs)
      out.ok = false, out.error = "the include directories are not readable inside the sandbox";
  }
  write_all(out.to_json().dump() + "\n");
  return out.ok ? 0 : 1;
}

int compile_and_answer(const CompileRequest& req, const std::vector<std::string>& extra_options,
                       const std::string& sandbox) {
  CompileAnswer res;
  res.sandbox = sandbox;
  const auto& builtins = builtin_headers();
  std::vector<const char*> header_src, header_names;
  for (const auto& h : builtins)
    header_src.push_back(h.text.c_str()), header_names.push_back(h.name.c_str());
  nvrtcProgram prog;
  nvrtcResult rc =
      nvrtcCreateProgram(&prog, req.source.c_str(), req.filename.c_str(),
                         static_cast<int>(builtins.size()), header_src.data(), header_names.data());
  if (rc != NVRTC_SUCCESS) {
    res.error = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(rc);
    write_answer(res);
    return 1;
  }
  for (const auto& n : req.names) nvrtcAddNameExpression(prog, n.c_str());
  std::vector<const char*> copts;
  for (const auto& o : req.options) copts.push_back(o.c_str());
  for (const auto& o : extra_options) copts.push_back(o.c_str());
  rc = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1) nvrtcGetProgramLog(prog, log.data());
  log.resize(log_size ? log_size - 1 : 0);
  res.log_bytes = log.size();
  if (log.size() > req.max_log_bytes) log.resize(req.max_log_bytes);
  res.log = log;
  if (rc != NVRTC_SUCCESS) {
    res.error = nvrtcGetErrorString(rc);
    write_answer(res);
    return 1;
  }
  for (const auto& n : req.names) {
    const char* lowered = nullptr;
    if (nvrtcGetLoweredName(prog, n.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) {
      res.error =
          "kernel '" + n + "' named in the launch block is not a __global__ function of this file";
      write_answer(res);
      return 1;
    }
    res.lowered[n] = lowered;
  }
  size_t cubin_size = 0;
  if (nvrtcGetCUBINSize(prog, &cubin_size) != NVRTC_SUCCESS || cubin_size == 0) {
    res.error = "NVRTC produced no cubin (is the arch a real sm_XX?)";
    write_answer(res);
    return 1;
  }
  if (cubin_size > req.max_cubin_bytes) {
    res.error = "the compiled kernel is " + std::to_string(cubin_size >> 20) +
                " MiB; the limit is " + std::to_string(req.max_cubin_bytes >> 20) + " MiB";
    write_answer(res);
    return 1;
  }
  std::string cubin(cubin_size, '\0');
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  res.ok = true;
  write_answer(res, cubin);
  return 0;
}

}  // namespace kernrl::nvrtc
