#include "report/training_export.h"

#include "core/hash.h"
#include "core/safe_text.h"
#include "report/report.h"
#include "report/trajectories.h"

namespace kernrl {
using nlohmann::json;

std::vector<json> export_rows(const std::vector<TraceRecord>& records,
                              const PromptSource& prompt_of, const FileSource& read,
                              ExportSummary* summary, double gamma) {
  ExportSummary local;
  ExportSummary& s = summary ? *summary : local;
  std::vector<TraceRecord> recs = drop_duplicates(records, &s.duplicates);
  std::map<const TraceRecord*, double> returns;  // each turn's discounted return
  for (const report::Trajectory& t : report::trajectories_of(recs, {})) {
    std::vector<double> rewards;
    for (const TraceRecord* r : t.turns) rewards.push_back(report::turn_reward(*r));
    std::vector<double> g = report::discounted_returns(rewards, gamma);
    for (size_t i = 0; i < t.turns.size(); ++i) returns[t.turns[i]] = g[i];
  }
  std::map<std::string, std::optional<std::string>> prompts;
  std::vector<json> rows;
  for (const TraceRecord& r : recs) {
    if (!r.problem) {
      ++s.unattributed;
      continue;
    }
    const std::string& id = *r.problem;
    auto p = prompts.find(id);
    if (p == prompts.end()) p = prompts.emplace(id, prompt_of(id)).first;

    json answer = nullptr, missing = nullptr;
    if (!r.file) {
      missing = "the record names no file";
    } else if (!r.source_sha256) {
      missing = "the record has no source_sha256 (the file could not be read when graded)";
    } else {
      std::string error;
      std::optional<std::string> bytes = read(*r.file, &error);
      if (!bytes)
        missing = error;
      else if (sha256_hex(*bytes) != *r.source_sha256)
        missing = "the file changed since it was graded (its SHA-256 differs from the record's)";
      else
        answer = escape_invalid_utf8(*bytes);
    }
    if (missing.is_string()) {
      // Counted by kind: the text before the first ": " (a path may follow).
      std::string why = missing.get<std::string>();
      ++s.missing[why.substr(0, why.find(": "))];
    } else
      ++s.with_answer;
    // The record's fields as it has them (null when missing).
    rows.push_back({{"schema", kExportSchema},
                    {"run", r.run.to_json()},
                    {"sample", r.sample.to_json()},
                    {"problem", id},
                    {"level", r.level.to_json()},
                    {"file", r.file.to_json()},
                    {"source_sha256", r.source_sha256.to_json()},
                    {"prompt", p->second ? json(*p->second) : json(nullptr)},
                    {"answer", answer},
                    {"answer_missing", missing},
                    {"status", r.status.to_json()},
                    {"speedup", r.speedup.to_json()},
                    {"reward", r.reward.to_json()},
                    {"reward_preset", r.reward_preset.to_json()},
                    {"feedback", r.feedback.to_json()},
                    {"trajectory", r.trajectory.to_json()},
                    {"turn", r.turn.to_json()},
                    {"return", returns.count(&r) ? json(returns[&r]) : json(nullptr)}});
    ++s.rows;
  }
  return rows;
}

std::vector<json> export_rows(const std::vector<json>& records, const PromptSource& prompt_of,
                              const FileSource& read, ExportSummary* summary, double gamma) {
  return export_rows(records_from_json(records), prompt_of, read, summary, gamma);
}

}  // namespace kernrl
