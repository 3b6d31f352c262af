// The typed trace record (src/record/trace_record.h): kernrl's records read and written back byte
// for byte, the pipeline building the very records it built before the type existed, odd and old
// records read without harm (the struct agreeing with docs/trace-format.md: test_trace_schema.cpp).
//
// tests/fixtures/records/:
//   pipeline.jsonl  records of every status a worker answers, made by kernrl's JSON records before
//                   TraceRecord (main at e8b586e: prepare_source + complete_record with the worker
//                   answers below, the session's fields added, times fixed), including the
//                   reference kernel as baseline, launch facts, a profile and a problem's own unit
//                   of work; the test makes them again and compares the bytes
//   cli.jsonl       records of the CLI in compile-only mode made by that same kernrl: eval
//                   (compiled, compile_error with a capped log, launch_error, format_error,
//                   unattributed: not named, unknown problem, unreadable, unknown --problem), a
//                   converted KernelBench module (.py), grade-dir (run, sample, run_seed, a file
//                   name with a byte that is not UTF-8) and serve --stdio (labels, a cache hit)
//   odd.jsonl       hand-written records: older shapes, values of unexpected types, unknown keys
//   softmax.cu, sha256.cu  the answers pipeline.jsonl's records graded
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/summary.h"
#include "grading/prepare.h"
#include "grading/session.h"
#include "protocol/worker.h"
#include "record/feedback.h"
#include "record/record.h"
#include "record/reward.h"
#include "record/trace_file.h"
#include "record/trace_record.h"
#include "record_checks.h"
#include "report/kernelbench.h"
#include "report/report.h"
#include "report/training_export.h"

using namespace kernrl;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> out;
  std::istringstream in(slurp(p));
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

// The records of every status a worker answers, through the pipeline as the session runs it:
// prepare (compile), the worker's answer, complete_record, the session's grader fields and wall
// time. Times, the compile cache, the NVRTC and kernrl versions and the timestamp are fixed, so
// the bytes depend only on how records are built and written.
std::vector<std::string> pipeline_records() {
  Config cfg;
  RewardPreset preset = load_reward_preset("kernrl");
  json ceilings = {
      {"bandwidth_gbs", 3350.0},
      {"matmul_tflops", {{"fp32", 51.2}, {"fp16", 756.5}, {"bf16", 760.1}, {"fp8", 1450.0}}}};
  json device = {{"name", "NVIDIA H100 80GB HBM3"},
                 {"compute_capability", "9.0"},
                 {"sms", 132},
                 {"l2_bytes", 52428800},
                 {"memory_bytes", 84929216512ull},
                 {"driver", 12080},
                 {"arch", "sm_90a"},
                 {"gpu_index", 1}};
  json versions = {{"torch", "2.9.0+cu128"}, {"cuda", "12.8"}, {"driver", "570.195.03"}};
  std::string softmax = slurp(kFixtures / "records" / "softmax.cu");
  std::map<std::string, double> phases = {
      {"module_load", 3.5},       {"inputs", 40.25},       {"reference", 20.0},
      {"buffers", 1.5},           {"kernel", 4.75},        {"check", 8.0},
      {"timing", 300.5},          {"fresh_inputs", 90.0},  {"verify_inputs", 5.0},
      {"verify_reference", 60.0}, {"verify_compare", 7.0}, {"other", 2.0},
      {"baseline", 150.0}};
  auto make = [&](const std::string& run, std::optional<int> sample, uint64_t seed) {
    GradeOptions opt;
    opt.seed = seed;
    opt.run = run;
    opt.sample = sample;
    Prepared p =
        prepare_source(softmax, "runs/model-a/L1_23_Softmax/sample_3.cu", opt, cfg, "sm_90a", 132);
    REQUIRE(p.record.status_is(Status::Compiled));
    return p;
  };
  auto grader = [](Prepared& p, double queue, double worker,
                   const std::map<std::string, double>& ph, bool ran) {
    trace::Grader& g = p.record.grader.emplace();
    g.prepare_ms = 12.25;
    if (ran) {
      g.queue_ms = queue;
      g.worker_ms = worker;
      g.phases = ph;
    }
  };
  auto finish = [](Prepared& p, uint64_t run_seed = 42) {
    TraceRecord& r = p.record;
    r.timestamp = "2026-11-24T03:00:00Z";
    if (r.compile) {
      r.compile->ms = 81.5;
      r.compile->cached = true;
      r.compile->nvrtc = "13.0";
      // How this machine compiled (the fork server and its precompiled header, or a process of its
      // own) is not part of the pipeline's records: a cached cubin carries none.
      r.compile->pch.reset();
    }
    if (r.versions) {
      (*r.versions)["kernrl"] = "0.1.0";
      if (r.versions->contains("nvrtc")) (*r.versions)["nvrtc"] = "13.0";
    }
    r.wall_ms = 1234.5;
    if (r.grader) r.grader->total_ms = 1234.5;
    r.run_seed = run_seed;
    return r.to_line();
  };
  auto answer = [](const char* text) { return EvalAnswer::from_json(json::parse(text)); };
  std::vector<std::string> out;

  {  // correct, timed, with speed of light
    Prepared p = make("model-a", 3, 987654321);
    grader(p, 0.75, 1500.25, phases, true);
    EvalAnswer a = answer(R"({"status":"correct","error":null,"fatal":false,"phases_ms":{},
      "correctness":{"n_trials":5,"n_passed":5,"trials":[{"sizes":{"batch_size":4096,"dim":16384},
        "passed":true,"modified_inputs":[],"rerun_passed":true,"outputs":[{"name":"out",
        "passed":true,"compared":67108864,"mismatches":0,"max_abs_err":5.960464477539063e-08,
        "max_rel_err":1.1920928955078125e-07,"rel_l2":2.3e-08,"first_mismatch":null,"reason":""}]}]},
      "timing":{"sizes":{"batch_size":4096,"dim":16384},"kernel":{"median_ms":0.4031,
        "mean_ms":0.40415,"std_ms":0.0006,"min_ms":0.4022,"max_ms":0.4071,"mad_ms":0.0003,"n":10,
        "rel_stderr":0.00047},"baseline":{"median_ms":0.1742,"mean_ms":0.1745,"std_ms":0.0002,
        "min_ms":0.174,"max_ms":0.1751,"mad_ms":0.0001,"n":10,"rel_stderr":0.00036},
        "baseline_source":"measured"}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p));
  }
  {  // correct, a baseline file's statistics (whole numbers), faster than the hardware allows
    Prepared p = make("model-a", 4, 5);
    grader(p, 2.5, 900.0, {{"kernel", 3.0}, {"timing", 100.0}}, true);
    EvalAnswer a = answer(R"({"status":"correct","error":null,"fatal":false,"phases_ms":{},
      "correctness":{"n_trials":2,"n_passed":2,"trials":[]},
      "timing":{"sizes":{"batch_size":4096,"dim":16384},"kernel":{"median_ms":0.001,
        "mean_ms":0.001,"std_ms":0.0,"min_ms":0.001,"max_ms":0.001,"mad_ms":0.0,"n":50,
        "rel_stderr":0.0},"baseline":{"median_ms":1,"mean_ms":1,"std_ms":0,"min_ms":1,"max_ms":1,
        "n":10},"baseline_source":"file:baselines/nvidia-h100-80gb-hbm3.json"}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p));
  }
  {  // incorrect: a first mismatch, non-finite numbers as strings
    Prepared p = make("model-a", 5, 6);
    grader(p, 1.0, 300.0, {{"kernel", 3.0}, {"check", 1.0}}, true);
    EvalAnswer a = answer(R"({"status":"incorrect","error":{"category":"incorrect",
      "message":"trial 1 of 5 {\"batch_size\":7,\"dim\":33}: output 'out': 12 of 231 elements differ"},
      "fatal":false,"phases_ms":{},"correctness":{"n_trials":5,"n_passed":0,"trials":[{"sizes":
        {"batch_size":7,"dim":33},"passed":false,"modified_inputs":[],"outputs":[{"name":"out",
        "passed":false,"compared":231,"mismatches":12,"max_abs_err":"nan","max_rel_err":"inf",
        "rel_l2":"nan","first_mismatch":{"index":[3,5],"got":"nan","want":0.25},
        "reason":"12 elements beyond atol+rtol*|ref|"}]}]}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p));
  }
  {  // timeout, the worker's output as the log
    Prepared p = make("model-a", 6, 7);
    grader(p, 1.0, 30000.0, {{"kernel", 29000.0}}, true);
    EvalAnswer a = answer(R"({"status":"timeout","error":{"category":"timeout",
      "message":"the evaluation passed its deadline of 30 s; the worker was killed",
      "log":"kernel printf: i=0\nkernel printf: i=1\n"},"fatal":true,"phases_ms":{}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p));
  }
  {  // runtime_error: a long worker log with bytes that are not UTF-8 (capped, escaped)
    Prepared p = make("model-a", 7, 8);
    grader(p, 1.0, 200.0, {{"module_load", 3.0}}, true);
    EvalAnswer a;
    a.status = Status::RuntimeError;
    a.error = trace::make_error(Status::RuntimeError,
                                "CUDA_ERROR_ILLEGAL_ADDRESS in softmax_rows (launch 1)", 0,
                                std::string(20000, 'p') + "\xff\xfe tail of the log\n");
    a.fatal = true;
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p));
  }
  {  // internal_error: no reward
    Prepared p = make("model-a", 8, 9);
    grader(p, 1.0, 2.0, {}, true);
    EvalAnswer a = answer(R"({"status":"internal_error","error":{"category":"internal_error",
      "message":"no reference for L1_23_Softmax"},"fatal":false,"phases_ms":{}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p));
  }
  {  // launch_error at launch, with a line
    Prepared p = make("", std::nullopt, 10);
    grader(p, 0.5, 20.0, {{"module_load", 3.0}}, true);
    EvalAnswer a = answer(R"({"status":"launch_error","error":{"category":"launch_error",
      "message":"launch 1 (softmax_rows): too much shared memory","line":4},"fatal":false,
      "phases_ms":{"module_load":3.0}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p));
  }
  {  // compiled, nothing ran: no GPU
    Prepared p = make("", std::nullopt, 11);
    grader(p, 0, 0, {}, false);
    complete_record(p, nullptr, nullptr, json::object(), preset, ceilings,
                    "no GPU: no /dev/nvidia*");
    out.push_back(finish(p));
  }
  {  // correct, over the problem's reference kernel, with launch facts and a profile
    Prepared p = make("model-b", 0, 12);
    grader(p, 0.5, 700.0, {{"kernel", 2.0}, {"launches", 1.5}}, true);
    EvalAnswer a = answer(R"({"status":"correct","error":null,"fatal":false,"phases_ms":{},
      "correctness":{"n_trials":5,"n_passed":5,"trials":[]},
      "timing":{"sizes":{"batch_size":4096,"dim":16384},"kernel":{"median_ms":0.2,"mean_ms":0.21,
        "std_ms":0.01,"min_ms":0.19,"max_ms":0.25,"mad_ms":0.005,"n":20,"rel_stderr":0.01},
        "baseline":{"median_ms":0.1742,"mean_ms":0.1745,"std_ms":0.0002,"min_ms":0.174,
        "max_ms":0.1751,"mad_ms":0.0001,"n":10,"rel_stderr":0.00036},"baseline_source":"reused",
        "kernel_baseline":{"median_ms":0.25,"mean_ms":0.26,"std_ms":0.01,"min_ms":0.24,
        "max_ms":0.3,"mad_ms":0.004,"n":20,"rel_stderr":0.01},"kernel_baseline_source":"measured",
        "speedup_baseline":"kernel"},
      "launches":[{"index":1,"kernel":"softmax_rows","line":4,"repeats":1,"grid":[4096,1,1],
        "block":[256,1,1],"dynamic_shared_bytes":0,"static_shared_bytes":64,"registers":40,
        "local_bytes":0,"max_threads_per_block":1024,"occupancy":{"active_blocks_per_sm":6,
        "active_warps_per_sm":48,"max_warps_per_sm":64,"fraction":0.75,"limited_by":["registers"],
        "block_limits":{"blocks":32,"registers":6,"shared_memory":28,"warps":8}},"ms":0.2,
        "share":1.0}]})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    p.record.grader->kernel_baseline_ms = 950.5;  // as the session adds them
    p.record.profile = json::parse(R"({"tool":"ncu","launches":[{"kernel":"softmax_rows",
      "duration_us":201.5,"dram_throughput_pct":88.5,"sm_throughput_pct":30.25,
      "achieved_occupancy_pct":70.0,"stalls":[{"reason":"long_scoreboard","ratio":4.5}]}]})");
    p.record.grader->profile_ms = 3000.0;
    out.push_back(finish(p, 43));
  }
  {  // correct, the problem's speedups over its reference kernel, which could not be timed
    Prepared p = make("model-b", 1, 13);
    grader(p, 0.5, 700.0, {{"kernel", 2.0}}, true);
    EvalAnswer a = answer(R"({"status":"correct","error":null,"fatal":false,"phases_ms":{},
      "correctness":{"n_trials":5,"n_passed":5,"trials":[]},
      "timing":{"sizes":{"batch_size":4096,"dim":16384},"kernel":{"median_ms":0.5,"mean_ms":0.5,
        "std_ms":0.01,"min_ms":0.49,"max_ms":0.52,"mad_ms":0.005,"n":20,"rel_stderr":0.01},
        "baseline":{"median_ms":0.1742,"mean_ms":0.1745,"std_ms":0.0002,"min_ms":0.174,
        "max_ms":0.1751,"mad_ms":0.0001,"n":10,"rel_stderr":0.00036},"baseline_source":"measured",
        "speedup_baseline":"kernel","kernel_baseline_error":"the reference kernel graded incorrect"}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p, 43));
  }
  {  // a problem with a unit of its own (hashes): work.units and throughput.units_per_s
    GradeOptions opt;
    opt.seed = 14;
    opt.run = "model-b";
    opt.sample = 2;
    Prepared p =
        prepare_source(slurp(kFixtures / "records" / "sha256.cu"),
                       "runs/model-b/L10_1_SHA256_Single/sample_2.cu", opt, cfg, "sm_90a", 132);
    REQUIRE(p.record.status_is(Status::Compiled));
    grader(p, 0.5, 400.0, {{"kernel", 2.0}}, true);
    EvalAnswer a = answer(R"({"status":"correct","error":null,"fatal":false,"phases_ms":{},
      "correctness":{"n_trials":5,"n_passed":5,"trials":[]},
      "timing":{"kernel":{"median_ms":0.8,"mean_ms":0.8,"std_ms":0.01,"min_ms":0.79,
        "max_ms":0.82,"mad_ms":0.005,"n":20,"rel_stderr":0.01},"baseline":{"median_ms":40.0,
        "mean_ms":40.0,"std_ms":0.2,"min_ms":39.0,"max_ms":41.0,"mad_ms":0.1,"n":10,
        "rel_stderr":0.001},"baseline_source":"measured","kernel_baseline":{"median_ms":1.2,
        "mean_ms":1.2,"std_ms":0.01,"min_ms":1.19,"max_ms":1.22,"mad_ms":0.005,"n":20,
        "rel_stderr":0.01},"kernel_baseline_source":"file:baselines/x.json",
        "speedup_baseline":"kernel"}})");
    complete_record(p, &a, device, versions, preset, ceilings, "");
    out.push_back(finish(p, 43));
  }
  return out;
}

}  // namespace

TEST_CASE("golden: kernrl's records read and written back byte for byte") {
  size_t n = 0;
  for (const char* name : {"pipeline.jsonl", "cli.jsonl"})
    for (const std::string& line : lines_of(kFixtures / "records" / name)) {
      CAPTURE(name);
      CAPTURE(line.substr(0, 200));
      json j = json::parse(line);
      REQUIRE(json_line(j) == line);  // the fixture is kernrl's own output, as written
      TraceRecord r = TraceRecord::from_json(j);
      CHECK(r.to_line() == line);
      CHECK(all_known(r));  // kernrl's records hold nothing the type does not know
      ++n;
    }
  CHECK(n == 30);
}

TEST_CASE("golden: the pipeline builds the records it built before the typed record") {
  std::vector<std::string> made = pipeline_records();
  std::vector<std::string> golden = lines_of(kFixtures / "records" / "pipeline.jsonl");
  REQUIRE(made.size() == golden.size());
  for (size_t i = 0; i < made.size(); ++i) {
    CAPTURE(i);
    CHECK(made[i] == golden[i]);
  }
  // What the golden records say, read through the type.
  TraceRecord correct = TraceRecord::from_json(json::parse(golden[0]));
  CHECK(correct.status_is(Status::Correct));
  CHECK(correct.timing->kernel->median_ms.value_or(0) == doctest::Approx(0.4031));
  CHECK(correct.speedup.value_or(0) == doctest::Approx(0.1742 / 0.4031));
  CHECK(correct.correctness_counts() == std::make_pair(5, 5));
  CHECK(correct.grader->phases->at("timing") == 300.5);
  TraceRecord fast = TraceRecord::from_json(json::parse(golden[1]));
  CHECK(fast.suspicious.value_or(false));
  CHECK(fast.timing->baseline->median_ms.value_or(0) == 1.0);  // written 1, read as a number
  TraceRecord over_kernel = TraceRecord::from_json(json::parse(golden[8]));
  CHECK(over_kernel.baseline->kind.value_or("") == "kernel");
  CHECK(over_kernel.speedup.value_or(0) == doctest::Approx(0.25 / 0.2));
  CHECK(over_kernel.launches->at(0).occupancy->limited_by->at(0) == "registers");
  CHECK(over_kernel.profile->at("tool") == "ncu");
  CHECK(over_kernel.grader->kernel_baseline_ms.value_or(0) == 950.5);
  TraceRecord missing = TraceRecord::from_json(json::parse(golden[9]));
  CHECK(missing.baseline->kernel_missing.value_or("").find("incorrect") != std::string::npos);
  TraceRecord hashes = TraceRecord::from_json(json::parse(golden[10]));
  CHECK(hashes.work->units->unit.value_or("") == "hashes");
  CHECK(hashes.throughput->natural.value_or("") == "units_per_s");
  TraceRecord internal = TraceRecord::from_json(json::parse(golden[5]));
  CHECK(internal.reward.is_null());
  CHECK(exit_code_for(internal) == 4);
}

TEST_CASE("odd and older records: read without throwing, written back as they were read") {
  std::vector<fs::path> files = {kFixtures / "records" / "odd.jsonl"};
  for (const auto& e : fs::recursive_directory_iterator(kFixtures / "report"))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(KERNRL_TEST_DIR) / "fuzz/corpus/trace"))
    files.push_back(e.path());
  size_t n = 0;
  for (const fs::path& f : files)
    for (const std::string& line : lines_of(f)) {
      json j;
      try {
        j = json::parse(line);
      } catch (const json::exception&) {
        continue;  // not JSON at all: read_trace's business (a malformed line)
      }
      if (!j.is_object()) continue;
      CAPTURE(f.string());
      CAPTURE(line.substr(0, 200));
      TraceRecord r;
      REQUIRE_NOTHROW(r = TraceRecord::from_json(j));
      CHECK(r.to_json().dump() == j.dump());
      ++n;
    }
  CHECK(n > 50);
}

TEST_CASE("odd records: fields of unexpected types read as absent, and are kept") {
  std::vector<std::string> odd = lines_of(kFixtures / "records" / "odd.jsonl");
  TraceRecord old = TraceRecord::from_json(json::parse(odd[0]));
  CHECK(old.speedup.value_or(0) == 2.0);  // a whole number where kernrl writes a double
  CHECK(old.timing->kernel->median_ms.value_or(0) == 1.0);
  CHECK(old.ran.absent());
  CHECK(old.to_json()["speedup"].is_number_integer());  // written back as it was

  TraceRecord r = TraceRecord::from_json(json::parse(odd[1]));
  CHECK(!r.status);
  CHECK(r.status.odd());
  CHECK(r.status_text() == "error");  // a status of another kernrl, counted under its name
  CHECK(!r.level);
  CHECK(r.sample.value_or(-1) == 2);  // 2.0 is a whole number
  CHECK(r.run_or("(none)") == "(none)");
  CHECK(r.file.is_null());
  CHECK(!r.speedup);
  CHECK(!r.reward);
  CHECK(!r.error);
  CHECK(!r.compile);
  CHECK(r.correctness_counts() == std::nullopt);
  CHECK(!r.timing->kernel->median_ms);
  CHECK(!r.timing->kernel->n);
  CHECK(r.timing->kernel->extra.contains("extra_stat"));
  CHECK(r.timing->baseline.is_null());
  CHECK(!r.timing->sizes);
  CHECK(!r.grader->prepare_ms);
  CHECK(!r.grader->phases);
  CHECK(r.grader->extra["future_ms"] == 3);
  CHECK(r.work->flops.value_or(0) == 1500000000);
  CHECK(r.work->bytes.value_or(0) == -3);
  CHECK(r.work->dtype_class.odd());
  CHECK(!r.seed);
  CHECK(!r.run_seed);
  CHECK(!r.kernel_format);
  REQUIRE(r.launches);  // an entry with three of its fields
  CHECK(r.launches->at(0).registers.value_or(0) == 32);
  CHECK(r.launches->at(0).grid.absent());
  CHECK(r.extra.contains("achieved"));  // a field of a later kernrl, kept
  CHECK(r.to_json()["achieved"]["gbs"] == 2900.5);

  TraceRecord u = TraceRecord::from_json(json::parse(odd[3]));
  CHECK(u.problem.is_null());
  CHECK(u.problem_unknown->named.value_or("") == "L1_23_Softmax");
  CHECK(u.problem_unknown->extra["hint"] == "later kernrl");
  CHECK(u.error->line.value_or(-1) == 0);
  CHECK(!u.error->log);
  CHECK(u.error->log.odd());
  CHECK(u.error->extra["severity"] == "high");

  TraceRecord big = TraceRecord::from_json(json::parse(odd[5]));
  CHECK(big.seed.value_or(0) == 18446744073709551615ull);
  CHECK(big.timing.odd());
  CHECK(big.device.value_or(json()) == 7);  // opaque JSON: kept whatever it is
  CHECK(big.versions.is_null());
  CHECK(!big.converted->notes);  // a list with a number in it is no list of strings
}

TEST_CASE("odd records: every reader copes") {
  std::vector<TraceRecord> recs;
  std::vector<json> raw;
  for (const std::string& line : lines_of(kFixtures / "records" / "odd.jsonl")) {
    raw.push_back(json::parse(line));
    recs.push_back(TraceRecord::from_json(raw.back()));
  }
  RewardPreset preset = load_reward_preset("kernrl");
  for (TraceRecord r : recs) {
    CAPTURE(r.to_line().substr(0, 200));
    CHECK_NOTHROW(human_summary(r, false));
    CHECK_NOTHROW(make_feedback(r));
    CHECK_NOTHROW(compute_reward(preset, r));
    CHECK_NOTHROW(exit_code_for(r));
    CHECK_NOTHROW(bound_record(r, RecordLimits{}));
    CHECK_NOTHROW(finalize_record(r, preset, json::object()));
  }
  for (const char* format : {"md", "csv", "json", "html"}) {
    ReportOptions opt;
    opt.format = format;
    opt.reward_preset = "staged";
    CHECK_NOTHROW(render(aggregate(recs, opt), opt));
  }
  KernelBenchOutput kb;
  CHECK_NOTHROW(kb = kernelbench_output(recs, {}));
  CHECK_NOTHROW(kernelbench_files(kb));
  ExportSummary s;
  CHECK_NOTHROW(export_rows(
      recs, [](const std::string&) { return std::optional<std::string>("prompt"); },
      [](const std::string&, std::string* e) -> std::optional<std::string> {
        *e = "file not found: test";
        return std::nullopt;
      },
      &s));
  // The JSON forms read through the same reader.
  CHECK(aggregate(raw, ReportOptions{}) == aggregate(recs, ReportOptions{}));
}

TEST_CASE("Field: absent, null, a value, odd; a value's form as read kept until it changes") {
  json obj = {{"a", 2}, {"b", nullptr}, {"c", "x"}};
  Field<double> a, b, c, d;
  a.read(obj, "a");
  b.read(obj, "b");
  c.read(obj, "c");
  d.read(obj, "d");
  CHECK(a.has_value());
  CHECK(*a == 2.0);
  CHECK(a.to_json().is_number_integer());  // written as it was read
  CHECK(b.is_null());
  CHECK(c.odd());
  CHECK(!c);
  CHECK(c.to_json() == "x");
  CHECK(d.absent());
  json back = json::object();
  a.write(back, "a");
  b.write(back, "b");
  c.write(back, "c");
  d.write(back, "d");
  CHECK(back.dump() == obj.dump());
  a = 2.0;  // assigned: written as a double now
  CHECK(a.to_json().is_number_float());
  CHECK_THROWS_AS((void)*c, std::logic_error);  // an odd field has no value to read
  c.emplace() = 3.5;
  CHECK(c.to_json() == 3.5);
  Field<json> opaque = json(nullptr);  // a null JSON value is a null field
  CHECK(opaque.is_null());
  Field<int> line;
  line.assign_json(json(1e10));  // a whole number out of int's range
  CHECK(line.odd());
}
