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

const json& field(const json& r, const char* key) {
  static const json null_value;
  auto it = r.find(key);
  return it != r.end() ? *it : null_value;
}
std::string text(const json& r, const char* key) {
  const json& v = field(r, key);
  return v.is_string() ? v.get<std::string>() : "";
}
std::optional<double> number(const json& r, const char* key) {
  const json& v = field(r, key);
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}
bool flag(const json& r, const char* key) {
  const json& v = field(r, key);
  return v.is_boolean() && v.get<bool>();
}
std::string run_of(const json& r) {
  const json& v = field(r, "run");
  return v.is_string() ? v.get<std::string>() : kNoRun;
}
std::optional<int> level_of(const json& r) {
  const json& v = field(r, "level");
  if (v.is_number_integer()) return v.get<int>();
  return std::nullopt;
}
std::optional<std::string> problem_of(const json& r) {
  const json& v = field(r, "problem");
  if (v.is_string()) return v.get<std::string>();
  return std::nullopt;
}
bool is_correct(const json& r) {
  return text(r, "status") == "correct";
}
bool format_ok(const json& r) {
  return text(r, "status") != "format_error";
}
bool compiled(const json& r) {
  std::string s = text(r, "status");
  return s != "format_error" && s != "compile_error";
}
std::optional<double> counted_speedup(const json& r) {
  auto s = number(r, "speedup");
  if (!is_correct(r) || !s || !(*s > 0) || !std::isfinite(*s)) return std::nullopt;
  return s;
}

}  // namespace rec

std::vector<json> drop_duplicates(const std::vector<json>& records, size_t* dropped) {
  std::set<std::string> seen;
  std::vector<const json*> kept;
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    std::string sha = rec::text(*it, "source_sha256");
    // Without a hash two records cannot be told to be the same sample: keep both.
    if (!sha.empty() &&
        !seen.insert(rec::run_of(*it) + '\x1f' + rec::text(*it, "file") + '\x1f' + sha).second)
      continue;
    kept.push_back(&*it);
  }
  if (dropped) *dropped = records.size() - kept.size();
  std::vector<json> out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out.push_back(**it);
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

bool read_inputs(const std::vector<std::string>& inputs, std::vector<json>* records,
                 json* files_read, json* malformed, std::ostream* err) {
  bool any = false;
  for (const std::string& file : expand_inputs(inputs, err)) {
    std::vector<TraceProblem> problems;
    std::vector<json> recs = read_trace(file, &problems);
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
    for (json& r : recs) records->push_back(std::move(r));
  }
  return any;
}

}  // namespace report
}  // namespace kernrl
