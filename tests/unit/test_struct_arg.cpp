// Plain structs passed by value as kernel arguments (docs/kernel-format.md, "Arguments"):
// `struct(ptr x, i32 n, ...)` read and laid out as C lays out a plain struct
// (protocol/struct_arg.h), checked in launch blocks, and packed by the worker on the CPU.
#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>

#include "core/paths.h"
#include "core/problem.h"
#include "parse/launch_block.h"
#include "plan_checks.h"
#include "protocol/struct_arg.h"
#include "worker/launch_args.h"

using namespace kernrl;
using kernrl::test::checked;
using kernrl::test::plan_error;

namespace {

const ProblemSpec& softmax() {  // x, out: float32 [batch_size, dim]
  static ProblemSpec p = load_problem(find_problem_dir(problems_dir(), "L1_23_Softmax"));
  return p;
}

template <typename T>
T read_at(const std::vector<unsigned char>& b, size_t at) {
  T v;
  REQUIRE(at + sizeof v <= b.size());
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

std::vector<FieldType> types_of(const StructArg& s) {
  std::vector<FieldType> t;
  for (const auto& f : s.fields) t.push_back(f.type);
  return t;
}

StructLayout layout_of(const std::string& text) {
  auto s = parse_struct_arg(text);
  REQUIRE_MESSAGE(s, text);
  return struct_layout(s->fields);
}

const std::string kHead = "launches:\n  - kernel: k\n    grid: [1]\n    block: [1]\n";

#define CHECK_CONTAINS(text, part) CHECK_MESSAGE((text).find(part) != std::string::npos, text)

}  // namespace

TEST_CASE("struct arguments: how they are written") {
  auto s = parse_struct_arg("struct(ptr x, ptr out + dim, ptr null, i32 0, i64 n * 4, f32 0.5)");
  REQUIRE(s);
  CHECK(types_of(*s) == std::vector<FieldType>{FieldType::Ptr, FieldType::Ptr, FieldType::Ptr,
                                               FieldType::I32, FieldType::I64, FieldType::F32});
  CHECK(s->fields[1].value == "out + dim");
  CHECK(s->fields[4].value == "n * 4");
  // Blanks, and commas inside parentheses.
  s = parse_struct_arg("  struct ( i16 min(a, b) ,f64 1e-5, i8 -1 )  ");
  REQUIRE(s);
  CHECK(s->fields.size() == 3);
  CHECK(s->fields[0].value == "min(a, b)");
  CHECK(looks_like_struct_arg("struct (i32 1)"));
  CHECK_FALSE(looks_like_struct_arg("structure(i32 1)"));
  CHECK_FALSE(looks_like_struct_arg("struct_size"));
  CHECK_FALSE(looks_like_struct_arg("x"));
  struct Bad {
    const char* text;
    const char* why;
  };
  for (const Bad& b : std::vector<Bad>{
           {"struct()", "at least one field"},
           {"struct(i32)", "field 1 ('i32') of the struct has a type but no value"},
           {"struct(int 3)", "field 1 ('int 3') of the struct: 'int' is not a field type"},
           {"struct(i32 1, u32 2)", "field 2 ('u32 2') of the struct: 'u32' is not a field type"},
           {"struct(i32 1,, i32 2)", "field 2 of the struct is empty"},
           {"struct(i32 null)", "null is a value of ptr fields only"},
           {"struct(ptr 3)", "field 1 ('ptr 3') of the struct: a ptr field is a tensor"},
           {"struct(ptr x * 2)", "a ptr field is a tensor or scratch name, NAME + EXPR or null"},
           {"struct(i32 1", "a parenthesis is not closed"},
           {"struct(i32 1)(i32 2)", "struct(TYPE VALUE, ...)"},
           {"struct i32 1", "struct(TYPE VALUE, ...)"},
       }) {
    std::string why;
    CHECK_MESSAGE(!parse_struct_arg(b.text, &why), b.text);
    CHECK_CONTAINS(why, b.why);
  }
}

TEST_CASE("struct arguments: laid out as C lays out a plain struct") {
  // Each field at a multiple of its size; the struct aligned to its largest field.
  StructLayout l = layout_of("struct(i8 1, i32 2, i8 3)");
  CHECK(l.offsets == std::vector<size_t>{0, 4, 8});
  CHECK(l.bytes == 12);
  CHECK(l.align == 4);
  l = layout_of("struct(i32 1, ptr null, i16 2)");
  CHECK(l.offsets == std::vector<size_t>{0, 8, 16});
  CHECK(l.bytes == 24);
  CHECK(l.align == 8);
  l = layout_of("struct(i8 1, i8 2, i16 3)");
  CHECK(l.offsets == std::vector<size_t>{0, 1, 2});
  CHECK(l.bytes == 4);
  l = layout_of("struct(i8 1)");
  CHECK(l.bytes == 1);
  l = layout_of("struct(f32 1.0, f64 2.0, f32 3.0)");
  CHECK(l.offsets == std::vector<size_t>{0, 8, 16});
  CHECK(l.bytes == 24);
  // struct { const float* ptr[4]; int a[4]; int b[4]; int c[4]; int d[4]; }: 32 + 64 bytes.
  std::string cat = "struct(ptr x, ptr x, ptr out, ptr out";
  for (int k = 0; k < 16; ++k) cat += ", i32 " + std::to_string(k);
  l = layout_of(cat + ")");
  CHECK(l.offsets[4] == 32);
  CHECK(l.offsets[19] == 92);
  CHECK(l.bytes == 96);
  // struct { int lo[8], hi[8]; }: 64 bytes, aligned to 4.
  std::string ranges = "struct(i32 0";
  for (int k = 1; k < 16; ++k) ranges += ", i32 " + std::to_string(k);
  l = layout_of(ranges + ")");
  CHECK(l.bytes == 64);
  CHECK(l.align == 4);
}

TEST_CASE("struct arguments: integer fields hold their type's signed range") {
  CHECK(field_range_problem(FieldType::I8, 127).empty());
  CHECK(field_range_problem(FieldType::I8, -128).empty());
  CHECK(field_range_problem(FieldType::I8, 128) == "an i8 field holds -128 to 127");
  CHECK(field_range_problem(FieldType::I16, -32769) == "an i16 field holds -32768 to 32767");
  CHECK(field_range_problem(FieldType::I32, 2147483647).empty());
  CHECK(field_range_problem(FieldType::I32, 2147483648LL) ==
        "an i32 field holds -2147483648 to 2147483647");
  CHECK(field_range_problem(FieldType::I64, INT64_MIN).empty());
}

TEST_CASE("struct arguments in a launch block: checked against the problem") {
  LaunchPlan plan =
      checked(kHead + "    args: [struct(ptr x, ptr out + dim, ptr null, i32 dim, f32 0.5), dim]\n",
              softmax());
  const auto& args = plan.launches.at(0).args;
  CHECK(args.at(0).kind == ArgKind::Struct);
  CHECK(args.at(0).text == "struct(ptr x, ptr out + dim, ptr null, i32 dim, f32 0.5)");
  CHECK(args.at(1).kind == ArgKind::IntExpr);
  // The kind travels to the worker as its number.
  LaunchPlan back = LaunchPlan::from_json(plan.to_json());
  CHECK(back.launches.at(0).args.at(0).kind == ArgKind::Struct);
  CHECK(back.launches.at(0).args.at(0).text == args.at(0).text);
  // Written without brackets, as a YAML block list, with a scratch buffer and a repeat variable.
  checked(kHead + "    args: struct(ptr x, i32 1), out\n", softmax());
  checked(kHead + "    args:\n      - struct(ptr x, i64 batch_size * dim)\n      - out\n",
          softmax());
  checked(kHead +
              "    args: [struct(ptr part + r * dim, i32 r), x]\n    repeat: {count: 3, var: r}\n"
              "scratch:\n  part: {dtype: float32, count: 3 * dim}\n",
          softmax());

  bool config = true;
  std::string e = plan_error(kHead + "    args: [struct(ptr y, i32 1)]\n", softmax(), &config);
  CHECK_FALSE(config);  // a format_error
  CHECK_CONTAINS(e, "field 1 (ptr y): 'y' is not a tensor or scratch buffer of this file");
  e = plan_error(kHead + "    args: [struct(ptr x, i32 depth)]\n", softmax(), &config);
  CHECK_FALSE(config);
  CHECK_CONTAINS(e, "field 2 (i32 depth): unknown name 'depth'");
  e = plan_error(kHead + "    args: [struct(ptr x + depth)]\n", softmax(), &config);
  CHECK_CONTAINS(e, "field 1 (ptr x + depth): unknown name 'depth'");
  e = plan_error(kHead + "    args: [struct(i32 dim / 0)]\n", softmax(), &config);
  CHECK_FALSE(config);
  CHECK_CONTAINS(e, "field 1 (i32 dim / 0)");
  e = plan_error(kHead + "    args: [struct(q32 1)]\n", softmax(), &config);
  CHECK_FALSE(config);
  CHECK_CONTAINS(e, "'q32' is not a field type");
}

TEST_CASE("struct arguments: a value its field cannot hold is a launch_error before any launch") {
  bool config = false;
  std::string e =
      plan_error(kHead + "    args: [struct(ptr x, i32 dim * 100000000)]\n", softmax(), &config);
  CHECK(config);
  CHECK_CONTAINS(e,
                 "launch 1 (k): argument 1 (struct), field 2 (i32 dim * 100000000) = dim * "
                 "100000000 is ");
  CHECK_CONTAINS(e, "an i32 field holds -2147483648 to 2147483647");
  checked(kHead + "    args: [struct(ptr x, i64 dim * 100000000)]\n", softmax());
  e = plan_error(kHead + "    args: [struct(i8 dim)]\n", softmax(), &config);
  CHECK(config);
  CHECK_CONTAINS(e, "an i8 field holds -128 to 127");
  e = plan_error(kHead + "    args: [struct(f32 1e300)]\n", softmax(), &config);
  CHECK(config);
  CHECK_CONTAINS(e, "an f32 field holds a float");
  checked(kHead + "    args: [struct(f64 1e300)]\n", softmax());
  // A pointer field's offset is checked as NAME + EXPR is: 0 to the buffer's elements.
  e = plan_error(kHead + "    args: [struct(ptr x + batch_size * dim + 1)]\n", softmax(), &config);
  CHECK(config);
  CHECK_CONTAINS(e,
                 "field 1 (ptr x + batch_size * dim + 1) = x + batch_size * dim + 1 offsets x by");
  checked(kHead + "    args: [struct(ptr x + batch_size * dim)]\n", softmax());
  // Not where the launch does not run.
  checked(kHead + "    args: [struct(i8 dim)]\n    repeat: {count: 0}\n", softmax());
}

TEST_CASE("struct arguments are for CUDA kernels: not for torch steps or Triton launches") {
  LaunchPlan plan;
  plan.language = "triton";
  LaunchSpec l;
  l.kernel = "k";
  l.grid = {"1"};
  l.args = {{"struct(ptr x, i32 1)", ArgKind::IntExpr}, {"out", ArgKind::IntExpr}};
  plan.launches.push_back(l);
  try {
    check_plan(plan, softmax(), 132);
    FAIL("a Triton launch took a struct");
  } catch (const FormatError& e) {
    CHECK_CONTAINS(std::string(e.what()), "a struct is an argument of CUDA kernels");
  }
  ProblemSpec suite = softmax();
  suite.torchscript = "torchscript";  // a suite problem: torch steps allowed
  std::string e = plan_error(
      "launches:\n  - {torch: relu, args: [struct(ptr x)], out: y}\n"
      "  - {kernel: k, grid: [1], block: [1], args: [y, out]}\n"
      "scratch:\n  y: {dtype: float32, shape: [batch_size, dim]}\n",
      suite);
  CHECK_CONTAINS(e, "a struct is an argument of CUDA kernels; a torch step takes");
}

TEST_CASE("struct arguments: the worker packs each field at its offset") {
  LaunchPlan plan;
  plan.scratch.push_back({"h", *dtype_from_name("float16"), "2 * dim", {}, 0});
  const Vars vars = {{"batch_size", 4}, {"dim", 256}, {"num_sms", 132}, {"r", 1}};
  const PtrMap ptrs = {{"x", 0x10000}, {"out", 0x20000}, {"h", 0x30000}};
  const LaunchArg a{
      "struct(i8 -3, ptr out + dim, i16 r + 1, ptr null, f32 0.5, ptr h + r, "
      "i32 batch_size * dim, f64 1.0 / dim, ptr x)",
      ArgKind::Struct};
  // i8 @0, ptr @8, i16 @16, ptr @24, f32 @32, ptr @40, i32 @48, f64 @56, ptr @64: 72 bytes.
  auto b = pack_kernel_arg(a, 72, plan, softmax(), vars, ptrs, "argument 1");
  REQUIRE(b.size() == 72);
  CHECK(read_at<int8_t>(b, 0) == -3);
  CHECK(read_at<uint64_t>(b, 8) == 0x20000 + 256 * 4);  // float32 elements
  CHECK(read_at<int16_t>(b, 16) == 2);
  CHECK(read_at<uint64_t>(b, 24) == 0);
  CHECK(read_at<float>(b, 32) == 0.5f);
  CHECK(read_at<uint64_t>(b, 40) == 0x30000 + 2);  // float16 elements
  CHECK(read_at<int32_t>(b, 48) == 1024);
  CHECK(read_at<double>(b, 56) == 1.0 / 256);
  CHECK(read_at<uint64_t>(b, 64) == 0x10000);
  for (size_t pad : {1, 2, 3, 4, 5, 6, 7, 18, 36, 52}) CHECK(b[pad] == 0);

  auto error = [&](const LaunchArg& arg, size_t w) -> std::string {
    try {
      pack_kernel_arg(arg, w, plan, softmax(), vars, ptrs, "argument 1 ('...') of k");
    } catch (const ArgError& e) {
      return e.what();
    }
    return "no error";
  };
  // The parameter's size read from the compiled kernel must be the struct's.
  CHECK(error(a, 64) ==
        "argument 1 ('...') of k is a struct of 72 bytes (9 fields, aligned to 8) but the "
        "parameter is 64 bytes");
  CHECK(error(a, 8).find("but the parameter is 8 bytes") != std::string::npos);
  CHECK_CONTAINS(error({"struct(i32 dim * 10000000)", ArgKind::Struct}, 4),
                 "field 1 (i32 dim * 10000000) = dim * 10000000 is 2560000000");
  CHECK_CONTAINS(error({"struct(ptr x + 5000)", ArgKind::Struct}, 8), "offsets x by 5000 elements");
  CHECK_CONTAINS(error({"struct(ptr y)", ArgKind::Struct}, 8),
                 "'y' is no tensor or scratch buffer");
}
