// --format csv: one table with a header row (docs/report.md, "csv").
#include "report/render.h"
#include "report/tables.h"
#include "report/views.h"

namespace kernrl::report {
using nlohmann::json;

namespace {

std::string csv_line(const std::vector<json>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
  return out + "\n";
}

const char* const kSideFields[] = {"samples", "correct", "correct_rate", "geomean_speedup"};
const char* const kDeltaFields[] = {"correct_rate_delta", "speedup_delta", "speedup_ratio"};
const char* const kTailFields[] = {"geomean_speedup", "timed_correct",       "mean_reward",
                                   "rewarded",        "median_sol_fraction", "sol_samples",
                                   "suspicious"};

// Appended after the status columns, so that earlier columns keep their places.
const char* const kScoreFields[] = {"mean_sol_fraction",     "lead",
                                    "geomean_speedup_torch", "geomean_speedup_kernel",
                                    "unpooled_samples",      "median_throughput",
                                    "throughput_unit"};

// With --baseline the table is the per-problem comparison.
std::string comparison_csv(const json& cmp) {
  std::vector<json> head = {"problem", "level", "status"};
  for (const char* side : {"baseline", "current"})
    for (const char* f : kSideFields) head.push_back(std::string(side) + "_" + f);
  for (const char* f : kDeltaFields) head.push_back(f);
  std::string out = csv_line(head);
  for (const auto& p : cmp["problems"]) {
    std::vector<json> row = {p["problem"], p["level"], p["status"]};
    for (const char* side : {"baseline", "current"})
      for (const char* f : kSideFields)
        row.push_back(p[side].is_object() ? p[side][f] : json(nullptr));
    for (const char* f : kDeltaFields) row.push_back(p[f]);
    out += csv_line(row);
  }
  return out;
}

}  // namespace

std::string render_csv(const ReportData& data) {
  const json& a = data.report;
  if (a["comparison"].is_object()) return comparison_csv(a["comparison"]);
  if (std::string view = views_csv(a); !view.empty()) return view;
  std::vector<std::string> statuses = status_names(a["groups"]);
  std::vector<json> head = {"run",      "level",       "problem",      "samples",
                            "problems", "format_rate", "compile_rate", "correct_rate"};
  for (const auto& k : k_keys(a)) {
    head.push_back("pass@" + k);
    head.push_back("pass@" + k + "_problems");
  }
  for (const auto& p : p_keys(a)) head.push_back("fast_" + p);
  for (const char* f : kTailFields) head.push_back(f);
  for (const auto& s : statuses) head.push_back("status_" + s);
  for (const char* f : kScoreFields) head.push_back(f);
  std::string out = csv_line(head);
  for (const auto& g : a["groups"]) {
    std::vector<json> row = {g["run"],      g["level"],       g["problem"],      g["samples"],
                             g["problems"], g["format_rate"], g["compile_rate"], g["correct_rate"]};
    for (const auto& k : k_keys(a)) {
      row.push_back(g["pass_at_k"][k]["value"]);
      row.push_back(g["pass_at_k"][k]["problems"]);
    }
    for (const auto& p : p_keys(a)) row.push_back(g["fast_p"][p]);
    for (const char* f : kTailFields) row.push_back(g[f]);
    for (const auto& s : statuses) row.push_back(g["status_counts"].value(s, 0));
    const json& over = g.value("geomean_speedup_over", json::object());
    const json& un = g.value("unpooled", json());
    row.push_back(g.value("mean_sol_fraction", json(nullptr)));
    row.push_back(g.value("lead", json(nullptr)));
    row.push_back(over.value("torch", json(nullptr)));
    row.push_back(over.value("kernel", json(nullptr)));
    row.push_back(un.is_object() ? un["samples"] : json(0));
    const json& tp = g.value("median_throughput", json());
    row.push_back(tp.is_object() ? tp["value"] : json(nullptr));
    row.push_back(tp.is_object() ? tp["unit"] : json(nullptr));
    out += csv_line(row);
  }
  return out;
}

}  // namespace kernrl::report
