#include "worker/watchdog.h"

#include <unistd.h>

#include <algorithm>
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
  std::function<bool()> settled;
  RunBound bound;
  bool armed = false;
  unsigned long long run = 0;  // counts the armed runs, so that the grace watches one run
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

// Past the deadline of run `run`: asks `settled` every millisecond for the bound's grace. True
// when the run ended meanwhile (its scope closed, or the GPU finished or faulted it); the grading
// code then answers. Called and returns with the lock held.
bool ends_within_grace(State& s, std::unique_lock<std::mutex>& lock, unsigned long long run) {
  auto until = Clock::now() + std::chrono::microseconds(
                                  static_cast<long long>(std::max(0.0, s.bound.grace_s) * 1e6));
  for (;;) {
    if (!s.armed || s.run != run) return true;
    lock.unlock();
    bool ended = s.settled && s.settled();
    lock.lock();
    if (ended) return true;
    if (Clock::now() >= until) return false;
    s.cv.wait_for(lock, std::chrono::milliseconds(1));
  }
}

void watch() {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.m);
  for (;;) {
    if (!s.armed) {
      s.cv.wait(lock);
      continue;
    }
    if (s.cv.wait_until(lock, s.deadline) != std::cv_status::timeout || !s.armed ||
        Clock::now() < s.deadline)
      continue;
    unsigned long long run = s.run;
    if (ends_within_grace(s, lock, run)) {
      // Ended: the grading code answers (a fault is its runtime_error). Nothing more is watched
      // in this run; the evaluation deadline (timeouts.run_s) stays behind it.
      if (s.run == run) s.armed = false;
      continue;
    }
    std::ostringstream msg;
    msg << s.what << " did not finish within " << s.bound.seconds << " s (" << s.bound.why()
        << "), nor report a fault in the " << s.bound.grace_s
        << " s after (timeouts.fault_grace_s); the kernel was stopped";
    s.answer(msg.str(), trace::watchdog_of(s.bound));
    std::fflush(nullptr);
    _exit(3);
  }
}

}  // namespace

void Watchdog::start(std::function<void(const std::string&, const trace::Watchdog&)> answer,
                     std::function<bool()> settled) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.m);
  s.answer = std::move(answer);
  s.settled = std::move(settled);
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
  ++s.run;
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
