// The service's counters, rendered in Prometheus' text format (GET /metrics).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace kernrl::serve {

class Metrics {
 public:
  // Upper bounds (seconds) of the step latency histogram's buckets; +Inf is implied.
  static constexpr std::array<double, 14> kLatencyBuckets = {
      0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120};

  // A graded answer: its record's status, whether it came from the cache, and the seconds from
  // the request to the record.
  void graded(const std::string& status, const char* cache, double seconds);
  // An answer that was not graded: "deadline", "shutdown", "internal", "capacity".
  void not_graded(const std::string& reason);
  void session_refused();
  // A WebSocket session dropped by the server: "unread" (its client left replies unread).
  void session_dropped(const char* reason);
  void trace_write_failed();
  void request(const std::string& endpoint, int code);

  // Everything above plus the gauges given (queue depth, sessions, per-GPU state).
  struct Gauges {
    size_t queued = 0, running = 0, in_flight = 0, sessions = 0, max_sessions = 0,
           cache_entries = 0, cache_bytes = 0;
    bool compile_only = false;
    nlohmann::json gpus = nlohmann::json::array();  // Grader::gpus()
  };
  std::string prometheus(const Gauges& g) const;
  uint64_t trace_failures() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> by_status_, by_cache_, not_graded_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::array<uint64_t, kLatencyBuckets.size() + 1> buckets_{};
  double latency_sum_ = 0;
  uint64_t latency_count_ = 0, sessions_refused_ = 0, trace_failures_ = 0, dropped_unread_ = 0;
};

}  // namespace kernrl::serve
