// What a training loop needs around the grader (docs/training.md): the training fields of a record,
// grade-dir's trajectory layouts, discounted returns, the trajectory view and the training curves
// of `kernrl report`, the next turn's prompt and retrieved examples (BM25).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "contract/examples.h"
#include "contract/next_turn.h"
#include "core/hash.h"
#include "core/paths.h"
#include "grading/discover.h"
#include "record/training.h"
#include "report/curves.h"
#include "report/report.h"
#include "report/trajectories.h"
#include "test_dirs.h"

using namespace kernrl;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

TraceRecord make_rec(const std::string& run, const std::string& traj, int turn, const char* status,
                     double reward, std::optional<double> speedup = std::nullopt) {
  static int n = 0;  // every record a sample of its own (no duplicates)
  ++n;
  json j = {{"schema", "kernrl.trace.v1"},
            {"run", run},
            {"problem", "L1_23_Softmax"},
            {"level", 1},
            {"status", status},
            {"reward", reward},
            {"file", traj + "/" + std::to_string(n)},
            {"source_sha256", traj + std::to_string(turn)}};
  if (!traj.empty()) {
    j["trajectory"] = traj;
    j["turn"] = turn;
  }
  if (speedup) j["speedup"] = *speedup;
  return TraceRecord::from_json(j);
}

}  // namespace

TEST_CASE("training tags: applied to a record, read from requests and action metadata") {
  TrainingTags t;
  std::string error;
  json req = {{"trajectory", "ep-1"},
              {"turn", 2},
              {"training", {{"step", 40}, {"run", "ppo"}}},
              {"prompt_examples", {"L1_26_GELU_/solution.cu"}}};
  REQUIRE(read_request_tags(req, &t, &error));
  TraceRecord r = make_rec("r", "", 1, "correct", 1);
  t.apply(r);
  json j = r.to_json();
  CHECK(j["trajectory"] == "ep-1");
  CHECK(j["turn"] == 2);
  CHECK(j["training"] == json({{"run", "ppo"}, {"step", 40}}));
  CHECK(j["prompt_examples"] == json({"L1_26_GELU_/solution.cu"}));
  CHECK(TraceRecord::from_json(j).to_json() == j);  // read back as written

  for (const json& bad : {json{{"turn", 0}}, json{{"turn", "2"}}, json{{"trajectory", ""}},
                          json{{"trajectory", std::string(300, 'x')}},
                          json{{"training", {{"step", -1}}}}, json{{"training", {{"epoch", 1}}}},
                          json{{"prompt_examples", "x"}}, json{{"prompt_examples", {1}}}}) {
    TrainingTags u;
    CAPTURE(bad.dump());
    CHECK_FALSE(read_request_tags(bad, &u, &error));
  }
  TrainingTags m;
  read_action_metadata({{"step", 3}, {"run", "a"}, {"other", {1, 2}}}, &m);
  CHECK(m.step == 3);
  CHECK(m.run == "a");
  TrainingTags odd;
  read_action_metadata({{"step", "three"}, {"run", 5}}, &odd);  // the client's own: ignored
  CHECK(odd.empty());
}

TEST_CASE("grade-dir: the two trajectory layouts") {
  fs::path dir = fresh_test_dir("trajectories");
  fs::create_directories(dir / "kb");
  fs::create_directories(dir / "L1_23_Softmax" / "run_a");
  fs::create_directories(dir / "L1_23_Softmax" / "run_b");
  for (const fs::path& f : {dir / "kb" / "level_1_problem_23_sample_4_turn_1_kernel.cu",
                            dir / "kb" / "level_1_problem_23_sample_4_turn_2_kernel.md",
                            dir / "kb" / "level_1_problem_23_sample_4_kernel.cu",
                            dir / "L1_23_Softmax" / "run_a" / "turn_1.md",
                            dir / "L1_23_Softmax" / "run_a" / "turn_2.cu",
                            dir / "L1_23_Softmax" / "run_b" / "turn_1_retry.cu",
                            dir / "L1_23_Softmax" / "run_b" / "turn_0.cu"})
    std::ofstream(f) << "x";
  Discovery d = discover_files(dir, {});
  std::map<std::string, const DiscoveredFile*> by;
  for (const auto& f : d.files) by[f.rel] = &f;
  const DiscoveredFile* kb2 = by.at("kb/level_1_problem_23_sample_4_turn_2_kernel.md");
  CHECK(kb2->trajectory == "kb/level_1_problem_23_sample_4");
  CHECK(kb2->turn == 2);
  CHECK(kb2->sample == 4);
  CHECK(kb2->problem == "L1_23_Softmax");
  CHECK_FALSE(by.at("kb/level_1_problem_23_sample_4_kernel.cu")->trajectory);
  const DiscoveredFile* a2 = by.at("L1_23_Softmax/run_a/turn_2.cu");
  CHECK(a2->trajectory == "L1_23_Softmax/run_a");
  CHECK(a2->turn == 2);
  CHECK(a2->sample == 0);
  CHECK(a2->problem == "L1_23_Softmax");
  const DiscoveredFile* b1 = by.at("L1_23_Softmax/run_b/turn_1_retry.cu");
  CHECK(b1->trajectory == "L1_23_Softmax/run_b");
  CHECK(b1->sample == 1);
  CHECK_FALSE(by.at("L1_23_Softmax/run_b/turn_0.cu")->turn);  // turns start at 1
  bool warned = false;
  for (const auto& w : d.warnings) warned |= w.find("turn number 0") != std::string::npos;
  CHECK(warned);
  fs::remove_all(dir);
}

TEST_CASE("discounted returns: R_t = s_t + g s_{t+1} + g^2 s_{t+2}") {
  auto r = report::discounted_returns({-0.5, -0.25, 1.0}, 0.4);
  REQUIRE(r.size() == 3);
  CHECK(r[2] == doctest::Approx(1.0));
  CHECK(r[1] == doctest::Approx(-0.25 + 0.4));
  CHECK(r[0] == doctest::Approx(-0.5 + 0.4 * -0.25 + 0.16 * 1.0));
  CHECK(report::discounted_returns({}, 0.4).empty());
}

TEST_CASE("report: the trajectory view") {
  std::vector<TraceRecord> recs = {
      make_rec("m", "a", 1, "compile_error", -0.5), make_rec("m", "a", 2, "incorrect", -0.25),
      make_rec("m", "a", 3, "correct", 1.0, 2.0),   make_rec("m", "b", 1, "correct", 0.5, 1.5),
      make_rec("m", "c", 1, "format_error", -0.5),  make_rec("m", "", 1, "correct", 0.2, 1.2)};
  ReportOptions opt;
  opt.by = "turn";
  json a = aggregate(recs, opt);
  const json& t = a["trajectories"];
  REQUIRE(t.is_object());
  CHECK(t["gamma"] == 0.4);
  const json& run = t["runs"][0];
  CHECK(run["trajectories"] == 3);
  CHECK(run["solved"] == 2);
  CHECK(run["solved_within"]["1"].get<double>() == doctest::Approx(1.0 / 3));
  CHECK(run["solved_within"]["3"].get<double>() == doctest::Approx(2.0 / 3));
  CHECK(run["mean_turns_to_correct"].get<double>() == doctest::Approx(2.0));  // (3 + 1) / 2
  CHECK(run["geomean_best_speedup"].get<double>() == doctest::Approx(std::sqrt(3.0)));
  const json& turn1 = run["per_turn"][0];
  CHECK(turn1["trajectories"] == 3);
  CHECK(turn1["format_rate"].get<double>() == doctest::Approx(2.0 / 3));
  CHECK(turn1["compile_rate"].get<double>() == doctest::Approx(1.0 / 3));
  double ra1 = -0.5 + 0.4 * -0.25 + 0.16;
  CHECK(turn1["mean_return"].get<double>() == doctest::Approx((ra1 + 0.5 - 0.5) / 3));
  CHECK(run["per_turn"][2]["trajectories"] == 1);
  const json& first = t["list"][0];
  CHECK(first["trajectory"] == "a");
  CHECK(first["first_correct_turn"] == 3);
  CHECK(first["returns"][0].get<double>() == doctest::Approx(ra1));

  opt.gamma = 0;  // returns are the rewards
  CHECK(aggregate(recs, opt)["trajectories"]["list"][0]["returns"][0] == -0.5);

  opt.format = "csv";
  std::string csv = render(a, opt);
  CHECK(csv.rfind(
            "run,turn,trajectories,format_rate,compile_rate,correct_rate,mean_reward,mean_return\n",
            0) == 0);
  CHECK(csv.find("\nm,1,3,0.6666666667,0.3333333333,0.3333333333,") != std::string::npos);
  opt.by = "trajectory";
  CHECK(render(aggregate(recs, opt), opt).find("\nm,a,L1_23_Softmax,3,3,2,") != std::string::npos);
  opt.format = "md";
  std::string md = render(a, opt);
  CHECK(md.find("## Trajectories") != std::string::npos);
  CHECK(md.find("### Per turn") != std::string::npos);
  opt.format = "html";
  std::string html = render(a, opt);
  CHECK(html.find("Per-turn rates: m") != std::string::npos);
  CHECK(html.find("Solved within T turns") != std::string::npos);

  ReportOptions plain;  // records without trajectories: no view
  CHECK(aggregate(std::vector<TraceRecord>{recs.back()}, plain)["trajectories"].is_null());
  plain.gamma = 1.5;
  CHECK_THROWS(aggregate(recs, plain));
}

TEST_CASE("report: training curves by step, else by time") {
  std::vector<TraceRecord> recs;
  for (int step : {0, 0, 10, 10}) {
    TraceRecord r =
        make_rec("m", "", 1, step == 0 ? "compile_error" : "correct", step == 0 ? -0.5 : 1.0,
                 step == 0 ? std::nullopt : std::optional<double>(2.0));
    TrainingTags t;
    t.step = step;
    t.run = "ppo";
    t.apply(r);
    recs.push_back(r);
  }
  ReportOptions opt;
  json a = aggregate(recs, opt);  // a record with a step: curves without --by step too
  const json& c = a["curves"];
  REQUIRE(c.is_object());
  CHECK(c["x"] == "step");
  const json& pts = c["series"][0]["points"];
  CHECK(c["series"][0]["series"] == "ppo");
  REQUIRE(pts.size() == 2);
  CHECK(pts[0]["step"] == 0);
  CHECK(pts[0]["compile_rate"] == 0.0);
  CHECK(pts[1]["correct_rate"] == 1.0);
  CHECK(pts[1]["speedup_p50"] == 2.0);
  CHECK(pts[1]["reward_std"] == 0.0);
  opt.by = "step";
  opt.format = "csv";
  CHECK(render(aggregate(recs, opt), opt).find("\nppo,10,2,1,1,1,1,0,2,2,2,0\n") !=
        std::string::npos);

  std::vector<TraceRecord> timed;
  for (const char* ts : {"2026-01-01T00:00:00Z", "2026-01-01T00:00:30Z", "2026-01-01T00:09:59Z"}) {
    TraceRecord r = make_rec("m", "", 1, "correct", 1.0, 1.5);
    r.timestamp = std::string(ts);
    timed.push_back(r);
  }
  ReportOptions by_step;
  by_step.by = "step";
  json t = aggregate(timed, by_step)["curves"];
  REQUIRE(t.is_object());
  CHECK(t["x"] == "time");
  CHECK(t["bucket_s"] == 50.0);  // 599 s in at most 20 buckets of 1-2-5 steps
  CHECK(t["series"][0]["points"][0]["time"] == "2026-01-01T00:00:00Z");
  CHECK(t["series"][0]["points"][0]["samples"] == 2);
  CHECK(aggregate(timed, ReportOptions{})["curves"].is_null());  // no step, no --by step
  CHECK(report::timestamp_seconds("2026-01-01T00:00:01.5Z") == doctest::Approx(1767225601.5));
  CHECK_FALSE(report::timestamp_seconds("yesterday"));
}

TEST_CASE("code tokens and BM25") {
  auto t = code_tokens("def forward(self, x): return torch.softmax(x, dim=1) # rowMax 2d");
  for (const char* w : {"forward", "softmax", "dim", "rowmax", "row", "max"})
    CHECK_MESSAGE(std::find(t.begin(), t.end(), w) != t.end(), w);
  Bm25 bm({{"softmax", "row", "max"}, {"gelu", "tanh"}, {"softmax", "softmax", "log"}});
  std::vector<std::string> q = {"softmax", "max"};
  CHECK(bm.score(q, 0) > bm.score(q, 2));
  CHECK(bm.score(q, 1) == 0.0);
}

TEST_CASE("examples: the most similar problems' verified kernels, deterministic") {
  ExampleCorpus corpus(problems_dir(), {}, nullptr);
  REQUIRE(corpus.size() > 10);
  auto ex = corpus.nearest("L1_23_Softmax", 3, false);
  REQUIRE(ex.size() == 3);
  for (const Example* e : ex) CHECK(e->problem != "L1_23_Softmax");
  CHECK(example_ids(ex) == example_ids(corpus.nearest("L1_23_Softmax", 3, false)));
  bool own = false;
  for (const Example* e : corpus.nearest("L1_23_Softmax", 3, true))
    own |= e->id == "L1_23_Softmax/solution.cu";
  CHECK(own);
  std::string section = corpus.section(ex);
  CHECK(section.rfind("# Examples\n", 0) == 0);
  CHECK(section.find("## Example 3: " + ex[2]->problem) != std::string::npos);
  CHECK(corpus.section({}).empty());
  CHECK_THROWS_AS(corpus.nearest("L9_999_Nothing", 1, false), std::invalid_argument);

  // A trace's correct record joins the corpus only while its file is unchanged.
  fs::path dir = fresh_test_dir("corpus");
  std::string kernel = "/* kernrl\nproblem: L1_26_GELU_\n*/\n// a verified kernel\n";
  std::ofstream(dir / "k.cu") << kernel;
  std::ofstream(dir / "changed.cu") << "changed";
  auto line = [&](const std::string& file, const std::string& sha, const char* status) {
    return json{{"schema", "kernrl.trace.v1"},   {"problem", "L1_26_GELU_"}, {"status", status},
                {"file", (dir / file).string()}, {"source_sha256", sha},     {"speedup", 3.0}}
        .dump();
  };
  std::ofstream(dir / "t.jsonl") << line("k.cu", sha256_hex(kernel), "correct") << "\n"
                                 << line("changed.cu", std::string(64, '0'), "correct") << "\n"
                                 << line("k.cu", sha256_hex(kernel), "incorrect") << "\n";
  std::vector<std::string> warnings;
  ExampleCorpus traced(problems_dir(), {(dir / "t.jsonl").string()}, &warnings);
  CHECK(traced.size() == corpus.size() + 1);
  bool changed = false;
  for (const auto& w : warnings)
    changed |= w.find("changed since it was graded") != std::string::npos;
  CHECK(changed);
  for (const Example* e : traced.nearest("L1_26_GELU_", 1000, true))  // its fastest kernel
    if (e->problem == "L1_26_GELU_") CHECK(e->id == "trace:" + sha256_hex(kernel));
  fs::remove_all(dir);
}

TEST_CASE("the next turn's prompt") {
  TraceRecord r = TraceRecord::from_json(
      {{"status", "compile_error"},
       {"error",
        {{"category", "compile_error"},
         {"message", "NVRTC failed"},
         {"line", 9},
         {"log", "answer.cu(9): error: identifier \"foo\" is undefined\n1 error detected\n"}}},
       {"feedback", "Fix the compile errors above."}});
  NextTurnInput in;
  in.task_prompt = "TASK\n";
  in.previous = std::string(20000, 'a') + "THE END";
  in.record = &r;
  in.turn = 2;
  std::string p = next_turn_prompt(in);
  CHECK(p.rfind("TASK\n\n# Your previous answer (turn 2)", 0) == 0);
  CHECK(p.find("THE END") != std::string::npos);     // the end is kept
  CHECK(p.find("kernrl cut") != std::string::npos);  // the middle is not
  CHECK(p.size() < 14000);
  CHECK(p.find("Status: compile_error: the compiler (NVRTC) rejected it.") != std::string::npos);
  CHECK(p.find("line 9: NVRTC failed") != std::string::npos);
  CHECK(p.find("identifier \"foo\" is undefined") != std::string::npos);
  CHECK(p.find("Fix the compile errors listed above") != std::string::npos);
  CHECK(p.find("in one ```cuda code block") != std::string::npos);

  TraceRecord fast =
      TraceRecord::from_json({{"status", "correct"},
                              {"speedup", 1.7},
                              {"launches",
                               {{{"index", 1},
                                 {"kernel", "k"},
                                 {"repeats", 1},
                                 {"grid", {64, 1, 1}},
                                 {"block", {256, 1, 1}},
                                 {"registers", 40},
                                 {"local_bytes", 16},
                                 {"occupancy", {{"fraction", 0.5}, {"limited_by", {"registers"}}}},
                                 {"share", 1.0}}}}});
  in.record = &fast;
  in.previous = "short";
  p = next_turn_prompt(in);
  CHECK(p.find("Speedup over the baseline: 1.7x.") != std::string::npos);
  CHECK(p.find("launch 1 (k): grid [64, 1, 1], block [256, 1, 1], 40 registers/thread, 16 "
               "bytes local memory/thread (spills), occupancy 50% (limited by registers), 100% "
               "of the time") != std::string::npos);
  CHECK(p.find("Make it faster") != std::string::npos);

  in.record = nullptr;
  CHECK(next_turn_prompt(in).find("Status: unknown") != std::string::npos);
  in.language = "fortran";
  CHECK_THROWS_AS(next_turn_prompt(in), std::invalid_argument);
}
