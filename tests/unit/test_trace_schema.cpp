// docs/trace-format.md against the typed record: the document's field table and the struct list
// the same fields, each object's row names its keys, and a compile-only session's records hold
// only documented fields.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "grading/session.h"
#include "record/trace_record.h"
#include "record_checks.h"

using namespace kernrl;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The rows of docs/trace-format.md's field table: field -> the row's text.
std::map<std::string, std::string> documented_fields() {
  std::map<std::string, std::string> rows;
  std::string doc = slurp(fs::path(KERNRL_TEST_DIR) / ".." / "docs" / "trace-format.md");
  size_t from = doc.find("## Fields"), to = doc.find("\n#", from + 1);  // to the next heading
  REQUIRE(from != std::string::npos);
  std::istringstream in(doc.substr(from, to - from));
  std::string line;
  static const std::regex row(R"(^\| `([a-z_0-9]+)` \|(.*)$)");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, row)) rows[m[1]] = m[2];
  return rows;
}

template <class T>
std::set<std::string> keys_of() {
  return {known_keys<T>().begin(), known_keys<T>().end()};
}

// The names at the top level of the n-th outermost `{...}` of a doc row: "{kind, speedups: {torch,
// kernel?}, kernel_missing?}" -> kind, speedups, kernel_missing.
std::set<std::string> braced_names(const std::string& text, int nth = 0) {
  std::set<std::string> names;
  int depth = 0, group = -1;
  std::string name;
  bool in_name = true;  // before the ':' of the current entry
  auto flush = [&] {
    if (!name.empty()) names.insert(name);
    name.clear();
    in_name = true;
  };
  for (char c : text) {
    if (c == '{' && ++depth == 1) {
      ++group;
      continue;
    }
    if (c == '}' && depth-- == 1 && group == nth) flush();
    if (depth != 1 || group != nth) continue;
    if (c == ',') {
      flush();
    } else if (c == ':') {
      in_name = false;
    } else if (in_name && (std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
      name += c;
    }
  }
  return names;
}

// True when `key` is in the row as a word (`key`, {key, ...}).
bool mentions(const std::string& row, const std::string& key) {
  return std::regex_search(row, std::regex("(^|[^a-z_0-9])" + key + "([^a-z_0-9]|$)"));
}

// A record object's keys against its row: every name of the row's n-th `{...}` is a key, and every
// key is in the row.
template <class T>
void check_row(const std::string& row, int nth = 0) {
  std::set<std::string> keys = keys_of<T>();
  for (const std::string& n : braced_names(row, nth)) CHECK_MESSAGE(keys.count(n), n);
  for (const std::string& k : keys) CHECK_MESSAGE(mentions(row, k), k);
}

// The names in the first column of the table under a `### title` heading of docs/trace-format.md
// ("| `grid`, `block` | ..." gives both).
std::set<std::string> subsection_fields(const std::string& title) {
  std::string doc = slurp(fs::path(KERNRL_TEST_DIR) / ".." / "docs" / "trace-format.md");
  size_t from = doc.find("### " + title), to = doc.find("\n#", from + 1);
  REQUIRE(from != std::string::npos);
  std::istringstream in(doc.substr(from, to - from));
  std::string line;
  std::set<std::string> names;
  static const std::regex name("`([a-z_0-9]+)`");
  while (std::getline(in, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    std::string first = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator it(first.begin(), first.end(), name), end; it != end; ++it)
      names.insert((*it)[1]);
  }
  return names;
}

}  // namespace

TEST_CASE("the schema doc and the struct list the same fields") {
  std::map<std::string, std::string> doc = documented_fields();
  std::set<std::string> documented;
  for (const auto& [k, v] : doc) documented.insert(k);
  CHECK(documented == keys_of<TraceRecord>());
  // The objects' own keys, as the rows spell them.
  CHECK(braced_names(doc["error"]) == keys_of<trace::Error>());
  CHECK(braced_names(doc["compile"]) == keys_of<trace::Compile>());
  CHECK(braced_names(doc["problem_unknown"]) == keys_of<trace::ProblemUnknown>());
  CHECK(braced_names(doc["converted"]) == keys_of<trace::Converted>());
  CHECK(braced_names(doc["timing"], 1) == keys_of<trace::Stats>());
  check_row<trace::Timing>(doc["timing"]);
  check_row<trace::Work>(doc["work"]);
  check_row<trace::WorkUnits>(doc["work"], 1);
  check_row<trace::Baseline>(doc["baseline"]);
  check_row<trace::Throughput>(doc["throughput"]);
  check_row<trace::Watchdog>(doc["watchdog"]);
  check_row<trace::Training>(doc["training"]);
  for (const std::string& k : keys_of<trace::Grader>())
    CHECK_MESSAGE(doc["grader"].find("`" + k + "`") != std::string::npos, k);
  // `launches`: its own table, and the occupancy object's keys in its row.
  CHECK(subsection_fields("Launches") == keys_of<trace::Launch>());
  std::string launches_doc = slurp(fs::path(KERNRL_TEST_DIR) / ".." / "docs" / "trace-format.md");
  launches_doc = launches_doc.substr(launches_doc.find("| `occupancy` |"));
  launches_doc = launches_doc.substr(0, launches_doc.find('\n'));
  for (const std::string& k : keys_of<trace::Occupancy>())
    CHECK_MESSAGE(launches_doc.find("`" + k + "`") != std::string::npos, k);
}

TEST_CASE("records of a compile-only session hold only documented fields") {
  SessionOptions so;
  so.compile_only = true;
  so.compile_jobs = 2;
  GradingSession session(so);
  std::string sol = slurp(kFixtures / "records" / "softmax.cu");
  std::set<std::string> documented;
  for (const auto& [k, v] : documented_fields()) documented.insert(k);
  std::vector<std::pair<std::string, std::string>> answers = {
      {"ok.cu", sol},
      {"broken.cu", sol.substr(0, sol.size() / 2)},
      {"prose.md", "no code here"},
      {"unknown.cu", "/* kernrl\nproblem: L9_9_Nope\nlaunches: []\n*/\n"}};
  std::set<std::string> statuses;
  for (const auto& [label, text] : answers) {
    Submission s;
    s.file = label;
    s.source = text;
    s.opt.run = "schema";
    s.opt.sample = 1;
    Outcome out = session.grade(s);
    REQUIRE(out.kind == Outcome::Graded);
    CAPTURE(out.record.to_line().substr(0, 300));
    statuses.insert(out.record.status_text());
    CHECK(all_known(out.record));
    const json written = out.record.to_json();
    for (const auto& [k, v] : written.items()) CHECK_MESSAGE(documented.count(k), k);
    // Every record has these (docs/trace-format.md).
    for (const char* k :
         {"schema",      "kernel_format", "run",       "sample",  "file",          "problem",
          "level",       "source_sha256", "status",    "ran",     "error",         "compile",
          "correctness", "timing",        "speedup",   "reward",  "reward_preset", "feedback",
          "versions",    "seed",          "timestamp", "wall_ms", "grader"})
      CHECK_MESSAGE(written.contains(k), k);
  }
  CHECK(statuses == std::set<std::string>{"compiled", "compile_error", "format_error"});
}
