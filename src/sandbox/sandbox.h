// The compiler's sandbox, applied by kernrl-nvrtc to itself before it reads a single header: what
// a kernel file makes the preprocessor open is decided by the operating system, not by reading
// the file. After enter_sandbox() succeeds the process
//   - can open for reading only files under the given directories (CUDA's include tree),
//   - can create, write, truncate, rename or delete no file anywhere (Landlock),
//   - can make no TCP connection (Landlock) and create no socket of any kind, cannot execute
//     programs, trace or read other processes (seccomp),
//   - cannot gain privileges (no_new_privs).
// Its environment is already empty (kernrl starts it so) and it runs in an empty directory.
#pragma once

#include <string>
#include <vector>

namespace kernrl {

struct SandboxStatus {
  bool ok = false;
  int landlock_abi = 0;
  std::string error;        // why it could not be set up (when !ok)
  std::string description;  // what is in force, for records and messages
  // The process's root is a private one holding only the readable directories (a mount namespace
  // in an unprivileged user namespace); false where those are not available.
  bool private_root = false;
  std::string gap;  // what the sandbox does not hold where private_root is false
};

// Restricts this process for good. Libraries it will need later must be loaded before the call.
// `scratch_dirs` (the fork server's compiles: a folder of the compile's own, which NVRTC's front
// end needs to map a precompiled header's memory) may also be written: files created, written and
// removed beneath them, and nothing else; they are bound writable in the private root.
SandboxStatus enter_sandbox(const std::vector<std::string>& readable_dirs,
                            const std::vector<std::string>& scratch_dirs = {});

// A wider profile, for kernrl-triton's Python (src/triton): what may be read, executed (files
// only: Python itself, its loader, Triton's ptxas) and written (a private temporary directory);
// with `allow_exec` execve stays allowed by seccomp (Landlock still decides which files).
// Everything else is as above: no sockets, no TCP, no ptrace, no namespaces, no other file.
struct SandboxProfile {
  std::vector<std::string> read_dirs, read_files, exec_files, write_dirs, write_files;
  bool allow_exec = false;
};
SandboxStatus enter_sandbox(const SandboxProfile& profile);

}  // namespace kernrl
