// kernrl-triton: runs kernrl's Triton helper (kernrl_triton.py) under the OS sandbox of
// sandbox/sandbox.h. It is the only process where a Triton kernel file's Python ever runs.
//
//   kernrl-triton --setup JSON                 compile: the script (the helper, or the compile
//                                              server kernrl_triton_server.py with its
//                                              `script_args`) imports Triton, says ready and
//                                              answers request lines
//   kernrl-triton --setup JSON --discover      one JSON line: the Triton it finds
//   kernrl-triton --setup JSON --check-sandbox enters the sandbox and tries to escape it
//
// JSON (written by src/triton_compile/child.cpp): {"python", "script", "script_args", "tmp",
// "read_dirs", "read_files", "exec_files", "pythonpath", "ptxas"}. The launcher forks: the child
// enters the sandbox (read-only: the Python installation, the triton package; execute: Python, its
// loader, ptxas; write: only `tmp`; no sockets, no GPU device nodes) and executes Python with an
// environment of its own; the parent only waits and passes the exit status on. kernrl sets the
// time, memory and output limits from outside.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sandbox/sandbox.h"

using nlohmann::json;

namespace {

struct Setup {
  std::string python, script, tmp, pythonpath, ptxas;
  std::vector<std::string> script_args;  // passed to the script after its path
  kernrl::SandboxProfile profile;
};

Setup read_setup(const std::string& text) {
  json j = json::parse(text);
  Setup s;
  s.python = j.at("python").get<std::string>();
  s.script = j.at("script").get<std::string>();
  s.tmp = j.at("tmp").get<std::string>();
  s.pythonpath = j.value("pythonpath", "");
  s.ptxas = j.value("ptxas", "");
  s.script_args = j.value("script_args", std::vector<std::string>{});
  s.profile.read_dirs = j.value("read_dirs", std::vector<std::string>{});
  s.profile.read_files = j.value("read_files", std::vector<std::string>{});
  s.profile.exec_files = j.value("exec_files", std::vector<std::string>{});
  s.profile.write_dirs = {s.tmp};
  s.profile.write_files = {"/dev/null"};
  s.profile.allow_exec = true;
  return s;
}

std::vector<std::string> child_env(const Setup& s) {
  std::vector<std::string> env = {"HOME=" + s.tmp,
                                  "TMPDIR=" + s.tmp,
                                  "TRITON_HOME=" + s.tmp,
                                  "TRITON_CACHE_DIR=" + s.tmp + "/cache",
                                  "PYTHONDONTWRITEBYTECODE=1",
                                  "PYTHONNOUSERSITE=1",
                                  "PYTHONHASHSEED=0",
                                  "PATH=/nonexistent",
                                  "LANG=C.UTF-8"};
  if (!s.pythonpath.empty()) env.push_back("PYTHONPATH=" + s.pythonpath);
  if (!s.ptxas.empty()) env.push_back("TRITON_PTXAS_PATH=" + s.ptxas);
  return env;
}

bool can_open(const std::string& p, int flags) {
  int fd = open(p.c_str(), flags | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

// Whether a program outside the profile can be executed (in a grandchild, so nothing runs here).
bool can_exec(const char* path) {
  pid_t pid = fork();
  if (pid == 0) {
    char* argv[] = {const_cast<char*>(path), nullptr};
    char* envp[] = {nullptr};
    execve(path, argv, envp);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return false;
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

// In the sandboxed child: what it must forbid and what it must allow, as one JSON line.
int check_sandbox(const Setup& s) {
  json checks = {
      {"read /etc/passwd", can_open("/etc/passwd", O_RDONLY)},
      {"read /proc/self/environ", can_open("/proc/self/environ", O_RDONLY)},
      {"create a file outside tmp",
       can_open(s.tmp + "/../kernrl-triton-probe", O_WRONLY | O_CREAT)},
      {"open /dev/nvidiactl", can_open("/dev/nvidiactl", O_RDWR)},
      {"open /dev/nvidia0", can_open("/dev/nvidia0", O_RDWR)},
      {"socket",
       [] {
         int fd = socket(AF_INET, SOCK_STREAM, 0);
         if (fd >= 0) close(fd);
         return fd >= 0;
       }()},
      {"execute /bin/sh", can_exec("/bin/sh")},
  };
  bool escaped = false;
  for (auto& [k, v] : checks.items()) escaped = escaped || v.get<bool>();
  bool tmp_ok = can_open(s.tmp + "/probe", O_WRONLY | O_CREAT);
  bool script_ok = can_open(s.script, O_RDONLY);
  checks["write tmp"] = tmp_ok;
  checks["read the helper"] = script_ok;
  json out = {{"ok", !escaped && tmp_ok && script_ok}, {"checks", checks}};
  if (escaped) out["error"] = "the sandbox did not hold";
  if (!tmp_ok || !script_ok)
    out["error"] = "the sandbox is too tight: the helper or its temporary directory is unreachable";
  std::cout << out.dump() << "\n";
  return out["ok"].get<bool>() ? 0 : 1;
}

[[noreturn]] void run_child(const Setup& s, bool discover, bool check) {
  if (chdir(s.tmp.c_str()) != 0) _exit(126);
  kernrl::SandboxStatus st = kernrl::enter_sandbox(s.profile);
  if (!st.ok) {
    std::cout << json{{"ok", false}, {"sandbox_error", st.error}}.dump() << "\n";
    std::cout.flush();
    _exit(3);
  }
  if (check) {
    int rc = check_sandbox(s);
    std::cout.flush();
    _exit(rc);
  }
  std::vector<std::string> args = {s.python, "-B", "-s", s.script};
  if (discover) args.push_back("--discover");
  if (!discover) args.insert(args.end(), s.script_args.begin(), s.script_args.end());
  std::vector<std::string> env = child_env(s);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  execve(s.python.c_str(), argv.data(), envp.data());
  std::cout << json{{"ok", false}, {"error", "cannot execute " + s.python}}.dump() << "\n";
  std::cout.flush();
  _exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Setup s;
  bool discover = false, check = false;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--setup" && i + 1 < args.size())
        s = read_setup(args[++i]);
      else if (args[i] == "--discover")
        discover = true;
      else if (args[i] == "--check-sandbox")
        check = true;
      else
        throw std::runtime_error("unknown argument " + args[i]);
    }
    if (s.python.empty()) throw std::runtime_error("--setup is required");
  } catch (const std::exception& e) {
    std::cout << json{{"ok", false}, {"error", std::string("bad arguments: ") + e.what()}}.dump()
              << "\n";
    return 2;
  }
  std::cout.flush();
  pid_t pid = fork();
  if (pid < 0) {
    std::cout << json{{"ok", false}, {"error", "fork failed"}}.dump() << "\n";
    return 1;
  }
  if (pid == 0) run_child(s, discover, check);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
