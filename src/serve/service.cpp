#include "serve/service.h"

#include <cstdio>

#include "core/hash.h"
#include "core/safe_text.h"
#include "grading/run.h"

namespace kernrl::serve {
using nlohmann::json;

const char* GradeResult::code() const {
  return kind == Refused ? "CAPACITY_REACHED" : "EXECUTION_ERROR";
}

const char* GradeResult::reason() const {
  switch (kind) {
    case Refused:
      return "capacity";
    case Expired:
      return "deadline";
    case Stopped:
      return "shutdown";
    default:
      return "internal";
  }
}

bool shows_nondeterminism(const TraceRecord& r) {
  if (auto counts = r.correctness_counts();
      counts && counts->first > 0 && counts->first < counts->second)
    return true;
  if (!r.correctness || !r.correctness->is_object()) return false;
  auto trials = r.correctness->find("trials");
  if (trials == r.correctness->end() || !trials->is_array()) return false;
  for (const auto& t : *trials)
    if (t.is_object() && t.value("passed", false) && t.contains("rerun_passed") &&
        t["rerun_passed"].is_boolean() && !t["rerun_passed"].get<bool>())
      return true;
  return false;
}

size_t cache_entry_bytes(const std::string& key, const std::string& line) {
  // A std::map node with its key and Entry, and a std::list node holding the key again.
  constexpr size_t kNodes = 2 * sizeof(void*) * 3 + 64;
  return 2 * key.capacity() + line.capacity() + kNodes;
}

Service::Service(ServiceOptions opt, std::shared_ptr<Grader> grader,
                 std::shared_ptr<const ProblemCatalog> problems)
    : opt_(std::move(opt)), grader_(std::move(grader)), problems_(std::move(problems)) {
  RunOptions ro;
  ro.name = opt_.run;
  ro.seed = opt_.run_seed;
  ro.seed_key = opt_.seed_key.empty() ? fresh_secret_key() : opt_.seed_key;
  ro.trace = opt_.trace;
  ro.trace_option = "--trace";
  run_ = std::make_unique<Run>(std::move(ro));
  prompts_ = std::make_unique<Prompts>(opt_.examples, opt_.corpus, opt_.problems_root);
}

Service::~Service() {
  begin_shutdown();
  stop_grader();
  wait_answered();
}

void Service::add_suite(SuiteCatalog suite) {
  suites_.push_back(std::move(suite));
}

const ProblemCatalog* Service::problems(const std::string& suite) const {
  if (suite.empty()) return problems_.get();
  for (const auto& s : suites_)
    if (s.name == suite) return s.problems.get();
  return nullptr;
}

std::vector<std::string> Service::suite_names() const {
  std::vector<std::string> names;
  for (const auto& s : suites_) names.push_back(s.name);
  return names;
}

std::string Service::unknown_suite(const std::string& suite) const {
  std::string names;
  for (const auto& s : suites_) names += (names.empty() ? "" : ", ") + s.name;
  return "unknown suite '" + suite.substr(0, 256) + "': this server offers " +
         (names.empty() ? std::string("none (kernrl serve --suites)") : names);
}

std::string Service::make_label(const std::string& prefix) {
  return prefix + "-" + std::to_string(++labels_);
}

std::string Service::cache_key(const GradeRequest& req) const {
  return sha256_hex(req.source) + '\x1f' + req.suite + '\x1f' + req.problem + '\x1f' +
         (req.seed ? std::to_string(*req.seed) : "*") + '\x1f' + opt_.config_digest;
}

void Service::grade(GradeRequest req, std::function<void(GradeResult)> done) {
  auto w = std::make_shared<Waiter>();
  w->t0 = std::chrono::steady_clock::now();
  w->cache = "miss";
  if (req.label.empty()) req.label = make_label("request");
  w->req = std::move(req);
  w->done = std::move(done);
  {
    std::lock_guard<std::mutex> l(mu_);
    ++unanswered_;
  }
  if (shutting_down_) {
    answer(*w, GradeResult{GradeResult::Stopped,
                           {},
                           "miss",
                           "the server is shutting down; this answer was not graded"});
    return;
  }
  bool cache = opt_.cache_bytes > 0 && !w->req.regrade;
  std::string key = cache ? cache_key(w->req) : std::string();
  size_t queue = 0;
  {
    std::unique_lock<std::mutex> l(mu_);
    if (cache) {
      auto it = cache_.find(key);
      if (it != cache_.end() && it->second.graded) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        std::string line = it->second.line;
        l.unlock();
        TraceRecord rec = TraceRecord::from_json(json::parse(line));
        w->cache = "hit";
        answer(*w, GradeResult{GradeResult::Graded, std::move(rec), "hit", ""});
        return;
      }
      if (it != cache_.end()) {  // being graded for another request: wait for that record
        w->cache = "coalesced";
        it->second.waiters.push_back(std::move(*w));
        return;
      }
    }
    queue = in_flight_;
    if (in_flight_ < opt_.max_queue) {
      ++in_flight_;
      if (cache) cache_[key];
      queue = SIZE_MAX;
    }
  }
  if (queue != SIZE_MAX) {
    answer(*w, GradeResult{GradeResult::Refused,
                           {},
                           "miss",
                           "the grading queue is full (" + std::to_string(queue) +
                               " answers in flight, --max-queue " + std::to_string(opt_.max_queue) +
                               "); try again later"});
    return;
  }
  Job job;
  job.source = w->req.source;
  job.label = w->req.label;
  job.problem = w->req.problem;
  for (const auto& su : suites_)
    if (su.name == w->req.suite) job.problems_root = su.problems_root;
  job.run = opt_.run;
  job.sample = w->req.sample;
  job.seed = w->req.seed ? *w->req.seed : run_->seed_for(std::to_string(++labels_) + w->req.label);
  double timeout = opt_.step_timeout_s;
  if (w->req.timeout_s && *w->req.timeout_s < timeout) timeout = *w->req.timeout_s;
  if (timeout > 0)
    job.deadline =
        w->t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
  grader_->submit(std::move(job), [this, key, w](Outcome o) { on_outcome(key, w, std::move(o)); });
}

void Service::on_outcome(const std::string& key, const std::shared_ptr<Waiter>& first, Outcome o) {
  std::vector<Waiter> others;
  {
    std::lock_guard<std::mutex> l(mu_);
    --in_flight_;
    auto it = key.empty() ? cache_.end() : cache_.find(key);
    if (it != cache_.end() && !it->second.graded) {
      others = std::move(it->second.waiters);
      it->second.waiters.clear();
      if (o.kind == Outcome::Graded && !shows_nondeterminism(o.record)) {
        Entry& e = it->second;
        e.graded = true;
        e.line = o.record.to_line();
        e.bytes = cache_entry_bytes(key, e.line);
        lru_.push_front(key);
        e.lru = lru_.begin();
        cache_bytes_ += e.bytes;
        evict_locked();
      } else {
        cache_.erase(it);
      }
    }
  }
  GradeResult r;
  switch (o.kind) {
    case Outcome::Graded:
      r.kind = GradeResult::Graded;
      break;
    case Outcome::Expired:
      r.kind = GradeResult::Expired;
      r.message =
          "not graded: the step deadline would pass before the kernel could be compiled and run";
      break;
    case Outcome::Cancelled:
      r.kind = GradeResult::Stopped;
      r.message = "the server is shutting down; this answer was not graded";
      break;
    case Outcome::Skipped:  // a service's jobs name no selection
    case Outcome::Failed:
      r.kind = GradeResult::Failed;
      r.message = "internal error: " + (o.error.empty() ? std::string("no record") : o.error);
      break;
  }
  for (auto& w : others) {
    GradeResult copy = r;
    copy.record = o.record;
    copy.cache = "coalesced";
    answer(w, std::move(copy));
  }
  r.record = std::move(o.record);
  answer(*first, std::move(r));
}

void Service::evict_locked() {
  while (cache_bytes_ > opt_.cache_bytes && !lru_.empty()) {
    auto it = cache_.find(lru_.back());
    lru_.pop_back();
    if (it == cache_.end()) continue;
    cache_bytes_ -= it->second.bytes;
    cache_.erase(it);
  }
}

void Service::answer(Waiter& w, GradeResult r) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - w.t0).count();
  if (r.kind == GradeResult::Graded) {
    // The record is the grading's; the name and sample are this request's.
    r.record.file = w.req.label;
    r.record.sample = w.req.sample ? Field<int>(*w.req.sample) : Field<int>(nullptr);
    w.req.tags.apply(r.record);
    r.cache = w.cache;
    try {
      run_->write(r.record);  // the run seed stamped, and appended to --trace when given
    } catch (const std::exception& e) {
      metrics_.trace_write_failed();
      if (!trace_failed_.exchange(true))
        std::fprintf(stderr, "kernrl serve: cannot append to --trace: %s\n", e.what());
    }
    std::string status = r.record.status_text();
    metrics_.graded(status.empty() ? "?" : status, r.cache, secs);
  } else {
    metrics_.not_graded(r.reason());
  }
  try {
    w.done(std::move(r));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernrl serve: answering a request failed: %s\n", e.what());
  }
  // What the callback holds (a connection, whose end touches the network side) is released
  // before the answer counts as given: the grader may keep the job's callback, and with it this
  // Waiter, until after the server and this Service are gone.
  w.done = nullptr;
  // Notified under the lock: once it is released, wait_answered() may return and this Service be
  // destroyed, so nothing here may touch it after.
  std::lock_guard<std::mutex> l(mu_);
  --unanswered_;
  answered_cv_.notify_all();
}

bool Service::open_session(size_t* active, size_t* max) {
  size_t n = sessions_.load();
  *max = opt_.max_sessions;
  do {
    *active = n;
    if (n >= opt_.max_sessions) {
      metrics_.session_refused();
      return false;
    }
  } while (!sessions_.compare_exchange_weak(n, n + 1));
  *active = n + 1;
  return true;
}

void Service::close_session() {
  --sessions_;
}

void Service::begin_shutdown() {
  shutting_down_ = true;
}

void Service::stop_grader() {
  grader_->stop();
}

void Service::wait_answered() {
  std::unique_lock<std::mutex> l(mu_);
  answered_cv_.wait(l, [&] { return unanswered_ == 0; });
}

std::string Service::health() const {
  if (shutting_down_) return "unhealthy";
  if (trace_failed_) return "degraded";
  return "healthy";
}

std::string Service::metrics_text() const {
  Metrics::Gauges g;
  g.queued = grader_->queued();
  g.running = grader_->running();
  {
    std::lock_guard<std::mutex> l(mu_);
    g.in_flight = in_flight_;
    g.cache_entries = lru_.size();
    g.cache_bytes = cache_bytes_;
  }
  g.sessions = sessions_.load();
  g.max_sessions = opt_.max_sessions;
  g.compile_only = grader_->compile_only();
  g.gpus = grader_->gpus();
  return metrics_.prometheus(g);
}

}  // namespace kernrl::serve
