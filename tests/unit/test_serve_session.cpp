// kernrl serve's grader over a real grading session, compile-only: deadlines and cancellation
// (the service's deadlines and shutdown) end a submission without grading it, with its reason.
#include <doctest/doctest.h>

#include <future>

#include "core/config.h"
#include "serve/grader.h"

using namespace kernrl;
using namespace kernrl::serve;

namespace {

Outcome grade(Grader& g, Job job) {
  std::promise<Outcome> p;
  auto f = p.get_future();
  g.submit(std::move(job), [&p](Outcome o) { p.set_value(std::move(o)); });
  return f.get();
}

}  // namespace

TEST_CASE("serve: a submission past its deadline, or after a shutdown, is not graded") {
  Config cfg = load_config("");
  GraderOptions opt;
  opt.compile_only = true;
  opt.compile_jobs = 1;
  auto g = make_grader(cfg, opt);
  CHECK(g->compile_only());
  CHECK(g->gpu_info().find("no GPU") == 0);

  Job late;
  late.source = "no code";
  late.label = "late";
  late.deadline = Clock::now() - std::chrono::seconds(1);
  Outcome o = grade(*g, late);
  CHECK(o.kind == Outcome::Expired);
  CHECK(o.record.to_json().empty());  // no record

  Job fine;
  fine.source = "no code here";
  fine.label = "fine";
  fine.problem = "L1_23_Softmax";
  o = grade(*g, fine);
  REQUIRE(o.kind == Outcome::Graded);
  CHECK(o.record.status_is(Status::FormatError));  // read and judged, no compiler needed
  CHECK(o.record.problem.value_or("") == "L1_23_Softmax");
  CHECK_FALSE(o.record.run_seed.has_value());  // the service's run stamps it (service.cpp)

  g->stop();
  o = grade(*g, fine);
  CHECK(o.kind == Outcome::Cancelled);
}
