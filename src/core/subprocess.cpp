#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace kernrl {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxLineBytes = size_t{256}
                                 << 20;  // longest line accepted from a line-protocol child

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// fork + exec with stdin/stdout pipes. The child gets its own process group so a kill takes
// everything it started with it.
pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& opt, int* to_child,
            int* from_child) {
  static char* opt_no_env[] = {nullptr};
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child's environment is built before fork: after fork only async-signal-safe calls.
  std::vector<std::string> env_store;
  std::vector<char*> envp;
  if (!opt.env.empty() || opt.clear_env) {
    for (char** e = opt.clear_env ? &opt_no_env[0] : environ; *e; ++e) {
      std::string kv = *e;
      bool overridden = false;
      for (const auto& o : opt.env)
        overridden |= kv.compare(0, o.find('=') + 1, o, 0, o.find('=') + 1) == 0;
      if (!overridden) env_store.push_back(kv);
    }
    for (const auto& o : opt.env) env_store.push_back(o);
    for (auto& kv : env_store) envp.push_back(kv.data());
    envp.push_back(nullptr);
  }
  int err_fd = -1;
  if (!opt.stderr_file.empty())
    err_fd = open(opt.stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG,
          SIGKILL);  // never outlive kernrl (a killed run leaves no GPU worker behind)
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    if (!opt.cwd.empty() && chdir(opt.cwd.c_str()) != 0) _exit(126);
    if (opt.address_space_limit_mb > 0) {
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(opt.address_space_limit_mb) << 20;
      setrlimit(RLIMIT_AS, &lim);
    }
    if (opt.file_size_limit_mb > 0 && !opt.no_files) {
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(opt.file_size_limit_mb) << 20;
      setrlimit(RLIMIT_FSIZE, &lim);
      rlimit zero{};
      setrlimit(RLIMIT_CORE, &zero);
    }
    if (opt.no_files) {
      rlimit zero{};
      setrlimit(RLIMIT_FSIZE, &zero);
      setrlimit(RLIMIT_CORE, &zero);
    }
    if (envp.empty())
      execv(args[0], args.data());
    else
      execve(args[0], args.data(), envp.data());
    // Said on stderr, unless files may not be written (a file as stderr would end the child with
    // SIGXFSZ): exit 127 says it to the parent either way.
    if (!opt.no_files) {
      const char msg[] = "kernrl: cannot execute helper program\n";
      (void)!write(2, msg, sizeof msg - 1);
    }
    _exit(127);
  }
  if (err_fd >= 0) close(err_fd);
  close(in[0]);
  close(out[1]);
  *to_child = in[1];
  *from_child = out[0];
  signal(SIGPIPE, SIG_IGN);  // a dead child must give EPIPE, not kill us
  return pid;
}

ProcessResult wait_status(pid_t pid, bool timed_out) {
  ProcessResult r;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.timed_out = timed_out;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

void kill_group(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
}

// Whether the child ends by the deadline (it is left for wait_status to reap). A child may close
// its stdout and go on running: the deadline holds until it exits.
bool exits_by(pid_t pid, Clock::time_point deadline) {
  auto pause = std::chrono::microseconds(100);
  for (;;) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      return true;  // not waitable: wait_status reports what it can
    }
    if (info.si_pid == pid) return true;
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, left));
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          double timeout_s, const SpawnOptions& opt) {
  int to = -1, from = -1;
  pid_t pid = spawn(argv, opt, &to, &from);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  size_t written = 0;
  if (input.empty()) {
    close(to);
    to = -1;
  } else {
    fcntl(to, F_SETFL, O_NONBLOCK);
  }
  std::string out;
  bool timed_out = false, overflow = false;
  char buf[65536];
  while (from >= 0) {
    double left = seconds_left(deadline);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{from, POLLIN, 0}, {to, POLLOUT, 0}};
    int n = poll(fds, to >= 0 ? 2 : 1, static_cast<int>(left * 1000) + 1);
    if (n < 0 && errno != EINTR) break;
    if (to >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write(to, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN) written = input.size();
      if (written >= input.size()) {
        close(to);
        to = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t r = read(from, buf, sizeof buf);
      if (r > 0) {
        out.append(buf, static_cast<size_t>(r));
        if (opt.max_output_bytes && out.size() > opt.max_output_bytes) {
          out.resize(opt.max_output_bytes);
          overflow = true;
          break;
        }
      } else if (r == 0 || errno != EINTR) {
        close(from);
        from = -1;
      }
    }
  }
  if (timed_out || overflow) kill_group(pid);
  if (to >= 0) close(to);
  if (from >= 0) close(from);
  if (!timed_out && !overflow && !exits_by(pid, deadline)) {
    timed_out = true;
    kill_group(pid);
  }
  ProcessResult res = wait_status(pid, timed_out);
  res.output_overflow = overflow;
  res.out = std::move(out);
  return res;
}

LineProcess::~LineProcess() {
  if (pid_ > 0) kill_and_reap();
}

void LineProcess::start(const std::vector<std::string>& argv, const SpawnOptions& opt) {
  if (pid_ > 0) kill_and_reap();
  pid_ = spawn(argv, opt, &to_child_, &from_child_);
  buffer_.clear();
  timed_out_ = false;
}

bool LineProcess::send_line(const std::string& line) {
  if (pid_ <= 0) return false;
  std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t w = write(to_child_, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(w);
  }
  return true;
}

void LineProcess::close_input() {
  if (to_child_ >= 0) close(to_child_);
  to_child_ = -1;
}

std::optional<std::string> LineProcess::read_line(double timeout_s) {
  return read_until(timeout_s, [this]() -> std::optional<std::string> {
    auto nl = buffer_.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::string line = buffer_.substr(0, nl);
    buffer_.erase(0, nl + 1);
    return line;
  });
}

std::optional<std::string> LineProcess::read_bytes(size_t n, double timeout_s) {
  return read_until(timeout_s, [this, n]() -> std::optional<std::string> {
    if (buffer_.size() < n) return std::nullopt;
    std::string data = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return data;
  });
}

std::optional<std::string> LineProcess::read_until(
    double timeout_s, const std::function<std::optional<std::string>()>& take) {
  timed_out_ = false;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  char buf[65536];
  for (;;) {
    if (auto got = take()) return got;
    if (from_child_ < 0) return std::nullopt;
    double left = seconds_left(deadline);
    if (left <= 0) {
      timed_out_ = true;
      return std::nullopt;
    }
    pollfd fd{from_child_, POLLIN, 0};
    int n = poll(&fd, 1, static_cast<int>(left * 1000) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t r = read(from_child_, buf, sizeof buf);
    if (r > 0) {
      buffer_.append(buf, static_cast<size_t>(r));
      if (buffer_.size() > kMaxLineBytes) {  // a runaway child: treat as gone
        buffer_.clear();
        close(from_child_);
        from_child_ = -1;
      }
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(from_child_);
      from_child_ = -1;
    }
  }
}

ProcessResult LineProcess::kill_and_reap() {
  if (pid_ <= 0) return {};
  kill_group(pid_);
  return reap();
}

void LineProcess::kill_and_release() {
  if (pid_ <= 0) return;
  kill_group(pid_);
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  pid_t pid = pid_;
  pid_ = -1;
  auto reap_it = [pid] { wait_status(pid, false); };
  try {
    std::thread(reap_it).detach();
  } catch (const std::system_error&) {
    reap_it();  // no thread to be had: wait here
  }
}

ProcessResult LineProcess::reap() {
  if (pid_ <= 0) return {};
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  ProcessResult r = wait_status(pid_, timed_out_);
  pid_ = -1;
  return r;
}

}  // namespace kernrl
