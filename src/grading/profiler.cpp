#include "grading/profiler.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/paths.h"
#include "core/subprocess.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kMetrics =
    "gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,"
    "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
    "sm__warps_active.avg.pct_of_peak_sustained_active,"
    "regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio$";

std::string find_ncu(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* e = std::getenv("KERNRL_NCU"); e && *e) return e;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && access((fs::path(dir) / "ncu").c_str(), X_OK) == 0)
        return (fs::path(dir) / "ncu").string();
  }
  const char* cuda = std::getenv("CUDA_HOME");
  fs::path c = fs::path(cuda && *cuda ? cuda : "/usr/local/cuda") / "bin" / "ncu";
  return access(c.c_str(), X_OK) == 0 ? c.string() : "";
}

// One CSV line into fields (ncu quotes every field; quotes inside are doubled).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::optional<double> number(const std::string& s) {
  std::string t;
  for (char c : s)
    if (c != ',') t += c;  // thousands separators
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str()) return std::nullopt;
  return v;
}

std::string tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

}  // namespace

json parse_ncu_raw_csv(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::stringstream ss(csv);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.rfind("\"ID\"", 0) == 0 || (!rows.empty() && !line.empty() && line[0] == '"'))
      rows.push_back(csv_fields(line));
  }
  json launches = json::array();
  if (rows.size() < 2) return launches;
  const auto& head = rows[0];
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return static_cast<int>(i);
    return -1;
  };
  static const std::regex stall(
      "^smsp__average_warps_issue_stalled_(.*)_per_issue_active\\.ratio$");
  // Row 1 holds the units; launches follow.
  for (size_t r = 2; r < rows.size(); ++r) {
    const auto& row = rows[r];
    auto get = [&](const std::string& name) -> std::optional<double> {
      int c = col(name);
      if (c < 0 || static_cast<size_t>(c) >= row.size()) return std::nullopt;
      return number(row[c]);
    };
    json l;
    int kc = col("Kernel Name");
    l["kernel"] = kc >= 0 && static_cast<size_t>(kc) < row.size() ? row[kc] : "";
    auto put = [&](const char* key, const std::string& metric, double scale = 1) {
      auto v = get(metric);
      l[key] = v ? json(*v * scale) : json(nullptr);
    };
    // gpu__time_duration is in ns or us depending on ncu's units row.
    double to_us = 1;
    if (int c = col("gpu__time_duration.sum"); c >= 0 && static_cast<size_t>(c) < rows[1].size())
      to_us = rows[1][c] == "nsecond" ? 1e-3 : rows[1][c] == "msecond" ? 1e3 : 1;
    put("duration_us", "gpu__time_duration.sum", to_us);
    put("dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed");
    put("sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed");
    put("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active");
    std::vector<std::pair<double, std::string>> stalls;
    for (size_t c = 0; c < head.size() && c < row.size(); ++c) {
      std::smatch m;
      if (!std::regex_match(head[c], m, stall)) continue;
      auto v = number(row[c]);
      if (v && *v > 0) stalls.push_back({*v, m[1].str()});
    }
    std::sort(stalls.rbegin(), stalls.rend());
    json top = json::array();
    for (size_t i = 0; i < stalls.size() && i < 4; ++i)
      top.push_back({{"reason", stalls[i].second}, {"ratio", stalls[i].first}});
    l["stalls"] = top;  // cycles stalled per issued instruction, largest first
    launches.push_back(l);
  }
  return launches;
}

json profile_kernel(const ProfileRequest& req) {
  json out = {{"tool", "ncu"}};
  std::string ncu = find_ncu(req.ncu);
  if (ncu.empty() || access(ncu.c_str(), X_OK) != 0) {
    out["error"] = "Nsight Compute (ncu) was not found" + (ncu.empty() ? "" : " at " + ncu) +
                   ": put it on PATH or set KERNRL_NCU";
    return out;
  }
  if (!req.eval.lowered || req.eval.lowered->empty()) {
    out["error"] = "no kernel to profile";
    return out;
  }
  char tmpl[] = "/tmp/kernrl-profile-XXXXXX";
  if (!mkdtemp(tmpl)) {
    out["error"] = "cannot create a temporary folder";
    return out;
  }
  fs::path dir = tmpl;
  std::string names;
  for (const auto& [name, symbol] : *req.eval.lowered)
    names += (names.empty() ? "" : "|") +
             std::regex_replace(symbol, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
  size_t launches = req.eval.plan ? req.eval.plan->launches.size() : 0;
  std::vector<std::string> argv = {ncu,
                                   "--target-processes",
                                   "all",
                                   "--kernel-name-base",
                                   "mangled",
                                   "--kernel-name",
                                   "regex:^(" + names + ")$",
                                   "--launch-count",
                                   std::to_string(std::max<size_t>(1, launches)),
                                   "--metrics",
                                   kMetrics,
                                   "--export",
                                   (dir / "profile").string(),
                                   "--force-overwrite",
                                   "--log-file",
                                   (dir / "ncu.log").string(),
                                   helper_exe("kernrl-worker").string()};
  SpawnOptions opt;
  opt.stderr_file = (dir / "worker.log").string();
  opt.env = {"CUDA_VISIBLE_DEVICES=" + req.gpu, "CUDA_MODULE_LOADING=LAZY"};
  auto read_all = [](const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  auto fail = [&](const std::string& why) {
    std::string log = read_all(dir / "ncu.log");
    out["error"] = why + (log.empty() ? "" : ": " + tail(log, 600));
    fs::remove_all(dir);
    return out;
  };
  LineProcess p;
  try {
    p.start(argv, opt);
  } catch (const std::exception& e) {
    return fail(std::string("cannot start ncu: ") + e.what());
  }
  auto hello = p.read_line(req.timeout_s);
  if (!hello) {
    p.kill_and_reap();
    return fail("the worker under ncu did not start");
  }
  EvalRequest r = req.eval;
  r.time = false;
  r.cfg->trials = 1;
  r.cfg->plan_run_timeout_s = 0;  // the profiler replays every launch many times
  r.baseline = nullptr;
  p.send_line(r.to_json().dump());
  auto answer = p.read_line(req.timeout_s);
  p.send_line(quit_request().dump());
  while (answer && p.read_line(req.timeout_s)) {
  }
  if (!answer || p.timed_out()) {
    p.kill_and_reap();
    return fail(answer ? "ncu did not finish" : "the worker under ncu did not answer");
  }
  p.reap();
  fs::path rep = dir / "profile.ncu-rep";
  if (!fs::exists(rep)) return fail("ncu wrote no report");
  ProcessResult csv =
      run_process({ncu, "--import", rep.string(), "--csv", "--page", "raw"}, "", req.timeout_s);
  if (csv.exit_code != 0) return fail("ncu --import failed");
  json launches_json = parse_ncu_raw_csv(csv.out);
  if (launches_json.empty()) return fail("ncu profiled no launch of the kernel");
  out["launches"] = launches_json;
  fs::remove_all(dir);
  return out;
}

}  // namespace kernrl
