// kernelbench_output: trace records as KernelBench's run folders (eval_results.json,
// pass_at_k_results.json), with KernelBench's layout and semantics.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/files.h"
#include "record/trace_file.h"
#include "report/kernelbench.h"
#include "test_dirs.h"

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using namespace kernrl;

namespace {

const std::string kDir = std::string(KERNRL_TEST_DIR) + "/fixtures/report/";

std::vector<TraceRecord> load(const std::string& name) {
  return read_trace(kDir + name, nullptr);
}

json rec(const std::string& problem, int level, json sample, const std::string& status) {
  json r = {{"schema", "kernrl.trace.v1"},
            {"run", "r"},
            {"file", problem + "/" + sample.dump()},
            {"problem", problem},
            {"level", level},
            {"sample", sample},
            {"source_sha256", problem + sample.dump() + status},
            {"status", status},
            {"compile", {{"ms", 1.0}}},
            {"error", nullptr}};
  if (status != "correct" && status != "compiled")
    r["error"] = {{"category", status}, {"message", status + " message"}};
  if (status == "format_error") r["compile"] = nullptr;
  return r;
}

}  // namespace

TEST_CASE("kernelbench_output: eval_results.json entries as KernelBench writes them") {
  KernelBenchOutput kb = kernelbench_output(load("passk.jsonl"), {});
  REQUIRE(kb.runs.size() == 1);
  CHECK(kb.runs[0].folder == "passk_level_1");
  const ojson& results = kb.runs[0].eval_results;
  REQUIRE(results.contains("1"));  // L1_1_Alpha: problem 1 of level 1
  const ojson& list = results["1"];
  REQUIRE(list.size() == 10);
  int correct = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const ojson& e = list[i];
    CHECK(e["sample_id"] == int(i));
    // KernelBench's key order.
    std::vector<std::string> keys;
    for (auto it = e.begin(); it != e.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"sample_id", "compiled", "correctness", "metadata",
                                           "runtime", "runtime_stats"});
    CHECK(e["compiled"] == true);
    if (e["correctness"] == true) {
      ++correct;
      CHECK(e["runtime"].get<double>() == doctest::Approx(0.505));  // the kernel's mean, 3 digits
      CHECK(e["runtime_stats"]["num_trials"] == 50);
      CHECK(e["runtime_stats"]["max"].get<double>() == doctest::Approx(0.55));
      CHECK(e["runtime_stats"]["hardware"] == "NVIDIA H100 80GB HBM3");
      CHECK(e["runtime_stats"]["device"] == "cuda:0");
      CHECK(e["metadata"]["correctness_trials"] == "(5 / 5)");
      CHECK(e["metadata"]["kernrl"]["speedup"] == 2.0);
    } else {
      CHECK(e["runtime"] == -1.0);
      CHECK(e["runtime_stats"] == ojson::object());
      CHECK(e["metadata"]["correctness_issue"] == "incorrect (fixture)");
    }
  }
  CHECK(correct == 3);
  // Ten samples of one problem: pass_at_k_results.json, KernelBench's estimator.
  REQUIRE(kb.runs[0].pass_at_k);
  const ojson& pk = *kb.runs[0].pass_at_k;
  CHECK(pk["problems"]["1"]["total_samples"] == 10);
  CHECK(pk["problems"]["1"]["correct_samples"] == 3);
  CHECK(pk["problems"]["1"]["pass@1"].get<double>() == doctest::Approx(0.3));
  CHECK(pk["averages"]["avg_pass@1"].get<double>() == doctest::Approx(0.3));
  CHECK(pk["metadata"]["total_problems"] == 1);
  CHECK(pk["metadata"]["pass@1_count"] == 1);
}

TEST_CASE("kernelbench_output: compiled, compile logs, timeouts and numeric key order") {
  std::vector<json> rs = {
      rec("L1_10_X", 1, 0, "correct"),      rec("L1_9_Y", 1, 0, "timeout"),
      rec("L1_2_Z", 1, 0, "compile_error"), rec("L1_2_Z", 1, 1, "runtime_error"),
      rec("L1_2_Z", 1, 2, "format_error"),  rec("L1_9_Y", 1, 1, "compiled")};
  rs[2]["error"]["log"] = "x.cu(3): error: expected a ;";
  KernelBenchOutput kb = kernelbench_output(rs, {});
  REQUIRE(kb.runs.size() == 1);
  const ojson& res = kb.runs[0].eval_results;
  std::vector<std::string> keys;
  for (auto it = res.begin(); it != res.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"2", "9", "10"});
  std::string text = kernelbench_text(res, 4);
  CHECK(text.find("\"2\"") < text.find("\"9\""));
  CHECK(text.find("\"9\"") < text.find("\"10\""));
  CHECK(text.find("\n    \"2\": [") != std::string::npos);  // json.dump(indent=4)
  // Timeouts are not compiled (KernelBench); runtime errors are.
  CHECK(res["9"][0]["compiled"] == false);
  CHECK(res["9"][0]["metadata"]["error"] == "Evaluation timed out");
  CHECK(res["9"][1]["compiled"] == true);
  CHECK(res["9"][1]["correctness"] == false);
  CHECK(res["2"][0]["compiled"] == false);
  CHECK(res["2"][0]["metadata"]["compilation_error"] ==
        "compile_error message\nx.cu(3): error: expected a ;");
  CHECK(res["2"][1]["compiled"] == true);
  CHECK(res["2"][1]["metadata"]["runtime_error_name"] == "runtime_error");
  CHECK(res["2"][2]["compiled"] == false);
  CHECK(res["2"][2]["metadata"]["compilation_error_name"] == "format_error");
}

TEST_CASE("kernelbench_output: one folder per run and level; --level; every sample present") {
  std::vector<json> rs = {rec("L1_1_A", 1, 0, "correct"), rec("L2_1_B", 2, 0, "correct"),
                          rec("L1_1_A", 1, 0, "incorrect"),  // a second sample claiming number 0
                          rec("L1_3_C", 1, nullptr, "correct")};
  // A file for a problem kernrl does not have, named in KernelBench's layout.
  json unknown = rec("", 1, 4, "format_error");
  unknown["problem"] = nullptr;
  unknown["level"] = nullptr;
  unknown["problem_unknown"] = {
      {"reason", "unknown_problem"}, {"named", "L1_999"}, {"from", "path"}};
  // An unreadable file: no problem, no number.
  json unreadable = unknown;
  unreadable["file"] = "gone.cu";
  unreadable["problem_unknown"] = {{"reason", "unreadable"}, {"named", nullptr}, {"from", nullptr}};
  unreadable["source_sha256"] = nullptr;
  rs.push_back(unknown);
  rs.push_back(unreadable);
  json other_run = rec("L1_1_A", 1, 0, "correct");
  other_run["run"] = "other/run";
  rs.push_back(other_run);

  KernelBenchOutput kb = kernelbench_output(rs, {});
  REQUIRE(kb.runs.size() == 3);
  CHECK(kb.runs[0].folder == "other_run_level_1");
  CHECK(kb.runs[1].folder == "r_level_1");
  CHECK(kb.runs[2].folder == "r_level_2");
  const ojson& l1 = kb.runs[1].eval_results;
  REQUIRE(l1["1"].size() == 2);
  CHECK(l1["1"][0]["sample_id"] == 0);
  CHECK(l1["1"][1]["sample_id"] == 1);  // renumbered: sample ids stay unique
  CHECK(l1["1"][1]["metadata"]["kernrl"]["sample"] == 0);
  CHECK(l1["3"][0]["sample_id"] == 0);
  REQUIRE(l1.contains("999"));
  CHECK(l1["999"][0]["compiled"] == false);
  CHECK(l1["999"][0]["metadata"]["kernrl"]["problem_unknown"]["named"] == "L1_999");
  CHECK(kb.unattributed_count == 1);
  CHECK(kb.unattributed["r"][0]["file"] == "gone.cu");
  CHECK(kb.unattributed["r"][0]["reason"] == "unreadable");

  auto files = kernelbench_files(kb);
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.first);
  CHECK(std::find(names.begin(), names.end(), "r_level_1/eval_results.json") != names.end());
  CHECK(std::find(names.begin(), names.end(), "r_level_1/pass_at_k_results.json") != names.end());
  CHECK(std::find(names.begin(), names.end(), "r_level_2/pass_at_k_results.json") == names.end());
  CHECK(std::find(names.begin(), names.end(), "unattributed.json") != names.end());

  KernelBenchOptions only2;
  only2.level = 2;
  KernelBenchOutput kb2 = kernelbench_output(rs, only2);
  REQUIRE(kb2.runs.size() == 1);
  CHECK(kb2.runs[0].level == 2);
  KernelBenchOptions one_run;
  one_run.run = "other/run";
  CHECK(kernelbench_output(rs, one_run).runs.size() == 1);
}

TEST_CASE("kernelbench_output: pass@k clamps k to the samples, as KernelBench does") {
  std::vector<json> rs = {rec("L1_1_A", 1, 0, "correct"), rec("L1_1_A", 1, 1, "incorrect"),
                          rec("L1_1_A", 1, 2, "incorrect"), rec("L1_2_B", 1, 0, "incorrect")};
  KernelBenchOptions o;
  o.ks = {1, 5};
  KernelBenchOutput kb = kernelbench_output(rs, o);
  REQUIRE(kb.runs.at(0).pass_at_k);
  const ojson& pk = *kb.runs[0].pass_at_k;
  CHECK(pk["problems"]["1"]["pass@1"].get<double>() == doctest::Approx(1.0 / 3));
  CHECK(pk["problems"]["1"]["pass@3"].get<double>() == doctest::Approx(1.0));  // k=5 clamped to 3
  CHECK_FALSE(pk["problems"]["1"].contains("pass@5"));
  CHECK(pk["problems"]["2"]["pass@1"].get<double>() == doctest::Approx(0.0));
  // Averages over every problem; pass@5 is held by none of them.
  CHECK(pk["averages"]["avg_pass@1"].get<double>() == doctest::Approx(1.0 / 6));
  CHECK(pk["averages"]["avg_pass@5"].get<double>() == doctest::Approx(0.0));
  CHECK(pk["metadata"]["pass@5_count"] == 0);
  CHECK(pk["metadata"]["total_evaluated_samples"] == 4);
}

TEST_CASE("write_kernelbench: whole files, and the reason when it cannot write") {
  namespace fs = std::filesystem;
  fs::path d = fresh_test_dir("kernelbench");
  KernelBenchOutput kb = kernelbench_output(load("passk.jsonl"), {});
  CHECK(write_kernelbench(kb, (d / "out").string()).empty());
  std::ifstream in(d / "out" / "passk_level_1" / "eval_results.json");
  json back = json::parse(in);
  CHECK(back["1"].size() == 10);
  CHECK(fs::exists(d / "out" / "passk_level_1" / "pass_at_k_results.json"));
  std::ofstream(d / "file") << "x";
  std::string err = write_kernelbench(kb, (d / "file" / "sub").string());
  CHECK(err.find("eval_results.json") != std::string::npos);
  CHECK_FALSE(write_whole_file("/dev/full", "x").empty());
  fs::remove_all(d);
}
