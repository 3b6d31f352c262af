// A kernel launch's arguments packed at its parameters' widths: what cuLaunchKernelEx is given.
// No CUDA call: tested on the CPU (tests/unit/test_launch_args.cpp).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/problem.h"
#include "protocol/launch_plan.h"

namespace kernrl {

// A device address (the driver API's CUdeviceptr).
using DevicePtr = unsigned long long;
// Device pointers of the problem's tensors and the plan's scratch buffers, by name.
using PtrMap = std::map<std::string, DevicePtr>;

// An argument that cannot be passed to its parameter: the launch's launch_error.
struct ArgError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Argument `a` of a kernel launch at `vars` (sizes, num_sms, the repeat variable), packed for a
// parameter of `width` bytes: a pointer (a tensor, a scratch buffer, `NAME + EXPR`, null) in 8
// bytes, an integer in 1, 2, 4 or 8, a float in 4 or 8, an accessor or a struct in its own size
// (docs/kernel-format.md, "Arguments").
// `where` names the argument in messages. Throws ArgError.
std::vector<unsigned char> pack_kernel_arg(const LaunchArg& a, size_t width, const LaunchPlan& plan,
                                           const ProblemSpec& p, const Vars& vars,
                                           const PtrMap& ptrs, const std::string& where);

}  // namespace kernrl
