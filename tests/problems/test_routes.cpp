// References with two routes (KERNRL_REFERENCE_ROUTES): the fused route (the PyTorch operations a
// user would call: scaled_dot_product_attention, _scaled_mm) agrees with the portable route within
// the problem's tolerance at every test size. With libtorch 1.13 the fused route runs with those
// operations written out (the code around them is still checked); with libtorch 2.5 or later it
// runs the fused operations themselves. KERNRL_TEST_DEVICE=cuda runs the check on the GPU, at the
// bench size too, as the grader runs references (TF32 off).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "core/paths.h"
#include "problem_filter.h"
#include "worker/compare.h"
#include "worker/inputs.h"

using namespace kernrl;

namespace {

TensorMap run_route(const ProblemSpec& p, const ReferenceFn& fn, const TensorMap& in,
                    const Vars& sizes) {
  auto scalars = p.scalar_values();
  RefContext ctx{in, sizes, scalars, in.begin()->second.device()};
  torch::NoGradGuard no_grad;
  TensorMap out = fn(ctx);
  for (auto& [name, t] : out) t = t.contiguous();
  return out;
}

torch::Device test_device() {
  const char* d = std::getenv("KERNRL_TEST_DEVICE");
  if (d && std::string(d) == "cuda") {
    REQUIRE_MESSAGE(torch::cuda::is_available(), "KERNRL_TEST_DEVICE=cuda but no CUDA device");
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
    return torch::Device(torch::kCUDA);
  }
  return torch::Device(torch::kCPU);
}

}  // namespace

TEST_CASE("references with a fused route agree with their portable route") {
  torch::Device device = test_device();
  const std::string how = kFusedOpsNative ? "native" : "written out";
  MESSAGE("fused operations " << how << " (libtorch " << TORCH_VERSION_MAJOR << "."
                              << TORCH_VERSION_MINOR << "), on " << device.str());
  int routed = 0;
  for (const auto& dir : problem_dirs(problems_dir())) {
    std::string id = problem_id_of_dir(dir);
    if (!problem_selected(id)) continue;
    const ReferenceEntry* e = find_reference(id);
    if (!e || !e->fused || !e->portable) continue;
    ++routed;
    INFO("problem " << id);
    ProblemSpec p = load_problem(dir);
    std::vector<Vars> sets = p.tests;
    if (device.is_cuda()) sets.push_back(p.bench);
    for (size_t i = 0; i < sets.size(); ++i) {
      INFO("size set " << i << (i == p.tests.size() ? " (bench)" : ""));
      TensorMap in = make_inputs(p, sets[i], 3000 + i, device);
      TensorMap portable = run_route(p, e->portable, in, sets[i]);
      TensorMap fused = run_route(p, e->fused, in, sets[i]);
      for (const auto& c : compare_outputs(p, fused, portable)) {
        INFO("output " << c.name << ": " << c.reason << " (max abs err " << c.max_abs_err
                       << ", rel l2 " << c.rel_l2 << ")");
        CHECK(c.passed);
      }
    }
  }
  // The attention problems and the FP8 GEMM (unless filtered out).
  if (!std::getenv("KERNRL_PROBLEM_FILTER")) CHECK(routed >= 6);
}
