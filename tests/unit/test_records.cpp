#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/hash.h"
#include "core/problem.h"
#include "grading/baselines.h"
#include "record/feedback.h"
#include "record/record.h"
#include "record/reward.h"
#include "record/trace_file.h"

using namespace kernrl;
using nlohmann::json;

TEST_CASE("sha256 known answer") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(derive_seed(1, "a") != derive_seed(1, "b"));
  CHECK(derive_seed(1, "a") == derive_seed(1, "a"));
}

TEST_CASE("reward presets") {
  auto k = load_reward_preset("kernrl");
  auto s = load_reward_preset("staged");
  auto w = load_reward_preset("weighted");
  auto rec = [](const std::string& st, double speedup) {
    return json{{"status", st}, {"speedup", speedup}};
  };
  CHECK(compute_reward(k, rec("compile_error", 0)).get<double>() == doctest::Approx(-0.5));
  CHECK(compute_reward(k, rec("format_error", 0)).get<double>() == doctest::Approx(-0.5));
  CHECK(compute_reward(k, rec("incorrect", 0)).get<double>() == doctest::Approx(-0.25));
  CHECK(compute_reward(k, rec("runtime_error", 0)).get<double>() == doctest::Approx(-0.25));
  CHECK(compute_reward(k, rec("correct", 1.5)).get<double>() == doctest::Approx(0.5));
  CHECK(compute_reward(k, rec("correct", 5.0)).get<double>() == doctest::Approx(2.0));
  CHECK(compute_reward(k, rec("correct", 0.5)).get<double>() == doctest::Approx(-0.25));
  CHECK(compute_reward(k, rec("compiled", 0)).is_null());
  CHECK(compute_reward(s, rec("incorrect", 0)).get<double>() == doctest::Approx(0.1));
  CHECK(compute_reward(s, rec("correct", 0.9)).get<double>() == doctest::Approx(0.4));
  CHECK(compute_reward(s, rec("correct", 2.0)).get<double>() ==
        doctest::Approx(0.1 + 0.3 + 0.3 + 0.3 / 5));
  CHECK(compute_reward(s, rec("correct", 1024.0)).get<double>() == doctest::Approx(1.0));
  CHECK(compute_reward(w, rec("correct", 6.0)).get<double>() == doctest::Approx(1.0));
  CHECK(compute_reward(w, rec("compile_error", 0)).get<double>() == doctest::Approx(0.1));
  CHECK_THROWS_AS(load_reward_preset("nope"), SpecError);
}

TEST_CASE("feedback: status, key compiler lines, guidance, bounded") {
  json r = {{"status", "compile_error"},
            {"error",
             {{"category", "compile_error"},
              {"message", "NVRTC: compilation failed"},
              {"log",
               "k.cu(3): warning: unused\nk.cu(7): error: identifier \"foo\" is undefined\n\n1 "
               "error detected in the compilation of \"k.cu\".\n"}}}};
  auto f = make_feedback(r);
  CHECK(f.find("Status: compile_error") == 0);
  CHECK(f.find("identifier \"foo\" is undefined") != std::string::npos);
  CHECK(f.find("warning") == std::string::npos);
  r["error"]["log"] = std::string(10000, 'x') + " error";
  CHECK(make_feedback(r).size() <= kMaxFeedbackChars);
}

TEST_CASE("speed of light and the suspicious flag") {
  json ceil = {{"bandwidth_gbs", 3000.0}, {"matmul_tflops", {{"fp32", 50.0}, {"fp16", 700.0}}}};
  // 3 GB at 3000 GB/s = 1 ms; 1e9 flops at 50 TFLOP/s = 0.02 ms: memory bound.
  CHECK(sol_ms(1e9, 3e9, ceil, "fp32") == doctest::Approx(1.0));
  // 1e12 flops at 50 TFLOP/s = 20 ms.
  CHECK(sol_ms(1e12, 3e9, ceil, "fp32") == doctest::Approx(20.0));
  CHECK(sol_ms(1e12, 3e9, ceil, "fp16") == doctest::Approx(1e12 / 700e12 * 1e3));
  CHECK(sol_ms(1, 1, json(nullptr), "fp32") == 0);
  auto preset = load_reward_preset("kernrl");
  json rec = {{"status", "correct"},
              {"work", {{"flops", 1e9}, {"bytes", 3e9}, {"dtype_class", "fp32"}}},
              {"timing",
               {{"kernel", {{"median_ms", 2.0}, {"std_ms", 0.01}, {"n", 10}}},
                {"baseline", {{"median_ms", 4.0}}}}}};
  finalize_record(rec, preset, ceil);
  CHECK(rec["speedup"].get<double>() == doctest::Approx(2.0));
  CHECK(rec["sol_fraction"].get<double>() == doctest::Approx(0.5));
  CHECK(rec["suspicious"] == false);
  rec["timing"]["kernel"]["median_ms"] = 0.1;  // 10x faster than the bandwidth allows
  finalize_record(rec, preset, ceil);
  CHECK(rec["suspicious"] == true);
  CHECK(compute_reward(preset, rec).get<double>() == doctest::Approx(-0.25));  // no reward for it
  // fp32 work on tensor cores (3xTF32) may beat the fp32 rate 4x: fast, but not suspicious.
  rec["work"]["flops"] = 1e12;
  rec["timing"]["kernel"]["median_ms"] = 5.0;
  finalize_record(rec, preset, ceil);
  CHECK(rec["sol_fraction"].get<double>() == doctest::Approx(4.0));
  CHECK(rec["suspicious"] == false);
}

TEST_CASE("trace files: append, a cut-off last line, malformed lines reported") {
  std::string path = (std::filesystem::temp_directory_path() / "kernrl-test-trace.jsonl").string();
  std::filesystem::remove(path);
  {
    TraceWriter w(path);
    w.append({{"status", "correct"}, {"problem", "L1_1"}});
  }
  std::ofstream(path, std::ios::app) << R"({"status": "incorr)";  // a run killed mid-write
  {
    TraceWriter w(path);
    w.append({{"status", "incorrect"}, {"problem", "L1_1"}});
  }
  std::vector<TraceProblem> bad;
  auto recs = read_trace(path, &bad);
  CHECK(recs.size() == 2);
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].line == 2);
}

TEST_CASE("baseline files match by GPU name and versions") {
  namespace fs = std::filesystem;
  CHECK(gpu_slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3");
  fs::path f = fs::temp_directory_path() / "kernrl-test-baselines.json";
  json doc = {{"schema", kBaselineSchema},
              {"device", {{"name", "NVIDIA H100 80GB HBM3"}}},
              {"versions", {{"torch", "2.11.0"}, {"cuda", "13.0"}, {"driver", "13.0"}}},
              {"ceilings", {{"bandwidth_gbs", 3000.0}}},
              {"problems",
               {{"L1_23_Softmax",
                 {{"sizes", {{"batch_size", 4096}, {"dim", 16384}}},
                  {"baseline", {{"median_ms", 1.5}}}}}}}};
  std::ofstream(f) << doc.dump();
  json sizes = {{"batch_size", 4096}, {"dim", 16384}};
  json dev = {{"name", "NVIDIA H100 80GB HBM3"}};
  BaselineStore same;
  same.configure(f.string());
  same.load_for(dev, {{"torch", "2.11.0"}, {"cuda", "13.0"}, {"driver", "13.0"}});
  REQUIRE(same.baseline("L1_23_Softmax", sizes));
  CHECK((*same.baseline("L1_23_Softmax", sizes))["median_ms"] == 1.5);
  CHECK_FALSE(
      same.baseline("L1_23_Softmax", {{"batch_size", 8}, {"dim", 16384}}));  // other sizes: measure
  CHECK(same.ceilings()["bandwidth_gbs"] == 3000.0);
  BaselineStore other_versions;
  other_versions.configure(f.string());
  other_versions.load_for(dev, {{"torch", "2.10.0"}, {"cuda", "13.0"}, {"driver", "13.0"}});
  CHECK_FALSE(other_versions.baseline("L1_23_Softmax", sizes));
  CHECK(other_versions.ceilings()["bandwidth_gbs"] == 3000.0);  // the hardware is the same
  BaselineStore other_gpu;
  other_gpu.configure(f.string());
  other_gpu.load_for({{"name", "NVIDIA H200"}},
                     {{"torch", "2.11.0"}, {"cuda", "13.0"}, {"driver", "13.0"}});
  CHECK_FALSE(other_gpu.baseline("L1_23_Softmax", sizes));
  CHECK(other_gpu.ceilings().is_null());
}

TEST_CASE("the torch.compile baseline: from a suite's baseline file, into baseline.speedups") {
  namespace fs = std::filesystem;
  fs::path f = fs::temp_directory_path() / "kernrl-test-compile-baselines.json";
  json sizes = {{"batch_size", 128}, {"dim", 4000}};
  // A file of kb_baselines.py alone: torch.compile timings, no eager `baseline` entries.
  json doc = {{"schema", kBaselineSchema},
              {"device", {{"name", "NVIDIA H100 80GB HBM3"}}},
              {"versions", {{"torch", "2.11.0"}, {"cuda", "13.0"}, {"driver", ""}}},
              {"ceilings", json::object()},
              {"problems",
               {{"L1_23_Softmax",
                 {{"sizes", sizes},
                  {"compile_baseline",
                   {{"timing", {{"median_ms", 0.5}, {"mean_ms", 0.52}, {"n", 100}}},
                    {"backend", "inductor"}}}}},
                {"L1_24_Broken", {{"sizes", sizes}, {"compile_baseline", {{"timing", 3}}}}}}}};
  std::ofstream(f) << doc.dump();
  json dev = {{"name", "NVIDIA H100 80GB HBM3"}};
  BaselineStore s;
  s.configure(f.string());
  s.load_for(dev, {{"torch", "2.11.0"}, {"cuda", "13.0"}, {"driver", "13.0"}});
  REQUIRE(s.compile_baseline("L1_23_Softmax", sizes));
  CHECK((*s.compile_baseline("L1_23_Softmax", sizes))["median_ms"] == 0.5);
  // Other versions of the worker still use it (not the worker's measurement); the eager entry is
  // absent, so the eager baseline is measured.
  CHECK_FALSE(s.baseline("L1_23_Softmax", sizes));
  CHECK_FALSE(s.compile_baseline("L1_23_Softmax", {{"batch_size", 8}, {"dim", 4000}}));
  CHECK_FALSE(s.compile_baseline("L1_24_Broken", sizes));  // a malformed entry is no timing
  CHECK_FALSE(s.compile_baseline("L1_1", sizes));
  BaselineStore other_gpu;
  other_gpu.configure(f.string());
  other_gpu.load_for({{"name", "NVIDIA H200"}}, {{"torch", "2.11.0"}});
  CHECK_FALSE(other_gpu.compile_baseline("L1_23_Softmax", sizes));

  auto preset = load_reward_preset("kernrl");
  json rec = {{"status", "correct"},
              {"timing",
               {{"kernel", {{"median_ms", 2.0}, {"std_ms", 0.01}, {"n", 10}}},
                {"baseline", {{"median_ms", 4.0}}},
                {"compile_baseline", {{"median_ms", 1.0}, {"n", 100}}},
                {"compile_baseline_source", "file:" + f.string()}}}};
  finalize_record(rec, preset, json::object());
  CHECK(rec["speedup"].get<double>() == doctest::Approx(2.0));  // still over eager
  CHECK(rec["baseline"]["kind"] == "torch");
  CHECK(rec["baseline"]["speedups"]["compile"].get<double>() == doctest::Approx(0.5));
  CHECK(rec["baseline"]["speedups"]["torch"].get<double>() == doctest::Approx(2.0));
  fs::remove(f);
}
