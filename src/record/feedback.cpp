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

std::string guidance(const std::string& status) {
  if (status == "format_error")
    return "Answer with one CUDA code block holding __global__ kernels and a /* kernrl ... */ launch block (see the contract).";
  if (status == "compile_error") return "Fix the compile errors above; the file must be device code only (no host code, no main).";
  if (status == "launch_error")
    return "Check the launch block: kernel names, argument count and types, grid/block limits (1024 threads), shared memory.";
  if (status == "runtime_error") return "The kernel crashed: check every index against the tensor sizes and add bounds checks.";
  if (status == "timeout") return "The kernel did not finish: look for loops that never end or blocks waiting on each other.";
  if (status == "incorrect")
    return "The results are wrong: check indexing, reductions and edge handling at odd sizes; every output element must be written.";
  if (status == "correct") return "Correct. To go faster, cut memory traffic (fuse passes, coalesce, vectorise) and keep the GPU full.";
  return "";
}

}  // namespace

std::string make_feedback(const json& rec) {
  std::string status = rec.value("status", "unknown");
  std::string s = "Status: " + status + "\n";
  // The grader's own input was wrong (a problem the caller named that kernrl does not have, a file
  // it could not read): nothing in the answer was judged, and kernrl's message is not for the model.
  if (rec.contains("problem_unknown") && rec["problem_unknown"].is_object()) {
    const json& u = rec["problem_unknown"];
    std::string from = u.value("from", json(nullptr)).is_string() ? u["from"].get<std::string>() : "";
    if (u.value("reason", "") == "unreadable" || from == "option" || from == "path")
      return s + "Your answer was not graded: the grading request was wrong (an unknown problem, or "
                 "an answer that could not be read), not the answer.\n";
  }
  if (status == "internal_error")
    return s + "Your answer was not graded: the grader failed on it. Nothing in the answer was "
               "judged.\n";
  if (rec.contains("error") && rec["error"].is_object()) {
    const auto& e = rec["error"];
    std::string msg = e.value("message", "");
    if (e.contains("line") && e["line"].is_number()) msg = "line " + std::to_string(e["line"].get<int>()) + ": " + msg;
    if (!msg.empty()) s += msg + "\n";
    std::string log = e.value("log", "");
    if (!log.empty()) {
      std::string key = status == "compile_error" ? key_log_lines(log, 12) : log.substr(0, 600);
      if (!key.empty()) s += key;
    }
  }
  if (rec.contains("correctness") && rec["correctness"].is_object()) {
    for (const auto& t : rec["correctness"].value("trials", json::array())) {
      if (t.value("passed", true)) continue;
      for (const auto& o : t.value("outputs", json::array())) {
        if (o.value("passed", true)) continue;
        s += "Output '" + o.value("name", "") + "' at sizes " + t.value("sizes", json::object()).dump() + ": max abs error " +
             o.value("max_abs_err", json(0)).dump() + ", " + std::to_string(o.value("mismatches", 0)) + " of " +
             std::to_string(o.value("compared", 0)) + " elements wrong";
        if (o.contains("first_mismatch") && o["first_mismatch"].is_object())
          s += "; first at " + o["first_mismatch"]["index"].dump() + ": got " + o["first_mismatch"]["got"].dump() +
               ", want " + o["first_mismatch"]["want"].dump();
        s += "\n";
        break;
      }
      break;
    }
  }
  if (rec.contains("timing") && rec["timing"].is_object() && rec["timing"].contains("kernel")) {
    const auto& t = rec["timing"];
    s += "Time: kernel " + fmt(t["kernel"].value("median_ms", 0.0)) + " ms, PyTorch " +
         fmt(t["baseline"].value("median_ms", 0.0)) + " ms";
    bool vs_kernel = rec.contains("baseline") && rec["baseline"].is_object() &&
                     rec["baseline"].value("kind", "") == "kernel";
    if (vs_kernel && t.contains("kernel_baseline") && t["kernel_baseline"].is_object())
      s += ", reference kernel " + fmt(t["kernel_baseline"].value("median_ms", 0.0)) + " ms";
    s += ", speedup " + fmt(rec.value("speedup", 0.0)) + "x";
    if (vs_kernel) s += " over the reference kernel";
    if (rec.contains("sol_fraction") && rec["sol_fraction"].is_number())
      s += ", " + fmt(100 * rec["sol_fraction"].get<double>()) + "% of the hardware limit";
    s += "\n";
  }
  s += guidance(status);
  if (s.size() > kMaxFeedbackChars) s = s.substr(0, kMaxFeedbackChars - 4) + "...";
  return s;
}

}  // namespace kernrl
