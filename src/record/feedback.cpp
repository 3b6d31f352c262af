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

std::string percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100 * fraction);
  return b;
}

// Fields of a record read by type: an odd record never throws here.
int64_t int_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : 0;
}

std::optional<double> number_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// The product of an array of dimensions (a grid's blocks, a block's threads); 0 when absent.
int64_t product_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->empty()) return 0;
  int64_t n = 1;
  for (const auto& d : *it) n *= d.is_number() ? d.get<int64_t>() : 1;
  return n;
}

// "registers (128 per thread)", "shared memory (49152 bytes per block)", ...
std::string resource_words(const std::string& name, const json& l) {
  if (name == "registers")
    return "registers (" + std::to_string(int_of(l, "registers")) + " per thread)";
  if (name == "shared_memory")
    return "shared memory (" +
           std::to_string(int_of(l, "static_shared_bytes") + int_of(l, "dynamic_shared_bytes")) +
           " bytes per block)";
  if (name == "warps") return "block size (" + std::to_string(product_of(l, "block")) + " threads)";
  if (name == "blocks")
    return "blocks per SM (blocks of " + std::to_string(product_of(l, "block")) + " threads)";
  return "";
}

// The resources the occupancy is limited by, in words ("" when none is named).
std::string limited_by_words(const json& occupancy, const json& l) {
  std::string s;
  auto it = occupancy.find("limited_by");
  if (it == occupancy.end() || !it->is_array()) return s;
  for (const auto& n : *it) {
    std::string w = n.is_string() ? resource_words(n.get<std::string>(), l) : "";
    if (!w.empty()) s += (s.empty() ? "" : " and ") + w;
  }
  return s;
}

// Advice from the record's `launches` (a line, empty when the facts give nothing to say). For a
// correct kernel: where the time goes and what the heaviest launch's facts show (local memory,
// occupancy under 50% and its limit, a grid with fewer blocks than the GPU has SMs). For any other
// status only a launch whose block cannot fit on an SM at all.
std::string launch_advice(const json& rec, const std::string& status) {
  auto it = rec.find("launches");
  if (it == rec.end() || !it->is_array() || it->empty()) return "";
  const json& launches = *it;
  auto name_of = [](const json& l) {
    auto k = l.find("kernel");
    std::string s = "launch " + std::to_string(int_of(l, "index")) + " (" +
                    (k != l.end() && k->is_string() ? k->get<std::string>() : "?");
    if (int_of(l, "repeats") > 1) s += ", " + std::to_string(int_of(l, "repeats")) + " times";
    return s + ")";
  };
  auto occupancy_of = [](const json& l) -> const json* {
    auto o = l.find("occupancy");
    return o != l.end() && o->is_object() ? &*o : nullptr;
  };
  for (const auto& l : launches) {
    if (!l.is_object() || int_of(l, "repeats") <= 0) continue;
    const json* o = occupancy_of(l);
    if (o && number_of(*o, "active_blocks_per_sm") == 0.0) {
      std::string why = limited_by_words(*o, l);
      return name_of(l) + " cannot run: one block does not fit on an SM" +
             (why.empty() ? "" : " (" + why + ")") + "\n";
    }
  }
  if (status != "correct") return "";
  // The heaviest launch by its share of the plan's time (the first one, without times).
  const json* focus = nullptr;
  for (const auto& l : launches) {
    if (!l.is_object() || int_of(l, "repeats") <= 0) continue;
    if (!focus || number_of(l, "share").value_or(-1) > number_of(*focus, "share").value_or(-1))
      focus = &l;
  }
  if (!focus) return "";
  const json& l = *focus;
  std::vector<std::string> facts;
  if (launches.size() > 1 && number_of(l, "share"))
    facts.push_back("takes " + percent(*number_of(l, "share")) + " of the time");
  if (int_of(l, "local_bytes") > 0)
    facts.push_back("uses " + std::to_string(int_of(l, "local_bytes")) +
                    " bytes of local memory per thread (register spills or local arrays)");
  if (const json* o = occupancy_of(l); o && number_of(*o, "fraction").value_or(1) < 0.5) {
    std::string why = limited_by_words(*o, l);
    facts.push_back("has occupancy " + percent(*number_of(*o, "fraction")) +
                    (why.empty() ? "" : " limited by " + why));
  }
  int64_t blocks = product_of(l, "grid");
  int64_t sms =
      rec.contains("device") && rec["device"].is_object() ? int_of(rec["device"], "sms") : 0;
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
  s += launch_advice(rec, status);
  s += guidance(status);
  if (s.size() > kMaxFeedbackChars) s = s.substr(0, kMaxFeedbackChars - 4) + "...";
  return s;
}

}  // namespace kernrl
