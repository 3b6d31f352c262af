// The deadline of one plan run (core/run_bound.h): the reference's time times the factor, between
// the floor and the ceiling; the bench-size time scaled up, never down, for other sizes; the
// record's form; and the config keys that set it.
#include <doctest/doctest.h>

#include <filesystem>

#include "core/paths.h"
#include "core/problem.h"
#include "core/run_bound.h"
#include "protocol/parts.h"

using namespace kernrl;

TEST_CASE("run bound: factor x reference time, never under the floor nor over the ceiling") {
  Config cfg;  // plan_run_s 5, factor 100, floor 0.25
  RunBound small = run_bound(0.01, "reference", cfg);
  CHECK(small.seconds == doctest::Approx(0.25));  // 1 ms: the floor
  CHECK(small.basis == "reference");
  RunBound mid = run_bound(12.0, "baseline", cfg);
  CHECK(mid.seconds == doctest::Approx(1.2));
  CHECK(mid.basis == "baseline");
  RunBound big = run_bound(400.0, "reference", cfg);
  CHECK(big.seconds == doctest::Approx(5.0));  // the ceiling
  RunBound unknown = run_bound(std::nullopt, "reference", cfg);
  CHECK(unknown.seconds == doctest::Approx(5.0));
  CHECK(unknown.basis == "ceiling");
  CHECK_FALSE(unknown.reference_ms);
  CHECK(unknown.why().find("timeouts.plan_run_s") != std::string::npos);
  // A slow kernel that finishes within the bound is never cut: the bound is never below
  // factor x the reference's time unless the ceiling says so.
  for (double ms : {0.001, 0.5, 3.0, 49.0}) {
    RunBound b = run_bound(ms, "reference", cfg);
    CHECK(b.seconds >= std::min(cfg.plan_run_timeout_s, ms / 1000 * cfg.plan_run_factor));
  }
  cfg.plan_run_timeout_s = 0;  // no deadline at all
  CHECK(run_bound(1.0, "reference", cfg).seconds == 0);
}

TEST_CASE("run bound: the record's watchdog object and the words of a cut") {
  Config cfg;
  RunBound b = run_bound(20.0, "reference", cfg);
  b.sizes = {{"N", 4096}};
  nlohmann::json j = write_object(trace::watchdog_of(b));
  CHECK(j["bound_s"] == doctest::Approx(2.0));
  CHECK(j["basis"] == "reference");
  CHECK(j["reference_ms"] == 20.0);
  CHECK(j["sizes"]["N"] == 4096);
  CHECK(j["grace_s"] == doctest::Approx(cfg.fault_grace_s));
  CHECK(b.why().find("100 x the reference's 20 ms") != std::string::npos);
  CHECK(b.why().find("plan_run_factor") != std::string::npos);
}

TEST_CASE("run bound: the bench size's time scaled up for larger work, kept for smaller") {
  ProblemSpec p =
      load_problem(std::filesystem::path(KERNRL_SOURCE_DIR) / "problems" / "L1" / "23_Softmax");
  Vars bigger = p.bench, smaller = p.bench;
  for (auto& [name, v] : bigger) v *= 2;
  for (auto& [name, v] : smaller) v = std::max<int64_t>(1, v / 4);
  double at_bench = scale_reference_ms(p, p.bench, 3.0);
  CHECK(at_bench == doctest::Approx(3.0));
  CHECK(scale_reference_ms(p, smaller, 3.0) == doctest::Approx(3.0));
  CHECK(scale_reference_ms(p, bigger, 3.0) > 3.0);
}

TEST_CASE("config: the watchdog's factor, floor and fault grace, and the spare workers") {
  Config c = Config::from_yaml_text(
      "timeouts:\n  plan_run_factor: 50\n  plan_run_floor_s: 0.5\nworkers:\n  spare: false\n",
      "t.yaml");
  CHECK(c.plan_run_factor == 50);
  CHECK(c.plan_run_floor_s == 0.5);
  CHECK_FALSE(c.spare_worker);
  Config round = Config::from_json(c.to_json());
  CHECK(round.plan_run_factor == 50);
  CHECK(round.plan_run_floor_s == 0.5);
  CHECK_FALSE(round.spare_worker);
  CHECK(round.spares() == 0);
  CHECK(Config().spare_worker);
  CHECK(Config().spares() == 2);
  Config many =
      Config::from_yaml_text("timeouts:\n  fault_grace_s: 0.75\nworkers:\n  spares: 4\n", "t.yaml");
  CHECK(many.spares() == 4);
  CHECK(many.fault_grace_s == 0.75);
  Config many_round = Config::from_json(many.to_json());
  CHECK(many_round.spares() == 4);
  CHECK(many_round.fault_grace_s == 0.75);
  CHECK_THROWS_WITH_AS(Config::from_yaml_text("workers:\n  spares: 9\n", "t.yaml"),
                       doctest::Contains("workers.spares"), SpecError);
  CHECK_THROWS_WITH_AS(Config::from_yaml_text("workers:\n  spares: 0\n", "t.yaml"),
                       doctest::Contains("workers.spares"), SpecError);
  CHECK_THROWS_AS(Config::from_yaml_text("timeouts:\n  plan_run_factor: -1\n", "t.yaml"),
                  SpecError);
}

TEST_CASE("an evaluation's timeout grows with the problem's tensors at the bench size") {
  Config cfg;
  cfg.run_timeout_s = 60;
  // GELU: x and out of batch_size x dim float32.
  ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_26"));
  p.bench = {{"batch_size", 4}, {"dim", 256}};
  CHECK(evaluation_timeout_s(p, cfg) == doctest::Approx(60.0).epsilon(1e-4));
  // KernelBench's MSELoss-sized tensors: 4 GiB each, 8 GiB at the bench size.
  p.bench = {{"batch_size", int64_t{1} << 15}, {"dim", int64_t{1} << 15}};
  CHECK(evaluation_timeout_s(p, cfg) ==
        doctest::Approx(60.0 + 8 * kEvaluationSecondsPerGiB).epsilon(1e-6));
  cfg.run_timeout_s = 5;
  CHECK(evaluation_timeout_s(p, cfg) == doctest::Approx(5.0 + 8 * kEvaluationSecondsPerGiB));
}
