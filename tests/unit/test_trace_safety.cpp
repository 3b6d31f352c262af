// Trace files shared by several writers, records that stay valid UTF-8, bounded logs.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "core/safe_text.h"
#include "record/trace_file.h"
#include "record/trace_record.h"
#include "test_dirs.h"

using namespace kernrl;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  return fresh_test_dir(name);
}

// The padding of record (writer, i): its length (5-20 KB) and bytes follow from the pair, so a
// record spliced with another's bytes cannot pass.
std::string padding(int writer, int i) {
  std::mt19937 rng(static_cast<unsigned>(writer * 100003 + i));
  size_t n = 5000 + rng() % 15001;
  std::string s(n, ' ');
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("trace files: concurrent writer processes and threads never interleave or lose records") {
  fs::path dir = fresh_dir("concurrent");
  std::string path = (dir / "sub" / "shared.jsonl").string();  // the folder does not exist yet
  constexpr int kProcesses = 4, kRecords = 500, kThreads = 2;
  std::vector<pid_t> kids;
  for (int w = 0; w < kProcesses; ++w) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int rc = 0;
      try {
        TraceWriter tw(path);  // each process its own descriptor (and open-time checks racing)
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
          threads.emplace_back([&, t] {
            for (int i = t; i < kRecords; i += kThreads)
              tw.append({{"status", "correct"},
                         {"problem", "L1_1"},
                         {"writer", w},
                         {"i", i},
                         {"pad", padding(w, i)}});
          });
        for (auto& th : threads) th.join();
      } catch (...) {
        rc = 1;
      }
      _exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
  }
  std::map<std::pair<int, int>, int> seen;
  size_t bad = 0;
  auto lines = lines_of(path);
  for (const auto& line : lines) {
    try {
      json j = json::parse(line);
      int w = j.at("writer"), i = j.at("i");
      if (j.at("pad").get<std::string>() != padding(w, i)) ++bad;
      ++seen[{w, i}];
    } catch (const std::exception&) {
      ++bad;
    }
  }
  CHECK(bad == 0);
  CHECK(lines.size() == size_t(kProcesses * kRecords));
  CHECK(seen.size() == size_t(kProcesses * kRecords));
  int dup = 0;
  for (const auto& [k, n] : seen) dup += n != 1;
  CHECK(dup == 0);
  fs::remove_all(dir);
}

TEST_CASE("trace files: a cut-off last line is ended before the next record, by any writer") {
  fs::path dir = fresh_dir("cutoff");
  std::string path = (dir / "t.jsonl").string();
  TraceWriter early(path);  // opened before the damage: the repair happens at append time
  early.append({{"status", "correct"}, {"problem", "L1_1"}, {"n", 1}});
  std::ofstream(path, std::ios::app | std::ios::binary)
      << R"({"status": "incorr)";  // a writer killed mid-line
  early.append({{"status", "incorrect"}, {"problem", "L1_1"}, {"n", 2}});
  TraceWriter late(path);
  late.append({{"status", "incorrect"}, {"problem", "L1_1"}, {"n", 3}});
  std::vector<TraceProblem> bad;
  auto recs = read_trace(path, &bad);
  REQUIRE(recs.size() == 3);
  CHECK(recs[1].extra["n"] == 2);  // a key no record type knows, kept
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].line == 2);
  fs::remove_all(dir);
}

TEST_CASE("trace files: unwritable paths fail with the file and the reason") {
  fs::path dir = fresh_dir("unwritable");
  std::ofstream(dir / "plain") << "x";
  CHECK_THROWS_WITH_AS(TraceWriter((dir / "plain" / "t.jsonl").string()),
                       doctest::Contains("plain"), std::runtime_error);
  CHECK_THROWS_WITH_AS(TraceWriter(dir.string()), doctest::Contains("Is a directory"),
                       std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("UTF-8: valid text kept, every other byte escaped as \\xNN") {
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  CHECK_FALSE(is_valid_utf8("caf\xE9"));           // Latin-1
  CHECK_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xE2\x82"));          // cut short
  CHECK(escape_invalid_utf8("caf\xE9 ok") == "caf\\xe9 ok");
  CHECK(escape_invalid_utf8("\xE2\x82") == "\\xe2\\x82");
  CHECK(escape_invalid_utf8("a\\xe9b") == "a\\xe9b");  // valid text is never touched
  CHECK(escape_invalid_utf8("\xC3\xA9\xFF") == "\xC3\xA9\\xff");
  json j = {{"file", "caf\xE9.cu"}, {"k\xFF", {"x\xE9", 1}}};
  escape_invalid_utf8_in(j);
  CHECK(j["file"] == "caf\\xe9.cu");
  CHECK(j.contains("k\\xff"));
  CHECK(j["k\\xff"][0] == "x\\xe9");
  // json_line never throws and writes the same escapes.
  json raw = {{"file", "caf\xE9.cu"}, {"status", "correct"}};
  std::string line = json_line(raw);
  CHECK(line.find("caf\\\\xe9.cu") != std::string::npos);
  CHECK(json::parse(line)["file"] == "caf\\xe9.cu");
}

TEST_CASE("cap_text: bounded, notes the cut, keeps both ends on character boundaries") {
  size_t cut = 1;
  CHECK(cap_text("short", 100, &cut) == "short");
  CHECK(cut == 0);
  std::string big = "HEAD" + std::string(200000, 'x') + "TAIL";
  std::string c = cap_text(big, 1000, &cut);
  CHECK(c.size() <= 1000);
  CHECK(c.rfind("HEAD", 0) == 0);
  CHECK(c.substr(c.size() - 4) == "TAIL");
  CHECK(c.find("[... kernrl cut " + std::to_string(cut) + " of " + std::to_string(big.size()) +
               " bytes ...]") != std::string::npos);
  CHECK(c.size() + cut > big.size());      // the note takes the difference
  CHECK(cap_text(c, 1000, nullptr) == c);  // idempotent
  // Multi-byte characters are never split.
  std::string euros;
  for (int i = 0; i < 5000; ++i) euros += "\xE2\x82\xAC";
  CHECK(is_valid_utf8(cap_text(euros, 1001, nullptr)));
  CHECK(is_valid_utf8(cap_text(euros, 1002, nullptr, 0.25)));
  // Head share: the worker's output keeps mostly its end.
  std::string w = cap_text(std::string(10000, 'a') + std::string(10000, 'b'), 1000, nullptr, 0.25);
  CHECK(std::count(w.begin(), w.end(), 'b') > std::count(w.begin(), w.end(), 'a'));
}

TEST_CASE("bound_record: a 151 MB compile log becomes a small record") {
  std::string log = "k.cu(3): error: first\n" + std::string(151u << 20, 'L') + "\nlast line\n";
  json rec = {
      {"status", "compile_error"},
      {"file", "f\xE9.cu"},
      {"error",
       {{"category", "compile_error"}, {"message", std::string(100000, 'm')}, {"log", log}}},
      {"compile", {{"log", log}}}};
  log.clear();
  log.shrink_to_fit();
  RecordLimits lim;
  bound_record(rec, lim);
  std::string line = json_line(rec);
  CHECK(line.size() < 2 * lim.compile_log_bytes + lim.message_bytes + 1000);
  CHECK(rec["error"]["log"].get<std::string>().rfind("k.cu(3): error: first", 0) == 0);
  CHECK(rec["error"]["log_cut_bytes"].get<size_t>() > (150u << 20));
  CHECK(rec["compile"]["log_cut_bytes"].get<size_t>() > (150u << 20));
  CHECK(rec["error"]["message"].get<std::string>().size() <= lim.message_bytes);
  CHECK(rec["error"].contains("message_cut_bytes"));
  CHECK(rec["file"] == "f\\xe9.cu");
  json again = rec;
  bound_record(again, lim);
  CHECK(again == rec);  // idempotent: the notes are not counted twice
  // Another status's log is the worker's: its own cap, the end kept.
  json w = {{"status", "runtime_error"}, {"error", {{"log", std::string(50000, 'a') + "the end"}}}};
  lim.worker_log_bytes = 2000;
  bound_record(w, lim);
  CHECK(w["error"]["log"].get<std::string>().size() <= 2000);
  CHECK(w["error"]["log"].get<std::string>().find("the end") != std::string::npos);
}
