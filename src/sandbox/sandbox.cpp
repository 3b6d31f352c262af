// Runs in the compiler children (kernrl-nvrtc, kernrl-triton), never in kernrl itself.
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace kernrl {
namespace {

// Landlock's ABI as of Linux 6.12; older kernels are told which parts they know.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
constexpr uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5
constexpr uint64_t kNetBindTcp = 1ULL << 0;   // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;

constexpr uint64_t kFsAbi1 =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
    LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM;

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// One Landlock rule: `access` beneath `path` (a directory, or a file with file-only rights).
bool add_rule(int ruleset, const std::string& path, uint64_t access, SandboxStatus& st) {
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    st.error = errno_text(("cannot open " + path).c_str());
    return false;
  }
  landlock_path_beneath_attr rule{};
  rule.allowed_access = access;
  rule.parent_fd = fd;
  long rc = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  close(fd);
  if (rc != 0) {
    st.error = errno_text(("landlock_add_rule " + path).c_str());
    return false;
  }
  return true;
}

// Landlock: the profile's reads, executions and writes, nothing else on the file system; no TCP.
bool apply_landlock(const SandboxProfile& pr, SandboxStatus& st) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0) {
    st.error =
        errno == ENOSYS
            ? "the kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)"
        : errno == EOPNOTSUPP
            ? "Landlock is disabled on this kernel (add landlock to the lsm= boot parameter)"
            : errno_text("landlock_create_ruleset");
    return false;
  }
  st.landlock_abi = static_cast<int>(abi);
  RulesetAttr attr{};
  attr.handled_access_fs = kFsAbi1;
  if (abi >= 2) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) attr.handled_access_fs |= kFsTruncate;
  if (abi >= 5) attr.handled_access_fs |= kFsIoctlDev;
  if (abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
  int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) {
    st.error = errno_text("landlock_create_ruleset");
    return false;
  }
  const uint64_t read_dir = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  uint64_t write_file = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE;
  if (abi >= 3) write_file |= kFsTruncate;
  uint64_t write_dir = kFsAbi1 & ~(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                                   LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                                   LANDLOCK_ACCESS_FS_MAKE_FIFO);
  if (abi >= 2) write_dir |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) write_dir |= kFsTruncate;
  bool ok = true;
  for (const auto& d : pr.read_dirs) ok = ok && add_rule(ruleset, d, read_dir, st);
  for (const auto& f : pr.read_files)
    ok = ok && add_rule(ruleset, f, LANDLOCK_ACCESS_FS_READ_FILE, st);
  for (const auto& f : pr.exec_files)
    ok = ok && add_rule(ruleset, f, LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE, st);
  for (const auto& d : pr.write_dirs) ok = ok && add_rule(ruleset, d, write_dir, st);
  for (const auto& f : pr.write_files) ok = ok && add_rule(ruleset, f, write_file, st);
  if (!ok) {
    close(ruleset);
    return false;
  }
  long rc = syscall(SYS_landlock_restrict_self, ruleset, 0);
  close(ruleset);
  if (rc != 0) {
    st.error = errno_text("landlock_restrict_self");
    return false;
  }
  return true;
}

// seccomp: no sockets, no new programs, no looking into other processes, no namespaces or mounts.
bool apply_seccomp(bool allow_exec, SandboxStatus& st) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    st.error = "seccomp_init failed";
    return false;
  }
  const int denied[] = {
      SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
      SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(sendto), SCMP_SYS(sendmsg), SCMP_SYS(execve),
      SCMP_SYS(execveat), SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
      SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(chroot),
      SCMP_SYS(pivot_root), SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
      SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup),
      // The process group is how kernrl stops a compile and everything it
      // started: nothing inside may leave it.
      SCMP_SYS(setsid), SCMP_SYS(setpgid)};
  for (int sc : denied) {
    if (allow_exec && (sc == SCMP_SYS(execve) || sc == SCMP_SYS(execveat))) continue;
    if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), sc, 0) != 0) {
      st.error = "seccomp_rule_add failed";
      seccomp_release(ctx);
      return false;
    }
  }
  int rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) {
    st.error = std::string("seccomp_load: ") + std::strerror(-rc);
    return false;
  }
  return true;
}

}  // namespace

SandboxStatus enter_sandbox(const SandboxProfile& profile) {
  SandboxStatus st;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    st.error = errno_text("prctl(PR_SET_NO_NEW_PRIVS)");
    return st;
  }
  if (!apply_landlock(profile, st)) return st;
  if (!apply_seccomp(profile.allow_exec, st)) return st;
  st.ok = true;
  st.description = "landlock abi " + std::to_string(st.landlock_abi) + ", seccomp";
  return st;
}

SandboxStatus enter_sandbox(const std::vector<std::string>& readable_dirs) {
  SandboxProfile p;
  p.read_dirs = readable_dirs;
  return enter_sandbox(p);
}

}  // namespace kernrl
