// A plain struct passed by value as a kernel argument (docs/kernel-format.md, "Arguments"):
// `struct(ptr x, i32 n, f32 eps)` in a launch block gives the kernel the bytes of a C struct whose
// fields are those, in that order, laid out as C and C++ lay out a plain struct on x86-64 and
// CUDA. How the argument is written and read, its layout and its bytes, shared by the launch
// block's check and the worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"
#include "protocol/launch_plan.h"

namespace kernrl {

// The most fields a struct argument may have.
constexpr size_t kMaxStructFields = 1024;

// A field's type: signed integers of 1, 2, 4 and 8 bytes, float, double, and a device pointer.
enum class FieldType { I8, I16, I32, I64, F32, F64, Ptr };

struct StructField {
  FieldType type = FieldType::I32;
  std::string value;  // as written: an integer or real expression; for ptr a buffer, NAME + EXPR
                      // or null
};

struct StructArg {
  std::vector<StructField> fields;
};

// The spelling of a field type (`i32`), and the type a spelling names.
const char* field_type_name(FieldType t);
std::optional<FieldType> field_type_of(const std::string& name);
// A field's size in bytes, which is also its alignment (1, 2, 4 or 8).
size_t field_bytes(FieldType t);
bool integer_field(FieldType t);
bool real_field(FieldType t);

// Whether `text` is written as a struct argument: `struct` then `(`.
bool looks_like_struct_arg(const std::string& text);

// `text` read as `struct(TYPE VALUE, ...)`: one or more fields separated by top-level commas,
// each a type (i8 i16 i32 i64 f32 f64 ptr) then its value; nullopt with `*why` set (naming the
// field) when it is not one.
std::optional<StructArg> parse_struct_arg(const std::string& text, std::string* why = nullptr);

// Where each field lies and the struct's size, as C lays out a plain struct: each field at the
// next multiple of its size, the struct aligned to its largest field and its size a multiple of
// that.
struct StructLayout {
  std::vector<size_t> offsets;
  size_t bytes = 0, align = 1;
};
StructLayout struct_layout(const std::vector<StructField>& fields);

// Why integer `v` does not fit a field of type `t` (empty when it does): i8, i16 and i32 are
// signed and hold -2^(n-1) to 2^(n-1)-1 ("an i8 field holds -128 to 127").
std::string field_range_problem(FieldType t, int64_t v);

// A pointer field's value: a null pointer (`null`, `nullptr`, `none`, `~`), a tensor or scratch
// buffer's name, or NAME + EXPR.
bool is_null_pointer_word(const std::string& s);

// One field's value at a size set (`vars`: the plan's variables, with the repeat variable):
// an integer field's value, a real field's, or a pointer field's buffer and offset (`offset`
// from offset_arg_at: its problem set when the offset is outside the buffer; `null` when none).
// `problem` says why the value cannot be passed (an integer out of its type's range, a real
// beyond float's); empty when it can. Throws ExprError when a value does not evaluate,
// std::invalid_argument when a pointer field names no buffer of `plan` or `p`.
struct FieldAt {
  int64_t i = 0;
  double f = 0;
  bool null = false;
  OffsetAt ptr;  // ptr.buffer empty for null
  std::string problem;
};
FieldAt struct_field_at(const StructField& field, const LaunchPlan& plan, const ProblemSpec& p,
                        const Vars& vars, const std::string& at = "");

// The struct's bytes: each field's value at its offset (little-endian, as the GPU reads them),
// the padding zero. `values` holds one FieldAt per field; pointers are given as device addresses
// in `addresses` (one per field, used for ptr fields only).
std::vector<unsigned char> pack_struct(const StructArg& s, const std::vector<FieldAt>& values,
                                       const std::vector<uint64_t>& addresses);

}  // namespace kernrl
