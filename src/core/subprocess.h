// Child processes with pipes, deadlines and kill: NVRTC compiles and GPU workers run in them so a
// compile bomb, a crashing or a hanging kernel never takes the grader down.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kernrl {

struct ProcessResult {
  int exit_code = -1;            // valid when !signaled && !timed_out
  int signal = 0;                // the signal that ended it, if any
  bool timed_out = false;        // killed by us at the deadline
  bool output_overflow = false;  // killed by us for writing more than max_output_bytes
  std::string out;               // everything it wrote to stdout (at most max_output_bytes)
};

struct SpawnOptions {
  std::string stderr_file;          // empty: inherit
  long address_space_limit_mb = 0;  // 0: unlimited (RLIMIT_AS in the child)
  std::vector<std::string> env;     // KEY=VALUE entries set in the child's environment
  bool clear_env = false;           // start from an empty environment (then only `env`)
  std::string cwd;                  // empty: inherit
  size_t max_output_bytes =
      0;                  // run_process: kill the child once stdout exceeds this (0: no limit)
  bool no_files = false;  // RLIMIT_FSIZE 0, RLIMIT_CORE 0: the child can grow no file
  long file_size_limit_mb = 0;  // when > 0 (and !no_files): RLIMIT_FSIZE, and no core files
};

// Runs argv (argv[0] a path: no PATH search), writes `input` to its stdin, collects stdout; kills
// it (and its process group) once `timeout_s` has passed, whether or not it still writes to stdout.
// A program that cannot be executed exits 127; a cwd that cannot be entered, 126.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          double timeout_s, const SpawnOptions& opt = {});

// A long-lived child spoken to in lines over pipes (the GPU worker).
class LineProcess {
 public:
  LineProcess() = default;
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // Throws std::runtime_error if no child can be made (pipe or fork fails); a program that cannot
  // be executed exits 127 (read_line sees EOF, reap() the status).
  void start(const std::vector<std::string>& argv, const SpawnOptions& opt = {});
  bool running() const { return pid_ > 0; }
  // False if the child is gone (broken pipe).
  bool send_line(const std::string& line);
  // The next line, or nullopt when the child closed its end or the deadline passed (see
  // timed_out()).
  std::optional<std::string> read_line(double timeout_s);
  bool timed_out() const { return timed_out_; }
  // Exactly `n` bytes (after the lines read so far), or nullopt as read_line.
  std::optional<std::string> read_bytes(size_t n, double timeout_s);
  // Closes the child's stdin (it reads EOF); the child keeps running.
  void close_input();
  // Kills (SIGKILL) and reaps the child; returns how it ended.
  ProcessResult kill_and_reap();
  // Kills (SIGKILL) the child and reaps it in the background: the caller does not wait for the
  // kernel to tear the process down (for a GPU worker, its CUDA context: tens of milliseconds).
  void kill_and_release();
  // Reaps a child that exited by itself (after EOF); returns how it ended.
  ProcessResult reap();

 private:
  // Reads until `take` returns a value (it consumes buffer_), EOF or the deadline.
  std::optional<std::string> read_until(double timeout_s,
                                        const std::function<std::optional<std::string>()>& take);

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  bool timed_out_ = false;
};

}  // namespace kernrl
