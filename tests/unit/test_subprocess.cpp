// Child processes (core/subprocess.h): run_process's stdin and stdout, exit statuses and signals,
// deadlines and kills (of the whole process group), output limits, the child's environment,
// directory and resource limits; LineProcess's lines, deadlines, kill and reap.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/subprocess.h"
#include "test_dirs.h"

using namespace kernrl;
namespace fs = std::filesystem;

namespace {

ProcessResult sh(const std::string& script, const std::string& input = "", double timeout_s = 10,
                 const SpawnOptions& opt = {}) {
  return run_process({"/bin/sh", "-c", script}, input, timeout_s, opt);
}

// Options that send the child's stderr nowhere, for children expected to complain.
SpawnOptions quiet() {
  SpawnOptions opt;
  opt.stderr_file = "/dev/null";
  return opt;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A pattern no run of equal bytes hides a truncation or reordering in.
std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return s;
}

}  // namespace

TEST_CASE("run_process: stdin in, stdout out, exit status") {
  ProcessResult r = run_process({"/bin/cat"}, "hello\nworld", 10);
  CHECK(r.out == "hello\nworld");
  CHECK(r.exit_code == 0);
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.output_overflow);

  r = sh("echo out; echo err >&2; exit 7", "", 10, quiet());
  CHECK(r.out == "out\n");
  CHECK(r.exit_code == 7);
  CHECK(r.signal == 0);

  // No input: the child's stdin is closed at once, so a reader sees EOF.
  r = sh("cat; echo done");
  CHECK(r.out == "done\n");
  CHECK(r.exit_code == 0);
}

TEST_CASE("run_process: a child killed by a signal reports the signal") {
  ProcessResult r = sh("kill -SEGV $$");
  CHECK(r.signal == SIGSEGV);
  CHECK(r.exit_code == -1);
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("run_process: a program that cannot be executed exits 127") {
  ProcessResult r = run_process({"/nonexistent/kernrl-no-such-program"}, "", 10, quiet());
  CHECK(r.exit_code == 127);
  CHECK(r.out.empty());
}

TEST_CASE("run_process: a program that cannot be executed under no_files still exits 127") {
  // Its stderr a file and no file may be written: saying so must not end it with SIGXFSZ.
  auto dir = fresh_test_dir("exec-no-files");
  SpawnOptions opt;
  opt.no_files = true;
  opt.stderr_file = (dir / "err").string();
  ProcessResult r = run_process({"/nonexistent/kernrl-helper"}, "", 10, opt);
  CHECK(r.exit_code == 127);
  CHECK(r.signal == 0);
}

TEST_CASE("run_process: a child that does not read its stdin does not block the parent") {
  std::string big(4 << 20, 'x');  // far beyond a pipe's buffer
  ProcessResult r = sh("echo ignored", big);
  CHECK(r.out == "ignored\n");
  CHECK(r.exit_code == 0);
}

TEST_CASE("run_process: large input and output at once, byte for byte") {
  std::string data = pattern(24 << 20);  // both directions far beyond a pipe's buffer
  ProcessResult r = run_process({"/bin/cat"}, data, 60);
  CHECK(r.exit_code == 0);
  CHECK(r.out.size() == data.size());
  CHECK(r.out == data);

  r = sh("head -c 50000000 /dev/zero");
  CHECK(r.exit_code == 0);
  CHECK(r.out.size() == 50000000u);
}

TEST_CASE("run_process: the deadline kills the child") {
  auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = run_process({"/bin/sleep", "30"}, "", 0.3);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK(seconds_since(t0) < 5);
}

TEST_CASE("run_process: the deadline kills the child's whole process group") {
  // A grandchild holding stdout open would keep the pipe from closing if it survived.
  auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = sh("sleep 30 & sleep 30; echo never", "", 0.3);
  CHECK(r.timed_out);
  CHECK(r.out.empty());
  CHECK(seconds_since(t0) < 5);
}

TEST_CASE("run_process: the deadline holds after the child closes its stdout") {
  auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = sh("echo early; exec >&-; sleep 30", "", 0.5);
  CHECK(r.out == "early\n");
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK(seconds_since(t0) < 5);
}

TEST_CASE("run_process: output beyond max_output_bytes stops the child") {
  SpawnOptions opt;
  opt.max_output_bytes = 1000;
  auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = sh("while :; do echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; done", "", 30, opt);
  CHECK(r.output_overflow);
  CHECK_FALSE(r.timed_out);
  CHECK(r.out.size() == 1000u);
  CHECK(r.signal == SIGKILL);
  CHECK(seconds_since(t0) < 10);

  // Exactly at the bound is not over it.
  r = sh("head -c 1000 /dev/zero", "", 30, opt);
  CHECK_FALSE(r.output_overflow);
  CHECK(r.out.size() == 1000u);
  CHECK(r.exit_code == 0);
}

TEST_CASE("run_process: the child's environment") {
  setenv("KERNRL_TEST_INHERITED", "from-parent", 1);
  // Inherited by default.
  CHECK(sh("printf %s \"$KERNRL_TEST_INHERITED\"").out == "from-parent");
  // Entries of `env` are added, and override inherited ones of the same name.
  SpawnOptions add;
  add.env = {"KERNRL_TEST_ADDED=1", "KERNRL_TEST_INHERITED=overridden"};
  CHECK(sh("printf '%s|%s' \"$KERNRL_TEST_ADDED\" \"$KERNRL_TEST_INHERITED\"", "", 10, add).out ==
        "1|overridden");
  // clear_env: nothing of the parent's, only `env`.
  SpawnOptions clear;
  clear.clear_env = true;
  clear.env = {"ONLY=this"};
  CHECK(run_process({"/usr/bin/env"}, "", 10, clear).out == "ONLY=this\n");
  clear.env.clear();
  CHECK(run_process({"/usr/bin/env"}, "", 10, clear).out.empty());
  unsetenv("KERNRL_TEST_INHERITED");
}

TEST_CASE("run_process: working directory and stderr file") {
  fs::path dir = fresh_test_dir("subprocess-cwd");
  SpawnOptions opt;
  opt.cwd = dir.string();
  opt.stderr_file = (dir / "err.log").string();
  ProcessResult r = sh("pwd; echo first >&2", "", 10, opt);
  CHECK(fs::equivalent(fs::path(r.out.substr(0, r.out.size() - 1)), dir));
  r = sh("echo second >&2", "", 10, opt);  // appended, not overwritten
  CHECK(file_text(dir / "err.log") == "first\nsecond\n");

  // A directory that does not exist: the child never runs the program.
  opt.cwd = (dir / "missing").string();
  r = sh("echo ran", "", 10, opt);
  CHECK(r.out.empty());
  CHECK(r.exit_code == 126);
  fs::remove_all(dir);
}

TEST_CASE("run_process: no_files keeps the child from growing any file") {
  fs::path dir = fresh_test_dir("subprocess-nofiles");
  SpawnOptions opt = quiet();
  opt.cwd = dir.string();
  opt.no_files = true;
  ProcessResult r = sh("echo data > grown.txt; echo after", "", 10, opt);
  CHECK(r.exit_code != 0);  // SIGXFSZ, or the shell's error when it is ignored
  CHECK(r.out.find("after") == std::string::npos);
  CHECK((!fs::exists(dir / "grown.txt") || fs::file_size(dir / "grown.txt") == 0));
  fs::remove_all(dir);
}

TEST_CASE("run_process: the address-space limit stops a child that allocates past it") {
  if (!fs::exists("/usr/bin/python3")) return;  // the only allocator at hand
  SpawnOptions opt = quiet();
  opt.address_space_limit_mb = 200;
  ProcessResult r = run_process(
      {"/usr/bin/python3", "-c", "b = bytearray(1 << 30); print('allocated')"}, "", 30, opt);
  CHECK(r.out.find("allocated") == std::string::npos);
  CHECK(r.exit_code != 0);
  // Under the limit the same program runs.
  r = run_process({"/usr/bin/python3", "-c", "b = bytearray(1 << 20); print('allocated')"}, "", 30,
                  opt);
  CHECK(r.out == "allocated\n");
}

TEST_CASE("LineProcess: lines both ways") {
  LineProcess p;
  CHECK_FALSE(p.running());
  CHECK_FALSE(p.send_line("nobody listens"));
  p.start({"/bin/cat"});
  CHECK(p.running());
  REQUIRE(p.send_line("first"));
  REQUIRE(p.send_line("second"));
  CHECK(p.read_line(10) == std::optional<std::string>("first"));
  CHECK(p.read_line(10) == std::optional<std::string>("second"));
  CHECK_FALSE(p.timed_out());
  ProcessResult r = p.kill_and_reap();
  CHECK(r.signal == SIGKILL);
  CHECK_FALSE(p.running());
}

TEST_CASE("LineProcess: long lines, far beyond a pipe's buffer, both ways") {
  // send_line returns once the child has read the whole line, so this child reads it all before
  // it answers (one that echoed while reading would fill both pipes and deadlock).
  LineProcess p;
  p.start(
      {"/bin/sh", "-c", "head -c 3145729 | wc -c; head -c 3000000 /dev/zero | tr '\\000' a; echo"});
  REQUIRE(p.send_line(pattern(3 << 20)));
  CHECK(p.read_line(30) == std::optional<std::string>("3145729"));
  auto line = p.read_line(30);
  REQUIRE(line);
  CHECK(*line == std::string(3000000, 'a'));
  CHECK(p.read_line(30) == std::nullopt);
  CHECK(p.reap().exit_code == 0);
}

TEST_CASE("LineProcess: a line written in pieces is read as one") {
  LineProcess p;
  p.start({"/bin/sh", "-c", "printf 'ab'; sleep 0.2; printf 'c\\nd\\n'"});
  CHECK(p.read_line(10) == std::optional<std::string>("abc"));
  CHECK(p.read_line(10) == std::optional<std::string>("d"));
  CHECK(p.read_line(10) == std::nullopt);  // EOF
  CHECK_FALSE(p.timed_out());
  CHECK(p.reap().exit_code == 0);
}

TEST_CASE("LineProcess: a silent child times out, and is killed") {
  LineProcess p;
  p.start({"/bin/sleep", "30"});
  auto t0 = std::chrono::steady_clock::now();
  CHECK(p.read_line(0.3) == std::nullopt);
  CHECK(p.timed_out());
  CHECK(seconds_since(t0) < 5);
  CHECK(p.running());  // a timeout does not end it; the caller decides
  ProcessResult r = p.kill_and_reap();
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK_FALSE(p.running());
  CHECK(p.kill_and_reap().exit_code == -1);  // nothing left to kill
}

TEST_CASE("LineProcess: a child that exits by itself is reaped with its status") {
  LineProcess p;
  p.start({"/bin/sh", "-c", "read line; echo \"got $line\"; exit 3"});
  REQUIRE(p.send_line("request"));
  CHECK(p.read_line(10) == std::optional<std::string>("got request"));
  CHECK(p.read_line(10) == std::nullopt);
  CHECK_FALSE(p.timed_out());
  ProcessResult r = p.reap();
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);
  CHECK_FALSE(p.running());
  CHECK_FALSE(p.send_line("to nobody"));
}

TEST_CASE("LineProcess: writing to a child that is gone fails instead of killing the parent") {
  LineProcess p;
  p.start({"/bin/sh", "-c", "exit 0"});
  CHECK(p.read_line(10) == std::nullopt);  // it is gone once its stdout is closed
  bool sent = true;
  for (int i = 0; i < 100 && sent; ++i) sent = p.send_line(std::string(1 << 16, 'x'));
  CHECK_FALSE(sent);  // EPIPE, not SIGPIPE
  CHECK(p.reap().exit_code == 0);
}

TEST_CASE("LineProcess: start replaces a running child, and the destructor kills it") {
  fs::path dir = fresh_test_dir("subprocess-line");
  fs::path pid_file = dir / "pid";
  pid_t first = 0;
  {
    LineProcess p;
    p.start({"/bin/sh", "-c", "echo $$ > " + pid_file.string() + "; exec sleep 30"});
    for (int i = 0; i < 500 && file_text(pid_file).empty(); ++i) usleep(10000);
    first = std::stoi(file_text(pid_file));
    CHECK(kill(first, 0) == 0);
    p.start({"/bin/cat"});  // the first child is killed and reaped
    CHECK(kill(first, 0) != 0);
    REQUIRE(p.send_line("second"));
    CHECK(p.read_line(10) == std::optional<std::string>("second"));
    fs::remove(pid_file);
    p.start({"/bin/sh", "-c", "echo $$ > " + pid_file.string() + "; exec sleep 30"});
    for (int i = 0; i < 500 && file_text(pid_file).empty(); ++i) usleep(10000);
    first = std::stoi(file_text(pid_file));
  }
  CHECK(kill(first, 0) != 0);  // killed and reaped by the destructor: no such process
  fs::remove_all(dir);
}

TEST_CASE("LineProcess: kill_and_release kills the child and reaps it in the background") {
  LineProcess p;
  p.start({"/bin/sh", "-c", "echo $$; exec sleep 100"});
  auto line = p.read_line(10);
  REQUIRE(line);
  pid_t pid = static_cast<pid_t>(std::stoi(*line));
  auto t0 = std::chrono::steady_clock::now();
  p.kill_and_release();
  CHECK_FALSE(p.running());
  // Gone and reaped (a zombie would still answer kill(pid, 0)).
  bool gone = false;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    if (kill(pid, 0) != 0) {
      gone = true;
      break;
    }
    usleep(10000);
  }
  CHECK(gone);
  p.kill_and_release();  // nothing left to do
}
