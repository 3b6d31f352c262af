// grading/run.h: a run's name, seeds, resume index, shard slices and trace, as grade-dir and serve
// use them.
#include <doctest/doctest.h>

#include <fstream>

#include "core/errors.h"
#include "core/hash.h"
#include "grading/run.h"
#include "record/trace_file.h"
#include "test_dirs.h"

using namespace kernrl;
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

TraceRecord record_of(const std::string& run, const std::string& file, const std::string& text) {
  TraceRecord r;
  r.run = run;
  r.file = fs::absolute(file).lexically_normal().string();
  r.source_sha256 = sha256_hex(text);
  r.problem = "L1_23_Softmax";
  r.status = Status::Compiled;
  return r;
}

}  // namespace

TEST_CASE("run: shards are fixed slices that cover every file once") {
  CHECK(Shard::parse("").count == 1);
  Shard s = Shard::parse("1/3");
  CHECK(s.index == 1);
  CHECK(s.count == 3);
  for (const char* bad : {"3/3", "-1/2", "1/0", "1/2x", "x"})
    CHECK_THROWS_AS(Shard::parse(bad), UsageError);
  int held = 0;
  for (int i = 0; i < 30; ++i) {
    std::string rel = "level_1_problem_23_sample_" + std::to_string(i) + "_kernel.cu";
    int n = 0;
    for (int k = 0; k < 3; ++k) n += Shard{k, 3}.holds(rel);
    CHECK(n == 1);
    held += Shard{0, 3}.holds(rel);
    CHECK(Shard{}.holds(rel));
  }
  CHECK(held > 0);
  CHECK(held < 30);
}

TEST_CASE("run: seeds are given, resumed or fresh; records are stamped and resumed") {
  fs::path dir = fresh_test_dir("run");
  fs::path a = dir / "gen" / "a.cu", b = dir / "gen" / "b.cu";
  fs::create_directories(a.parent_path());
  write_text(a, "kernel a");
  write_text(b, "kernel b");
  std::string trace = (dir / "out" / "traces.jsonl").string();  // its folder is created
  CHECK(Run::name_for(dir / "gen") == "gen");
  CHECK(Run::name_for((dir / "gen").string() + "/") == "gen");
  {
    RunOptions o;
    o.name = "r1";
    o.seed = 42;
    o.trace = trace;
    Run run(o);
    CHECK(run.seed() == 42u);
    CHECK(run.seed_for("a.cu") == derive_seed(42, "a.cu") >> 1);
    CHECK(run.seed_for("a.cu") != run.seed_for("b.cu"));
    TraceRecord r = record_of("r1", a.string(), "kernel a");
    run.write(r);
    CHECK(r.run_seed.value_or(0) == 42u);
    TraceRecord other = record_of("r2", b.string(), "kernel b");
    run.write(other);
    REQUIRE(run.records().size() == 1);  // this run's only
    CHECK(run.records()[0].run_seed.value_or(0) == 42u);
  }
  RunOptions o;
  o.name = "r1";
  o.trace = trace;
  o.resume = true;
  Run resumed(o);
  CHECK(resumed.seed() == 42u);  // the resumed run's seed
  CHECK(resumed.graded(a.string()));
  CHECK(resumed.graded((dir / "gen" / ".." / "gen" / "a.cu").string()));  // any spelling
  CHECK_FALSE(resumed.graded(b.string()));
  std::vector<DiscoveredFile> all = {
      {a.string(), "a.cu", "L1_23_Softmax", 0, std::nullopt, std::nullopt},
      {b.string(), "b.cu", "L2_1_Other", 1, std::nullopt, std::nullopt}};
  size_t already = 0;
  auto todo = resumed.select(all, Selection{}, &already);
  REQUIRE(todo.size() == 1);
  CHECK(todo[0].rel == "b.cu");
  CHECK(already == 1);
  Selection only;
  only.only_level = 1;
  already = 0;
  CHECK(resumed.select(all, only, &already).empty());  // b is level 2, a already graded
  write_text(a, "kernel a, changed");                  // new bytes: graded again
  CHECK_FALSE(resumed.graded(a.string()));

  o.seed = 7;  // a given seed wins over the resumed one
  CHECK(Run(o).seed() == 7u);
  o.seed.reset();
  o.resume = false;
  o.name = "r3";
  Run fresh(o);
  CHECK_FALSE(fresh.graded(a.string()));

  RunOptions none;  // no trace: records are only stamped
  none.name = "serve";
  none.seed = 9;
  Run mem(none);
  TraceRecord r;
  mem.write(r);
  CHECK(r.run_seed.value_or(0) == 9u);
  CHECK(mem.records().empty());

  write_text(dir / "file", "x");
  RunOptions bad;
  bad.trace = (dir / "file" / "traces.jsonl").string();  // a file where its folder should be
  bad.trace_option = "--trace";
  CHECK_THROWS_WITH_AS(Run{bad}, doctest::Contains("--trace"), UsageError);
  fs::remove_all(dir);
}
