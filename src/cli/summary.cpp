#include "cli/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "record/feedback.h"

namespace kernrl {
using nlohmann::json;

int exit_code_for(const TraceRecord& rec) {
  if (rec.status_is(Status::InternalError)) return kExitInternal;
  return rec.status_is(Status::Correct) || rec.status_is(Status::Compiled) ? kExitOk : kExitFail;
}

namespace {

// 3 significant digits, plain below a million: 2410, 0.123, 2.9e+10.
std::string fmt_rate(double v) {
  char b[40];
  std::snprintf(b, sizeof b, v >= 1e6 ? "%.3g" : "%.4g", v);
  return b;
}

}  // namespace

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
    const trace::Baseline* base = rec.baseline.get();
    auto speedup_over = [&](const char* kind) {
      return base && base->speedups && base->speedups->count(kind) ? base->speedups->at(kind) : 0.0;
    };
    if (t->kernel_baseline) {
      std::snprintf(buf, sizeof buf, "  ref kern %.4f ms (%s), %.3fx faster than it\n",
                    t->kernel_baseline->median_ms.value_or(0.0),
                    t->kernel_baseline_source.value_or("measured").c_str(), speedup_over("kernel"));
      s += buf;
    }
    if (t->compile_baseline) {
      std::snprintf(buf, sizeof buf,
                    "  compiled %.4f ms (torch.compile, %s), %.3fx faster than it\n",
                    t->compile_baseline->median_ms.value_or(0.0),
                    t->compile_baseline_source.value_or("file").c_str(), speedup_over("compile"));
      s += buf;
    }
    if (base && base->kind.value_or("") == "kernel")
      s += "  (speedup is over the reference kernel; " + fmt_rate(speedup_over("torch")) +
           "x over PyTorch)\n";
    else if (base && !base->kernel_missing.absent())
      s += "  (no reference kernel timing: " + base->kernel_missing.value_or("") +
           "; speedup is over PyTorch)\n";
    if (const trace::Throughput* tp = rec.throughput.get()) {
      std::vector<std::pair<std::string, std::string>> rates;  // key, text
      if (!tp->units_per_s.absent())
        rates.emplace_back("units_per_s", fmt_rate(tp->units_per_s.value_or(0.0)) + " " +
                                              tp->unit.value_or("units") + "/s");
      if (!tp->gb_s.absent())
        rates.emplace_back("gb_s", fmt_rate(tp->gb_s.value_or(0.0)) + " GB/s");
      if (!tp->tflop_s.absent())
        rates.emplace_back("tflop_s", fmt_rate(tp->tflop_s.value_or(0.0)) + " TFLOP/s");
      std::stable_partition(rates.begin(), rates.end(),
                            [&](const auto& r) { return r.first == tp->natural.value_or(""); });
      std::string line;
      for (const auto& r : rates) line += (line.empty() ? "" : ", ") + r.second;
      if (!line.empty()) s += "  rate     " + line + "\n";
    }
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

std::string human_summary(const json& rec, bool color) {
  return human_summary(TraceRecord::from_json(rec), color);
}

}  // namespace kernrl
