// Runs in the compiler children (kernrl-nvrtc, kernrl-triton), never in kernrl itself.
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

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

bool write_file(const char* path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

// mkdir -p, with the error named.
bool make_dirs(const std::string& path, std::string& error) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    std::string part = path.substr(0, at);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      error = errno_text(("mkdir " + part).c_str());
      return false;
    }
  }
  return true;
}

// A private mount namespace (in a user namespace of its own, so no privilege is needed) whose
// root is an empty tmpfs holding only `dirs`, bound read-only at their own paths: a file outside
// them does not exist for this process, rather than exists and cannot be read. False (with
// *why) where the kernel or its policy refuses unprivileged user namespaces.
bool private_root(const std::vector<std::string>& dirs, const std::vector<std::string>& rw_dirs,
                  std::string& why) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    why = errno_text("unshare(CLONE_NEWUSER | CLONE_NEWNS)");
    return false;
  }
  if (!write_file("/proc/self/setgroups", "deny") ||
      !write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
      !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
    why = "cannot map the user in its namespace";
    return false;
  }
  // The directories are held open first: the new root is mounted over /tmp, which may hold them.
  std::vector<std::string> all = dirs;
  all.insert(all.end(), rw_dirs.begin(), rw_dirs.end());
  std::vector<int> fds;
  for (const auto& d : all) {
    if (d.empty() || d[0] != '/') {
      why = "the include directory " + d + " is not an absolute path";
      return false;
    }
    fds.push_back(open(d.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY));
    if (fds.back() < 0) {
      why = errno_text(("open " + d).c_str());
      return false;
    }
  }
  const std::string root = "/tmp";  // the mount point of the new root, in this namespace only
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      mount("kernrl-nvrtc", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755") !=
          0) {
    why = errno_text("mount");
    return false;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    std::string target = root + all[i], source = "/proc/self/fd/" + std::to_string(fds[i]);
    const std::string& d = all[i];
    if (!make_dirs(target, why)) return false;
    bool bound = mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0;
    close(fds[i]);
    unsigned long ro = i < dirs.size() ? MS_RDONLY : 0;  // the scratch folders stay writable
    if (!bound ||
        mount(nullptr, target.c_str(), nullptr,
              MS_BIND | MS_REMOUNT | ro | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
      why = errno_text(("bind " + d).c_str());
      return false;
    }
  }
  std::string old = root + "/.old";
  if (mkdir(old.c_str(), 0700) != 0 || syscall(SYS_pivot_root, root.c_str(), old.c_str()) != 0 ||
      chdir("/") != 0 || umount2("/.old", MNT_DETACH) != 0 || rmdir("/.old") != 0) {
    why = errno_text("pivot_root");
    return false;
  }
  // The new root itself becomes read-only: nothing can be created in it.
  if (mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
            nullptr) != 0) {
    why = errno_text("remount / read-only");
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

namespace {

SandboxStatus enter(const SandboxProfile& profile, const std::vector<std::string>* private_dirs) {
  SandboxStatus st;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    st.error = errno_text("prctl(PR_SET_NO_NEW_PRIVS)");
    return st;
  }
  // Only the NVRTC child gets a private root: its whole world is a few read-only directories.
  // Triton's profile (an interpreter, its packages, a private temporary directory) has no root of
  // its own; the gap below says what that leaves.
  std::string no_namespace = "not asked for: this profile reads an interpreter's installation";
  if (private_dirs) st.private_root = private_root(*private_dirs, profile.write_dirs, no_namespace);
  if (!apply_landlock(profile, st)) return st;
  if (!apply_seccomp(profile.allow_exec, st)) return st;
  st.ok = true;
  st.description = (st.private_root ? "private root, " : "") + std::string("landlock abi ") +
                   std::to_string(st.landlock_abi) + ", seccomp";
  if (!st.private_root)
    st.gap = "no private mount namespace (" + no_namespace +
             "): files outside the readable directories cannot be read, but whether one exists " +
             (private_dirs ? "can be learned (__has_include)" : "can be learned (stat)");
  return st;
}

}  // namespace

SandboxStatus enter_sandbox(const SandboxProfile& profile) {
  return enter(profile, nullptr);
}

SandboxStatus enter_sandbox(const std::vector<std::string>& readable_dirs,
                            const std::vector<std::string>& scratch_dirs) {
  SandboxProfile p;
  p.read_dirs = readable_dirs;
  p.write_dirs = scratch_dirs;
  return enter(p, &readable_dirs);
}

}  // namespace kernrl
