// Wall time per grading phase inside the worker, in ms: the record's `grader.phases`. The worker
// grades one kernel at a time, so one accumulator serves; a phase ends at a host synchronisation
// point or where the next begins.
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace kernrl {

// The accumulator of the evaluation under way (evaluate() clears it first).
std::map<std::string, double>& phase_totals();

// Adds the time from its construction to its destruction to phase `name`.
class PhaseScope {
 public:
  explicit PhaseScope(const char* name) : name_(name), t0_(std::chrono::steady_clock::now()) {}
  ~PhaseScope() {
    phase_totals()[name_] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace kernrl
