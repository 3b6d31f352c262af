// The worker's packing of a launch's kernel arguments (worker/launch_args.h), on the CPU: each
// kind at each parameter width, and pointers into a buffer (`NAME + EXPR`) advanced by whole
// elements of the buffer's dtype, refused outside the buffer.
#include <doctest/doctest.h>

#include <cstring>

#include "core/paths.h"
#include "core/problem.h"
#include "parse/launch_block.h"
#include "worker/launch_args.h"

using namespace kernrl;

namespace {

const ProblemSpec& softmax() {
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_23_Softmax"));
  return p;
}

// L1_23 (x, out: float32 [batch_size, dim]) with a float16 scratch buffer of 2 * dim elements.
LaunchPlan plan_with_scratch() {
  LaunchPlan plan;
  plan.scratch.push_back({"h", *dtype_from_name("float16"), "2 * dim", {}, 0});
  return plan;
}

const Vars kSmall = {{"batch_size", 4}, {"dim", 256}, {"num_sms", 132}};
const PtrMap kPtrs = {{"x", 0x10000}, {"out", 0x20000}, {"h", 0x30000}};

std::vector<unsigned char> pack(const LaunchArg& a, size_t width) {
  return pack_kernel_arg(a, width, plan_with_scratch(), softmax(), kSmall, kPtrs, "argument 1");
}

template <typename T>
T value_of(const std::vector<unsigned char>& b) {
  REQUIRE(b.size() == sizeof(T));
  T v;
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

std::string pack_error(const LaunchArg& a, size_t width) {
  try {
    pack(a, width);
  } catch (const ArgError& e) {
    return e.what();
  }
  return "no error";
}

#define CHECK_CONTAINS(text, part) CHECK_MESSAGE((text).find(part) != std::string::npos, text)

}  // namespace

TEST_CASE("kernel arguments are packed at their parameter's width") {
  CHECK(value_of<DevicePtr>(pack({"x", ArgKind::Tensor}, 8)) == 0x10000);
  CHECK(value_of<DevicePtr>(pack({"h", ArgKind::Scratch}, 8)) == 0x30000);
  CHECK(value_of<DevicePtr>(pack({"null", ArgKind::None}, 8)) == 0);
  CHECK(value_of<int32_t>(pack({"batch_size * dim", ArgKind::IntExpr}, 4)) == 1024);
  CHECK(value_of<int64_t>(pack({"dim - 300", ArgKind::IntExpr}, 8)) == -44);
  CHECK(value_of<int16_t>(pack({"dim", ArgKind::IntExpr}, 2)) == 256);
  CHECK(value_of<int8_t>(pack({"batch_size", ArgKind::IntExpr}, 1)) == 4);
  CHECK(value_of<float>(pack({"0.5", ArgKind::FloatLiteral}, 4)) == 0.5f);
  CHECK(value_of<double>(pack({"1.0 / dim", ArgKind::FloatExpr}, 8)) == 1.0 / 256);
  CHECK_CONTAINS(pack_error({"x", ArgKind::Tensor}, 4), "is a pointer but the parameter is 4");
  CHECK_CONTAINS(pack_error({"null", ArgKind::None}, 4), "is a null pointer");
  CHECK_CONTAINS(pack_error({"dim", ArgKind::IntExpr}, 1), "does not fit a 1-byte parameter");
  CHECK_CONTAINS(pack_error({"dim", ArgKind::IntExpr}, 3), "1-, 2-, 4- or 8-byte");
  CHECK_CONTAINS(pack_error({"1e300", ArgKind::FloatLiteral}, 4), "4-byte float");
  CHECK_CONTAINS(pack_error({"true", ArgKind::Bool}, 1), "torch steps only");
}

TEST_CASE("a pointer into a buffer: advanced by whole elements of its dtype, within the buffer") {
  // float32: 4 bytes an element; the end of the buffer (an empty rest) is a pointer too.
  CHECK(value_of<DevicePtr>(pack({"x + dim", ArgKind::Offset}, 8)) == 0x10000 + 256 * 4);
  CHECK(value_of<DevicePtr>(pack({"out+(batch_size - 1) * dim", ArgKind::Offset}, 8)) ==
        0x20000 + 3 * 256 * 4);
  CHECK(value_of<DevicePtr>(pack({"x + batch_size * dim", ArgKind::Offset}, 8)) ==
        0x10000 + 1024 * 4);
  CHECK(value_of<DevicePtr>(pack({"x + 0", ArgKind::Offset}, 8)) == 0x10000);
  // A float16 scratch buffer: 2 bytes an element.
  CHECK(value_of<DevicePtr>(pack({"h + dim", ArgKind::Offset}, 8)) == 0x30000 + 256 * 2);
  // Outside the buffer at this size set, or into a narrower parameter: the launch's error.
  CHECK_CONTAINS(pack_error({"x + batch_size * dim + 1", ArgKind::Offset}, 8),
                 "argument 1 offsets x by 1025 elements; an offset into x must be 0 to its 1024 "
                 "elements");
  CHECK_CONTAINS(pack_error({"h + 0 - 1", ArgKind::Offset}, 8), "offsets h by -1 elements");
  CHECK_CONTAINS(pack_error({"h + 2 * dim + 1", ArgKind::Offset}, 8), "its 512 elements");
  CHECK_CONTAINS(pack_error({"x + dim", ArgKind::Offset}, 4),
                 "is a pointer but the parameter is 4");
  CHECK_CONTAINS(pack_error({"x + dim / 0", ArgKind::Offset}, 8), "division by zero");
}
