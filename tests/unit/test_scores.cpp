// Scores that mean something per level: the problem set's `score` and `throughput` fields, the
// speed-of-light term of the reward presets (version 2), the second baseline (the problem's
// reference kernel) and throughput in records, and the report's pooled figures and scores by
// level (tests/fixtures/report/levels.jsonl, numbers worked out by hand in the comments).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cli/summary.h"
#include "core/config.h"
#include "core/paths.h"
#include "core/problem.h"
#include "grading/baselines.h"
#include "record/record.h"
#include "record/reward.h"
#include "record/trace_file.h"
#include "report/report.h"

using namespace kernrl;
using nlohmann::json;

namespace {

const std::string kSpec = R"(id: L1_99_Test
level: 1
name: Test
description: test
sizes:
  bench: {N: 1024}
  test:
    - {N: 3}
    - {N: 17}
inputs:
  - {name: x, dtype: float32, shape: [N], init: {normal: {mean: 0, std: 1}}}
outputs:
  - {name: out, dtype: float32, shape: [N]}
flops: "N"
bytes: auto
torch: "x"
)";

std::string spec_error(const std::string& extra) {
  try {
    parse_problem_yaml(kSpec + extra, "p.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

// A correct record with its timings; 3e9 bytes at 3000 GB/s take 1 ms, `flops` at 50 TFLOP/s
// flops / 5e10 ms.
json correct_record(double kernel_ms, double torch_ms, double flops = 1e9) {
  return {{"status", "correct"},
          {"work", {{"flops", flops}, {"bytes", 3e9}, {"dtype_class", "fp32"}}},
          {"timing",
           {{"kernel", {{"median_ms", kernel_ms}, {"mad_ms", 0.0}, {"n", 10}}},
            {"baseline", {{"median_ms", torch_ms}}}}}};
}

std::string fixture(const std::string& name) {
  return std::string(KERNRL_TEST_DIR) + "/fixtures/report/" + name;
}

json report_json(ReportOptions opt) {
  opt.format = "json";
  std::ostringstream out, err;
  REQUIRE(run_report(opt, out, err).empty());
  return json::parse(out.str());
}

std::string report_text(ReportOptions opt, const std::string& format) {
  opt.format = format;
  std::ostringstream out, err;
  REQUIRE(run_report(opt, out, err).empty());
  return out.str();
}

const json& level_row(const json& a, int level) {
  for (const auto& m : a["levels"])
    if (m["level"] == level) return m;
  FAIL("no level " << level);
  static json none;
  return none;
}

}  // namespace

TEST_CASE("problem.yaml: score and throughput are read and checked") {
  ProblemSpec p = parse_problem_yaml(kSpec, "p.yaml");
  CHECK(p.score.baseline == "torch");
  CHECK(p.score.pooled);
  CHECK(p.score.lead == "speedup");
  CHECK(p.throughput.unit.empty());
  p = parse_problem_yaml(kSpec +
                             "score: {baseline: kernel, pooled: false, lead: sol, note: why}\n"
                             "throughput: {unit: hashes, count: \"2 * N\"}\n",
                         "p.yaml");
  CHECK(p.score.baseline == "kernel");
  CHECK_FALSE(p.score.pooled);
  CHECK(p.score.lead == "sol");
  CHECK(p.score.note == "why");
  CHECK(p.throughput.unit == "hashes");
  CHECK(eval_expr(p.throughput.count, p.bench) == 2048);
  CHECK(spec_error("score: {baseline: cuda}\n")
            .find("p.yaml:17: 'score.baseline' must be torch or kernel") == 0);
  CHECK(spec_error("score: {lead: time}\n").find("'score.lead' must be speedup or sol") !=
        std::string::npos);
  CHECK(spec_error("score: {pooled: maybe}\n").find("true or false") != std::string::npos);
  CHECK(spec_error("score: {best: 1}\n").find("unknown key 'score.best'") != std::string::npos);
  CHECK(spec_error("throughput: {unit: hashes}\n").find("both 'unit' and 'count'") !=
        std::string::npos);
  CHECK(spec_error("throughput: {unit: hashes/s, count: N}\n").find("no '/'") != std::string::npos);
  CHECK(spec_error("throughput: {unit: hashes, count: \"M\"}\n").find("unknown size 'M'") !=
        std::string::npos);
  CHECK(spec_error("throughput: {unit: hashes, count: \"N / 0\"}\n") != "no error");
}

TEST_CASE("the problem set: every level pools alike, reference-kernel levels are not pooled") {
  std::map<int, std::set<bool>> pooled;
  std::set<std::string> kernel_baseline;
  for (const auto& dir : problem_dirs(problems_dir())) {
    ProblemSpec p = load_problem(dir);
    INFO("problem ", p.id);
    pooled[p.level].insert(p.score.pooled);
    if (p.score.baseline == "kernel") {
      kernel_baseline.insert(p.id);
      CHECK(std::filesystem::exists(dir / "solution.cu"));
    }
    if (!p.score.pooled) CHECK_FALSE(p.score.note.empty());  // the report says why
  }
  for (const auto& [level, values] : pooled) {
    INFO("level ", level);
    CHECK(values.size() == 1);
  }
  CHECK(pooled[10] == std::set<bool>{false});
  CHECK(kernel_baseline.size() == 8);  // the L10 problems
}

TEST_CASE("reward presets, version 2: a speed-of-light term for correct kernels") {
  auto k = load_reward_preset("kernrl"), s = load_reward_preset("staged"),
       w = load_reward_preset("weighted");
  auto k1 = load_reward_preset("kernrl-v1"), s1 = load_reward_preset("staged-v1"),
       w1 = load_reward_preset("weighted-v1");
  CHECK(k.version == 2);
  CHECK(s.version == 2);
  CHECK(w.version == 2);
  CHECK(k1.version == 1);
  auto rec = [](const std::string& st, double speedup, double sol) {
    return json{{"status", st}, {"speedup", speedup}, {"sol_fraction", sol}};
  };
  // kernrl: (speedup - 1) * 0.5 + 0.5 * sol; min(speedup - 1, 2) + 0.5 * sol.
  CHECK(compute_reward(k, rec("correct", 1.0, 0.8)).get<double>() == doctest::Approx(0.4));
  CHECK(compute_reward(k, rec("correct", 0.9, 0.8)).get<double>() == doctest::Approx(-0.05 + 0.4));
  CHECK(compute_reward(k, rec("correct", 5.0, 0.3)).get<double>() == doctest::Approx(2.15));
  CHECK(compute_reward(k, rec("correct", 1.0, 3.0)).get<double>() ==
        doctest::Approx(0.5));  // capped at 1
  CHECK(compute_reward(k, rec("incorrect", 0, 0.9)).get<double>() == doctest::Approx(-0.25));
  json suspicious = rec("correct", 1.0, 0.9);
  suspicious["suspicious"] = true;
  CHECK(compute_reward(k, suspicious).get<double>() == doctest::Approx(-0.25));
  // No sol_fraction (no known device ceilings): no term, the version 1 value.
  CHECK(compute_reward(k, json{{"status", "correct"}, {"speedup", 1.5}}).get<double>() ==
        doctest::Approx(0.5));
  // staged: 0.1 + 0.3 + 0.2 * sol (+ faster terms above 1x).
  CHECK(compute_reward(s, rec("correct", 0.9, 0.5)).get<double>() == doctest::Approx(0.5));
  CHECK(compute_reward(s, rec("correct", 1024.0, 1.0)).get<double>() == doctest::Approx(1.2));
  // weighted: 0.1 + 0.2 + 0.5 + 0.2 * min(s, 3) / 3 + 0.2 * sol.
  CHECK(compute_reward(w, rec("correct", 1.5, 0.5)).get<double>() ==
        doctest::Approx(0.8 + 0.1 + 0.1));
  // Version 1 presets ignore sol_fraction.
  CHECK(compute_reward(k1, rec("correct", 1.0, 0.8)).get<double>() == doctest::Approx(0.0));
  CHECK(compute_reward(s1, rec("correct", 0.9, 0.5)).get<double>() == doctest::Approx(0.4));
  CHECK(compute_reward(w1, rec("correct", 1.5, 0.5)).get<double>() == doctest::Approx(0.9));
  // A preset file without `version` is version 1; a negative sol is refused.
  auto dir = std::filesystem::temp_directory_path() / "kernrl-test-presets";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "mine.yaml") << "kind: kernrl\ncompile_failure: -1\nincorrect: 0\n"
                                      "speed_cap: 1\nslow_scale: 1\n";
  CHECK(load_reward_preset((dir / "mine.yaml").string()).version == 1);
  std::ofstream(dir / "bad.yaml") << "kind: kernrl\nsol: -1\n";
  CHECK_THROWS_AS(load_reward_preset((dir / "bad.yaml").string()), SpecError);
  std::ofstream(dir / "text.yaml") << "kind: kernrl\nsol: lots\n";
  CHECK_THROWS_AS(load_reward_preset((dir / "text.yaml").string()), SpecError);
}

TEST_CASE("records: the baseline a speedup is against, and the speedup over each") {
  auto preset = load_reward_preset("kernrl");
  json ceil = {{"bandwidth_gbs", 3000.0}, {"matmul_tflops", {{"fp32", 50.0}}}};
  // Only the PyTorch baseline: over it.
  json r = correct_record(2.0, 4.0);
  finalize_record(r, preset, ceil);
  CHECK(r["speedup"].get<double>() == doctest::Approx(2.0));
  CHECK(r["baseline"]["kind"] == "torch");
  CHECK(r["baseline"]["speedups"]["torch"].get<double>() == doctest::Approx(2.0));
  CHECK_FALSE(r["baseline"]["speedups"].contains("kernel"));
  CHECK(r["reward_preset_version"] == 2);
  // A reference kernel timed, but the problem's speedups are over PyTorch: both given, torch
  // counts.
  r = correct_record(2.0, 4.0);
  r["timing"]["kernel_baseline"] = {{"median_ms", 3.0}};
  finalize_record(r, preset, ceil);
  CHECK(r["baseline"]["kind"] == "torch");
  CHECK(r["speedup"].get<double>() == doctest::Approx(2.0));
  CHECK(r["baseline"]["speedups"]["kernel"].get<double>() == doctest::Approx(1.5));
  // The problem's speedups are over its reference kernel.
  r["timing"]["speedup_baseline"] = "kernel";
  finalize_record(r, preset, ceil);
  CHECK(r["baseline"]["kind"] == "kernel");
  CHECK(r["speedup"].get<double>() == doctest::Approx(1.5));
  CHECK(r["baseline"]["speedups"]["torch"].get<double>() == doctest::Approx(2.0));
  // ... the reward follows it: min(1.5 - 1, 2) + 0.5 * sol (1 ms / 2 ms).
  CHECK(r["sol_fraction"].get<double>() == doctest::Approx(0.5));
  CHECK(r["reward"].get<double>() == doctest::Approx(0.5 + 0.25));
  // Wanted but not timed: over PyTorch, and the record says why.
  r = correct_record(2.0, 4.0);
  r["timing"]["speedup_baseline"] = "kernel";
  r["timing"]["kernel_baseline_error"] = "the reference kernel graded incorrect";
  finalize_record(r, preset, ceil);
  CHECK(r["baseline"]["kind"] == "torch");
  CHECK(r["baseline"]["kernel_missing"] == "the reference kernel graded incorrect");
  CHECK(human_summary(r, false).find("no reference kernel timing") != std::string::npos);
  // Not timed at all: no baseline object.
  json untimed = {{"status", "incorrect"}};
  finalize_record(untimed, preset, ceil);
  CHECK_FALSE(untimed.contains("baseline"));
  CHECK(untimed["speedup"].is_null());
}

TEST_CASE("records: achieved throughput, and the problem's natural unit") {
  auto preset = load_reward_preset("kernrl");
  json ceil = {{"bandwidth_gbs", 3000.0}, {"matmul_tflops", {{"fp32", 50.0}}}};
  // 3e9 bytes and 2e12 flops in 50 ms: 60 GB/s, 40 TFLOP/s; at the ceilings the flops take 40 ms
  // and the bytes 1 ms, so TFLOP/s is the natural unit.
  json r = correct_record(50.0, 100.0, 2e12);
  finalize_record(r, preset, ceil);
  CHECK(r["suspicious"] == false);
  CHECK(r["throughput"]["gb_s"].get<double>() == doctest::Approx(60.0));
  CHECK(r["throughput"]["tflop_s"].get<double>() == doctest::Approx(40.0));
  CHECK(r["throughput"]["natural"] == "tflop_s");
  CHECK_FALSE(r["throughput"].contains("units_per_s"));
  // Memory bound.
  r = correct_record(50.0, 100.0);
  finalize_record(r, preset, ceil);
  CHECK(r["throughput"]["natural"] == "gb_s");
  // The problem's own unit (problem.yaml throughput, `work.units` in the record).
  r = correct_record(50.0, 100.0, 2e12);
  r["work"]["units"] = {{"unit", "hashes"}, {"count", 1048576}};
  finalize_record(r, preset, ceil);
  CHECK(r["throughput"]["unit"] == "hashes");
  CHECK(r["throughput"]["units_per_s"].get<double>() == doctest::Approx(1048576 / 0.05));
  CHECK(r["throughput"]["natural"] == "units_per_s");
  std::string text = human_summary(r, false);
  CHECK(text.find("rate     2.1e+07 hashes/s, 60 GB/s, 40 TFLOP/s") != std::string::npos);
}

TEST_CASE("baseline files: reference kernel timings, matched by sizes and solution hash") {
  json doc = {
      {"schema", kBaselineSchema},
      {"device", {{"name", "GPU X"}}},
      {"versions", {{"torch", "2.11"}, {"cuda", "13.0"}, {"driver", "13.0"}}},
      {"ceilings", json::object()},
      {"problems",
       {{"L10_1_SHA256_Single",
         {{"sizes", {{"batch", 4}}},
          {"baseline", {{"median_ms", 30.0}}},
          {"kernel_baseline", {{"timing", {{"median_ms", 0.4}}}, {"source_sha256", "abc"}}}}},
        {"L3_43_MinGPTCausalAttention",
         {{"sizes", {{"batch_size", 2}}},
          {"baseline", {{"median_ms", 6.0}}},
          {"reference_sha256", "ref1"}}}}}};
  BaselineStore store;
  store.configure_doc(doc, "mem.json");
  store.load_for({{"name", "GPU X"}}, {{"torch", "2.11"}, {"cuda", "13.0"}, {"driver", "13.0"}});
  auto kb = store.kernel_baseline("L10_1_SHA256_Single", {{"batch", 4}}, "abc");
  REQUIRE(kb);
  CHECK((*kb)["median_ms"].get<double>() == doctest::Approx(0.4));
  CHECK(store.source() == "file:mem.json");
  CHECK_FALSE(store.kernel_baseline("L10_1_SHA256_Single", {{"batch", 4}}, "changed"));
  CHECK_FALSE(store.kernel_baseline("L10_1_SHA256_Single", {{"batch", 8}}, "abc"));
  CHECK_FALSE(store.kernel_baseline("L1_23_Softmax", {{"batch", 4}}, "abc"));
  CHECK(store.baseline("L10_1_SHA256_Single", {{"batch", 4}}));
  CHECK(store.baseline("L10_1_SHA256_Single", {{"batch", 4}}, "any"));  // entry without a hash
  // The PyTorch timing of a reference that changed since (a new fused route) is not reused.
  CHECK(store.baseline("L3_43_MinGPTCausalAttention", {{"batch_size", 2}}, "ref1"));
  CHECK_FALSE(store.baseline("L3_43_MinGPTCausalAttention", {{"batch_size", 2}}, "ref2"));
  CHECK(store.baseline("L3_43_MinGPTCausalAttention", {{"batch_size", 2}}));
  // Other versions: nothing reused.
  BaselineStore other;
  other.configure_doc(doc, "mem.json");
  other.load_for({{"name", "GPU X"}}, {{"torch", "2.12"}, {"cuda", "13.0"}, {"driver", "13.0"}});
  CHECK_FALSE(other.kernel_baseline("L10_1_SHA256_Single", {{"batch", 4}}, "abc"));
}

TEST_CASE("config: timing.kernel_baseline") {
  Config c;
  CHECK(c.kernel_baseline == "auto");
  c.merge_text("timing:\n  kernel_baseline: never\n", "c.yaml");
  CHECK(c.kernel_baseline == "never");
  CHECK(Config::from_json(c.to_json()).kernel_baseline == "never");
  CHECK_THROWS_WITH_AS(c.merge_text("timing:\n  kernel_baseline: sometimes\n", "c.yaml"),
                       doctest::Contains("expected auto, always or never"), SpecError);
}

TEST_CASE("report: levels whose speedups are not comparable stay out of pooled figures") {
  ReportOptions opt;
  opt.inputs = {fixture("levels.jsonl")};
  json a = report_json(opt);
  CHECK(a["schema"] == "kernrl.report.v3");
  const json& run = a["runs"][0];
  // Pooled: L1 (2.0, 0.5) and L9 (1.0, and an incorrect sample): geomean 1, 3 timed, fast_1 1/4.
  CHECK(run["geomean_speedup"].get<double>() == doctest::Approx(1.0));
  CHECK(run["timed_correct"] == 3);
  CHECK(run["fast_p"]["1"].get<double>() == doctest::Approx(0.25));
  CHECK(run["fast_p"]["0"].get<double>() == doctest::Approx(0.75));
  CHECK(run["unpooled"]["samples"] == 2);
  CHECK(run["unpooled"]["timed_correct"] == 2);
  CHECK(run["unpooled"]["levels"] == json::array({10}));
  CHECK(run["unpooled"]["problems"] == json::array({"L10_1_SHA256_Single"}));
  // Rates and SOL fractions cover every level: 5 correct of 6; mean SOL (.5+.2+.9+.3+.4)/5.
  CHECK(run["correct_rate"].get<double>() == doctest::Approx(5.0 / 6));
  CHECK(run["mean_sol_fraction"].get<double>() == doctest::Approx(0.46));
  CHECK(run["median_sol_fraction"].get<double>() == doctest::Approx(0.4));
  CHECK(run["lead"] == "mixed");
  CHECK(run["speedup_baselines"]["torch"] == 3);
  CHECK(run["speedup_baselines"]["kernel"] == 0);
  CHECK(a["pooled"]["left_out"] == true);
  CHECK(a["pooled"]["all_levels"] == false);
  CHECK(a["pooled"]["not_comparable"]["levels"] == json::array({10}));
  CHECK(a["pooled"]["not_comparable"]["samples"] == 2);
  CHECK(a["pooled"]["not_comparable"]["notes"].contains("L10"));

  // Scores by level: each level over all its records.
  const json& l1 = level_row(a, 1);
  CHECK(l1["geomean_speedup"].get<double>() == doctest::Approx(1.0));
  CHECK(l1["mean_sol_fraction"].get<double>() == doctest::Approx(0.35));
  CHECK(l1["lead"] == "speedup");
  CHECK(l1["pooled"] == true);
  const json& l9 = level_row(a, 9);
  CHECK(l9["lead"] == "sol");
  CHECK(l9["correct_rate"].get<double>() == doctest::Approx(0.5));
  const json& l10 = level_row(a, 10);
  CHECK(l10["pooled"] == false);
  CHECK(l10["lead"] == "sol");
  CHECK(l10["note"].is_string());
  CHECK(l10["unpooled"].is_null());  // a level's own figures leave nothing out
  CHECK(l10["geomean_speedup"].get<double>() == doctest::Approx(std::sqrt(3.0)));
  CHECK(l10["speedup_baselines"]["kernel"] == 2);
  CHECK(l10["geomean_speedup_over"]["kernel"].get<double>() == doctest::Approx(std::sqrt(3.0)));
  CHECK(l10["geomean_speedup_over"]["torch"].get<double>() ==
        doctest::Approx(std::sqrt(800.0 * 1000.0)));

  // --pool-all: every level pooled: (2 * 0.5 * 1 * 1.5 * 2)^(1/5), fast_1 3/6.
  opt.pool_all = true;
  json b = report_json(opt);
  CHECK(b["runs"][0]["geomean_speedup"].get<double>() == doctest::Approx(std::pow(3.0, 0.2)));
  CHECK(b["runs"][0]["fast_p"]["1"].get<double>() == doctest::Approx(0.5));
  CHECK(b["runs"][0]["unpooled"].is_null());
  CHECK(b["pooled"]["left_out"] == false);
  CHECK(b["pooled"]["all_levels"] == true);
  CHECK(b["pooled"]["not_comparable"]["samples"] == 2);
}

TEST_CASE("report: every format says what the pooled figures leave out") {
  ReportOptions opt;
  opt.inputs = {fixture("levels.jsonl")};
  std::string md = report_text(opt, "md");
  CHECK(md.find("Pooled speedup figures (the runs' geomean speedup and fast_p) leave out L10 "
                "(2 sample(s) of 1 problem(s))") != std::string::npos);
  CHECK(md.find("--pool-all includes them") != std::string::npos);
  CHECK(md.find("## Scores by level") != std::string::npos);
  CHECK(md.find("| levels | L9 | SOL | 0.900 SOL |") != std::string::npos);
  CHECK(md.find("| levels | L1 | speedup | 1.000x |") != std::string::npos);
  CHECK(md.find("1.732x (ref kernel) (2)") != std::string::npos);
  std::string csv = report_text(opt, "csv");
  std::string head = csv.substr(0, csv.find('\n'));
  CHECK(head.find(",mean_sol_fraction,lead,geomean_speedup_torch,geomean_speedup_kernel,"
                  "unpooled_samples") != std::string::npos);
  CHECK(csv.find(",0.46,mixed,1,,2,,\n") != std::string::npos);
  std::string html = report_text(opt, "html");
  CHECK(html.find("id=\"levels\">Scores by level") != std::string::npos);
  CHECK(html.find("leave out L10") != std::string::npos);
  CHECK(html.find("L10 (not pooled)") != std::string::npos);
  CHECK(html.find("levels \u00b7 pooled levels") != std::string::npos);
  CHECK(html.find("Mean SOL fraction of timed samples, by level") != std::string::npos);
  opt.pool_all = true;
  md = report_text(opt, "md");
  CHECK(md.find("Pooled speedup figures include L10 (2 sample(s) of 1 problem(s), --pool-all)") !=
        std::string::npos);
}

TEST_CASE("report: a problem's median throughput in its natural unit") {
  ReportOptions opt;
  opt.inputs = {fixture("levels.jsonl")};
  opt.by = "problem";
  json a = report_json(opt);
  for (const auto& g : a["groups"]) {
    INFO("problem ", g["problem"]);
    if (g["problem"] == "L10_1_SHA256_Single") {
      CHECK(g["median_throughput"]["value"].get<double>() == doctest::Approx(2e9));
      CHECK(g["median_throughput"]["unit"] == "hashes/s");
      CHECK(g["median_throughput"]["samples"] == 2);
    } else if (g["problem"] == "L1_23_Softmax") {
      CHECK(g["median_throughput"]["value"].get<double>() == doctest::Approx(1500.0));
      CHECK(g["median_throughput"]["unit"] == "GB/s");
    } else {
      CHECK(g["median_throughput"].is_null());
    }
  }
  CHECK(a["runs"][0]["median_throughput"].is_null());  // units differ across problems
  std::string md = report_text(opt, "md");
  CHECK(md.find("| 2e+09 hashes/s |") != std::string::npos);
  CHECK(md.find("| 1500 GB/s |") != std::string::npos);
  std::string csv = report_text(opt, "csv");
  CHECK(csv.find(",2000000000,hashes/s\n") != std::string::npos);
}

TEST_CASE("report --baseline: speedups compared over one baseline") {
  ReportOptions opt;
  opt.inputs = {fixture("levels.jsonl")};
  opt.baseline = fixture("levels_old.jsonl");  // graded when L10's speedups were over PyTorch
  json a = report_json(opt);
  std::map<std::string, json> rows;
  for (const auto& p : a["comparison"]["problems"]) rows[p["problem"].get<std::string>()] = p;
  const json& l10 = rows.at("L10_1_SHA256_Single");
  CHECK(l10["speedup_over"] == "torch");
  CHECK(l10["current"]["geomean_speedup"].get<double>() == doctest::Approx(std::sqrt(8e5)));
  CHECK(l10["baseline"]["geomean_speedup"].get<double>() == doctest::Approx(900.0));
  const json& l1 = rows.at("L1_23_Softmax");
  CHECK(l1["speedup_over"] == "torch");
  CHECK(l1["speedup_ratio"].get<double>() == doctest::Approx(1.0));
  // The same kind on both sides: the records' own speedups.
  opt.baseline = fixture("levels.jsonl");
  a = report_json(opt);
  for (const auto& p : a["comparison"]["problems"])
    if (p["problem"] == "L10_1_SHA256_Single") {
      CHECK(p["speedup_over"] == "kernel");
      CHECK(p["current"]["geomean_speedup"].get<double>() == doctest::Approx(std::sqrt(3.0)));
    }
}

TEST_CASE("report: --reward rescoring records the preset's version") {
  ReportOptions opt;
  opt.inputs = {fixture("levels.jsonl")};
  opt.reward_preset = "kernrl-v1";
  json a = report_json(opt);
  // kernrl-v1: L1 1.0 and -0.25, L9 0 and -0.25, L10 0.5 and 1.0: 2.0 / 6.
  CHECK(a["runs"][0]["mean_reward"].get<double>() == doctest::Approx(2.0 / 6));
  opt.reward_preset = "kernrl";
  a = report_json(opt);
  // version 2 adds 0.5 * sol for the correct samples: 0.5 * (0.5 + 0.2 + 0.9 + 0.3 + 0.4) = 1.15.
  CHECK(a["runs"][0]["mean_reward"].get<double>() == doctest::Approx(3.15 / 6));
}
