// `kernrl serve --stdio`: grade requests as JSON lines on standard input, answers as JSON lines on
// standard output, for a training loop that runs the grader as its child process.
#pragma once

#include <cstdio>

#include "serve/service.h"

namespace kernrl::serve {

// Turns SIGTERM and SIGINT into an event a thread can wait for (a pipe written by the handler).
class ShutdownSignal {
 public:
  ShutdownSignal();
  ~ShutdownSignal();
  ShutdownSignal(const ShutdownSignal&) = delete;
  ShutdownSignal& operator=(const ShutdownSignal&) = delete;
  // Blocks until a signal arrives (returns its number) or trigger() is called (returns 0).
  int wait();
  void trigger();
  // A descriptor that becomes readable once wait() would return (for poll).
  int fd() const;

 private:
  int pipe_[2] = {-1, -1};
};

// Reads requests from `in_fd` until end of file or a signal, answering each on `out` as soon as it
// is graded; returns once every request read has been answered. On a signal, requests not yet
// graded are answered with an error (SHUTTING_DOWN). Returns the signal (0: end of input).
// A line over `max_line` bytes is answered with PAYLOAD_TOO_LARGE and skipped.
int run_stdio(Service& svc, ShutdownSignal& signal, int in_fd, std::FILE* out, size_t max_line);

}  // namespace kernrl::serve
