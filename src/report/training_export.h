// Training-data export: trace records joined with the graded sources, one row per sample
// (problem, prompt, answer, status, speedup, reward, feedback), for SFT and RL datasets.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "record/trace_record.h"

namespace kernrl {

// Schema of an exported row; keys are only added within a schema.
constexpr const char* kExportSchema = "kernrl.export.v1";

struct ExportSummary {
  size_t rows = 0;
  size_t with_answer = 0;
  std::map<std::string, size_t> missing;  // why an answer is missing (its kind) -> rows
  size_t unattributed = 0;                // records without a problem: no prompt, no row
  size_t duplicates = 0;                  // regrades of a resumed run: the last one counts
};

// The prompt of a problem id (nullopt when the problem cannot be loaded).
using PromptSource = std::function<std::optional<std::string>(const std::string& problem_id)>;
// A file's bytes, or nullopt with the reason in *error.
using FileSource =
    std::function<std::optional<std::string>(const std::string& path, std::string* error)>;

// One row per sample: records with the same (run, file, source_sha256) count once (the last);
// records without a problem are left out (counted). The answer is the graded file's text when the
// file is still there with the SHA-256 the record holds; otherwise `answer` is null and
// `answer_missing` says why ("file not found: ...", "the file changed since it was graded", ...).
// Rows: {schema, run, sample, problem, level, file, source_sha256, prompt, answer, answer_missing,
// status, speedup, reward, reward_preset, feedback, trajectory, turn, return}. Text is valid UTF-8
// (invalid bytes as \xNN). `return`: for a turn of a trajectory, its discounted return
// R_t = s_t + gamma s_{t+1} + ... over the trajectory's later turns (docs/report.md); else null.
std::vector<nlohmann::json> export_rows(const std::vector<TraceRecord>& records,
                                        const PromptSource& prompt_of, const FileSource& read,
                                        ExportSummary* summary, double gamma = 0.4);
// The same for records as JSON objects (read with TraceRecord::from_json).
std::vector<nlohmann::json> export_rows(const std::vector<nlohmann::json>& records,
                                        const PromptSource& prompt_of, const FileSource& read,
                                        ExportSummary* summary, double gamma = 0.4);

}  // namespace kernrl
