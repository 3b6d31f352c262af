#include "compile/server.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/paths.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kMaxFailures = 3;  // server failures in a row before the process stops using one

// An empty directory of this process's own for the server to run in.
std::string server_directory() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    std::string templ = (fs::temp_directory_path() / "kernrl-nvrtc-server-XXXXXX").string();
    if (mkdtemp(templ.data())) {
      dir = templ;
      std::atexit([] { rmdir(dir.c_str()); });
    }
  });
  return dir.empty() ? "/nonexistent-kernrl-dir" : dir;
}

class CompileServer {
 public:
  explicit CompileServer(int pch_sets) {
    SpawnOptions so;
    so.cwd = server_directory();
    so.clear_env = true;
    proc_.start(
        {helper_exe("kernrl-nvrtc").string(), "--server", "--pch-sets", std::to_string(pch_sets)},
        so);
    reader_ = std::thread([this] { read_replies(); });
  }
  ~CompileServer() {
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      proc_.close_input();  // the server removes its folder and exits
    }
    stopping_ = true;
    reader_.join();
    proc_.kill_and_reap();
  }
  CompileServer(const CompileServer&) = delete;
  CompileServer& operator=(const CompileServer&) = delete;

  bool dead() {
    std::lock_guard<std::mutex> lock(mu_);
    return dead_;
  }

  std::optional<ServedJob> run(ServerJob job, const std::string& body) {
    std::unique_lock<std::mutex> lock(mu_);
    if (dead_) return std::nullopt;
    job.id = next_id_++;
    waiting_[job.id];
    lock.unlock();
    bool sent;
    {
      std::lock_guard<std::mutex> wlock(write_mu_);
      sent = proc_.send_line(job.to_json().dump()) && proc_.send_line(body);
    }
    lock.lock();
    if (!sent) dead_ = true;
    // The server kills the child at the job's deadline; a server that answers nothing long after
    // it is taken for dead.
    auto limit = std::chrono::duration<double>(job.timeout_s + 60);
    done_.wait_for(lock, limit, [&] { return dead_ || waiting_[job.id].has_value(); });
    std::optional<ServedJob> out = std::move(waiting_[job.id]);
    waiting_.erase(job.id);
    if (!out) {
      dead_ = true;  // every job waiting on it goes elsewhere
      done_.notify_all();
    }
    return out;
  }

 private:
  void read_replies() {
    int waits_after_stop = 0;  // a server told to stop has a few seconds to remove its folder
    for (;;) {
      std::optional<std::string> line = proc_.read_line(1.0);
      if (!line && proc_.timed_out() && !dead() && (!stopping_ || ++waits_after_stop < 5)) continue;
      std::optional<ServedJob> job;
      ServerReply reply;
      if (line) {
        try {
          reply = ServerReply::from_json(json::parse(*line));
          std::optional<std::string> bytes = proc_.read_bytes(reply.bytes, 60);
          if (bytes) {
            job.emplace();
            job->pch = reply.pch;
            job->result.exit_code = reply.exit_code;
            job->result.signal = reply.signal;
            job->result.timed_out = reply.timed_out;
            job->result.output_overflow = reply.output_overflow;
            job->result.out = std::move(*bytes);
          }
        } catch (const std::exception&) {
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (!job) {  // EOF, a bad frame, or shutting down: every waiting job fails over
        dead_ = true;
        done_.notify_all();
        return;
      }
      if (auto it = waiting_.find(reply.id); it != waiting_.end()) it->second = std::move(job);
      done_.notify_all();
    }
  }

  LineProcess proc_;
  std::thread reader_;
  std::mutex write_mu_;  // one job's two lines at a time
  std::mutex mu_;
  std::condition_variable done_;
  std::map<uint64_t, std::optional<ServedJob>> waiting_;
  uint64_t next_id_ = 1;
  bool dead_ = false;
  std::atomic<bool> stopping_{false};
};

std::mutex g_mu;
std::shared_ptr<CompileServer> g_server;
int g_pch_sets = -1;
int g_failures = 0;

std::shared_ptr<CompileServer> server_for(const Config& cfg) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_failures >= kMaxFailures) return nullptr;
  if (!g_server || g_server->dead() || g_pch_sets != cfg.compile_pch_sets) {
    if (g_server && g_server->dead()) ++g_failures;
    if (g_failures >= kMaxFailures) return g_server = nullptr;
    try {
      g_server = std::make_shared<CompileServer>(cfg.compile_pch_sets);
      g_pch_sets = cfg.compile_pch_sets;
    } catch (const std::exception&) {
      ++g_failures;
      g_server = nullptr;
    }
  }
  return g_server;
}

}  // namespace

std::optional<ServedJob> run_on_server(ServerJob job, const std::string& body, const Config& cfg) {
  std::shared_ptr<CompileServer> server = server_for(cfg);
  if (!server) return std::nullopt;
  std::optional<ServedJob> out = server->run(std::move(job), body);
  if (out) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_failures = 0;
  }
  return out;
}

}  // namespace kernrl
