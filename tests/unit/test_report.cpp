// kernrl report and the KernelBench results writer, on hand-made traces (tests/fixtures/report/)
// whose expected numbers are worked out by hand in the comments.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "record/trace_file.h"
#include "report/report.h"

using kernrl::ReportOptions;
using nlohmann::json;

namespace {

const std::string kDir = std::string(KERNRL_TEST_DIR) + "/fixtures/report/";

std::vector<json> load(const std::vector<std::string>& names) {
  std::vector<json> out;
  for (const auto& n : names)
    for (auto& r : kernrl::read_trace(kDir + n, nullptr)) out.push_back(r.to_json());
  return out;
}

const json& run_row(const json& a, const std::string& run) {
  for (const auto& r : a["runs"])
    if (r["run"] == run) return r;
  FAIL("no run " << run);
  static json none;
  return none;
}

// The report as `kernrl report` presents it: 0, 1 when a problem regressed (named on `err`), 2 on
// a UsageError (its message on `err`).
struct Result {
  int code;
  std::string out, err;
};
Result report(const ReportOptions& opt) {
  std::ostringstream out, err;
  int code = 0;
  try {
    std::vector<std::string> regressed = kernrl::run_report(opt, out, err);
    for (const auto& id : regressed) err << "regressed: " << id << "\n";
    code = regressed.empty() ? 0 : 1;
  } catch (const kernrl::UsageError& e) {
    err << e.what() << "\n";
    code = 2;
  }
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("pass@k: unbiased estimator as a stable product") {
  using kernrl::pass_at_k;
  CHECK(pass_at_k(10, 3, 1) == doctest::Approx(0.3));
  // 1 - C(7,5)/C(10,5) = 1 - 21/252
  CHECK(pass_at_k(10, 3, 5) == doctest::Approx(1.0 - 21.0 / 252.0));
  CHECK(pass_at_k(10, 3, 5) == doctest::Approx(0.9166666667));
  CHECK(pass_at_k(10, 3, 10) == 1.0);  // n - c < k: every draw holds a correct one
  CHECK(pass_at_k(10, 0, 1) == 0.0);
  CHECK(pass_at_k(1, 1, 1) == 1.0);
  CHECK(pass_at_k(5, 5, 5) == 1.0);
  // Large n: the product form neither overflows nor loses the answer (1 - C(990,100)/C(1000,100)).
  double direct =
      1.0 - std::exp(std::lgamma(991) - std::lgamma(891) - std::lgamma(1001) + std::lgamma(901));
  CHECK(pass_at_k(1000, 10, 100) == doctest::Approx(direct).epsilon(1e-9));
  CHECK_THROWS_AS(pass_at_k(3, 1, 4), std::invalid_argument);
  CHECK_THROWS_AS(pass_at_k(3, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(pass_at_k(3, 4, 1), std::invalid_argument);
}

TEST_CASE("pass@k of a run: mean over problems with n >= k, and how many that covers") {
  ReportOptions opt;
  opt.ks = {1, 5, 10, 11};
  json a = kernrl::aggregate(load({"passk.jsonl"}), opt);
  const json& r = run_row(a, "passk");
  CHECK(r["samples"] == 10);
  CHECK(r["problems"] == 1);
  CHECK(r["pass_at_k"]["1"]["value"].get<double>() == doctest::Approx(0.3));
  CHECK(r["pass_at_k"]["5"]["value"].get<double>() == doctest::Approx(0.9166666667));
  CHECK(r["pass_at_k"]["10"]["value"].get<double>() == doctest::Approx(1.0));
  CHECK(r["pass_at_k"]["5"]["problems"] == 1);
  CHECK(r["pass_at_k"]["11"]["value"].is_null());  // 10 samples: pass@11 is not defined
  CHECK(r["pass_at_k"]["11"]["problems"] == 0);
  CHECK(r["correct_rate"].get<double>() == doctest::Approx(0.3));
  CHECK(r["status_counts"]["incorrect"] == 7);
}

TEST_CASE("fast_p: correct and strictly faster than p, over all samples") {
  ReportOptions opt;
  json a = kernrl::aggregate(load({"fastp.jsonl"}), opt);
  const json& r = run_row(a, "fastp");
  // speedups of the correct samples: 1.0, 2.0, 0.5, 1.5; an incorrect one claims 3.0 (never counts)
  const json& f = r["fast_p"];
  CHECK(f["0"].get<double>() == doctest::Approx(0.8));
  CHECK(f["0.5"].get<double>() == doctest::Approx(0.6));  // 0.5 is not > 0.5
  CHECK(f["0.8"].get<double>() == doctest::Approx(0.6));
  CHECK(f["1"].get<double>() == doctest::Approx(0.4));  // 1.0 is not > 1.0
  CHECK(f["1.5"].get<double>() == doctest::Approx(0.2));
  CHECK(f["2"].get<double>() == doctest::Approx(0.0));
  // geometric mean of the correct samples' speedups: (1 * 2 * 0.5 * 1.5)^(1/4) = 1.5^(1/4)
  CHECK(r["geomean_speedup"].get<double>() == doctest::Approx(1.1066819197));
  CHECK(r["timed_correct"] == 4);
  CHECK(r["correct_rate"].get<double>() == doctest::Approx(0.8));
  CHECK(r["compile_rate"].get<double>() == doctest::Approx(1.0));
  CHECK(r["pass_at_k"]["1"]["value"].get<double>() ==
        doctest::Approx(0.8));  // 5 problems, n = 1 each
  CHECK(r["pass_at_k"]["1"]["problems"] == 5);
  CHECK(r["mean_reward"].get<double>() == doctest::Approx(0.2));  // (0 + 1 - 0.25 - 0.25 + 0.5) / 5
  CHECK(r["median_sol_fraction"].get<double>() == doctest::Approx(0.4));  // median of 0.2, 0.6, 0.4
  CHECK(r["sol_samples"] == 3);
  CHECK(r["suspicious"] == 1);
}

TEST_CASE("--reward rescores every record before aggregating") {
  ReportOptions opt;
  opt.reward_preset = std::string(KERNRL_SOURCE_DIR) + "/configs/rewards/staged-v1.yaml";
  json a = kernrl::aggregate(load({"fastp.jsonl"}), opt);
  // staged (version 1): compiled 0.1, correct 0.3, faster 0.3 + min(0.3, 0.3 * log2(s) / 5)
  //   1.0 -> 0.4; 2.0 but suspicious (scored as not correct) -> 0.1; 0.5 -> 0.4; incorrect -> 0.1;
  //   1.5 -> 0.7 + 0.06 * log2(1.5) = 0.73509775
  CHECK(run_row(a, "fastp")["mean_reward"].get<double>() == doctest::Approx(1.73509775 / 5));
  CHECK(a["reward_preset"] == opt.reward_preset);

  opt.reward_preset = "no-such-preset";
  opt.inputs = {kDir + "fastp.jsonl"};
  CHECK(report(opt).code == 2);
}

TEST_CASE(
    "shards merge by run name; duplicates keep the last; a cut-off line is reported and skipped") {
  ReportOptions opt;
  opt.inputs = {kDir + "shards"};  // a directory: both shards
  opt.format = "json";
  opt.ks = {1, 2};
  Result res = report(opt);
  REQUIRE(res.code == 0);
  CHECK(res.err.find("shard_b.jsonl:4: ") != std::string::npos);
  json a = json::parse(res.out);
  CHECK(a["schema"] == "kernrl.report.v3");
  CHECK(a["files"].size() == 2);
  REQUIRE(a["malformed_lines"].size() == 1);
  CHECK(a["malformed_lines"][0]["line"] == 4);
  CHECK(a["duplicates"] == 1);
  CHECK(a["records"] == 5);
  REQUIRE(a["runs"].size() == 2);
  CHECK(a["runs"][0]["run"] == "(none)");  // the record with run null

  // merged: a0 correct 2.0, a1 correct 1.0 (the resumed record replaced runtime_error), b0
  // compile_error, c0 incorrect
  const json& m = run_row(a, "merged");
  CHECK(m["samples"] == 4);
  CHECK(m["problems"] == 3);
  CHECK(m["correct_rate"].get<double>() == doctest::Approx(0.5));
  CHECK(m["compile_rate"].get<double>() == doctest::Approx(0.75));
  CHECK(m["format_rate"].get<double>() == doctest::Approx(1.0));
  CHECK(m["status_counts"]["runtime_error"] == 0);
  CHECK(m["status_counts"]["compile_error"] == 1);
  CHECK(m["pass_at_k"]["1"]["value"].get<double>() ==
        doctest::Approx(1.0 / 3));                                            // A: 1, B: 0, C: 0
  CHECK(m["pass_at_k"]["2"]["value"].get<double>() == doctest::Approx(1.0));  // only A has n = 2
  CHECK(m["pass_at_k"]["2"]["problems"] == 1);
  CHECK(m["geomean_speedup"].get<double>() == doctest::Approx(std::sqrt(2.0)));

  opt.by = "level";
  a = json::parse(report(opt).out);
  int seen = 0;
  for (const auto& g : a["groups"]) {
    if (g["run"] != "merged") continue;
    if (g["level"] == 1) {
      CHECK(g["samples"] == 3);
      CHECK(g["correct_rate"].get<double>() == doctest::Approx(2.0 / 3));
    } else {
      CHECK(g["level"] == 2);
      CHECK(g["samples"] == 1);
      CHECK(g["correct_rate"].get<double>() == doctest::Approx(0.0));
    }
    ++seen;
  }
  CHECK(seen == 2);

  opt.by = "problem";
  opt.run = "merged";
  a = json::parse(report(opt).out);
  REQUIRE(a["groups"].size() == 3);
  CHECK(a["groups"][0]["problem"] == "L1_1_A");
  CHECK(a["groups"][2]["problem"] == "L2_1_C");
  CHECK(a["groups"][2]["level"] == 2);
}

TEST_CASE("duplicates: the last record of (run, file, source_sha256) in its place") {
  std::vector<json> recs = {
      {{"run", "r"},
       {"file", "a"},
       {"source_sha256", "1"},
       {"status", "runtime_error"},
       {"problem", "P"}},
      {{"run", "r"},
       {"file", "b"},
       {"source_sha256", "2"},
       {"status", "correct"},
       {"problem", "P"}},
      {{"run", "r"},
       {"file", "a"},
       {"source_sha256", "1"},
       {"status", "correct"},
       {"problem", "P"}},
      {{"run", "s"},
       {"file", "a"},
       {"source_sha256", "1"},
       {"status", "incorrect"},
       {"problem", "P"}},
  };
  size_t dropped = 0;
  auto out = kernrl::drop_duplicates(kernrl::records_from_json(recs), &dropped);
  CHECK(dropped == 1);
  REQUIRE(out.size() == 3);
  CHECK(out[0].file.value_or("") == "b");
  CHECK(out[1].status_text() == "correct");
  CHECK(out[2].run_or("") == "s");
}

TEST_CASE("--baseline: per-problem deltas, regressions, --fail-on-regression") {
  ReportOptions opt;
  opt.inputs = {kDir + "compare/cur.jsonl"};
  opt.baseline = kDir + "compare/base.jsonl";
  opt.format = "json";
  Result res = report(opt);
  REQUIRE(res.code == 0);  // without --fail-on-regression a regression is only listed
  json c = json::parse(res.out)["comparison"];
  CHECK(c["regressions"] == json::array({"L1_2_B"}));
  CHECK(c["fixed"] == json::array({"L1_3_C"}));
  CHECK(c["counts"]["same"] == 1);
  CHECK(c["counts"]["new"] == 1);
  CHECK(c["counts"]["missing"] == 1);
  REQUIRE(c["problems"].size() == 5);
  const json& a = c["problems"][0];
  CHECK(a["problem"] == "L1_1_A");
  CHECK(a["status"] == "same");
  CHECK(a["speedup_delta"].get<double>() == doctest::Approx(1.0));  // 3.0 now, 2.0 before
  CHECK(a["speedup_ratio"].get<double>() == doctest::Approx(1.5));
  const json& b = c["problems"][1];
  CHECK(b["status"] == "regressed");
  CHECK(b["correct_rate_delta"].get<double>() == doctest::Approx(-1.0));
  CHECK(b["speedup_delta"].is_null());
  CHECK(c["problems"][3]["status"] == "missing");
  CHECK(c["problems"][3]["current"].is_null());
  CHECK(c["baseline_metrics"]["correct_rate"].get<double>() == doctest::Approx(0.75));
  CHECK(c["current_metrics"]["correct_rate"].get<double>() == doctest::Approx(0.75));

  opt.fail_on_regression = true;
  res = report(opt);
  CHECK(res.code == 1);
  CHECK(res.err.find("L1_2_B") != std::string::npos);
  CHECK(!res.out.empty());  // the report is still printed

  opt.format = "md";
  CHECK(report(opt).out.find("**Regressions**") != std::string::npos);
  opt.format = "csv";
  res = report(opt);
  CHECK(res.out.rfind("problem,level,status,baseline_samples", 0) == 0);
  CHECK(res.out.find("L1_2_B,1,regressed,") != std::string::npos);

  opt.baseline = kDir + "compare/cur.jsonl";  // against itself: nothing regressed
  CHECK(report(opt).code == 0);
}

TEST_CASE("--sort: leaderboard across runs, missing values last") {
  ReportOptions opt;
  opt.sort = "fast_1";
  json a = kernrl::aggregate(load({"passk.jsonl", "fastp.jsonl"}), opt);
  // fastp: 2 of 5 samples correct and > 1; passk: 3 of 10
  REQUIRE(a["leaderboard"].is_object());
  CHECK(a["leaderboard"]["entries"][0]["run"] == "fastp");
  CHECK(a["leaderboard"]["entries"][0]["value"].get<double>() == doctest::Approx(0.4));
  CHECK(a["leaderboard"]["entries"][1]["value"].get<double>() == doctest::Approx(0.3));
  CHECK(a["runs"][0]["run"] == "fastp");

  opt.sort = "pass@5";  // not in --k: computed anyway; fastp has no problem with 5 samples
  a = kernrl::aggregate(load({"fastp.jsonl", "passk.jsonl"}), opt);
  CHECK(a["k"] == json::array({1, 5}));
  CHECK(a["leaderboard"]["entries"][0]["run"] == "passk");
  CHECK(a["leaderboard"]["entries"][1]["value"].is_null());

  opt.sort = "fastest";
  CHECK_THROWS_AS(kernrl::aggregate(std::vector<json>{}, opt), kernrl::UsageError);
}

TEST_CASE("render: md, csv and json agree with the aggregate") {
  ReportOptions opt;
  opt.inputs = {kDir + "fastp.jsonl", kDir + "passk.jsonl"};
  json a = kernrl::aggregate(load({"fastp.jsonl", "passk.jsonl"}), opt);

  opt.format = "json";
  CHECK(json::parse(kernrl::render(a, opt)) == a);

  opt.format = "csv";
  std::string csv = kernrl::render(a, opt);
  CHECK(csv.rfind("run,level,problem,samples,problems,format_rate,compile_rate,correct_rate,pass@1,"
                  "pass@1_problems,"
                  "fast_0,fast_0.5,fast_0.8,fast_1,fast_1.5,fast_2,",
                  0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);  // header + 2 runs
  CHECK(csv.find("\nfastp,,,5,5,1,1,0.8,0.8,5,0.8,0.6,0.6,0.4,0.2,0,") != std::string::npos);

  opt.format = "md";
  std::string md = kernrl::render(a, opt);
  CHECK(md.find("| run | samples | problems |") != std::string::npos);
  CHECK(md.find("| fastp | 5 | 5 | 100.0% | 100.0% | 80.0% | 80.0% (5) |") != std::string::npos);
}

TEST_CASE("usage errors exit 2") {
  ReportOptions opt;
  CHECK(report(opt).code == 2);  // no inputs
  opt.inputs = {kDir + "does-not-exist.jsonl"};
  Result res = report(opt);
  CHECK(res.code == 2);
  CHECK(res.err.find("does-not-exist.jsonl") != std::string::npos);
  opt.inputs = {kDir + "fastp.jsonl"};
  opt.run = "no-such-run";
  res = report(opt);
  CHECK(res.code == 2);
  CHECK(res.err.find("runs present: fastp") != std::string::npos);
  opt.run.clear();
  opt.fail_on_regression = true;  // without --baseline
  CHECK(report(opt).code == 2);
  opt.fail_on_regression = false;
  opt.ks = {0};
  CHECK(report(opt).code == 2);
  opt.ks = {1};
  opt.by = "sample";
  CHECK(report(opt).code == 2);
  opt.by = "run";
  CHECK(report(opt).code == 0);
}

TEST_CASE("unattributed records: outside every metric, listed on their own") {
  auto rec = [](const std::string& file, json problem, const std::string& status, json reason) {
    json r = {{"schema", "kernrl.trace.v1"},
              {"run", "u"},
              {"file", file},
              {"problem", problem},
              {"status", status},
              {"source_sha256", "h" + file},
              {"speedup", status == "correct" ? json(2.0) : json(nullptr)}};
    if (problem.is_null() && !reason.is_null())
      r["problem_unknown"] = {{"reason", reason}, {"named", nullptr}, {"from", nullptr}};
    if (!problem.is_null()) r["level"] = 1;
    return r;
  };
  std::vector<json> recs = {
      rec("a.cu", "L1_1_A", "correct", nullptr), rec("b.cu", "L1_1_A", "incorrect", nullptr),
      rec("c.cu", nullptr, "format_error", "unknown_problem"),
      rec("d.cu", nullptr, "format_error", "unreadable"),
      rec("e.cu", nullptr, "format_error", nullptr)};  // an old record without a reason
  ReportOptions opt;
  opt.ks = {1};
  json a = kernrl::aggregate(recs, opt);
  const json& r = run_row(a, "u");
  // Only the two attributed samples count: 1 of 2 correct, fast_1 = 1/2 (not 1/5).
  CHECK(a["records"] == 2);
  CHECK(r["samples"] == 2);
  CHECK(r["format_rate"] == 1.0);
  CHECK(r["correct_rate"] == 0.5);
  CHECK(r["fast_p"]["1"] == 0.5);
  CHECK(r["pass_at_k"]["1"]["value"] == 0.5);
  CHECK(r["status_counts"]["format_error"] == 0);
  CHECK(a["unattributed"]["records"] == 3);
  const json& u = a["unattributed"]["runs"]["u"];
  CHECK(u["reasons"]["unknown_problem"] == 1);
  CHECK(u["reasons"]["unreadable"] == 1);
  CHECK(u["reasons"]["unknown"] == 1);
  CHECK(u["status_counts"]["format_error"] == 3);
  std::string md = kernrl::render(a, opt);
  CHECK(md.find("3 unattributed record(s)") != std::string::npos);
  CHECK(md.find("## Unattributed") != std::string::npos);
  // A run with no attributed record at all still shows up, under unattributed.
  json only = kernrl::aggregate(std::vector<json>{recs[2]}, opt);
  CHECK(only["runs"].empty());
  CHECK(only["unattributed"]["records"] == 1);
}

TEST_CASE("the speedup over torch.compile: aggregated beside the one over PyTorch eager") {
  auto rec = [](const std::string& file, double torch_x, std::optional<double> compile_x) {
    json sp = {{"torch", torch_x}};
    if (compile_x) sp["compile"] = *compile_x;
    return json{{"schema", "kernrl.trace.v1"},
                {"run", "suite"},
                {"file", file},
                {"problem", "L2_1_Conv"},
                {"level", 2},
                {"status", "correct"},
                {"speedup", torch_x},
                {"baseline", {{"kind", "torch"}, {"speedups", sp}}}};
  };
  ReportOptions opt;
  std::vector<json> recs = {rec("a", 2.0, 0.5), rec("b", 8.0, 2.0), rec("c", 1.0, std::nullopt)};
  json a = kernrl::aggregate(recs, opt);
  const json& r = run_row(a, "suite");
  CHECK(r["geomean_speedup_over"]["torch"].get<double>() == doctest::Approx(std::cbrt(16.0)));
  CHECK(r["geomean_speedup_over"]["compile"].get<double>() == doctest::Approx(1.0));
  CHECK(r["timed_over_compile"] == 2);
  opt.format = "md";
  std::string md = kernrl::render(a, opt);
  CHECK(md.find("over torch.compile") != std::string::npos);
  // Without any torch.compile figure, the table is as before.
  json plain = kernrl::aggregate(std::vector<json>{rec("c", 1.0, std::nullopt)}, opt);
  CHECK(plain["runs"][0]["geomean_speedup_over"]["compile"].is_null());
  CHECK(kernrl::render(plain, opt).find("over torch.compile") == std::string::npos);
}
