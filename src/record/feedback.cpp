#include "record/feedback.h"

#include <cstdio>
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
    if (line.find("error") != std::string::npos) in_error = true;
    else if (line.find("warning") != std::string::npos || line.find("detected during") != std::string::npos ||
             line.find("compilation terminated") != std::string::npos || line.find("errors detected") != std::string::npos)
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
std::string guidance(const Field<Status>& status) {
  if (!status) return "";
  switch (*status) {
    case Status::FormatError:
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
      return "Correct. To go faster, cut memory traffic (fuse passes, coalesce, vectorise) and keep "
             "the GPU full.";
    case Status::Compiled:
    case Status::InternalError:
      break;
  }
  return "";
}

}  // namespace

std::string make_feedback(const TraceRecord& rec) {
  std::string status = rec.status_text();
  if (status.empty()) status = "unknown";
  std::string s = "Status: " + status + "\n";
  // The grader's own input was wrong (a problem the caller named that kernrl does not have, a file
  // it could not read): nothing in the answer was judged, and kernrl's message is not for the model.
  if (const trace::ProblemUnknown* u = rec.problem_unknown.get()) {
    std::string from = u->from.value_or("");
    if (u->reason.value_or("") == "unreadable" || from == "option" || from == "path")
      return s + "Your answer was not graded: the grading request was wrong (an unknown problem, or "
                 "an answer that could not be read), not the answer.\n";
  }
  if (rec.status_is(Status::InternalError))
    return s + "Your answer was not graded: the grader failed on it. Nothing in the answer was "
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
        s += "Output '" + o.value("name", "") + "' at sizes " + t.value("sizes", json::object()).dump() + ": max abs error " +
             o.value("max_abs_err", json(0)).dump() + ", " + std::to_string(o.value("mismatches", 0)) + " of " +
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
         fmt(b ? b->median_ms.value_or(0.0) : 0.0) + " ms, speedup " +
         fmt(rec.speedup.value_or(0.0)) + "x";
    if (rec.sol_fraction) s += ", " + fmt(100 * *rec.sol_fraction) + "% of the hardware limit";
    s += "\n";
  }
  s += guidance(rec.status);
  if (s.size() > kMaxFeedbackChars) s = s.substr(0, kMaxFeedbackChars - 4) + "...";
  return s;
}

std::string make_feedback(const json& rec) {
  return make_feedback(TraceRecord::from_json(rec));
}

}  // namespace kernrl
