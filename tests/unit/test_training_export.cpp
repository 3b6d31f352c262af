// export_rows: trace records joined with the graded sources, one row per sample.
#include <doctest/doctest.h>

#include <map>

#include "core/hash.h"
#include "record/trace_file.h"
#include "report/training_export.h"

using nlohmann::json;
using namespace kernrl;

namespace {

json rec(const std::string& file, json problem, const std::string& sha, const std::string& status) {
  return {{"schema", "kernrl.trace.v1"},
          {"run", "r"},
          {"sample", 0},
          {"file", file},
          {"problem", problem},
          {"level", 1},
          {"source_sha256", sha},
          {"status", status},
          {"speedup", 1.5},
          {"reward", 0.25},
          {"reward_preset", "kernrl"},
          {"feedback", "Status: " + status}};
}

}  // namespace

TEST_CASE(
    "export_rows: one row per sample with prompt, answer, status, speedup, reward, feedback") {
  std::map<std::string, std::string> files = {
      {"a.cu", "kernel a"}, {"b.cu", "kernel b, edited"}, {"c.cu", std::string("bad \xff byte")}};
  FileSource read = [&](const std::string& path, std::string* error) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) {
      *error = "file not found: " + path;
      return std::nullopt;
    }
    return it->second;
  };
  int prompts = 0;
  PromptSource prompt_of = [&](const std::string& id) -> std::optional<std::string> {
    ++prompts;
    if (id == "L1_1_A") return std::string("Write a kernel for ") + id;
    return std::nullopt;
  };
  std::vector<json> records = {
      rec("a.cu", "L1_1_A", sha256_hex("kernel a"), "incorrect"),  // regraded below: counts once
      rec("a.cu", "L1_1_A", sha256_hex("kernel a"), "correct"),
      rec("b.cu", "L1_1_A", sha256_hex("kernel b"), "incorrect"),  // changed since graded
      rec("gone.cu", "L1_1_A", sha256_hex("x"), "compile_error"),  // deleted since
      rec("c.cu", "L9_9_Unknown", sha256_hex(files["c.cu"]), "correct"),
      rec("u.cu", nullptr, sha256_hex("u"), "format_error"),  // unattributed
      rec("n.cu", "L1_1_A", "", "format_error")};
  records.back()["source_sha256"] = nullptr;  // unreadable when graded

  ExportSummary s;
  std::vector<json> rows = export_rows(records, prompt_of, read, &s);
  REQUIRE(rows.size() == 5);
  CHECK(s.rows == 5);
  CHECK(s.duplicates == 1);
  CHECK(s.unattributed == 1);
  CHECK(s.with_answer == 2);
  CHECK(prompts == 2);  // once per problem
  const json& a = rows[0];
  CHECK(a["schema"] == kExportSchema);
  CHECK(a["problem"] == "L1_1_A");
  CHECK(a["prompt"] == "Write a kernel for L1_1_A");
  CHECK(a["answer"] == "kernel a");
  CHECK(a["answer_missing"].is_null());
  CHECK(a["status"] == "correct");
  CHECK(a["speedup"] == 1.5);
  CHECK(a["reward"] == 0.25);
  CHECK(a["feedback"] == "Status: correct");
  CHECK(rows[1]["answer"].is_null());
  CHECK(rows[1]["answer_missing"].get<std::string>().find("changed since it was graded") !=
        std::string::npos);
  CHECK(rows[2]["answer_missing"] == "file not found: gone.cu");
  CHECK(rows[3]["prompt"].is_null());
  CHECK(rows[3]["answer"] == "bad \\xff byte");  // invalid UTF-8 escaped as records escape it
  CHECK(rows[4]["answer_missing"].get<std::string>().find("no source_sha256") != std::string::npos);
  CHECK(s.missing["file not found"] == 1);
  for (const json& r : rows) {
    std::string line = json_line(r);
    CHECK(line.find('\n') == std::string::npos);
    CHECK(json::parse(line) == r);
  }
}
