// Reading trace records for `kernrl report`: the input files (a directory: every *.jsonl inside),
// tolerant access to one record's fields, and duplicate removal (docs/report.md, "Reading the
// inputs").
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kernrl {

// Tolerant access to the fields of one trace record (docs/trace-format.md): a missing field, or a
// field of the wrong type, reads as absent. Nothing here throws on an odd record.
namespace rec {

// The run of a record whose `run` is null or missing.
constexpr const char* kNoRun = "(none)";

// The field, or a null value when it is missing (or `r` is not an object).
const nlohmann::json& field(const nlohmann::json& r, const char* key);
// The field's text, or "" when it is not a string.
std::string text(const nlohmann::json& r, const char* key);
// The field's value when it is a number.
std::optional<double> number(const nlohmann::json& r, const char* key);
// True only for a boolean `true`.
bool flag(const nlohmann::json& r, const char* key);

std::string run_of(const nlohmann::json& r);  // kNoRun when not a string
std::optional<int> level_of(const nlohmann::json& r);
std::optional<std::string> problem_of(const nlohmann::json& r);

bool is_correct(const nlohmann::json& r);  // status "correct"
bool format_ok(const nlohmann::json& r);   // status not "format_error"
bool compiled(const nlohmann::json& r);    // status neither "format_error" nor "compile_error"
// The speedup that counts: only a correct kernel's, and only a finite positive number.
std::optional<double> counted_speedup(const nlohmann::json& r);

}  // namespace rec

// Records with the same (run, file, source_sha256) are one sample graded twice (a resumed run):
// keeps the last of each, in its place. `dropped` (optional) gets the number removed.
std::vector<nlohmann::json> drop_duplicates(const std::vector<nlohmann::json>& records,
                                            size_t* dropped);

namespace report {

// The trace files named by `inputs`: a file as given; a directory: every *.jsonl inside,
// recursively, in path order. Inputs that do not exist, and directories without *.jsonl files,
// are reported to `err` (optional) and skipped.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::ostream* err);

// Reads every file of expand_inputs(inputs) in order, appending its records to `records`. The
// files read go to `files_read` and malformed lines to `malformed` (as {file, line, message}), and
// both are reported to `err` (each optional). False when no file could be read.
bool read_inputs(const std::vector<std::string>& inputs, std::vector<nlohmann::json>* records,
                 nlohmann::json* files_read, nlohmann::json* malformed, std::ostream* err);

}  // namespace report
}  // namespace kernrl
