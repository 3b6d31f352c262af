#include "record/record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

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

void finalize_record(json& rec, const RewardPreset& preset, const json& ceilings) {
  if (rec.contains("timing") && rec["timing"].is_object() && rec["timing"].contains("kernel") &&
      rec["timing"].contains("baseline")) {
    double k = rec["timing"]["kernel"].value("median_ms", 0.0);
    double b = rec["timing"]["baseline"].value("median_ms", 0.0);
    rec["speedup"] = k > 0 ? b / k : 0.0;
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
  }
  // The grader's own failure says nothing about the kernel: no reward either way.
  rec["reward"] = rec.value("status", "") == "internal_error" ? json(nullptr)
                                                              : json(compute_reward(preset, rec));
  rec["feedback"] = make_feedback(rec);
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return b;
}

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
