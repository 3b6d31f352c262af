#include "nvrtc/server.h"

#include <dirent.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "headers/builtin_headers.h"
#include "nvrtc/compile_one.h"
#include "protocol/compiler.h"
#include "sandbox/sandbox.h"

namespace kernrl::nvrtc {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kDefaultPchSets = 8;
constexpr size_t kMaxSeen = 4096;  // header sets remembered from a first compile
constexpr const char* kAnchor = "__global__ void kernrl_pch_anchor() {}\n";

// The server's buffers of submissions (jobs read, children's answers) are zeroed when freed, and a
// child zeroes the server's copies of other jobs before it enters the sandbox: a compile's memory,
// inherited from the server, holds no other submission.
template <class T>
struct WipingAllocator {
  using value_type = T;
  WipingAllocator() = default;
  template <class U>
  WipingAllocator(const WipingAllocator<U>&) {}
  T* allocate(size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, size_t n) {
    explicit_bzero(p, n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  bool operator==(const WipingAllocator&) const { return true; }
  bool operator!=(const WipingAllocator&) const { return false; }
};
using Bytes = std::basic_string<char, std::char_traits<char>, WipingAllocator<char>>;

void wipe(Bytes& b) {
  explicit_bzero(b.data(), b.size());
  b.clear();
}

// One child of the server: a compile (or sandbox check) it answers, or a PCH builder.
struct Child {
  pid_t pid = -1;
  int fd = -1;  // the read end of the child's stdout
  Bytes out;
  Clock::time_point deadline;
  size_t max_out = 0;
  bool timed_out = false, overflow = false;
  uint64_t id = 0;
  std::string pch = "none";
  std::string scratch;    // the compile's writable folder, removed when it ends
  std::string build_key;  // a builder: the PCH it makes
};

enum class PchState { Queued, Building, Ready, Failed };
struct Pch {
  PchState state = PchState::Queued;
  std::string file;
  ServerJob job;                // the options, headers, directories and limits it is built with
  std::vector<uint64_t> ready;  // Prepare jobs answered once it is made (or not)
};

// The answer to a job that ran no child (Prepare).
void reply_now(uint64_t id, const std::string& pch);

size_t pch_heap_bytes() {
  size_t bytes = 0;
  nvrtcGetPCHHeapSize(&bytes);
  return bytes;
}

bool plain_header(const std::string& h) {
  if (h.empty() || h.size() > 200 || h[0] == '/' || h.find("..") != std::string::npos) return false;
  for (char c : h)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("_./+-", c)) return false;
  return true;
}

void write_all(int fd, std::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = write(fd, data.data() + off, data.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) std::_Exit(0);  // kernrl is gone
    off += static_cast<size_t>(w);
  }
}

// PCH folders of servers that no longer run (killed before they could remove theirs).
void remove_stale_folders(const fs::path& tmp) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(tmp, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("kernrl-pch-", 0) != 0) continue;
    long pid = std::strtol(name.c_str() + 11, nullptr, 10);
    struct stat sb;
    if (pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;
    if (stat(e.path().c_str(), &sb) == 0 && sb.st_uid == getuid()) fs::remove_all(e.path(), ec);
  }
}

class Server {
 public:
  explicit Server(int max_sets) : max_sets_(max_sets) {}
  int run();

 private:
  void handle(const Bytes& header, const Bytes& body);
  void wipe_other_jobs(const Bytes& body);
  std::string choose_pch(const ServerJob& job, std::vector<std::string>& extra);
  void prepare(const ServerJob& job);
  pid_t fork_child(const ServerJob& job, int& read_fd, size_t max_file_bytes);
  void start_compile(const ServerJob& job, const Bytes& body);
  void start_next_build();
  void finish(Child& c);
  void read_child(Child& c);
  void cleanup();

  int max_sets_;
  pid_t self_ = getpid();
  int devnull_ = -1;
  std::string dir_;      // the server's folder (mode 0700): pch/ and scratch/
  std::string pch_dir_;  // the PCH files: readable by the compiles, written only by the builder
  std::map<std::string, Pch> pchs_;
  std::deque<std::string> queue_;  // PCH keys waiting for the builder
  std::set<std::string> seen_;     // header sets compiled once, without a PCH
  bool building_ = false;
  std::list<Child> children_;
  Bytes in_;                                  // what was read of kernrl's jobs
  std::deque<std::pair<Bytes, Bytes>> jobs_;  // complete jobs (header, body) not yet handled
};

// After fork, in the child: its stdout is `out_fd`, stdin and stderr /dev/null, every other
// descriptor of the server closed, its limits set; it dies with the server.
// The largest file a child may write: 0 for a compile without a PCH (none at all).
void child_setup(pid_t server, int out_fd, int devnull, const ServerJob& job,
                 size_t max_file_bytes) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != server) _exit(1);
  signal(SIGPIPE, SIG_DFL);
  dup2(devnull, 0);
  dup2(out_fd, 1);
  dup2(devnull, 2);
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
    for (int fd = 3; fd < 65536; ++fd) close(fd);
  rlimit zero{};
  setrlimit(RLIMIT_CORE, &zero);
  rlimit files{};
  files.rlim_cur = files.rlim_max = max_file_bytes;
  setrlimit(RLIMIT_FSIZE, &files);
  if (job.memory_limit_mb > 0) {
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(job.memory_limit_mb) << 20;
    setrlimit(RLIMIT_AS, &lim);
  }
}

pid_t Server::fork_child(const ServerJob& job, int& read_fd, size_t max_file_bytes) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    child_setup(self_, p[1], devnull_, job, max_file_bytes);
    return 0;
  }
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    return -1;
  }
  read_fd = p[0];
  return pid;
}

// The options that give a compile the PCH for its headers, and what the reply says of it.
std::string Server::choose_pch(const ServerJob& job, std::vector<std::string>& extra) {
  if (max_sets_ <= 0 || pch_dir_.empty() || job.pch_headers.empty()) return "none";
  std::string key;
  for (const auto& o : job.options) key += o + '\n';
  key += '\n';
  for (const auto& h : job.pch_headers) {
    if (!plain_header(h)) return "none";
    key += h + '\n';
  }
  auto it = pchs_.find(key);
  if (it == pchs_.end()) {
    // A header set is worth a PCH once it comes a second time (a lone eval makes none).
    if (job.kind == ServerJob::Compile && seen_.insert(key).second) {
      if (seen_.size() > kMaxSeen) seen_ = {key};
      return "seen";
    }
    if (static_cast<int>(pchs_.size()) >= max_sets_) return "full";
    Pch p;
    p.file = pch_dir_ + "/" + std::to_string(pchs_.size()) + ".pch";
    p.job = job;
    if (job.kind == ServerJob::Prepare) p.ready.push_back(job.id);
    pchs_.emplace(key, p);
    queue_.push_back(key);
    start_next_build();
    return "building";
  }
  if (job.kind == ServerJob::Prepare && it->second.state != PchState::Failed &&
      it->second.state != PchState::Ready) {
    it->second.ready.push_back(job.id);
    return "building";
  }
  if (it->second.state == PchState::Failed) return "failed";
  if (it->second.state != PchState::Ready) return "building";
  extra.push_back("--use-pch=" + it->second.file);
  extra.push_back("--pch-messages=false");
  for (const auto& h : job.pch_headers) extra.push_back("--pre-include=" + h);
  return "used";
}

void reply_now(uint64_t id, const std::string& pch) {
  ServerReply r;
  r.id = id;
  r.exit_code = 0;
  r.pch = pch;
  write_all(1, r.to_json().dump() + "\n");
}

void Server::prepare(const ServerJob& job) {
  std::vector<std::string> extra;
  std::string pch = choose_pch(job, extra);
  if (pch != "building") reply_now(job.id, pch);  // else answered when the builder ends
}

void Server::wipe_other_jobs(const Bytes& body) {
  wipe(in_);
  for (auto& [h, b] : jobs_)
    if (&b != &body) wipe(h), wipe(b);
  for (auto& c : children_) wipe(c.out);
}

void Server::start_compile(const ServerJob& job, const Bytes& body) {
  Child c;
  c.id = job.id;
  std::vector<std::string> extra;
  if (job.kind == ServerJob::Compile) c.pch = choose_pch(job, extra);
  // A compile with a PCH needs a folder to write: NVRTC's front end maps the PCH's memory from a
  // temporary file there (created and unlinked at once, sparse, at most the PCH heap's size).
  bool scratch = !dir_.empty() && (c.pch == "used" || job.kind == ServerJob::CheckSandbox);
  if (scratch) {
    c.scratch = dir_ + "/scratch/" + std::to_string(job.id);
    if (mkdir(c.scratch.c_str(), 0700) != 0) c.scratch.clear(), extra.clear(), c.pch = "none";
  }
  c.pid = fork_child(job, c.fd, c.scratch.empty() ? 0 : pch_heap_bytes() + (64 << 20));
  if (c.pid == 0) {
    wipe_other_jobs(body);
    if (job.kind == ServerJob::CheckSandbox)
      _exit(check_sandbox(job.include_dirs, pch_dir_, c.scratch));
    if (!c.scratch.empty()) setenv("TMPDIR", c.scratch.c_str(), 1);
    std::string sandbox = "off";
    if (job.sandbox) {
      std::vector<std::string> readable = job.include_dirs, writable;
      if (!pch_dir_.empty()) readable.push_back(pch_dir_);
      if (!c.scratch.empty()) writable.push_back(c.scratch);
      SandboxStatus st = enter_sandbox(readable, writable);
      if (!st.ok) {
        CompileAnswer res;
        res.sandbox_error = st.error;
        write_answer(res);
        _exit(3);
      }
      sandbox = st.description;
    }
    CompileRequest req;
    try {
      req = read_compile_request(std::string(body.data(), body.size()));  // inside the sandbox
    } catch (const std::exception& e) {
      CompileAnswer res;
      res.error = std::string("bad request: ") + e.what();
      write_answer(res);
      _exit(2);
    }
    _exit(compile_and_answer(req, extra, sandbox));
  }
  if (c.pid < 0) {  // no child could be made: answered as a crash
    ServerReply r;
    r.id = job.id;
    r.signal = SIGKILL;
    write_all(1, r.to_json().dump() + "\n");
    return;
  }
  c.max_out = job.max_output_bytes;
  c.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(job.timeout_s));
  children_.push_back(std::move(c));
}

// The builder: kernrl's anchor text, the headers pre-included, NVRTC told to write the PCH. It
// runs in a sandbox that can read CUDA's include tree and write only the PCH folder.
void Server::start_next_build() {
  if (building_ || queue_.empty()) return;
  std::string key = queue_.front();
  queue_.pop_front();
  Pch& p = pchs_.at(key);
  Child c;
  c.build_key = key;
  c.pid = fork_child(p.job, c.fd, RLIM_INFINITY);
  if (c.pid == 0) {
    wipe_other_jobs(Bytes());
    setenv("TMPDIR", pch_dir_.c_str(), 1);  // NVRTC's front end writes the PCH through a temporary
    if (p.job.sandbox) {
      SandboxProfile prof;
      prof.read_dirs = p.job.include_dirs;
      prof.write_dirs = {pch_dir_};
      if (!enter_sandbox(prof).ok) _exit(4);
    }
    std::vector<std::string> opts = p.job.options;
    for (const auto& h : p.job.pch_headers) opts.push_back("--pre-include=" + h);
    opts.push_back("--create-pch=" + p.file);
    opts.push_back("--pch-messages=false");
    std::vector<const char*> copts, src, names;
    for (const auto& o : opts) copts.push_back(o.c_str());
    for (const auto& h : builtin_headers())
      src.push_back(h.text.c_str()), names.push_back(h.name.c_str());
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, kAnchor, "kernrl_pch_anchor.cu", static_cast<int>(src.size()),
                           src.data(), names.data()) != NVRTC_SUCCESS)
      _exit(1);
    nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
    _exit(rc == NVRTC_SUCCESS && nvrtcGetPCHCreateStatus(prog) == NVRTC_SUCCESS ? 0 : 1);
  }
  if (c.pid < 0) {
    p.state = PchState::Failed;
    for (uint64_t id : p.ready) reply_now(id, "failed");
    p.ready.clear();
    return start_next_build();
  }
  p.state = PchState::Building;
  building_ = true;
  c.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(2 * p.job.timeout_s));
  children_.push_back(std::move(c));
}

void Server::finish(Child& c) {
  close(c.fd);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!c.build_key.empty()) {
    Pch& p = pchs_.at(c.build_key);
    struct stat sb;
    bool made = WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(p.file.c_str(), &sb) == 0;
    p.state = made ? PchState::Ready : PchState::Failed;
    if (!made) unlink(p.file.c_str());
    for (uint64_t id : p.ready) reply_now(id, made ? "used" : "failed");
    p.ready.clear();
    building_ = false;
    start_next_build();
    return;
  }
  std::error_code ec;
  if (!c.scratch.empty()) fs::remove_all(c.scratch, ec);
  ServerReply r;
  r.id = c.id;
  r.pch = c.pch;
  r.timed_out = c.timed_out;
  r.output_overflow = c.overflow;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (c.overflow || c.timed_out) wipe(c.out);
  r.bytes = c.out.size();
  write_all(1, r.to_json().dump() + "\n");
  write_all(1, std::string_view(c.out.data(), c.out.size()));
  wipe(c.out);
}

void Server::read_child(Child& c) {
  char buf[1 << 16];
  ssize_t n = read(c.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    finish(c);
    c.pid = -1;
    return;
  }
  if (c.overflow) return;
  c.out.append(buf, static_cast<size_t>(n));
  explicit_bzero(buf, static_cast<size_t>(n));
  if (c.max_out && c.out.size() > c.max_out) {
    c.overflow = true;
    wipe(c.out);
    kill(c.pid, SIGKILL);
  }
}

void Server::handle(const Bytes& header, const Bytes& body) {
  ServerJob job;
  try {
    job = ServerJob::from_json(nlohmann::json::parse(header.begin(), header.end()));
  } catch (const std::exception& e) {
    write_all(2, std::string("kernrl-nvrtc --server: bad job: ") + e.what() + "\n");
    cleanup();
    std::_Exit(2);
  }
  if (job.kind == ServerJob::Prepare)
    prepare(job);
  else
    start_compile(job, body);
}

void Server::cleanup() {
  for (auto& c : children_)
    if (c.pid > 0) kill(c.pid, SIGKILL);
  for (auto& c : children_)
    if (c.pid > 0) waitpid(c.pid, nullptr, 0);
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

int Server::run() {
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  devnull_ = open("/dev/null", O_RDWR | O_CLOEXEC);
  preload_nvrtc_builtins();
  if (max_sets_ > 0) {
    std::error_code ec;
    fs::path tmp = fs::temp_directory_path(ec);
    if (ec) tmp = "/tmp";
    remove_stale_folders(tmp);
    std::string templ = (tmp / ("kernrl-pch-" + std::to_string(self_) + "-XXXXXX")).string();
    if (mkdtemp(templ.data()) && mkdir((templ + "/pch").c_str(), 0700) == 0 &&
        mkdir((templ + "/scratch").c_str(), 0700) == 0)
      dir_ = templ, pch_dir_ = templ + "/pch";  // mode 0700; without it, no PCH
  }
  char buf[1 << 16];
  for (;;) {
    std::vector<pollfd> fds{{0, POLLIN, 0}};
    auto next = Clock::time_point::max();
    for (auto& c : children_) {
      fds.push_back({c.fd, POLLIN, 0});
      if (!c.timed_out) next = std::min(next, c.deadline);
    }
    int wait_ms = -1;
    if (next != Clock::time_point::max())
      wait_ms = static_cast<int>(std::max<long>(
          0,
          std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count() + 1));
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) break;
    auto now = Clock::now();
    for (auto& c : children_)
      if (!c.timed_out && now >= c.deadline) c.timed_out = true, kill(c.pid, SIGKILL);
    std::vector<Child*> polled;  // a finished builder may start the next: it was not polled
    for (auto& c : children_) polled.push_back(&c);
    for (size_t i = 0; i + 1 < fds.size(); ++i)
      if (fds[i + 1].revents) read_child(*polled[i]);
    children_.remove_if([](const Child& c) { return c.pid < 0; });
    if (fds[0].revents) {
      ssize_t n = read(0, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
      if (n > 0) in_.append(buf, static_cast<size_t>(n)), explicit_bzero(buf, sizeof buf);
      size_t at = 0;
      for (;;) {  // a job is two lines: its header, then its body
        size_t a = in_.find('\n', at);
        size_t b = a == Bytes::npos ? a : in_.find('\n', a + 1);
        if (b == Bytes::npos) break;
        jobs_.emplace_back(in_.substr(at, a - at), in_.substr(a + 1, b - a - 1));
        at = b + 1;
      }
      if (at > 0) {
        Bytes rest = in_.substr(at);
        wipe(in_);
        in_.swap(rest);
      }
      while (!jobs_.empty()) {
        handle(jobs_.front().first, jobs_.front().second);
        wipe(jobs_.front().first);
        wipe(jobs_.front().second);
        jobs_.pop_front();
      }
    }
  }
  cleanup();
  return 0;
}

}  // namespace

int run_server(const std::vector<std::string>& args) {
  int sets = kDefaultPchSets;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--pch-sets" && i + 1 < args.size()) {
      sets = std::atoi(args[++i].c_str());
    } else {
      write_all(2, "kernrl-nvrtc --server: unknown argument " + args[i] + "\n");
      return 2;
    }
  }
  return Server(sets).run();
}

}  // namespace kernrl::nvrtc
