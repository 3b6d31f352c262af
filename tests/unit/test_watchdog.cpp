// The plan-run watchdog (worker/watchdog.h) in a child process, since a cut ends the process: a
// run that never ends is cut past its deadline plus the fault grace, with the answer naming both;
// a run the GPU reports ended during the grace (a late fault) is left to the grading code.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "worker/watchdog.h"

using namespace kernrl;

namespace {

struct ChildResult {
  int exit_code = -1;
  std::string out;  // what the child wrote to the pipe
};

// Runs `body(fd)` in a child process that exits 0 when it returns; the parent reads what the child
// wrote to `fd` until the child ends.
ChildResult in_child(const std::function<void(int fd)>& body) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(p[0]);
    body(p[1]);
    _exit(0);
  }
  close(p[1]);
  ChildResult r;
  char buf[512];
  for (ssize_t n; (n = read(p[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

void put(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

RunBound bound(double seconds, double grace_s) {
  RunBound b;
  b.seconds = seconds;
  b.grace_s = grace_s;
  return b;
}

}  // namespace

TEST_CASE("watchdog: a run that never ends is cut after its deadline and the fault grace") {
  ChildResult r = in_child([](int fd) {
    Watchdog::start(
        [fd](const std::string& message, const trace::Watchdog& b) {
          put(fd, message + "\n" + write_object(b).dump());
        },
        [] { return false; });  // the stream stays busy: a hang
    Watchdog::set_bound(bound(0.01, 0.02));
    Watchdog::Scope run("a run of the launch plan");
    for (;;) pause();  // until the watchdog ends the process
  });
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("a run of the launch plan did not finish within 0.01 s") != std::string::npos);
  CHECK(r.out.find("nor report a fault in the 0.02 s after (timeouts.fault_grace_s)") !=
        std::string::npos);
  CHECK(r.out.find("\"grace_s\":0.02") != std::string::npos);
}

TEST_CASE("watchdog: a run that ends during the grace (a fault reported late) is not cut") {
  ChildResult r = in_child([](int fd) {
    static std::atomic<int> asked{0};
    Watchdog::start([fd](const std::string&, const trace::Watchdog&) { put(fd, "cut"); },
                    [] { return ++asked >= 3; });  // the GPU reports the fault on the third look
    // A grace far longer than the test: a watchdog that cut at the deadline, or never looked
    // again during the grace, ends the child with status 3 and "cut".
    Watchdog::set_bound(bound(0.01, 600));
    {
      Watchdog::Scope run("a run of the launch plan");
      while (asked.load() < 3) std::this_thread::yield();  // the grading code sees the fault
    }
    put(fd, "answered by the grading code");
  });
  CHECK(r.exit_code == 0);
  CHECK(r.out == "answered by the grading code");
}
