#include "protocol/parts.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kernrl::trace {

Error make_error(Status category, const std::string& message, int line, const std::string& log) {
  Error e;
  e.category = category;
  e.message = message;
  if (line) e.line = line;
  if (!log.empty()) e.log = log;
  return e;
}

namespace {

double median_of_sorted(const std::vector<double>& v) {
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

Stats stats_of(std::vector<double> ms) {
  Stats s;
  const int n = static_cast<int>(ms.size());
  double median = 0, mean = 0, sd = 0, lo = 0, hi = 0, mad = 0, rel = 0;
  if (n > 0) {
    std::sort(ms.begin(), ms.end());
    lo = ms.front();
    hi = ms.back();
    median = median_of_sorted(ms);
    mean = std::accumulate(ms.begin(), ms.end(), 0.0) / n;
    double var = 0;
    for (double v : ms) var += (v - mean) * (v - mean);
    sd = n > 1 ? std::sqrt(var / (n - 1)) : 0;
    rel = mean > 0 ? sd / std::sqrt(static_cast<double>(n)) / mean : 0;
    std::vector<double> dev;
    for (double v : ms) dev.push_back(std::abs(v - median));
    std::sort(dev.begin(), dev.end());
    mad = median_of_sorted(dev);
  }
  s.median_ms = median;
  s.mean_ms = mean;
  s.std_ms = sd;
  s.min_ms = lo;
  s.max_ms = hi;
  s.mad_ms = mad;
  s.n = n;
  s.rel_stderr = rel;
  return s;
}

Watchdog watchdog_of(const RunBound& bound) {
  Watchdog w;
  w.bound_s = bound.seconds;
  w.basis = bound.basis;
  w.grace_s = bound.grace_s;
  if (bound.reference_ms) w.reference_ms = *bound.reference_ms;
  if (!bound.sizes.is_null()) w.sizes = bound.sizes;
  return w;
}

}  // namespace kernrl::trace
