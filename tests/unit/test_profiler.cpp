#include <doctest/doctest.h>
#include <stdlib.h>

#include "grading/profiler.h"

using namespace kernrl;
using nlohmann::json;

TEST_CASE("profiler: ncu's raw CSV page becomes one object per launch") {
  // The shape of `ncu --import R --csv --page raw`: names, then units, then one row per launch.
  std::string csv =
      "==PROF== a line ncu may print\n"
      "\"ID\",\"Process ID\",\"Kernel "
      "Name\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"sm__warps_active.avg.pct_of_peak_sustained_active\","
      "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio\"\n"
      "\"\",\"\",\"\",\"%\",\"nsecond\",\"%\",\"%\",\"ratio\",\"ratio\",\"ratio\"\n"
      "\"0\",\"512\",\"softmax_kernel\",\"63.52\",\"1,234,000\",\"12.19\",\"83.88\",\"4.5\",\"0\","
      "\"0.7\"\n"
      "\"1\",\"512\",\"k, with a comma\",\"n/a\",\"800\",\"50\",\"25\",\"\",\"2\",\"1\"\n";
  json l = parse_ncu_raw_csv(csv);
  REQUIRE(l.size() == 2);
  CHECK(l[0]["kernel"] == "softmax_kernel");
  CHECK(l[0]["dram_throughput_pct"].get<double>() == doctest::Approx(63.52));
  CHECK(l[0]["duration_us"].get<double>() == doctest::Approx(1234.0));
  CHECK(l[0]["sm_throughput_pct"].get<double>() == doctest::Approx(12.19));
  CHECK(l[0]["achieved_occupancy_pct"].get<double>() == doctest::Approx(83.88));
  // Stall reasons largest first, zero ones left out.
  REQUIRE(l[0]["stalls"].size() == 2);
  CHECK(l[0]["stalls"][0]["reason"] == "long_scoreboard");
  CHECK(l[0]["stalls"][1]["reason"] == "wait");
  CHECK(l[1]["kernel"] == "k, with a comma");
  CHECK(l[1]["dram_throughput_pct"].is_null());
  CHECK(l[1]["stalls"][0]["reason"] == "barrier");
  CHECK(parse_ncu_raw_csv("").empty());
  CHECK(parse_ncu_raw_csv("no csv here\n").empty());
}

TEST_CASE("profiler: without ncu the record says why, and nothing runs") {
  ProfileRequest r;
  r.ncu = "/nonexistent/ncu";
  r.eval.lowered = std::map<std::string, std::string>{{"k", "k"}};
  json p = profile_kernel(r);
  CHECK(p["tool"] == "ncu");
  REQUIRE(p.contains("error"));
  CHECK(p["error"].get<std::string>().find("ncu) was not found at /nonexistent/ncu") !=
        std::string::npos);
  CHECK_FALSE(p.contains("launches"));
}
