#include "record/record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

#include "record/feedback.h"

namespace kernrl {
using nlohmann::json;

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
// (`timing.kernel_baseline`) when it was timed, torch.compile (`timing.compile_baseline`) when a
// baseline file has it. The kernel baseline counts only where the problem
// asks for it (`timing.speedup_baseline`, from problem.yaml `score.baseline`).
trace::Baseline baseline_of(const trace::Timing& timing, double kernel_ms) {
  double b = timing.baseline ? timing.baseline->median_ms.value_or(0.0) : 0.0;
  std::map<std::string, double> speedups = {{"torch", kernel_ms > 0 ? b / kernel_ms : 0.0}};
  std::string kind = "torch";
  bool wants_kernel = timing.speedup_baseline.value_or("torch") == "kernel";
  if (timing.kernel_baseline && kernel_ms > 0) {
    double kb_ms = timing.kernel_baseline->median_ms.value_or(0.0);
    if (kb_ms > 0) {
      speedups["kernel"] = kb_ms / kernel_ms;
      if (wants_kernel) kind = "kernel";
    }
  }
  if (timing.compile_baseline && kernel_ms > 0) {
    double c_ms = timing.compile_baseline->median_ms.value_or(0.0);
    if (c_ms > 0) speedups["compile"] = c_ms / kernel_ms;
  }
  trace::Baseline out;
  out.kind = kind;
  out.speedups = speedups;
  if (wants_kernel && kind != "kernel")
    out.kernel_missing =
        timing.kernel_baseline_error.value_or("the reference kernel was not timed");
  return out;
}

// Achieved throughput of a kernel that ran in `kernel_ms`: the problem's minimum bytes and flops
// per second, its own unit per second where problem.yaml names one, and which of these is the
// problem's natural measure. Nothing (no key set) without a time or the problem's work.
trace::Throughput throughput_of(const trace::Work* work, double kernel_ms, const json& ceilings) {
  trace::Throughput t;
  if (!(kernel_ms > 0) || !work) return t;
  double s = kernel_ms / 1e3;
  double bytes = static_cast<double>(work->bytes.value_or(0));
  double flops = static_cast<double>(work->flops.value_or(0));
  if (bytes > 0) t.gb_s = bytes / s / 1e9;
  if (flops > 0) t.tflop_s = flops / s / 1e12;
  const trace::WorkUnits* units = work->units.get();
  if (units && units->unit && units->count) {
    t.unit = *units->unit;
    t.units_per_s = static_cast<double>(*units->count) / s;
    t.natural = "units_per_s";
  } else if (bytes > 0 || flops > 0) {
    // The term that bounds the speed of light; without known ceilings, bytes unless there is
    // nothing but arithmetic.
    std::string dc = work->dtype_class.value_or("fp32");
    double t_mem = sol_ms(0, bytes, ceilings, dc), t_math = sol_ms(flops, 0, ceilings, dc);
    bool math = t_mem > 0 || t_math > 0 ? t_math > t_mem : bytes <= 0;
    t.natural = math ? "tflop_s" : "gb_s";
  }
  return t;
}

}  // namespace

void finalize_record(TraceRecord& rec, const RewardPreset& preset, const json& ceilings) {
  const trace::Timing* t = rec.timing.get();
  if (t && t->kernel && t->baseline) {
    double k = t->kernel->median_ms.value_or(0.0);
    double b = t->baseline->median_ms.value_or(0.0);
    trace::Baseline base = baseline_of(*t, k);
    rec.speedup = base.speedups->at(*base.kind);
    rec.baseline = std::move(base);
    trace::Throughput tp = throughput_of(rec.work.get(), k, ceilings);
    if (!Codec<trace::Throughput>::encode(tp).empty()) rec.throughput = std::move(tp);
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
    rec.baseline.reset();
    rec.throughput.reset();
  }
  // The grader's own failure says nothing about the kernel: no reward either way.
  std::optional<double> reward =
      rec.status_is(Status::InternalError) ? std::nullopt : compute_reward(preset, rec);
  rec.reward = reward ? Field<double>(*reward) : Field<double>(nullptr);
  rec.reward_preset_version = preset.version;
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

}  // namespace kernrl
