#include "worker/watchdog.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <thread>

namespace kernrl {
namespace {

using Clock = std::chrono::steady_clock;

struct State {
  std::mutex m;
  std::condition_variable cv;
  std::function<void(const std::string&, const trace::Watchdog&)> answer;
  RunBound bound;
  bool armed = false;
  Clock::time_point deadline;
  std::string what;
  bool started = false;
};

// Never destroyed: the watchdog's thread waits on its condition variable until the process ends,
// and destroying a condition variable that has a waiter (at exit) blocks forever.
State& state() {
  static State* s = new State;
  return *s;
}

void watch() {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.m);
  for (;;) {
    if (!s.armed) {
      s.cv.wait(lock);
      continue;
    }
    if (s.cv.wait_until(lock, s.deadline) == std::cv_status::timeout && s.armed &&
        Clock::now() >= s.deadline) {
      std::ostringstream msg;
      msg << s.what << " did not finish within " << s.bound.seconds << " s (" << s.bound.why()
          << "); the kernel was stopped";
      s.answer(msg.str(), trace::watchdog_of(s.bound));
      std::fflush(nullptr);
      _exit(3);
    }
  }
}

}  // namespace

void Watchdog::start(std::function<void(const std::string&, const trace::Watchdog&)> answer) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  s.answer = std::move(answer);
  if (!s.started) {
    s.started = true;
    std::thread(watch).detach();
  }
}

void Watchdog::set_bound(const RunBound& bound) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  s.bound = bound;
}

Watchdog::Scope::Scope(const char* what) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  if (!s.started || s.bound.seconds <= 0) return;
  s.armed = true;
  s.what = what;
  s.deadline =
      Clock::now() + std::chrono::microseconds(static_cast<long long>(s.bound.seconds * 1e6));
  s.cv.notify_one();
}

Watchdog::Scope::~Scope() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  s.armed = false;
}

}  // namespace kernrl
