// A deadline on each run of a kernel's launch plan. A kernel that never finishes cannot be
// stopped from inside the process, so when the deadline passes the watchdog answers the request
// itself (status `timeout`, fatal) and ends the worker; the CUDA context, and with it the kernel,
// goes with the process, and kernrl starts a fresh worker. Costs nothing while runs finish.
#pragma once

#include <functional>
#include <string>

namespace kernrl {

class Watchdog {
 public:
  // `answer` writes the timeout answer for `what` (it is called on the watchdog's thread, then the
  // process exits with status 3).
  static void start(std::function<void(const std::string& what)> answer);
  // The deadline of the runs that follow, in seconds (<= 0: none).
  static void set_limit(double seconds);

  // Arms the deadline for one run of `what` for as long as the scope lives.
  class Scope {
   public:
    explicit Scope(const char* what);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };
};

}  // namespace kernrl
