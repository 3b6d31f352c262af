#include "report/records.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "record/trace_file.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace rec {

std::string run_of(const TraceRecord& r) {
  return r.run_or(kNoRun);
}
std::optional<int> level_of(const TraceRecord& r) {
  return r.level ? std::optional<int>(*r.level) : std::nullopt;
}
std::optional<std::string> problem_of(const TraceRecord& r) {
  return r.problem ? std::optional<std::string>(*r.problem) : std::nullopt;
}
bool is_correct(const TraceRecord& r) {
  return r.status_is(Status::Correct);
}
bool format_ok(const TraceRecord& r) {
  return !r.status_is(Status::FormatError);
}
bool compiled(const TraceRecord& r) {
  return !r.status_is(Status::FormatError) && !r.status_is(Status::CompileError);
}
std::optional<double> counted_speedup(const TraceRecord& r) {
  if (!is_correct(r) || !r.speedup) return std::nullopt;
  double s = *r.speedup;
  if (!(s > 0) || !std::isfinite(s)) return std::nullopt;
  return s;
}
bool ran(const TraceRecord& r) {
  if (!r.ran.absent()) return r.ran.value_or(false);
  return r.status_is(Status::Correct) || r.status_is(Status::Incorrect) ||
         r.status_is(Status::RuntimeError) || r.status_is(Status::Timeout);
}

}  // namespace rec

namespace {

// Which records to keep: the last of each (run, file, source_sha256).
std::vector<bool> last_of_each(const std::vector<TraceRecord>& records) {
  std::set<std::string> seen;
  std::vector<bool> keep(records.size(), true);
  for (size_t i = records.size(); i-- > 0;) {
    const TraceRecord& r = records[i];
    std::string sha = r.source_sha256.value_or("");
    // Without a hash two records cannot be told to be the same sample: keep both.
    if (!sha.empty() &&
        !seen.insert(rec::run_of(r) + '\x1f' + r.file.value_or("") + '\x1f' + sha).second)
      keep[i] = false;
  }
  return keep;
}

}  // namespace

std::vector<TraceRecord> drop_duplicates(const std::vector<TraceRecord>& records, size_t* dropped) {
  std::vector<bool> keep = last_of_each(records);
  std::vector<TraceRecord> out;
  for (size_t i = 0; i < records.size(); ++i)
    if (keep[i]) out.push_back(records[i]);
  if (dropped) *dropped = records.size() - out.size();
  return out;
}

std::vector<TraceRecord> drop_duplicates(std::vector<TraceRecord>&& records, size_t* dropped) {
  std::vector<bool> keep = last_of_each(records);
  std::vector<TraceRecord> out;
  for (size_t i = 0; i < records.size(); ++i)
    if (keep[i]) out.push_back(std::move(records[i]));
  if (dropped) *dropped = records.size() - out.size();
  return out;
}

namespace report {

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::ostream* err) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(
               in, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->path().extension() == ".jsonl" && it->is_regular_file(ec))
          found.push_back(it->path().string());
      std::sort(found.begin(), found.end());
      if (found.empty() && err) *err << in << ": no *.jsonl files in this directory\n";
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(in, ec)) {
      files.push_back(in);
    } else if (err) {
      *err << in << ": no such file or directory\n";
    }
  }
  return files;
}

bool read_inputs(const std::vector<std::string>& inputs, std::vector<TraceRecord>* records,
                 json* files_read, json* malformed, std::ostream* err) {
  bool any = false;
  for (const std::string& file : expand_inputs(inputs, err)) {
    std::vector<TraceProblem> problems;
    std::vector<TraceRecord> recs = read_trace(file, &problems);
    bool readable = true;
    for (const TraceProblem& p : problems) {
      if (p.line == 0) {
        readable = false;
        if (err) *err << p.file << ": " << p.message << "\n";
        continue;
      }
      if (err) *err << p.file << ":" << p.line << ": " << p.message << "\n";
      if (malformed)
        malformed->push_back({{"file", p.file}, {"line", p.line}, {"message", p.message}});
    }
    if (!readable) continue;
    any = true;
    if (files_read) files_read->push_back(file);
    for (TraceRecord& r : recs) records->push_back(std::move(r));
  }
  return any;
}

}  // namespace report
}  // namespace kernrl
