#include "record/record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "record/feedback.h"

namespace kernrl {
using nlohmann::json;

int exit_code_for(const std::string& status) {
  if (status == "internal_error") return kExitInternal;
  return status == "correct" || status == "compiled" ? kExitOk : kExitFail;
}

double sol_ms(double flops, double bytes, const json& c, const std::string& dtype_class) {
  if (!c.is_object() || !c.contains("bandwidth_gbs")) return 0;
  double bw = c.value("bandwidth_gbs", 0.0) * 1e9;
  double tf = 0;
  if (c.contains("matmul_tflops")) {
    const auto& m = c["matmul_tflops"];
    // fp32 problems may legitimately use no tensor cores; the fp32 cuBLAS rate is their ceiling.
    std::string key = dtype_class == "fp16" ? "fp16" : dtype_class == "bf16" ? "bf16" : "fp32";
    tf = m.value(key, 0.0) * 1e12;
  }
  double t_mem = bw > 0 ? bytes / bw : 0;
  double t_math = tf > 0 ? flops / tf : 0;
  return std::max(t_mem, t_math) * 1e3;
}

namespace {

// Which baseline the record's speedup is against, and the speedup against each baseline timed:
// the PyTorch reference (`timing.baseline`) always, the problem's reference kernel
// (`timing.kernel_baseline`) when it was timed. The kernel baseline counts only where the problem
// asks for it (`timing.speedup_baseline`, from problem.yaml `score.baseline`).
json baseline_of(const json& timing, double kernel_ms) {
  double b = timing["baseline"].value("median_ms", 0.0);
  json speedups = {{"torch", kernel_ms > 0 ? b / kernel_ms : 0.0}};
  std::string kind = "torch";
  bool wants_kernel = timing.value("speedup_baseline", std::string("torch")) == "kernel";
  auto kb = timing.find("kernel_baseline");
  if (kb != timing.end() && kb->is_object() && kernel_ms > 0) {
    double kb_ms = kb->value("median_ms", 0.0);
    if (kb_ms > 0) {
      speedups["kernel"] = kb_ms / kernel_ms;
      if (wants_kernel) kind = "kernel";
    }
  }
  json out = {{"kind", kind}, {"speedups", speedups}};
  if (wants_kernel && kind != "kernel")
    out["kernel_missing"] =
        timing.value("kernel_baseline_error", std::string("the reference kernel was not timed"));
  return out;
}

// Achieved throughput of a kernel that ran in `kernel_ms`: the problem's minimum bytes and flops
// per second, its own unit per second where problem.yaml names one, and which of these is the
// problem's natural measure.
json throughput_of(const json& work, double kernel_ms, const json& ceilings) {
  json t = json::object();
  if (!(kernel_ms > 0) || !work.is_object()) return t;
  double s = kernel_ms / 1e3;
  double bytes = work.value("bytes", 0.0), flops = work.value("flops", 0.0);
  if (bytes > 0) t["gb_s"] = bytes / s / 1e9;
  if (flops > 0) t["tflop_s"] = flops / s / 1e12;
  auto units = work.find("units");
  if (units != work.end() && units->is_object() && (*units)["unit"].is_string() &&
      (*units)["count"].is_number()) {
    t["unit"] = (*units)["unit"];
    t["units_per_s"] = (*units)["count"].get<double>() / s;
    t["natural"] = "units_per_s";
  } else if (bytes > 0 || flops > 0) {
    // The term that bounds the speed of light; without known ceilings, bytes unless there is
    // nothing but arithmetic.
    std::string dc = work.value("dtype_class", std::string("fp32"));
    double t_mem = sol_ms(0, bytes, ceilings, dc), t_math = sol_ms(flops, 0, ceilings, dc);
    bool math = t_mem > 0 || t_math > 0 ? t_math > t_mem : bytes <= 0;
    t["natural"] = math ? "tflop_s" : "gb_s";
  }
  return t;
}

}  // namespace

void finalize_record(json& rec, const RewardPreset& preset, const json& ceilings) {
  if (rec.contains("timing") && rec["timing"].is_object() && rec["timing"].contains("kernel") &&
      rec["timing"].contains("baseline")) {
    double k = rec["timing"]["kernel"].value("median_ms", 0.0);
    double b = rec["timing"]["baseline"].value("median_ms", 0.0);
    json base = baseline_of(rec["timing"], k);
    rec["speedup"] = base["speedups"][base["kind"].get<std::string>()];
    rec["baseline"] = std::move(base);
    if (json tp = throughput_of(rec.value("work", json()), k, ceilings); !tp.empty())
      rec["throughput"] = std::move(tp);
    double sol = 0;
    if (rec.contains("work"))
      sol = sol_ms(rec["work"].value("flops", 0.0), rec["work"].value("bytes", 0.0), ceilings,
                   rec["work"].value("dtype_class", "fp32"));
    if (sol > 0 && k > 0) {
      rec["sol_ms"] = sol;
      rec["sol_fraction"] = sol / k;
      rec["baseline_sol_fraction"] = b > 0 ? sol / b : 0.0;
      // Faster than any honest kernel could be, beyond noise. The bound is deliberately loose so no
      // legitimate trick trips it: the minimum bytes at full bandwidth, and the flops at twice the
      // fastest matrix rate measured (fp8 units; fp32 work done on tensor cores, e.g. 3xTF32).
      double fastest = 0;
      const json rates =
          ceilings.value("matmul_tflops", json::object());  // a named copy: items() must not dangle
      for (const auto& [name, v] : rates.items()) fastest = std::max(fastest, v.get<double>());
      json loose = {{"bandwidth_gbs", ceilings.value("bandwidth_gbs", 0.0)},
                    {"matmul_tflops", {{"fp32", 2 * fastest}}}};
      double bound =
          sol_ms(rec["work"].value("flops", 0.0), rec["work"].value("bytes", 0.0), loose, "fp32");
      // Noise of the median from the median absolute deviation (a kernel cannot widen it with one
      // deliberately slow run, as it could the standard deviation).
      const json& kt = rec["timing"]["kernel"];
      double noise = 3 * 1.4826 * kt.value("mad_ms", kt.value("std_ms", 0.0)) /
                     std::max(1.0, std::sqrt(kt.value("n", 1.0)));
      rec["suspicious"] = k + noise < 0.8 * bound;
    }
  } else {
    rec["speedup"] = nullptr;
    rec.erase("baseline");
    rec.erase("throughput");
  }
  // The grader's own failure says nothing about the kernel: no reward either way.
  rec["reward"] = rec.value("status", "") == "internal_error" ? json(nullptr)
                                                              : json(compute_reward(preset, rec));
  rec["reward_preset_version"] = preset.version;
  rec["feedback"] = make_feedback(rec);
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);  // records are begun on several threads at once: not gmtime's shared buffer
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

namespace {

// 3 significant digits, plain below a million: 2410, 0.123, 2.9e+10.
std::string fmt_rate(double v) {
  char b[40];
  std::snprintf(b, sizeof b, v >= 1e6 ? "%.3g" : "%.4g", v);
  return b;
}

}  // namespace

std::string human_summary(const json& rec, bool color) {
  std::string status = rec.value("status", "?");
  const char* c = "";
  const char* reset = color ? "\033[0m" : "";
  if (color) c = status == "correct" ? "\033[32m" : status == "compiled" ? "\033[36m" : "\033[31m";
  // Fields read by type: a null problem (unattributed) or an odd record never throws here.
  auto str = [&](const char* key, const std::string& otherwise) {
    auto it = rec.find(key);
    return it != rec.end() && it->is_string() ? it->get<std::string>() : otherwise;
  };
  std::string problem = str("problem", "");
  if (problem.empty()) {
    auto pu = rec.find("problem_unknown");
    problem =
        pu != rec.end() && pu->is_object() && pu->contains("reason") && (*pu)["reason"].is_string()
            ? "(no problem: " + (*pu)["reason"].get<std::string>() + ")"
            : "(no problem)";
  }
  std::string s = std::string(c) + status + reset + "  " + problem + "  " + str("file", "") + "\n";
  if (rec.contains("compile") && rec["compile"].is_object()) {
    char b[160];
    std::snprintf(b, sizeof b, "  compile  %.0f ms for %s%s\n", rec["compile"].value("ms", 0.0),
                  rec["compile"].value("arch", std::string("?")).c_str(),
                  rec["compile"].value("cached", false) ? " (cached)" : "");
    s += b;
  }
  if (!rec.value("ran", false))
    s += "  nothing ran: " + rec.value("not_run_reason", std::string("compile only")) + "\n";
  if (rec.contains("error") && rec["error"].is_object()) {
    const auto& e = rec["error"];
    s += "  error    ";
    if (e.contains("line")) s += "line " + std::to_string(e["line"].get<int>()) + ": ";
    s += e.value("message", "") + "\n";
    std::string log = e.value("log", "");
    if (!log.empty()) {
      std::string key = rec.value("status", "") == "compile_error" ? key_log_lines(log, 20) : log;
      s += "  " + (key.empty() ? log.substr(0, 2000) : key);
      if (s.back() != '\n') s += "\n";
    }
  }
  if (rec.contains("correctness") && rec["correctness"].is_object() &&
      rec["correctness"].contains("n_trials")) {
    const auto& cr = rec["correctness"];
    s += "  correct  " + std::to_string(cr.value("n_passed", 0)) + "/" +
         std::to_string(cr.value("n_trials", 0)) + " trials\n";
  }
  if (rec.contains("timing") && rec["timing"].is_object() && rec["timing"].contains("kernel")) {
    const auto& t = rec["timing"];
    char b[300];
    std::snprintf(
        b, sizeof b,
        "  kernel   %.4f ms (median of %d, std %.4f)\n  pytorch  %.4f ms (%s)\n  speedup  %.3fx\n",
        t["kernel"].value("median_ms", 0.0), t["kernel"].value("n", 0),
        t["kernel"].value("std_ms", 0.0), t["baseline"].value("median_ms", 0.0),
        t.value("baseline_source", std::string("measured")).c_str(), rec.value("speedup", 0.0));
    s += b;
    const json& base = rec.contains("baseline") ? rec["baseline"] : json();
    if (t.contains("kernel_baseline") && t["kernel_baseline"].is_object()) {
      std::snprintf(b, sizeof b, "  ref kern %.4f ms (%s), %.3fx faster than it\n",
                    t["kernel_baseline"].value("median_ms", 0.0),
                    t.value("kernel_baseline_source", std::string("measured")).c_str(),
                    base.is_object() ? base["speedups"].value("kernel", 0.0) : 0.0);
      s += b;
    }
    if (base.is_object() && base.value("kind", "") == "kernel")
      s += "  (speedup is over the reference kernel; " +
           fmt_rate(base["speedups"].value("torch", 0.0)) + "x over PyTorch)\n";
    else if (base.is_object() && base.contains("kernel_missing"))
      s += "  (no reference kernel timing: " + base.value("kernel_missing", std::string()) +
           "; speedup is over PyTorch)\n";
    if (rec.contains("throughput") && rec["throughput"].is_object()) {
      const json& tp = rec["throughput"];
      std::vector<std::pair<std::string, std::string>> rates;  // key, text
      if (tp.contains("units_per_s"))
        rates.emplace_back("units_per_s", fmt_rate(tp.value("units_per_s", 0.0)) + " " +
                                              tp.value("unit", std::string("units")) + "/s");
      if (tp.contains("gb_s"))
        rates.emplace_back("gb_s", fmt_rate(tp.value("gb_s", 0.0)) + " GB/s");
      if (tp.contains("tflop_s"))
        rates.emplace_back("tflop_s", fmt_rate(tp.value("tflop_s", 0.0)) + " TFLOP/s");
      std::stable_partition(rates.begin(), rates.end(), [&](const auto& r) {
        return r.first == tp.value("natural", std::string());
      });
      std::string line;
      for (const auto& r : rates) line += (line.empty() ? "" : ", ") + r.second;
      if (!line.empty()) s += "  rate     " + line + "\n";
    }
    if (rec.contains("sol_fraction")) {
      std::snprintf(
          b, sizeof b, "  limit    %.4f ms speed of light; kernel at %.1f%%%s\n",
          rec.value("sol_ms", 0.0), 100 * rec.value("sol_fraction", 0.0),
          rec.value("suspicious", false) ? " (SUSPICIOUS: faster than the hardware allows)" : "");
      s += b;
    }
  }
  return s;
}

}  // namespace kernrl
