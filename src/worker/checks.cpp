#include "worker/checks.h"

#include <optional>

#include "worker/compare.h"
#include "worker/compare_gpu.h"

namespace kernrl {
using nlohmann::json;

namespace {

// One output's comparison queued on the GPU tally: the float pass rule (the kernel and rule of
// compare_output) or bit equality. `got` and `want` are as compared (complex outputs as real
// views).
struct QueuedOutput {
  const TensorSpec* spec;
  Tolerance tol;
  bool is_float;
  torch::Tensor got, want;
  int slot;

  // After the tally's read(): does the output pass?
  bool passes(const GpuTally& tally) const {
    return is_float ? float_passes(tally.float_stats(slot, false), tol, got.numel())
                    : !tally.differs(slot);
  }
  // After read(), for a comparison queued with `full`: the record's comparison.
  OutputCheck check(const GpuTally& tally, const torch::Tensor& got_as_given,
                    const torch::Tensor& want_as_given) const {
    if (is_float)
      return float_output_check(*spec, got, want, tol, tally.float_stats(slot, true), true);
    if (tally.differs(slot)) return compare_output(*spec, got_as_given, want_as_given, tol);
    OutputCheck oc;  // bit for bit equal: what compare_output says of it
    oc.name = spec->name;
    oc.compared = got.numel();
    oc.passed = true;
    return oc;
  }
};

// Queues output `t`'s comparison; nothing when it cannot be decided this way (an output sized by a
// count output, shapes that differ, tensors the kernels do not handle).
std::optional<QueuedOutput> queue_output(GpuTally& tally, const ProblemSpec& p, const TensorSpec& t,
                                         const torch::Tensor& got, const torch::Tensor& want,
                                         const Config& cfg, bool full) {
  if (!t.count.empty() || got.sizes() != want.sizes()) return std::nullopt;
  auto ov = cfg.tolerance_overrides.find(p.id);
  QueuedOutput q{&t,
                 ov == cfg.tolerance_overrides.end() ? t.tolerance : ov->second,
                 t.compare == "allclose" && t.dtype.is_float,
                 got,
                 want,
                 -1};
  if (got.is_complex()) {
    q.got = torch::view_as_real(got);
    q.want = torch::view_as_real(want);
  }
  q.slot = q.is_float ? tally.add_float(q.got, q.want, q.tol, full) : tally.add_bits(q.got, q.want);
  if (q.slot < 0) return std::nullopt;
  return q;
}

}  // namespace

// Compares `outputs` with the reference's; *passed says whether all matched.
json compare_with_reference(const ProblemSpec& p, const TensorMap& outputs, const TensorMap& want,
                            const Config& cfg, bool* passed, bool full) {
  auto ov = cfg.tolerance_overrides.find(p.id);
  auto checks = compare_outputs(p, outputs, want,
                                ov == cfg.tolerance_overrides.end() ? nullptr : &ov->second, full);
  json outs = json::array();
  *passed = true;
  for (const auto& c : checks) {
    outs.push_back(c.to_json());
    *passed &= c.passed;
  }
  return outs;
}

std::string first_failure(const json& outs) {
  for (const auto& o : outs)
    if (!o["passed"].get<bool>())
      return "output '" + o["name"].get<std::string>() + "': " + o["reason"].get<std::string>();
  return "";
}

// The inputs whose bits differ between `before` and `after`: one comparison kernel per input, one
// read-back for all.
std::vector<std::string> modified_inputs(const TensorMap& before, const TensorMap& after) {
  GpuTally& tally = GpuTally::get();
  tally.clear();
  std::vector<std::pair<std::string, int>> slots;
  for (const auto& [n, t] : before) slots.emplace_back(n, tally.add_bits(t, after.at(n)));
  tally.read();
  std::vector<std::string> changed;
  for (const auto& [n, slot] : slots) {
    const torch::Tensor& t = before.at(n);
    if (slot >= 0 ? tally.differs(slot) : !torch::equal(t.to(after.at(n).device()), after.at(n)))
      changed.push_back(n);
  }
  return changed;
}

// Whether every output passes, decided from one read-back. False when an output fails or cannot be
// decided this way: the caller then compares with compare_with_reference, whose verdict and words
// are the record's.
bool outputs_pass_quickly(const ProblemSpec& p, const TensorMap& got, const TensorMap& want,
                          const Config& cfg) {
  GpuTally& tally = GpuTally::get();
  tally.clear();
  std::vector<QueuedOutput> queued;
  for (const auto& t : p.outputs) {
    auto q = queue_output(tally, p, t, got.at(t.name), want.at(t.name), cfg, false);
    if (!q) return false;
    queued.push_back(*q);
  }
  tally.read();
  for (const QueuedOutput& q : queued)
    if (!q.passes(tally)) return false;
  return true;
}

TrialChecks check_trial(const ProblemSpec& p, const TensorMap& first, const TensorMap& rerun,
                        const TensorMap& want, const TensorMap& pristine, const TensorMap& inputs,
                        const Config& cfg) {
  TrialChecks c;
  auto rerun_failure = [&] {
    c.rerun_why =
        first_failure(compare_with_reference(p, rerun, want, cfg, &c.rerun_passed, false));
  };
  GpuTally& tally = GpuTally::get();
  tally.clear();
  std::vector<std::pair<QueuedOutput, QueuedOutput>> queued;  // first run (full), second run
  bool quick = true;
  for (const auto& t : p.outputs) {
    auto a = queue_output(tally, p, t, first.at(t.name), want.at(t.name), cfg, true);
    auto b =
        a ? queue_output(tally, p, t, rerun.at(t.name), want.at(t.name), cfg, false) : std::nullopt;
    if (!a || !b) {
      quick = false;
      break;
    }
    queued.emplace_back(*a, *b);
  }
  std::vector<std::pair<std::string, int>> input_slots;
  for (auto it = pristine.begin(); quick && it != pristine.end(); ++it) {
    input_slots.emplace_back(it->first, tally.add_bits(it->second, inputs.at(it->first)));
    quick = input_slots.back().second >= 0;
  }
  if (!quick) {
    c.outputs = compare_with_reference(p, first, want, cfg, &c.first_passed);
    c.changed = modified_inputs(pristine, inputs);
    if (c.first_passed && c.changed.empty()) {
      c.rerun_passed = outputs_pass_quickly(p, rerun, want, cfg);
      if (!c.rerun_passed) rerun_failure();
    }
    return c;
  }
  tally.read();
  c.outputs = json::array();
  c.first_passed = c.rerun_passed = true;
  for (const auto& [a, b] : queued) {
    OutputCheck oc = a.check(tally, first.at(a.spec->name), want.at(a.spec->name));
    c.outputs.push_back(oc.to_json());
    c.first_passed &= oc.passed;
    c.rerun_passed &= b.passes(tally);
  }
  for (const auto& [n, slot] : input_slots)
    if (tally.differs(slot)) c.changed.push_back(n);
  if (c.first_passed && c.changed.empty() && !c.rerun_passed) rerun_failure();
  return c;
}

}  // namespace kernrl
