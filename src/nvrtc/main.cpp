// kernrl-nvrtc: compiles one kernel file with NVRTC. It runs as a child of kernrl, with an empty
// environment, in an empty directory, under time and memory limits, and it locks itself into the
// sandbox of sandbox/sandbox.h before NVRTC reads anything: a kernel file can make the
// preprocessor open only CUDA's headers and the headers kernrl serves from memory.
//
// Request (stdin): one CompileRequest. Answer (stdout): one CompileAnswer line, then exactly
// cubin_bytes bytes of cubin (protocol/compiler.h, docs/protocol.md).
// `kernrl-nvrtc --version` prints a VersionAnswer: {"nvrtc": "<major>.<minor>"}.
// `kernrl-nvrtc --check-sandbox DIR...` enters the sandbox and proves it (see check_sandbox()),
// printing a SandboxCheckAnswer.
#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headers/builtin_headers.h"
#include "protocol/compiler.h"
#include "sandbox/sandbox.h"

using kernrl::CompileAnswer;
using kernrl::CompileRequest;
using nlohmann::json;

namespace {

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

// NVRTC loads libnvrtc-builtins on its first compile; load it now, while the file system is open.
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

void answer(const CompileAnswer& res, const std::string& cubin = "") {
  std::string out = kernrl::write_compile_output(res, cubin);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

// Enters the sandbox, then tries what it must forbid and what it must allow.
int check_sandbox(const std::vector<std::string>& dirs) {
  preload_nvrtc_builtins();
  kernrl::SandboxStatus st = kernrl::enter_sandbox(dirs);
  kernrl::SandboxCheckAnswer out;
  out.ok = st.ok;
  out.landlock_abi = st.landlock_abi;
  out.sandbox = st.description;
  out.error = st.error;
  if (st.ok) {
    auto can_open = [](const char* p, int flags) {
      int fd = open(p, flags | O_CLOEXEC, 0600);
      if (fd >= 0) close(fd);
      return fd >= 0;
    };
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
    if (!st.gap.empty()) checks["gap"] = st.gap;
    bool escaped = checks["read /etc/passwd"] || checks["read /proc/self/environ"] ||
                   checks["create /tmp file"] || checks["socket"] ||
                   (st.private_root && checks["see /etc/passwd exists"]);
    out.checks = checks;
    if (escaped) out.ok = false, out.error = "the sandbox did not hold";
    bool readable = !dirs.empty();
    for (const auto& d : dirs) {
      int fd = open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      readable &= fd >= 0;
      if (fd >= 0) close(fd);
    }
    if (!readable)
      out.ok = false, out.error = "the include directories are not readable inside the sandbox";
  }
  std::cout << out.to_json().dump() << "\n";
  return out.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--version") {
    std::cout << kernrl::VersionAnswer{nvrtc_version()}.to_json().dump() << "\n";
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--check-sandbox")
    return check_sandbox({argv + 2, argv + argc});
  CompileRequest req;
  CompileAnswer res;
  try {
    req = kernrl::read_compile_request(std::string(std::istreambuf_iterator<char>(std::cin), {}));
  } catch (const std::exception& e) {
    res.error = std::string("bad request: ") + e.what();
    answer(res);
    return 2;
  }

  if (req.sandbox) {
    preload_nvrtc_builtins();
    kernrl::SandboxStatus st = kernrl::enter_sandbox(req.include_dirs);
    if (!st.ok) {
      res.sandbox_error = st.error;
      answer(res);
      return 3;
    }
    res.sandbox = st.description;
  } else {
    res.sandbox = "off";
  }

  const auto& builtins = kernrl::builtin_headers();
  std::vector<const char*> header_src, header_names;
  for (const auto& h : builtins)
    header_src.push_back(h.text.c_str()), header_names.push_back(h.name.c_str());
  nvrtcProgram prog;
  nvrtcResult rc =
      nvrtcCreateProgram(&prog, req.source.c_str(), req.filename.c_str(),
                         static_cast<int>(builtins.size()), header_src.data(), header_names.data());
  if (rc != NVRTC_SUCCESS) {
    res.error = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(rc);
    answer(res);
    return 1;
  }
  for (const auto& n : req.names) nvrtcAddNameExpression(prog, n.c_str());
  std::vector<const char*> copts;
  for (const auto& o : req.options) copts.push_back(o.c_str());
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
    answer(res);
    return 1;
  }
  for (const auto& n : req.names) {
    const char* lowered = nullptr;
    if (nvrtcGetLoweredName(prog, n.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) {
      res.error =
          "kernel '" + n + "' named in the launch block is not a __global__ function of this file";
      answer(res);
      return 1;
    }
    res.lowered[n] = lowered;
  }
  size_t cubin_size = 0;
  if (nvrtcGetCUBINSize(prog, &cubin_size) != NVRTC_SUCCESS || cubin_size == 0) {
    res.error = "NVRTC produced no cubin (is the arch a real sm_XX?)";
    answer(res);
    return 1;
  }
  if (cubin_size > req.max_cubin_bytes) {
    res.error = "the compiled kernel is " + std::to_string(cubin_size >> 20) +
                " MiB; the limit is " + std::to_string(req.max_cubin_bytes >> 20) + " MiB";
    answer(res);
    return 1;
  }
  std::string cubin(cubin_size, '\0');
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  res.ok = true;
  answer(res, cubin);
  return 0;
}
