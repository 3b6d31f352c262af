// Every problem, on CPU: the spec validates, the reference runs at every test size with the
// declared outputs, cheap answers (zeros, a constant, a copy of the first input) fail the
// comparison, bench tensors stay under 4 GiB, the description ends with its differences from the
// OpenEnv problem, and solution.cu parses and compiles for sm_90a through the grading library's
// preparation (grading/prepare.h), as `kernrl eval --compile-only` would.
#include <doctest/doctest.h>

#include <sstream>

#include "core/paths.h"
#include "grading/prepare.h"
#include "problem_filter.h"
#include "worker/compare.h"
#include "worker/inputs.h"

using namespace kernrl;

namespace {

bool any_failed(const std::vector<OutputCheck>& checks) {
  for (const auto& c : checks)
    if (!c.passed) return true;
  return false;
}

// Every output replaced by `fill(expected output)`; the comparison must fail.
template <typename F>
bool cheap_answer_fails(const ProblemSpec& p, const TensorMap& want, F&& fill) {
  TensorMap got;
  for (const auto& [n, t] : want) got[n] = fill(n, t);
  return any_failed(compare_outputs(p, got, want));
}

}  // namespace

TEST_CASE("every problem: spec, reference at test sizes, guards against cheap answers") {
  auto dirs = problem_dirs(problems_dir());
  CHECK(dirs.size() >= 1);
  for (const auto& dir : dirs) {
    std::string id = problem_id_of_dir(dir);
    if (!problem_selected(id)) continue;
    INFO("problem ", id);
    ProblemSpec p;
    REQUIRE_NOTHROW(p = load_problem(dir));
    REQUIRE_MESSAGE(find_reference(p.id) != nullptr, "no reference registered for " << p.id);
    CHECK_MESSAGE(p.bytes_at(p.bench) < (int64_t{4} << 30), "bench tensors exceed 4 GiB");
    bool has_odd = false;
    for (const auto& sizes : p.tests)
      for (const auto& [n, v] : sizes) has_odd |= (v % 2 == 1 && v > 1);
    CHECK_MESSAGE(has_odd, "no test size set has an odd size");
    for (size_t i = 0; i < p.tests.size(); ++i) {
      const Vars& sizes = p.tests[i];
      INFO("test size set ", i);
      TensorMap in, want, other;
      REQUIRE_NOTHROW(in = make_inputs(p, sizes, 1000 + i, torch::kCPU));
      // The worker runs the reference of a verified timed run on the kernel's own input buffers:
      // a reference must leave its inputs as they were.
      TensorMap before;
      for (const auto& [n, t] : in) before[n] = t.clone();
      REQUIRE_NOTHROW(want = run_reference(p, in, sizes));
      for (const auto& [n, t] : in) CHECK_MESSAGE(torch::equal(t, before.at(n)), "the reference modifies input " << n);
      // A draw into reused tensors is exactly the draw into new ones (timed runs redraw in place,
      // their checks regenerate).
      TensorMap reused = make_inputs(p, sizes, 77 + i, torch::kCPU);
      refill_inputs(p, sizes, 1000 + i, reused);
      for (const auto& [n, t] : in) CHECK_MESSAGE(torch::equal(t, reused.at(n)), "refill_inputs draws another " << n);
      // Deterministic: the same inputs give the same outputs.
      auto again = run_reference(p, in, sizes);
      CHECK_FALSE(any_failed(compare_outputs(p, again, want)));
      // Another draw, for the input-independent constant.
      other = run_reference(p, make_inputs(p, sizes, 2000 + i, torch::kCPU), sizes);
      CHECK_MESSAGE(cheap_answer_fails(p, want, [](const std::string&, const torch::Tensor& t) { return torch::zeros_like(t); }),
                    "an all-zeros answer passes");
      CHECK_MESSAGE(cheap_answer_fails(p, want,
                                       [&](const std::string& n, const torch::Tensor& t) {
                                         auto o = other.at(n);
                                         auto m = o.is_complex() ? o.mean() : o.to(torch::kFloat64).mean();
                                         return torch::full_like(t, 0).add(m.to(t.is_complex() ? t.scalar_type() : torch::kFloat64)).to(t.scalar_type());
                                       }),
                    "a constant answer (the mean of another draw's output) passes");
      const torch::Tensor& first = in.at(p.inputs.front().name);
      bool any_copy = false;
      bool copy_fails = cheap_answer_fails(p, want, [&](const std::string&, const torch::Tensor& t) {
        if (first.numel() == t.numel() && first.is_floating_point() == t.is_floating_point() && !t.is_complex() &&
            !first.is_complex()) {
          any_copy = true;
          return first.reshape(t.sizes()).to(t.scalar_type());
        }
        return torch::zeros_like(t);
      });
      if (any_copy) CHECK_MESSAGE(copy_fails, "a copy of the first input passes");
    }
  }
}

// The description's last section: "Differences from the OpenEnv problem:" followed by "None." or
// by a list whose items start with "- " (continuation lines indented). Empty when it is well
// formed, else what is wrong.
namespace {
std::string differences_problem(const std::string& description) {
  const std::string head = "Differences from the OpenEnv problem:";
  const size_t at = description.find(head);
  if (at == std::string::npos) return "no \"" + head + "\" section";
  if (description.find(head, at + 1) != std::string::npos) return "more than one differences section";
  if (at > 0 && description[at - 1] != '\n') return "the differences heading does not start a line";
  std::string rest = description.substr(at + head.size());
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.pop_back();
  if (rest == " None.") return "";
  if (rest.rfind("\n- ", 0) != 0) return "the differences section is neither \"None.\" nor a list of \"- \" items";
  std::istringstream lines(rest.substr(1));
  std::string line;
  int items = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("- ", 0) == 0) {
      ++items;
      if (line.size() < 10) return "an empty differences item";
    } else if (line.rfind("  ", 0) != 0) {
      return "a line of the differences section is neither an item nor its continuation: " + line;
    }
  }
  return items > 0 ? "" : "no differences items";
}
}  // namespace

TEST_CASE("every description ends with its differences from the OpenEnv problem") {
  CHECK(differences_problem("Text.\n\nDifferences from the OpenEnv problem: None.\n") == "");
  CHECK(differences_problem("Text.\n\nDifferences from the OpenEnv problem:\n- One change (why).\n  More.\n") == "");
  CHECK(differences_problem("Text.\n") != "");
  CHECK(differences_problem("Text.\nDifferences from the OpenEnv problem:\nsome prose\n") != "");
  CHECK(differences_problem("Text.\nDifferences from the OpenEnv problem: None.\nMore text.\n") != "");
  for (const auto& dir : problem_dirs(problems_dir())) {
    std::string id = problem_id_of_dir(dir);
    if (!problem_selected(id)) continue;
    INFO("problem ", id);
    CHECK_MESSAGE(differences_problem(load_problem(dir).description) == "", differences_problem(load_problem(dir).description));
  }
}

// The record's status and error message, for failure messages: the one place this test reads
// the record.
namespace {
std::string outcome(const Prepared& p) {
  const TraceRecord& r = p.record;
  std::string s = r.status_text();
  if (r.error) s += ": " + r.error->message.value_or("");
  return s;
}
}  // namespace

TEST_CASE("every solution.cu parses, fits its problem and compiles with NVRTC for sm_90a") {
  Config cfg = load_config("");
  cfg.cache_dir = (std::filesystem::temp_directory_path() / "kernrl-test-cache").string();
  GradeOptions opt;  // no --problem: the launch block (else the path) must name the problem
  opt.compile_only = true;
  for (const auto& dir : problem_dirs(problems_dir())) {
    std::string id = problem_id_of_dir(dir);
    if (!problem_selected(id)) continue;
    INFO("problem ", id);
    std::string file = (dir / "solution.cu").string();
    REQUIRE_MESSAGE(std::filesystem::exists(file), "missing solution.cu");
    // The grading library's own steps: extract, parse, check the plan against the problem (132
    // SMs, an H100's), compile; a compiled kernel has passed every one of them.
    Prepared p = prepare_file(file, opt, cfg, "sm_90a", 132);
    CHECK(p.usage_error.empty());
    CHECK(p.problem.id == id);
    CHECK_FALSE(p.plan.launches.empty());
    CHECK_MESSAGE(p.compiled.ok(), outcome(p) << "\n"
                                              << p.compiled.error << "\n"
                                              << p.compiled.log);
  }
}
