// Every input gets a complete record; grade-dir's discovery survives odd directories.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/hash.h"
#include "core/paths.h"
#include "grading/discover.h"
#include "grading/prepare.h"
#include "test_dirs.h"

using namespace kernrl;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  return fresh_test_dir(name);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

const DiscoveredFile* find(const Discovery& d, const std::string& rel) {
  for (const auto& f : d.files)
    if (f.rel == rel) return &f;
  return nullptr;
}

bool warned(const Discovery& d, const std::string& part) {
  for (const auto& w : d.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("prepare_file: unreadable files, unknown and missing problems give complete records") {
  fs::path dir = fresh_dir("prepare");
  Config cfg;
  GradeOptions opt;
  opt.seed = 7;

  // A file that is not there: a record, unattributed, and a usage error for eval's exit code.
  Prepared p = prepare_file((dir / "missing.cu").string(), opt, cfg, "sm_90a", 132);
  CHECK(p.done);
  CHECK(p.record.to_json()["status"] == "format_error");
  CHECK(p.record.to_json()["problem"].is_null());
  CHECK(p.record.to_json()["problem_unknown"]["reason"] == "unreadable");
  CHECK(p.record.to_json()["source_sha256"].is_null());
  CHECK(p.record.to_json()["error"]["message"].get<std::string>().find("No such file") !=
        std::string::npos);
  CHECK(p.usage_error.find("missing.cu") != std::string::npos);

  // A launch block naming a problem kernrl does not have: format_error, the name kept, hash of the
  // bytes.
  std::string sol = slurp(problems_dir() / "L1" / "23_Softmax" / "solution.cu");
  size_t at = sol.find("problem:");
  REQUIRE(at != std::string::npos);
  std::string unknown = sol;
  unknown.replace(at, unknown.find('\n', at) - at, "problem: L9_999_Nope");
  std::ofstream(dir / "unknown.cu", std::ios::binary) << unknown;
  p = prepare_file((dir / "unknown.cu").string(), opt, cfg, "sm_90a", 132);
  CHECK(p.record.to_json()["status"] == "format_error");
  CHECK(p.record.to_json()["problem"].is_null());
  CHECK(p.record.to_json()["problem_unknown"]["reason"] == "unknown_problem");
  CHECK(p.record.to_json()["problem_unknown"]["named"] == "L9_999_Nope");
  CHECK(p.record.to_json()["problem_unknown"]["from"] == "launch_block");
  CHECK(p.record.to_json()["source_sha256"] == sha256_hex(unknown));
  CHECK(p.usage_error.empty());  // the file's own fault: eval exits 1

  // An unknown --problem: the same record shape, but kernrl's input: a usage error.
  GradeOptions bad_option = opt;
  bad_option.problem = "L9_999";
  p = prepare_file((dir / "unknown.cu").string(), bad_option, cfg, "sm_90a", 132);
  CHECK(p.record.to_json()["problem_unknown"]["from"] == "option");
  CHECK(!p.usage_error.empty());

  // A path layout naming an unknown problem (grade-dir): a record, not a usage error.
  GradeOptions from_path = bad_option;
  from_path.problem_from_path = true;
  p = prepare_file((dir / "unknown.cu").string(), from_path, cfg, "sm_90a", 132);
  CHECK(p.record.to_json()["problem_unknown"]["from"] == "path");
  CHECK(p.usage_error.empty());

  // A --problem that the launch block contradicts with an unknown name: attributed, format_error.
  GradeOptions softmax = opt;
  softmax.problem = "L1_23_Softmax";
  p = prepare_file((dir / "unknown.cu").string(), softmax, cfg, "sm_90a", 132);
  CHECK(p.record.to_json()["problem"] == "L1_23_Softmax");
  CHECK(p.record.to_json()["error"]["message"].get<std::string>().find(
            "L9_999_Nope (unknown to kernrl)") != std::string::npos);

  // Nothing names the problem.
  std::string none = sol;
  none.erase(at, none.find('\n', at) - at + 1);
  std::ofstream(dir / "none.cu", std::ios::binary) << none;
  p = prepare_file((dir / "none.cu").string(), opt, cfg, "sm_90a", 132);
  CHECK(p.record.to_json()["problem"].is_null());
  CHECK(p.record.to_json()["problem_unknown"]["reason"] == "not_named");

  // grade-dir never opens a FIFO (it would block): a record saying so.
  REQUIRE(mkfifo((dir / "pipe.cu").c_str(), 0644) == 0);
  GradeOptions regular = opt;
  regular.regular_files_only = true;
  p = prepare_file((dir / "pipe.cu").string(), regular, cfg, "sm_90a", 132);
  CHECK(p.record.to_json()["error"]["message"].get<std::string>().find("not a regular file") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("parse_seed: the whole range, nothing outside it") {
  CHECK(parse_seed("0") == 0);
  CHECK(parse_seed("18446744073709551615") == UINT64_MAX);
  CHECK_THROWS_WITH_AS(parse_seed("18446744073709551616"), doctest::Contains("too large"),
                       UsageError);
  CHECK_THROWS_AS(parse_seed("-1"), UsageError);
  CHECK_THROWS_AS(parse_seed("1e3"), UsageError);
  CHECK_THROWS_AS(parse_seed(""), UsageError);
  CHECK_THROWS_AS(parse_seed("12 "), UsageError);
}

TEST_CASE(
    "discover_files: symlink loops, dangling links, folder links, huge sample numbers, own "
    "outputs") {
  fs::path dir = fresh_dir("discover");
  fs::create_directories(dir / "L1_23_Softmax");
  fs::create_directories(dir / ".hidden");
  std::ofstream(dir / "L1_23_Softmax" / "a.cu") << "x";
  std::ofstream(dir / "L1_23_Softmax" / "b.md") << "x";
  std::ofstream(dir / ".hidden" / "c.cu") << "x";
  std::ofstream(dir / "level_1_problem_23_sample_7_kernel.cu") << "x";
  std::ofstream(dir / "level_1_problem_23_sample_99999999999999999999_kernel.cu") << "x";
  std::ofstream(dir / "level_999999999999999999999_problem_1_sample_0_kernel.cu") << "x";
  fs::create_symlink("loop.cu", dir / "loop.cu");  // a loop onto itself
  fs::create_symlink(dir / "nowhere.cu", dir / "dangling.cu");
  fs::create_symlink(dir, dir / "L1_23_Softmax" / "up");  // a folder loop through a link
  fs::create_symlink(dir / "L1_23_Softmax" / "a.cu", dir / "linked.cu");
  std::ofstream(dir / "out.txt") << "{}\n";  // an output with a graded extension
  fs::create_symlink(dir / "out.txt", dir / "out-link.txt");

  Discovery d = discover_files(dir, {dir / "." / "out.txt"});  // spelled differently
  CHECK(find(d, "L1_23_Softmax/a.cu"));
  CHECK(find(d, "L1_23_Softmax/a.cu")->problem == "L1_23_Softmax");
  CHECK(find(d, "L1_23_Softmax/b.md")->sample == 1);
  CHECK_FALSE(find(d, ".hidden/c.cu"));
  CHECK(find(d, "level_1_problem_23_sample_7_kernel.cu")->sample == 7);
  const DiscoveredFile* huge = find(d, "level_1_problem_23_sample_99999999999999999999_kernel.cu");
  REQUIRE(huge);
  CHECK_FALSE(huge->sample.has_value());
  CHECK(warned(d, "out of range"));
  REQUIRE(find(d, "level_999999999999999999999_problem_1_sample_0_kernel.cu"));
  CHECK(find(d, "level_999999999999999999999_problem_1_sample_0_kernel.cu")->problem ==
        "L999999999999999999999_1");
  CHECK(find(d, "loop.cu"));  // listed: its record says it cannot be read
  CHECK(warned(d, "loop.cu: a symlink loop"));
  CHECK(find(d, "dangling.cu"));
  CHECK(warned(d, "dangling symlink"));
  CHECK(warned(d, "a symlink to a folder; not followed"));
  CHECK(find(d, "linked.cu"));
  CHECK_FALSE(find(d, "out.txt"));
  CHECK_FALSE(find(d, "out-link.txt"));
  CHECK(d.excluded_outputs == 2);
  CHECK(d.unreadable_folders == 0);
  // Path order, as sorted paths.
  for (size_t i = 1; i < d.files.size(); ++i) CHECK(d.files[i - 1].file < d.files[i].file);
  CHECK_THROWS_AS(discover_files(dir / "no-such-folder", {}), std::runtime_error);
  fs::remove_all(dir);
}
