#include "report/curves.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "report/aggregate.h"
#include "report/records.h"

namespace kernrl::report {
using nlohmann::json;

std::optional<double> timestamp_seconds(const std::string& iso) {
  int y, mo, d, h, mi;
  double s;
  char tail[16] = {0};
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%15s", &y, &mo, &d, &h, &mi, &s, tail) < 6)
    return std::nullopt;
  std::string t = tail;
  if (!t.empty() && t != "Z" && t != "+00:00") return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s < 0 || s >= 61)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  return static_cast<double>(timegm(&tm)) + s;
}

double quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

namespace {

json point_json(const std::vector<const TraceRecord*>& rs) {
  size_t formatted = 0, comp = 0, corr = 0, sus = 0;
  std::vector<double> rewards, speedups;
  for (const TraceRecord* r : rs) {
    formatted += rec::format_ok(*r);
    comp += rec::compiled(*r);
    corr += rec::is_correct(*r);
    sus += r->suspicious.value_or(false);
    if (r->reward) rewards.push_back(*r->reward);
    if (auto s = rec::counted_speedup(*r)) speedups.push_back(*s);
  }
  json std_dev = nullptr;
  if (!rewards.empty()) {
    double mean = 0, var = 0;
    for (double x : rewards) mean += x;
    mean /= static_cast<double>(rewards.size());
    for (double x : rewards) var += (x - mean) * (x - mean);
    std_dev = std::sqrt(var / static_cast<double>(rewards.size()));
  }
  std::sort(speedups.begin(), speedups.end());
  auto q = [&](double p) { return speedups.empty() ? json(nullptr) : json(quantile(speedups, p)); };
  size_t n = rs.size();
  return {{"samples", n},
          {"format_rate", rate(formatted, n)},
          {"compile_rate", rate(comp, n)},
          {"correct_rate", rate(corr, n)},
          {"mean_reward", mean_or_null(rewards)},
          {"reward_std", std_dev},
          {"speedup_p10", q(0.1)},
          {"speedup_p50", q(0.5)},
          {"speedup_p90", q(0.9)},
          {"timed", speedups.size()},
          {"suspicious_rate", rate(sus, n)}};
}

std::string series_of(const TraceRecord& r) {
  if (r.training && r.training->run) return *r.training->run;
  return rec::run_of(r);
}

// A bucket width of 1, 2 or 5 times a power of ten seconds giving at most `max` buckets.
double bucket_width(double span, int max) {
  double w = 1;
  while (span / w >= max) {
    for (double m : {2.0, 2.5, 2.0}) {
      w *= m;
      if (span / w < max) break;
    }
  }
  return w;
}

std::string iso_time(double secs) {
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

}  // namespace

json curves_json(const std::vector<TraceRecord>& recs, const std::vector<std::string>& run_order) {
  bool by_step = false;
  for (const TraceRecord& r : recs) by_step = by_step || (r.training && r.training->step);
  // series -> x -> records
  std::map<std::string, std::map<double, std::vector<const TraceRecord*>>> by;
  double width = 0;
  if (by_step) {
    for (const TraceRecord& r : recs)
      if (r.training && r.training->step)
        by[series_of(r)][static_cast<double>(*r.training->step)].push_back(&r);
  } else {
    std::vector<std::pair<double, const TraceRecord*>> timed;
    for (const TraceRecord& r : recs)
      if (r.timestamp)
        if (auto t = timestamp_seconds(*r.timestamp)) timed.push_back({*t, &r});
    if (timed.empty()) return nullptr;
    double lo = timed.front().first, hi = lo;
    for (const auto& [t, r] : timed) {
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
    width = bucket_width(hi - lo, 20);
    double start = std::floor(lo / width) * width;
    for (const auto& [t, r] : timed)
      by[series_of(*r)][start + std::floor((t - start) / width) * width].push_back(r);
  }
  if (by.empty()) return nullptr;
  std::vector<std::string> names;
  for (const auto& n : run_order)
    if (by.count(n)) names.push_back(n);
  for (const auto& [n, pts] : by)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  json series = json::array();
  for (const auto& n : names) {
    json points = json::array();
    for (const auto& [x, rs] : by[n]) {
      json p = point_json(rs);
      if (by_step)
        p["step"] = static_cast<int64_t>(x);
      else
        p["time"] = iso_time(x);
      points.push_back(std::move(p));
    }
    series.push_back({{"series", n}, {"points", points}});
  }
  json out = {{"x", by_step ? "step" : "time"}, {"series", series}};
  if (!by_step) out["bucket_s"] = width;
  return out;
}

}  // namespace kernrl::report
