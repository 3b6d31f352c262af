// Reading trace records for `kernrl report` and the KernelBench writer: the input files (a
// directory: every *.jsonl inside, each line read by TraceRecord's one tolerant reader), what a
// record counts as, and duplicate removal (docs/report.md, "Reading the
// inputs").
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "record/trace_record.h"

namespace kernrl {

// A record's fields as `report` counts them. Records are read by TraceRecord's tolerant reader
// (record/trace_record.h): a missing field, or a field of the wrong type, reads as absent, so
// nothing here throws on an odd record.
namespace rec {

// The run of a record whose `run` is null or missing.
constexpr const char* kNoRun = "(none)";

std::string run_of(const TraceRecord& r);  // kNoRun when not a string
std::optional<int> level_of(const TraceRecord& r);
std::optional<std::string> problem_of(const TraceRecord& r);

bool is_correct(const TraceRecord& r);  // status "correct"
bool format_ok(const TraceRecord& r);   // status not "format_error"
bool compiled(const TraceRecord& r);    // status neither "format_error" nor "compile_error"
// The speedup that counts: only a correct kernel's, and only a finite positive number.
std::optional<double> counted_speedup(const TraceRecord& r);
// Whether anything ran on a GPU: the record's `ran`, or (records without the field) whether its
// status needs a run.
bool ran(const TraceRecord& r);

}  // namespace rec

// Records with the same (run, file, source_sha256) are one sample graded twice (a resumed run):
// keeps the last of each, in its place. `dropped` (optional) gets the number removed.
std::vector<TraceRecord> drop_duplicates(const std::vector<TraceRecord>& records, size_t* dropped);
// The same, moving the records kept out of `records`.
std::vector<TraceRecord> drop_duplicates(std::vector<TraceRecord>&& records, size_t* dropped);

namespace report {

// The trace files named by `inputs`: a file as given; a directory: every *.jsonl inside,
// recursively, in path order. Inputs that do not exist, and directories without *.jsonl files,
// are reported to `err` (optional) and skipped.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::ostream* err);

// Reads every file of expand_inputs(inputs) in order, appending its records to `records`. The
// files read go to `files_read` and malformed lines to `malformed` (as {file, line, message}), and
// both are reported to `err` (each optional). False when no file could be read.
bool read_inputs(const std::vector<std::string>& inputs, std::vector<TraceRecord>* records,
                 nlohmann::json* files_read, nlohmann::json* malformed, std::ostream* err);

}  // namespace report
}  // namespace kernrl
