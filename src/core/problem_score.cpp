#include "core/problem_score.h"

#include "core/expr.h"

namespace kernrl {

namespace {

[[noreturn]] void fail(const std::string& file, const YAML::Node& at, const std::string& why) {
  std::string where = file;
  if (at.IsDefined() && at.Mark().line >= 0) where += ":" + std::to_string(at.Mark().line + 1);
  throw SpecError(where + ": " + why);
}

std::string text(const std::string& file, const YAML::Node& n, const char* what) {
  if (!n.IsScalar()) fail(file, n, std::string("'") + what + "' must be a string");
  return n.Scalar();
}

std::string one_of(const std::string& file, const YAML::Node& n, const char* what,
                   std::initializer_list<const char*> allowed) {
  std::string v = text(file, n, what), list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += (list.empty() ? "" : " or ") + std::string(a);
  }
  fail(file, n, std::string("'") + what + "' must be " + list + " (got '" + v + "')");
}

}  // namespace

void read_score_fields(const YAML::Node& root, ProblemSpec& p, const std::set<std::string>& sizes,
                       const std::string& file) {
  if (YAML::Node s = root["score"]; s.IsDefined() && !s.IsNull()) {
    if (!s.IsMap()) fail(file, s, "score must be a mapping {baseline, pooled, lead, note}");
    for (const auto& kv : s) {
      std::string k = kv.first.Scalar();
      if (k == "baseline") {
        p.score.baseline = one_of(file, kv.second, "score.baseline", {"torch", "kernel"});
      } else if (k == "pooled") {
        try {
          p.score.pooled = kv.second.as<bool>();
        } catch (const YAML::Exception&) {
          fail(file, kv.second, "'score.pooled' must be true or false");
        }
      } else if (k == "lead") {
        p.score.lead = one_of(file, kv.second, "score.lead", {"speedup", "sol"});
      } else if (k == "note") {
        p.score.note = text(file, kv.second, "score.note");
        if (p.score.note.size() > 300)
          fail(file, kv.second, "'score.note' is one line (300 characters at most)");
      } else {
        fail(file, kv.first, "unknown key 'score." + k + "' (baseline, pooled, lead, note)");
      }
    }
  }
  if (YAML::Node t = root["throughput"]; t.IsDefined() && !t.IsNull()) {
    if (!t.IsMap()) fail(file, t, "throughput must be a mapping {unit, count}");
    for (const auto& kv : t) {
      std::string k = kv.first.Scalar();
      if (k != "unit" && k != "count")
        fail(file, kv.first, "unknown key 'throughput." + k + "' (unit, count)");
    }
    if (!t["unit"].IsDefined() || !t["count"].IsDefined())
      fail(file, t, "throughput needs both 'unit' and 'count'");
    p.throughput.unit = text(file, t["unit"], "throughput.unit");
    if (p.throughput.unit.empty() || p.throughput.unit.size() > 32 ||
        p.throughput.unit.find_first_of("/\n\r\t") != std::string::npos)
      fail(file, t["unit"], "'throughput.unit' is a short plural name such as hashes (no '/')");
    p.throughput.count = text(file, t["count"], "throughput.count");
    try {
      for (const auto& v : expr_names(p.throughput.count))
        if (!sizes.count(v))
          fail(file, t["count"], "unknown size '" + v + "' in \"" + p.throughput.count + "\"");
    } catch (const ExprError& e) {
      fail(file, t["count"], e.what());
    }
  }
}

}  // namespace kernrl
