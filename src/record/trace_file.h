// JSONL trace files: one record per line, appended as soon as it is known.
//
// A trace file may be shared: the threads of one grade-dir, several grade-dir shards with the same
// --out and `eval --trace` calls all append to it at once. Each record is one write(2) on an
// O_APPEND descriptor made while holding an exclusive flock(2) on the file, so records never
// interleave and none is lost; the repair of a cut-off last line (a killed run) happens under the
// same lock.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/trace_record.h"

namespace kernrl {

class TraceWriter {
 public:
  // Opens (creating it, and its missing parent folders) `path` for appending. Throws
  // std::runtime_error naming the file and the reason.
  explicit TraceWriter(const std::string& path);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Appends one record as one line (thread-safe, safe across processes). Throws std::runtime_error
  // when the line cannot be written whole; the file is then left as it was.
  void append(const TraceRecord& rec);
  // Any JSON object as one line, the same way.
  void append(const nlohmann::json& rec);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::mutex mu_;
};

struct TraceProblem {
  std::string file;
  int line;
  std::string message;
};

// Reads every record of a JSONL file with TraceRecord::from_json (which keeps whatever it does not
// know). A line that is not JSON, or not an object with `status` and `problem`, is listed in
// *problems and skipped; a file that cannot be read is listed with line 0.
std::vector<TraceRecord> read_trace(const std::string& path, std::vector<TraceProblem>* problems);

// One line of JSON, always valid UTF-8: bytes of invalid UTF-8 in any string are written as `\xNN`
// (core/safe_text.h). Never throws on odd bytes.
std::string json_line(const nlohmann::json& j);

}  // namespace kernrl
