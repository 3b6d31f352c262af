#include "import/training_export.h"

#include "core/hash.h"
#include "record/safe_text.h"
#include "report/report.h"

namespace kernrl {
using nlohmann::json;

namespace {

const json& field(const json& r, const char* key) {
  static const json null_value;
  auto it = r.find(key);
  return it != r.end() ? *it : null_value;
}

}  // namespace

std::vector<json> export_rows(const std::vector<json>& records, const PromptSource& prompt_of,
                              const FileSource& read, ExportSummary* summary) {
  ExportSummary local;
  ExportSummary& s = summary ? *summary : local;
  std::vector<json> recs = drop_duplicates(records, &s.duplicates);
  std::map<std::string, std::optional<std::string>> prompts;
  std::vector<json> rows;
  for (const json& r : recs) {
    const json& problem = field(r, "problem");
    if (!problem.is_string()) {
      ++s.unattributed;
      continue;
    }
    std::string id = problem.get<std::string>();
    auto p = prompts.find(id);
    if (p == prompts.end()) p = prompts.emplace(id, prompt_of(id)).first;

    json answer = nullptr, missing = nullptr;
    const json& file = field(r, "file");
    const json& sha = field(r, "source_sha256");
    if (!file.is_string()) {
      missing = "the record names no file";
    } else if (!sha.is_string()) {
      missing = "the record has no source_sha256 (the file could not be read when graded)";
    } else {
      std::string error;
      std::optional<std::string> bytes = read(file.get<std::string>(), &error);
      if (!bytes)
        missing = error;
      else if (sha256_hex(*bytes) != sha.get<std::string>())
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
    rows.push_back({{"schema", kExportSchema},
                    {"run", field(r, "run")},
                    {"sample", field(r, "sample")},
                    {"problem", id},
                    {"level", field(r, "level")},
                    {"file", file},
                    {"source_sha256", sha},
                    {"prompt", p->second ? json(*p->second) : json(nullptr)},
                    {"answer", answer},
                    {"answer_missing", missing},
                    {"status", field(r, "status")},
                    {"speedup", field(r, "speedup")},
                    {"reward", field(r, "reward")},
                    {"reward_preset", field(r, "reward_preset")},
                    {"feedback", field(r, "feedback")}});
    ++s.rows;
  }
  return rows;
}

}  // namespace kernrl
