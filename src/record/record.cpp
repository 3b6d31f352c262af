#include "record/record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/errors.h"
#include "record/feedback.h"

namespace kernrl {
using nlohmann::json;

int exit_code_for(const TraceRecord& rec) {
  if (rec.status_is(Status::InternalError)) return kExitInternal;
  return rec.status_is(Status::Correct) || rec.status_is(Status::Compiled) ? kExitOk : kExitFail;
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

void finalize_record(TraceRecord& rec, const RewardPreset& preset, const json& ceilings) {
  const trace::Timing* t = rec.timing.get();
  if (t && t->kernel && t->baseline) {
    double k = t->kernel->median_ms.value_or(0.0);
    double b = t->baseline->median_ms.value_or(0.0);
    rec.speedup = k > 0 ? b / k : 0.0;
    double sol = 0;
    const trace::Work* w = rec.work.get();
    double flops = w ? static_cast<double>(w->flops.value_or(0)) : 0.0;
    double bytes = w ? static_cast<double>(w->bytes.value_or(0)) : 0.0;
    if (w) sol = sol_ms(flops, bytes, ceilings, w->dtype_class.value_or("fp32"));
    if (sol > 0 && k > 0) {
      rec.sol_ms = sol;
      rec.sol_fraction = sol / k;
      rec.baseline_sol_fraction = b > 0 ? sol / b : 0.0;
      // Faster than any honest kernel could be, beyond noise. The bound is deliberately loose so no
      // legitimate trick trips it: the minimum bytes at full bandwidth, and the flops at twice the
      // fastest matrix rate measured (fp8 units; fp32 work done on tensor cores, e.g. 3xTF32).
      double fastest = 0;
      const json rates =
          ceilings.value("matmul_tflops", json::object());  // a named copy: items() must not dangle
      for (const auto& [name, v] : rates.items()) fastest = std::max(fastest, v.get<double>());
      json loose = {{"bandwidth_gbs", ceilings.value("bandwidth_gbs", 0.0)},
                    {"matmul_tflops", {{"fp32", 2 * fastest}}}};
      double bound = sol_ms(flops, bytes, loose, "fp32");
      // Noise of the median from the median absolute deviation (a kernel cannot widen it with one
      // deliberately slow run, as it could the standard deviation).
      const trace::Stats& kt = *t->kernel;
      double spread = kt.mad_ms ? *kt.mad_ms : kt.std_ms.value_or(0.0);
      double n = kt.n ? static_cast<double>(*kt.n) : 1.0;
      double noise = 3 * 1.4826 * spread / std::max(1.0, std::sqrt(n));
      rec.suspicious = k + noise < 0.8 * bound;
    }
  } else {
    rec.speedup = nullptr;
  }
  // The grader's own failure says nothing about the kernel: no reward either way.
  std::optional<double> reward =
      rec.status_is(Status::InternalError) ? std::nullopt : compute_reward(preset, rec);
  rec.reward = reward ? Field<double>(*reward) : Field<double>(nullptr);
  rec.feedback = make_feedback(rec);
}

void finalize_record(json& rec, const RewardPreset& preset, const json& ceilings) {
  TraceRecord r = TraceRecord::from_json(rec);
  finalize_record(r, preset, ceilings);
  rec = r.to_json();
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);  // records are begun on several threads at once: not gmtime's shared buffer
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string human_summary(const TraceRecord& rec, bool color) {
  std::string status = rec.status_text();
  if (status.empty()) status = "?";
  const char* c = "";
  const char* reset = color ? "\033[0m" : "";
  if (color)
    c = rec.status_is(Status::Correct)    ? "\033[32m"
        : rec.status_is(Status::Compiled) ? "\033[36m"
                                          : "\033[31m";
  // A null problem (unattributed) or an odd record never throws here: fields are read by type.
  std::string problem = rec.problem.value_or("");
  if (problem.empty()) {
    const trace::ProblemUnknown* pu = rec.problem_unknown.get();
    problem = pu && pu->reason ? "(no problem: " + *pu->reason + ")" : "(no problem)";
  }
  std::string s =
      std::string(c) + status + reset + "  " + problem + "  " + rec.file.value_or("") + "\n";
  if (const trace::Compile* cp = rec.compile.get()) {
    char b[160];
    std::snprintf(b, sizeof b, "  compile  %.0f ms for %s%s\n", cp->ms.value_or(0.0),
                  cp->arch.value_or("?").c_str(), cp->cached.value_or(false) ? " (cached)" : "");
    s += b;
  }
  if (!rec.ran.value_or(false))
    s += "  nothing ran: " + rec.not_run_reason.value_or("compile only") + "\n";
  if (const trace::Error* e = rec.error.get()) {
    s += "  error    ";
    if (e->line) s += "line " + std::to_string(*e->line) + ": ";
    s += e->message.value_or("") + "\n";
    std::string log = e->log.value_or("");
    if (!log.empty()) {
      std::string key = rec.status_is(Status::CompileError) ? key_log_lines(log, 20) : log;
      s += "  " + (key.empty() ? log.substr(0, 2000) : key);
      if (s.back() != '\n') s += "\n";
    }
  }
  if (auto counts = rec.correctness_counts())
    s += "  correct  " + std::to_string(counts->first) + "/" + std::to_string(counts->second) +
         " trials\n";
  const trace::Timing* t = rec.timing.get();
  if (t && t->kernel) {
    const trace::Stats& k = *t->kernel;
    const trace::Stats* b = t->baseline.get();
    char buf[300];
    std::snprintf(
        buf, sizeof buf,
        "  kernel   %.4f ms (median of %d, std %.4f)\n  pytorch  %.4f ms (%s)\n  speedup  %.3fx\n",
        k.median_ms.value_or(0.0), k.n.value_or(0), k.std_ms.value_or(0.0),
        b ? b->median_ms.value_or(0.0) : 0.0, t->baseline_source.value_or("measured").c_str(),
        rec.speedup.value_or(0.0));
    s += buf;
    if (rec.sol_fraction) {
      std::snprintf(
          buf, sizeof buf, "  limit    %.4f ms speed of light; kernel at %.1f%%%s\n",
          rec.sol_ms.value_or(0.0), 100 * *rec.sol_fraction,
          rec.suspicious.value_or(false) ? " (SUSPICIOUS: faster than the hardware allows)" : "");
      s += buf;
    }
  }
  return s;
}

}  // namespace kernrl
