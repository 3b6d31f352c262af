// A deadline on each run of a kernel's launch plan, sized to the problem (core/run_bound.h). A
// kernel that never finishes cannot be stopped from inside the process, so when the deadline
// passes the watchdog answers the request itself (status `timeout`, fatal, with the bound that
// cut the run) and ends the worker; the CUDA context, and with it the kernel, goes with the
// process, and kernrl hands the next kernel to another worker. Costs nothing while runs finish.
//
// A kernel that faulted (a trap, a misaligned access) looks like one still running until the GPU
// reports the fault, which can come after a short deadline. So past the deadline the watchdog
// keeps asking whether the run has ended (`settled`) for the bound's grace (timeouts.fault_grace_s)
// before it cuts the run: a run that ends meanwhile, faulted or not, is answered by the grading
// code as usual (a fault is a runtime_error), and only a run still going after the grace is a
// timeout.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/run_bound.h"
#include "protocol/parts.h"

namespace kernrl {

class Watchdog {
 public:
  // `answer` writes the timeout answer: the message, and the bound that cut the run (the record's
  // `watchdog`). It is called on the watchdog's thread, then the process exits with status 3.
  // `settled` says, on the watchdog's thread, whether the armed run has ended (finished or
  // faulted); it is asked only past the deadline, every millisecond of the grace.
  static void start(
      std::function<void(const std::string& message, const trace::Watchdog& bound)> answer,
      std::function<bool()> settled);
  // The deadline of the runs that follow (seconds <= 0: none).
  static void set_bound(const RunBound& bound);

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
