// A deadline on each run of a kernel's launch plan, sized to the problem (core/run_bound.h). A
// kernel that never finishes cannot be stopped from inside the process, so when the deadline
// passes the watchdog answers the request itself (status `timeout`, fatal, with the bound that
// cut the run) and ends the worker; the CUDA context, and with it the kernel, goes with the
// process, and kernrl hands the next kernel to another worker. Costs nothing while runs finish.
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
  static void start(
      std::function<void(const std::string& message, const trace::Watchdog& bound)> answer);
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
