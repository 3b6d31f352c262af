#include "serve/stdio.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "record/trace_file.h"
#include "serve/api.h"
#include "serve/openenv.h"

namespace kernrl::serve {
using nlohmann::json;

namespace {

std::atomic<int> g_signal_fd{-1};

void on_signal(int sig) {
  int fd = g_signal_fd.load();
  if (fd >= 0) {
    unsigned char b = static_cast<unsigned char>(sig);
    ssize_t r = ::write(fd, &b, 1);
    (void)r;
  }
}

}  // namespace

ShutdownSignal::ShutdownSignal() {
  if (::pipe2(pipe_, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  g_signal_fd = pipe_[1];
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

ShutdownSignal::~ShutdownSignal() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  g_signal_fd = -1;
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

int ShutdownSignal::wait() {
  unsigned char b = 0;
  for (;;) {
    ssize_t n = ::read(pipe_[0], &b, 1);
    if (n == 1) return b;
    if (n < 0 && errno == EINTR) continue;
    return 0;
  }
}

void ShutdownSignal::trigger() {
  unsigned char b = 0;
  ssize_t r = ::write(pipe_[1], &b, 1);
  (void)r;
}

int ShutdownSignal::fd() const {
  return pipe_[0];
}

int run_stdio(Service& svc, ShutdownSignal& signal, int in_fd, std::FILE* out, size_t max_line) {
  std::mutex out_mu;
  auto emit = [&](const json& j) {
    std::string line = json_line(j) + "\n";
    std::lock_guard<std::mutex> l(out_mu);
    std::fwrite(line.data(), 1, line.size(), out);
    std::fflush(out);
  };
  auto handle = [&](const std::string& text, size_t line_no) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) return;  // blank line
    json req;
    try {
      req = parse_client_json(text);
    } catch (const std::exception& e) {
      emit({{"line", line_no},
            {"error",
             {{"code", "INVALID_JSON"}, {"message", std::string("Invalid JSON: ") + e.what()}}}});
      return;
    }
    json id = req.is_object() && req.contains("id") ? req["id"] : json(nullptr);
    GradeRequest g;
    std::string error;
    bool not_found = false;
    if (!parse_grade_request(req, svc, {"id"}, &g, &error, &not_found)) {
      emit({{"id", id},
            {"line", line_no},
            {"error",
             {{"code", not_found ? "UNKNOWN_PROBLEM" : "VALIDATION_ERROR"}, {"message", error}}}});
      return;
    }
    if (g.label.empty()) g.label = svc.make_label("stdio");
    svc.grade(std::move(g), [&emit, id](GradeResult r) {
      if (r.kind == GradeResult::Graded)
        emit({{"id", id}, {"cache", r.cache}, {"record", r.record.to_json()}});
      else
        emit({{"id", id}, {"error", api_error(r)}});
    });
  };

  int sig = 0;
  std::string pending;
  size_t line_no = 0;
  bool skipping = false;  // dropping the rest of a line over the limit
  char buf[65536];
  for (;;) {
    pollfd fds[2] = {{in_fd, POLLIN, 0}, {signal.fd(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents & POLLIN) {
      sig = signal.wait();
      if (sig != 0) break;
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = ::read(in_fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      if (!pending.empty() && !skipping) handle(pending, ++line_no);
      break;
    }
    pending.append(buf, static_cast<size_t>(n));
    if (skipping) {
      size_t nl = pending.find('\n');
      if (nl == std::string::npos) {
        pending.clear();
        continue;
      }
      pending.erase(0, nl + 1);
      skipping = false;
    }
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      handle(pending.substr(0, nl), ++line_no);
      pending.erase(0, nl + 1);
    }
    if (pending.size() > max_line) {
      emit({{"line", ++line_no},
            {"error",
             {{"code", "PAYLOAD_TOO_LARGE"},
              {"message", "the request line is over " + std::to_string(max_line) +
                              " bytes (--max-body-mb); it was not read"}}}});
      pending.clear();
      skipping = true;
    }
  }
  if (sig != 0) {
    svc.begin_shutdown();
    svc.stop_grader();
  }
  svc.wait_answered();
  return sig;
}

}  // namespace kernrl::serve
