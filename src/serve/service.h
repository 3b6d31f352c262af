// The service behind every transport (HTTP, WebSocket, --stdio): admission against capacity,
// deadlines, the result cache, the trace file and the metrics, in front of a Grader.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "record/training.h"
#include "serve/grader.h"
#include "serve/metrics.h"
#include "serve/problems.h"
#include "serve/prompts.h"

namespace kernrl {
class Run;
}

namespace kernrl::serve {

constexpr const char* kServeSchema = "kernrl.serve.v1";

struct ServiceOptions {
  size_t max_sessions = 64;        // WebSocket sessions at once
  size_t max_queue = 256;          // answers admitted and not yet answered (cache hits aside)
  double step_timeout_s = 50;      // from an answer's arrival to its record
  int max_turns = 10;              // turns of an OpenEnv episode
  size_t cache_bytes = 128 << 20;  // the result cache's bound (0: no cache)
  std::string trace;               // --trace: every record answered is appended here (its folder
                                   // is created); a Service that cannot open it throws UsageError
  std::string run = "serve";       // the records' "run"
  uint64_t run_seed = 0;           // the records' "run_seed"
  // The secret key each answer's seed is derived with (keyed_seed, with run_seed): never served
  // nor recorded, so no client can predict a seed. Empty: a fresh one (fresh_secret_key).
  std::string seed_key;
  std::string config_digest;        // what of the configuration decides a record (cache keys)
  std::string reward_preset;        // for /v1 and /metadata
  int examples = 0;                 // --examples: retrieved examples in every task prompt
  std::vector<std::string> corpus;  // --corpus: trace files whose verified kernels are examples
  std::string problems_root;        // the problems' folder (empty: the installed problems)
};

// A suite the service offers beside its problems (`kernrl serve --suites`, docs/serve.md):
// clients name it in reset's and the /v1 requests' `suite`.
struct SuiteCatalog {
  std::string name;           // as clients name it
  std::string problems_root;  // its problems/ folder
  std::shared_ptr<const ProblemCatalog> problems;
};

// One answer to grade, as a transport received it.
struct GradeRequest {
  std::string source;
  std::string label;    // the record's "file"; empty: one is made up
  std::string problem;  // a problem id kernrl has (already resolved); empty: the launch block's
  std::string suite;    // the suite `problem` is of (an offered one); empty: the default problems
  std::optional<uint64_t> seed;
  std::optional<int> sample;
  std::optional<double> timeout_s;  // a deadline shorter than the service's
  bool regrade = false;             // grade it even when the cache holds its record
  TrainingTags tags;  // trajectory, turn, the trainer's step and run, the prompt's examples
};

// Whether a record shows that its kernel does not give the same answer every time: some trials
// passed and some failed, or a trial passed and its rerun did not. Such a record is never cached.
bool shows_nondeterminism(const TraceRecord& r);

// The bytes a cache entry really holds: its key, its record's line and the containers' nodes.
size_t cache_entry_bytes(const std::string& key, const std::string& line);

struct GradeResult {
  enum Kind { Graded, Refused, Expired, Stopped, Failed } kind = Failed;
  TraceRecord record;          // Graded
  const char* cache = "miss";  // Graded: "miss", "hit" or "coalesced"
  std::string message;         // otherwise: why nothing was graded
  // OpenEnv's error code for a result that is not Graded: CAPACITY_REACHED or EXECUTION_ERROR.
  const char* code() const;
  // "capacity", "deadline", "shutdown" or "internal".
  const char* reason() const;
};

class Service {
 public:
  Service(ServiceOptions opt, std::shared_ptr<Grader> grader,
          std::shared_ptr<const ProblemCatalog> problems);
  ~Service();

  // Grades one answer: from the cache, joined with the same answer being graded, or queued when
  // there is room. `done` is called exactly once, from any thread (possibly before this returns).
  void grade(GradeRequest req, std::function<void(GradeResult)> done);

  // A WebSocket session: false (with the counts) when `max_sessions` are open.
  bool open_session(size_t* active, size_t* max);
  void close_session();
  size_t sessions() const { return sessions_.load(); }

  // Shutdown, in order: refuse new answers (they get Stopped), then stop the grader (queued
  // answers get Stopped, running ones finish and are answered). Both idempotent.
  void begin_shutdown();
  void stop_grader();
  bool shutting_down() const { return shutting_down_.load(); }
  // Waits until every answer admitted has been answered.
  void wait_answered();

  const ServiceOptions& options() const { return opt_; }
  const Grader& grader() const { return *grader_; }
  const ProblemCatalog& problems() const { return *problems_; }
  // Offers a suite beside the default problems; before the service takes requests only.
  void add_suite(SuiteCatalog suite);
  // The problems of `suite` (empty: the default problems), or null when it is not offered.
  const ProblemCatalog* problems(const std::string& suite) const;
  // The names of the suites offered, in the order given.
  std::vector<std::string> suite_names() const;
  // "unknown suite 'x': this server offers ..." for a request naming a suite it does not offer.
  std::string unknown_suite(const std::string& suite) const;
  const Prompts& prompts() const { return *prompts_; }
  Metrics& metrics() { return metrics_; }
  std::string metrics_text() const;
  // "healthy", "degraded" (records could not be appended to the trace) or "unhealthy" (shutting
  // down).
  std::string health() const;
  // A fresh label for an answer that came without one.
  std::string make_label(const std::string& prefix);

 private:
  struct Waiter {
    GradeRequest req;
    std::function<void(GradeResult)> done;
    std::chrono::steady_clock::time_point t0;
    const char* cache;
  };
  struct Entry {
    bool graded = false;
    std::string line;  // the record, as its JSON line (parsed again on a hit)
    size_t bytes = 0;
    std::list<std::string>::iterator lru;
    std::vector<Waiter> waiters;
  };

  std::string cache_key(const GradeRequest& req) const;
  void answer(Waiter& w, GradeResult r);
  void on_outcome(const std::string& key, const std::shared_ptr<Waiter>& first, Outcome o);
  void evict_locked();

  ServiceOptions opt_;
  std::shared_ptr<Grader> grader_;
  std::shared_ptr<const ProblemCatalog> problems_;
  std::vector<SuiteCatalog> suites_;
  std::unique_ptr<Run> run_;  // the run's name, seeds and trace
  std::unique_ptr<Prompts> prompts_;
  Metrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable answered_cv_;
  std::map<std::string, Entry> cache_;
  std::list<std::string> lru_;  // graded entries, most recent first
  size_t cache_bytes_ = 0;
  size_t in_flight_ = 0;   // answers handed to the grader and not yet back (what max_queue bounds)
  size_t unanswered_ = 0;  // requests accepted and not yet answered
  std::atomic<size_t> sessions_{0};
  std::atomic<bool> shutting_down_{false};
  std::atomic<uint64_t> labels_{0};
  std::atomic<bool> trace_failed_{false};
};

}  // namespace kernrl::serve
