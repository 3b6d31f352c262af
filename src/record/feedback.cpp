#include "record/feedback.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

namespace kernrl {
using nlohmann::json;

std::string key_log_lines(const std::string& log, int max_lines) {
  std::istringstream in(log);
  std::string line, out;
  int kept = 0;
  bool in_error = false;
  while (std::getline(in, line) && kept < max_lines) {
    if (line.find("error") != std::string::npos)
      in_error = true;
    else if (line.find("warning") != std::string::npos ||
             line.find("detected during") != std::string::npos ||
             line.find("compilation terminated") != std::string::npos ||
             line.find("errors detected") != std::string::npos)
      in_error = false;
    if (!in_error || line.empty()) continue;
    out += line + "\n";
    ++kept;
  }
  return out;
}

namespace {

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// What to do next, for a status (none for compiled, internal errors and statuses kernrl does not
// know).
std::string guidance(const Field<Status>& status, const Field<std::string>& language) {
  if (!status) return "";
  switch (*status) {
    case Status::FormatError:
      if (language && *language == "triton")
        return "Answer with one Python code block holding @triton.jit kernels and a \"\"\"kernrl "
               "... \"\"\" launch block (see the contract).";
      return "Answer with one CUDA code block holding __global__ kernels and a /* kernrl ... */ "
             "launch block (see the contract).";
    case Status::CompileError:
      return "Fix the compile errors above; the file must be device code only (no host code, no "
             "main).";
    case Status::LaunchError:
      return "Check the launch block: kernel names, argument count and types, grid/block limits "
             "(1024 threads), shared memory.";
    case Status::RuntimeError:
      return "The kernel crashed: check every index against the tensor sizes and add bounds "
             "checks.";
    case Status::Timeout:
      return "The kernel did not finish: look for loops that never end or blocks waiting on each "
             "other.";
    case Status::Incorrect:
      return "The results are wrong: check indexing, reductions and edge handling at odd sizes; "
             "every output element must be written.";
    case Status::Correct:
      return "Correct. To go faster, cut memory traffic (fuse passes, coalesce, vectorise) and "
             "keep "
             "the GPU full.";
    case Status::Compiled:
    case Status::InternalError:
      break;
  }
  return "";
}

std::string percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100 * fraction);
  return b;
}

// The product of a launch's dimensions (a grid's blocks, a block's threads); 0 when absent.
int64_t product_of(const Field<std::vector<int64_t>>& dims) {
  if (!dims || dims->empty()) return 0;
  int64_t n = 1;
  for (int64_t d : *dims) n *= d;
  return n;
}

// "registers (128 per thread)", "shared memory (49152 bytes per block)", ...
std::string resource_words(const std::string& name, const trace::Launch& l) {
  if (name == "registers")
    return "registers (" + std::to_string(l.registers.value_or(0)) + " per thread)";
  if (name == "shared_memory")
    return "shared memory (" +
           std::to_string(l.static_shared_bytes.value_or(0) + l.dynamic_shared_bytes.value_or(0)) +
           " bytes per block)";
  if (name == "warps") return "block size (" + std::to_string(product_of(l.block)) + " threads)";
  if (name == "blocks")
    return "blocks per SM (blocks of " + std::to_string(product_of(l.block)) + " threads)";
  return "";
}

// The resources the occupancy is limited by, in words ("" when none is named).
std::string limited_by_words(const trace::Occupancy& occupancy, const trace::Launch& l) {
  std::string s;
  if (!occupancy.limited_by) return s;
  for (const std::string& n : *occupancy.limited_by) {
    std::string w = resource_words(n, l);
    if (!w.empty()) s += (s.empty() ? "" : " and ") + w;
  }
  return s;
}

// Advice from the record's `launches` (a line, empty when the facts give nothing to say). For a
// correct kernel: where the time goes and what the heaviest launch's facts show (local memory,
// occupancy under 50% and its limit, a grid with fewer blocks than the GPU has SMs). For any other
// status only a launch whose block cannot fit on an SM at all.
std::string launch_advice(const TraceRecord& rec) {
  if (!rec.launches || rec.launches->empty()) return "";
  const std::vector<trace::Launch>& launches = *rec.launches;
  auto name_of = [](const trace::Launch& l) {
    std::string s = "launch " + std::to_string(l.index.value_or(0)) + " (" + l.kernel.value_or("?");
    if (l.repeats.value_or(0) > 1) s += ", " + std::to_string(*l.repeats) + " times";
    return s + ")";
  };
  for (const trace::Launch& l : launches) {
    if (l.repeats.value_or(0) <= 0) continue;
    const trace::Occupancy* o = l.occupancy.get();
    if (o && o->active_blocks_per_sm && *o->active_blocks_per_sm == 0) {
      std::string why = limited_by_words(*o, l);
      return name_of(l) + " cannot run: one block does not fit on an SM" +
             (why.empty() ? "" : " (" + why + ")") + "\n";
    }
  }
  if (!rec.status_is(Status::Correct)) return "";
  // The heaviest launch by its share of the plan's time (the first one, without times).
  const trace::Launch* focus = nullptr;
  for (const trace::Launch& l : launches) {
    if (l.repeats.value_or(0) <= 0) continue;
    if (!focus || l.share.value_or(-1) > focus->share.value_or(-1)) focus = &l;
  }
  if (!focus) return "";
  const trace::Launch& l = *focus;
  std::vector<std::string> facts;
  if (launches.size() > 1 && l.share)
    facts.push_back("takes " + percent(*l.share) + " of the time");
  if (l.local_bytes.value_or(0) > 0)
    facts.push_back("uses " + std::to_string(*l.local_bytes) +
                    " bytes of local memory per thread (register spills or local arrays)");
  if (const trace::Occupancy* o = l.occupancy.get(); o && o->fraction.value_or(1) < 0.5) {
    std::string why = limited_by_words(*o, l);
    facts.push_back("has occupancy " + percent(*o->fraction) +
                    (why.empty() ? "" : " limited by " + why));
  }
  int64_t blocks = product_of(l.grid);
  // The device is the worker's description, kept as JSON.
  int64_t sms = 0;
  if (rec.device && rec.device->is_object()) {
    auto it = rec.device->find("sms");
    if (it != rec.device->end() && it->is_number()) sms = it->get<int64_t>();
  }
  if (sms > 0 && blocks > 0 && blocks < sms)
    facts.push_back("launches " + std::to_string(blocks) + " blocks for " + std::to_string(sms) +
                    " SMs (" + std::to_string(sms - blocks) + " SMs idle)");
  if (facts.empty()) return "";
  std::string s = launches.size() > 1 ? std::to_string(launches.size()) + " launches; " : "";
  s += name_of(l);
  for (size_t i = 0; i < facts.size(); ++i) s += (i ? ", " : " ") + facts[i];  // each a verb
  return s + "\n";
}

}  // namespace

std::string make_feedback(const TraceRecord& rec) {
  std::string status = rec.status_text();
  if (status.empty()) status = "unknown";
  std::string s = "Status: " + status + "\n";
  // The grader's own input was wrong (a problem the caller named that kernrl does not have, a file
  // it could not read): nothing in the answer was judged, and kernrl's message is not for the
  // model.
  if (const trace::ProblemUnknown* u = rec.problem_unknown.get()) {
    std::string from = u->from.value_or("");
    if (u->reason.value_or("") == "unreadable" || from == "option" || from == "path")
      return s +
             "Your answer was not graded: the grading request was wrong (an unknown problem, or "
             "an answer that could not be read), not the answer.\n";
  }
  if (rec.status_is(Status::InternalError))
    return s +
           "Your answer was not graded: the grader failed on it. Nothing in the answer was "
           "judged.\n";
  if (const trace::Error* e = rec.error.get()) {
    std::string msg = e->message.value_or("");
    if (e->line) msg = "line " + std::to_string(*e->line) + ": " + msg;
    if (!msg.empty()) s += msg + "\n";
    std::string log = e->log.value_or("");
    if (!log.empty()) {
      std::string key =
          rec.status_is(Status::CompileError) ? key_log_lines(log, 12) : log.substr(0, 600);
      if (!key.empty()) s += key;
    }
  }
  // The first failing output of the first failing trial (the worker's report, read as JSON).
  if (rec.correctness && rec.correctness->is_object()) {
    const json& c = *rec.correctness;
    const json trials =
        c.contains("trials") && c["trials"].is_array() ? c["trials"] : json::array();
    for (const auto& t : trials) {
      if (!t.is_object() || t.value("passed", true)) continue;
      const json outputs =
          t.contains("outputs") && t["outputs"].is_array() ? t["outputs"] : json::array();
      for (const auto& o : outputs) {
        if (!o.is_object() || o.value("passed", true)) continue;
        s += "Output '" + o.value("name", "") + "' at sizes " +
             t.value("sizes", json::object()).dump() + ": max abs error " +
             o.value("max_abs_err", json(0)).dump() + ", " +
             std::to_string(o.value("mismatches", 0)) + " of " +
             std::to_string(o.value("compared", 0)) + " elements wrong";
        if (o.contains("first_mismatch") && o["first_mismatch"].is_object())
          s += "; first at " + o["first_mismatch"].value("index", json()).dump() + ": got " +
               o["first_mismatch"].value("got", json()).dump() + ", want " +
               o["first_mismatch"].value("want", json()).dump();
        s += "\n";
        break;
      }
      break;
    }
  }
  const trace::Timing* t = rec.timing.get();
  if (t && t->kernel) {
    const trace::Stats* b = t->baseline.get();
    s += "Time: kernel " + fmt(t->kernel->median_ms.value_or(0.0)) + " ms, PyTorch " +
         fmt(b ? b->median_ms.value_or(0.0) : 0.0) + " ms";
    bool vs_kernel = rec.baseline && rec.baseline->kind.value_or("") == "kernel";
    if (vs_kernel && t->kernel_baseline)
      s += ", reference kernel " + fmt(t->kernel_baseline->median_ms.value_or(0.0)) + " ms";
    s += ", speedup " + fmt(rec.speedup.value_or(0.0)) + "x";
    if (vs_kernel) s += " over the reference kernel";
    if (rec.sol_fraction) s += ", " + fmt(100 * *rec.sol_fraction) + "% of the hardware limit";
    s += "\n";
  }
  s += launch_advice(rec);
  s += guidance(rec.status, rec.language);
  if (s.size() > kMaxFeedbackChars) s = s.substr(0, kMaxFeedbackChars - 4) + "...";
  return s;
}

std::string make_feedback(const json& rec) {
  return make_feedback(TraceRecord::from_json(rec));
}

}  // namespace kernrl
