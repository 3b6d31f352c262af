#include "protocol/struct_arg.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kernrl {
namespace {

// `s` split at its top-level commas (outside parentheses and brackets), untrimmed; an empty
// string is one empty item.
std::vector<std::string> top_level_items(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

const char* field_type_name(FieldType t) {
  switch (t) {
    case FieldType::I8:
      return "i8";
    case FieldType::I16:
      return "i16";
    case FieldType::I32:
      return "i32";
    case FieldType::I64:
      return "i64";
    case FieldType::F32:
      return "f32";
    case FieldType::F64:
      return "f64";
    case FieldType::Ptr:
      return "ptr";
  }
  return "?";
}

std::optional<FieldType> field_type_of(const std::string& name) {
  for (FieldType t : {FieldType::I8, FieldType::I16, FieldType::I32, FieldType::I64, FieldType::F32,
                      FieldType::F64, FieldType::Ptr})
    if (name == field_type_name(t)) return t;
  return std::nullopt;
}

size_t field_bytes(FieldType t) {
  switch (t) {
    case FieldType::I8:
      return 1;
    case FieldType::I16:
      return 2;
    case FieldType::I32:
    case FieldType::F32:
      return 4;
    case FieldType::I64:
    case FieldType::F64:
    case FieldType::Ptr:
      return 8;
  }
  return 0;
}

bool integer_field(FieldType t) {
  return t == FieldType::I8 || t == FieldType::I16 || t == FieldType::I32 || t == FieldType::I64;
}

bool real_field(FieldType t) {
  return t == FieldType::F32 || t == FieldType::F64;
}

bool is_null_pointer_word(const std::string& s) {
  return s == "null" || s == "nullptr" || s == "none" || s == "None" || s == "~";
}

bool looks_like_struct_arg(const std::string& text) {
  std::string t = trimmed(text);
  return t.rfind("struct", 0) == 0 && trimmed(t.substr(6)).rfind('(', 0) == 0;
}

std::optional<StructArg> parse_struct_arg(const std::string& text, std::string* why) {
  auto no = [&](const std::string& reason) -> std::optional<StructArg> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const std::string form =
      "a struct argument is struct(TYPE VALUE, ...), each TYPE one of i8 i16 i32 i64 f32 f64 ptr";
  if (!looks_like_struct_arg(text)) return no(form);
  std::string rest = trimmed(trimmed(text).substr(6));
  // The parentheses must enclose the whole rest: `struct(a)(b)` is not one.
  int depth = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '(') ++depth;
    if (rest[i] == ')' && --depth == 0 && i + 1 != rest.size()) return no(form);
    if (depth < 0) return no(form);
  }
  if (depth != 0) return no(form + " (a parenthesis is not closed)");
  if (rest.size() < 2 || rest.back() != ')') return no(form);
  std::string inner = rest.substr(1, rest.size() - 2);
  if (trimmed(inner).empty()) return no("a struct argument needs at least one field");
  StructArg s;
  auto items = top_level_items(inner);
  if (items.size() > kMaxStructFields)
    return no("a struct argument has " + std::to_string(items.size()) + " fields; at most " +
              std::to_string(kMaxStructFields));
  for (size_t k = 0; k < items.size(); ++k) {
    std::string item = trimmed(items[k]);
    const std::string field = "field " + std::to_string(k + 1) + " ('" + item + "')";
    if (item.empty()) return no("field " + std::to_string(k + 1) + " of the struct is empty");
    size_t blank = 0;
    while (blank < item.size() && !std::isspace(static_cast<unsigned char>(item[blank]))) ++blank;
    std::string type = item.substr(0, blank), value = trimmed(item.substr(blank));
    auto t = field_type_of(type);
    if (!t)
      return no(field + " of the struct: '" + type +
                "' is not a field type (i8 i16 i32 i64 f32 f64 ptr); a field is TYPE VALUE");
    if (value.empty()) return no(field + " of the struct has a type but no value");
    if (*t == FieldType::Ptr) {
      if (!is_null_pointer_word(value)) {
        auto o = split_offset_arg(value);
        std::string buffer = o ? o->buffer : value;
        if (!is_buffer_name(buffer))
          return no(field +
                    " of the struct: a ptr field is a tensor or scratch name, NAME + EXPR "
                    "or null");
      }
    } else if (is_null_pointer_word(value)) {
      return no(field + " of the struct: null is a value of ptr fields only");
    }
    s.fields.push_back({*t, value});
  }
  return s;
}

StructLayout struct_layout(const std::vector<StructField>& fields) {
  StructLayout l;
  size_t at = 0;
  for (const auto& f : fields) {
    size_t n = field_bytes(f.type);
    at = (at + n - 1) / n * n;
    l.offsets.push_back(at);
    at += n;
    l.align = std::max(l.align, n);
  }
  l.bytes = (at + l.align - 1) / l.align * l.align;
  return l;
}

std::string field_range_problem(FieldType t, int64_t v) {
  if (t == FieldType::I64) return "";
  const int bits = static_cast<int>(field_bytes(t)) * 8;
  const int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
  if (v >= lo && v <= hi) return "";
  return std::string("an ") + field_type_name(t) + " field holds " + std::to_string(lo) + " to " +
         std::to_string(hi);
}

FieldAt struct_field_at(const StructField& field, const LaunchPlan& plan, const ProblemSpec& p,
                        const Vars& vars, const std::string& at) {
  FieldAt r;
  if (integer_field(field.type)) {
    r.i = eval_expr(field.value, vars);
    if (std::string why = field_range_problem(field.type, r.i); !why.empty())
      r.problem = "= " + field.value + " is " + std::to_string(r.i) + at + "; " + why;
    return r;
  }
  if (real_field(field.type)) {
    r.f = eval_real_expr(field.value, vars, plan_reals(plan, p, vars));
    if (field.type == FieldType::F32 && std::fabs(r.f) > FLT_MAX)
      r.problem = "= " + field.value + " is " + std::to_string(r.f) + at +
                  "; an f32 field holds a float (at most 3.4e38 in magnitude)";
    return r;
  }
  if (is_null_pointer_word(field.value)) {
    r.null = true;
    return r;
  }
  const std::string text = split_offset_arg(field.value) ? field.value : field.value + " + 0";
  r.ptr = offset_arg_at(text, plan, p, vars, at);
  if (!r.ptr.problem.empty()) r.problem = "= " + field.value + " " + r.ptr.problem;
  return r;
}

std::vector<unsigned char> pack_struct(const StructArg& s, const std::vector<FieldAt>& values,
                                       const std::vector<uint64_t>& addresses) {
  const StructLayout l = struct_layout(s.fields);
  std::vector<unsigned char> b(l.bytes, 0);
  for (size_t k = 0; k < s.fields.size(); ++k) {
    unsigned char* to = b.data() + l.offsets[k];
    const FieldAt& v = values.at(k);
    switch (s.fields[k].type) {
      case FieldType::I8: {
        int8_t x = static_cast<int8_t>(v.i);
        std::memcpy(to, &x, 1);
        break;
      }
      case FieldType::I16: {
        int16_t x = static_cast<int16_t>(v.i);
        std::memcpy(to, &x, 2);
        break;
      }
      case FieldType::I32: {
        int32_t x = static_cast<int32_t>(v.i);
        std::memcpy(to, &x, 4);
        break;
      }
      case FieldType::I64:
        std::memcpy(to, &v.i, 8);
        break;
      case FieldType::F32: {
        float x = static_cast<float>(v.f);
        std::memcpy(to, &x, 4);
        break;
      }
      case FieldType::F64:
        std::memcpy(to, &v.f, 8);
        break;
      case FieldType::Ptr: {
        uint64_t x = v.null ? 0 : addresses.at(k);
        std::memcpy(to, &x, 8);
        break;
      }
    }
  }
  return b;
}

}  // namespace kernrl
