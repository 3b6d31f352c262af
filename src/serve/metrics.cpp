#include "serve/metrics.h"

#include <cstdio>
#include <sstream>

#include "record/record.h"

namespace kernrl::serve {

namespace {

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// A label value as Prometheus' text format writes it.
std::string label(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

void head(std::ostringstream& o, const char* name, const char* type, const char* help) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

}  // namespace

void Metrics::graded(const std::string& status, const char* cache, double seconds) {
  std::lock_guard<std::mutex> l(mu_);
  ++by_status_[status];
  ++by_cache_[cache];
  size_t i = 0;
  while (i < kLatencyBuckets.size() && seconds > kLatencyBuckets[i]) ++i;
  ++buckets_[i];
  latency_sum_ += seconds;
  ++latency_count_;
}

void Metrics::not_graded(const std::string& reason) {
  std::lock_guard<std::mutex> l(mu_);
  ++not_graded_[reason];
}

void Metrics::session_refused() {
  std::lock_guard<std::mutex> l(mu_);
  ++sessions_refused_;
}

void Metrics::session_dropped(const char* reason) {
  std::lock_guard<std::mutex> l(mu_);
  if (std::string(reason) == "unread") ++dropped_unread_;
}

void Metrics::trace_write_failed() {
  std::lock_guard<std::mutex> l(mu_);
  ++trace_failures_;
}

uint64_t Metrics::trace_failures() const {
  std::lock_guard<std::mutex> l(mu_);
  return trace_failures_;
}

void Metrics::request(const std::string& endpoint, int code) {
  std::lock_guard<std::mutex> l(mu_);
  ++requests_[{endpoint, code}];
}

std::string Metrics::prometheus(const Gauges& g) const {
  std::lock_guard<std::mutex> l(mu_);
  std::ostringstream o;
  head(o, "kernrl_serve_queue_depth", "gauge", "Answers waiting to compile or for a GPU.");
  o << "kernrl_serve_queue_depth " << g.queued << "\n";
  head(o, "kernrl_serve_running", "gauge", "Answers compiling or running now.");
  o << "kernrl_serve_running " << g.running << "\n";
  head(o, "kernrl_serve_in_flight", "gauge",
       "Answers admitted and not yet answered (what --max-queue bounds).");
  o << "kernrl_serve_in_flight " << g.in_flight << "\n";
  head(o, "kernrl_serve_sessions", "gauge", "Open WebSocket sessions.");
  o << "kernrl_serve_sessions " << g.sessions << "\n";
  head(o, "kernrl_serve_max_sessions", "gauge", "WebSocket sessions allowed at once.");
  o << "kernrl_serve_max_sessions " << g.max_sessions << "\n";
  head(o, "kernrl_serve_sessions_refused_total", "counter",
       "WebSocket sessions refused with CAPACITY_REACHED.");
  o << "kernrl_serve_sessions_refused_total " << sessions_refused_ << "\n";
  head(o, "kernrl_serve_sessions_dropped_total", "counter",
       "WebSocket sessions the server dropped, by reason (unread: replies left unread).");
  o << "kernrl_serve_sessions_dropped_total{reason=\"unread\"} " << dropped_unread_ << "\n";
  head(o, "kernrl_serve_compile_only", "gauge", "1 when nothing runs on a GPU.");
  o << "kernrl_serve_compile_only " << (g.compile_only ? 1 : 0) << "\n";

  head(o, "kernrl_serve_evaluations_total", "counter",
       "Answers graded, by the status of their record.");
  for (Status st : kAllStatuses) {
    const char* s = to_string(st);
    auto it = by_status_.find(s);
    o << "kernrl_serve_evaluations_total{status=\"" << s << "\"} "
      << (it == by_status_.end() ? 0 : it->second) << "\n";
  }
  head(o, "kernrl_serve_cache_total", "counter",
       "Answers graded, by where the record came from: miss (graded), hit (the cache), "
       "coalesced (the same answer being graded for another request).");
  for (const char* c : {"miss", "hit", "coalesced"}) {
    auto it = by_cache_.find(c);
    o << "kernrl_serve_cache_total{result=\"" << c << "\"} "
      << (it == by_cache_.end() ? 0 : it->second) << "\n";
  }
  head(o, "kernrl_serve_cache_entries", "gauge", "Records held by the result cache.");
  o << "kernrl_serve_cache_entries " << g.cache_entries << "\n";
  head(o, "kernrl_serve_cache_bytes", "gauge", "Bytes of records held by the result cache.");
  o << "kernrl_serve_cache_bytes " << g.cache_bytes << "\n";
  head(o, "kernrl_serve_not_graded_total", "counter",
       "Answers refused or dropped without a record, by reason.");
  for (const char* r : {"capacity", "deadline", "shutdown", "internal"}) {
    auto it = not_graded_.find(r);
    o << "kernrl_serve_not_graded_total{reason=\"" << r << "\"} "
      << (it == not_graded_.end() ? 0 : it->second) << "\n";
  }

  head(o, "kernrl_serve_step_latency_seconds", "histogram",
       "Seconds from an answer's arrival to its record, cache hits included.");
  uint64_t cum = 0;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    cum += buckets_[i];
    o << "kernrl_serve_step_latency_seconds_bucket{le=\"" << num(kLatencyBuckets[i]) << "\"} "
      << cum << "\n";
  }
  cum += buckets_.back();
  o << "kernrl_serve_step_latency_seconds_bucket{le=\"+Inf\"} " << cum << "\n";
  o << "kernrl_serve_step_latency_seconds_sum " << num(latency_sum_) << "\n";
  o << "kernrl_serve_step_latency_seconds_count " << latency_count_ << "\n";

  head(o, "kernrl_serve_gpu_busy_seconds_total", "counter",
       "Seconds each GPU worker spent grading.");
  for (const auto& gpu : g.gpus)
    o << "kernrl_serve_gpu_busy_seconds_total{gpu=\"" << gpu.value("index", 0) << "\",name=\""
      << label(gpu.value("name", "")) << "\"} " << num(gpu.value("busy_seconds", 0.0)) << "\n";
  head(o, "kernrl_serve_gpu_evaluations_total", "counter", "Kernels each GPU worker ran.");
  for (const auto& gpu : g.gpus)
    o << "kernrl_serve_gpu_evaluations_total{gpu=\"" << gpu.value("index", 0) << "\"} "
      << gpu.value("evaluations", uint64_t{0}) << "\n";
  head(o, "kernrl_serve_gpu_worker_restarts_total", "counter",
       "GPU workers replaced after a kernel crashed or hung them.");
  for (const auto& gpu : g.gpus)
    o << "kernrl_serve_gpu_worker_restarts_total{gpu=\"" << gpu.value("index", 0) << "\"} "
      << gpu.value("restarts", 0) << "\n";

  head(o, "kernrl_serve_trace_write_failures_total", "counter",
       "Records that could not be appended to --trace.");
  o << "kernrl_serve_trace_write_failures_total " << trace_failures_ << "\n";
  head(o, "kernrl_serve_http_requests_total", "counter", "HTTP requests, by endpoint and status.");
  for (const auto& [k, v] : requests_)
    o << "kernrl_serve_http_requests_total{endpoint=\"" << label(k.first) << "\",code=\""
      << k.second << "\"} " << v << "\n";
  return o.str();
}

}  // namespace kernrl::serve
