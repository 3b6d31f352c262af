#include "worker/launch_args.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "protocol/struct_arg.h"
#include "protocol/tensor_accessor.h"

namespace kernrl {

namespace {

template <typename T>
std::vector<unsigned char> bytes_of(T v) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

std::vector<unsigned char> pointer(DevicePtr v, size_t w, const std::string& where,
                                   const char* what) {
  if (w != 8)
    throw ArgError(where + " is " + what + " but the parameter is " + std::to_string(w) + " bytes");
  return bytes_of<DevicePtr>(v);
}

// The bytes of a tensor accessor argument (protocol/tensor_accessor.h) for a parameter of `w`
// bytes: the buffer's pointer, its sizes at this size set and its row-major strides.
std::vector<unsigned char> accessor_bytes(const LaunchArg& a, size_t w, const LaunchPlan& plan,
                                          const ProblemSpec& p, const Vars& vars,
                                          const PtrMap& ptrs, const std::string& where) {
  std::string why;
  auto acc = parse_accessor_arg(a.text, &why);
  if (!acc) throw ArgError(where + ": " + why);
  std::optional<std::vector<int64_t>> shape;
  try {
    shape = buffer_shape(acc->buffer, plan, p, vars);
  } catch (const ExprError& err) {
    throw ArgError(where + ": the shape of '" + acc->buffer + "': " + err.what());
  }
  auto ptr = ptrs.find(acc->buffer);
  if (!shape || ptr == ptrs.end())
    throw ArgError(where + ": '" + acc->buffer + "' is not a tensor or scratch buffer");
  if (shape->size() != static_cast<size_t>(acc->rank))
    throw ArgError(where + ": '" + acc->buffer + "' has " + std::to_string(shape->size()) +
                   " dimensions, not " + std::to_string(acc->rank));
  const size_t want = accessor_param_bytes(acc->rank, acc->bits);
  if (w != want)
    throw ArgError(where + " is a " + std::to_string(acc->rank) + "-dimensional " +
                   std::to_string(acc->bits) + "-bit tensor accessor (" + std::to_string(want) +
                   " bytes: PackedTensorAccessor" + std::to_string(acc->bits) + "<T, " +
                   std::to_string(acc->rank) + ">) but the parameter is " + std::to_string(w) +
                   " bytes");
  try {
    return pack_accessor(ptr->second, *shape, acc->bits);
  } catch (const std::invalid_argument& e) {
    throw ArgError(where + ": '" + acc->buffer + "' has " + e.what());
  }
}

// The bytes of a struct argument (protocol/struct_arg.h) for a parameter of `w` bytes: each field's
// value at this size set at its offset in the struct's layout, which must be the parameter's size.
std::vector<unsigned char> struct_bytes(const LaunchArg& a, size_t w, const LaunchPlan& plan,
                                        const ProblemSpec& p, const Vars& vars, const PtrMap& ptrs,
                                        const std::string& where) {
  std::string why;
  auto s = parse_struct_arg(a.text, &why);
  if (!s) throw ArgError(where + ": " + why);
  const StructLayout layout = struct_layout(s->fields);
  if (w != layout.bytes)
    throw ArgError(where + " is a struct of " + std::to_string(layout.bytes) + " bytes (" +
                   std::to_string(s->fields.size()) + " fields, aligned to " +
                   std::to_string(layout.align) + ") but the parameter is " + std::to_string(w) +
                   " bytes");
  std::vector<FieldAt> values;
  std::vector<uint64_t> addresses;
  for (size_t k = 0; k < s->fields.size(); ++k) {
    const StructField& f = s->fields[k];
    const std::string field = where + ", field " + std::to_string(k + 1) + " (" +
                              field_type_name(f.type) + " " + f.value + ")";
    FieldAt v;
    try {
      v = struct_field_at(f, plan, p, vars);
    } catch (const ExprError& err) {
      throw ArgError(field + ": " + err.what());
    } catch (const std::invalid_argument& err) {
      throw ArgError(field + ": " + err.what());
    }
    if (!v.problem.empty()) throw ArgError(field + " " + v.problem);
    uint64_t address = 0;
    if (f.type == FieldType::Ptr && !v.null) {
      auto ptr = ptrs.find(v.ptr.buffer);
      if (ptr == ptrs.end())
        throw ArgError(field + ": '" + v.ptr.buffer + "' is not a tensor or scratch buffer");
      address = ptr->second + static_cast<uint64_t>(v.ptr.offset * v.ptr.elem_bytes);
    }
    values.push_back(v);
    addresses.push_back(address);
  }
  return pack_struct(*s, values, addresses);
}

}  // namespace

std::vector<unsigned char> pack_kernel_arg(const LaunchArg& a, size_t w, const LaunchPlan& plan,
                                           const ProblemSpec& p, const Vars& vars,
                                           const PtrMap& ptrs, const std::string& where) {
  switch (a.kind) {
    case ArgKind::Tensor:
    case ArgKind::Scratch:
      return pointer(ptrs.at(a.text), w, where, "a pointer");
    case ArgKind::Offset: {
      // The buffer's pointer advanced by the offset's elements, within the buffer (its end
      // included) at this size set, as the launch block's check holds at every size set.
      OffsetAt o;
      try {
        o = offset_arg_at(a.text, plan, p, vars);
      } catch (const ExprError& err) {
        throw ArgError(where + ": " + err.what());
      }
      if (!o.problem.empty()) throw ArgError(where + " " + o.problem);
      return pointer(ptrs.at(o.buffer) + static_cast<DevicePtr>(o.offset * o.elem_bytes), w, where,
                     "a pointer");
    }
    case ArgKind::Scalar:
    case ArgKind::FloatLiteral:
    case ArgKind::FloatExpr: {
      const ScalarSpec* s = a.kind == ArgKind::Scalar ? p.find_scalar(a.text) : nullptr;
      double v;
      try {
        v = s                              ? s->value
            : a.kind == ArgKind::FloatExpr ? eval_real_expr(a.text, vars, plan_reals(plan, p, vars))
                                           : std::stod(a.text);
      } catch (const ExprError& err) {
        throw ArgError(where + ": " + err.what());
      }
      bool is_float = !s || s->is_float();
      if (w == 4 && is_float && std::fabs(v) > std::numeric_limits<float>::max())
        throw ArgError(where + " = " + std::to_string(v) +
                       " does not fit a 4-byte float parameter");
      if (w == 4)
        return is_float ? bytes_of<float>(static_cast<float>(v))
                        : bytes_of<int32_t>(static_cast<int32_t>(v));
      if (w == 8)
        return is_float ? bytes_of<double>(v) : bytes_of<int64_t>(static_cast<int64_t>(v));
      throw ArgError(where + ": a scalar needs a 4- or 8-byte parameter, not " + std::to_string(w));
    }
    case ArgKind::IntExpr: {
      int64_t v;
      try {
        v = eval_expr(a.text, vars);
      } catch (const ExprError& err) {
        throw ArgError(where + ": " + err.what());
      }
      if (w == 4) {
        if (v < INT32_MIN || v > UINT32_MAX)
          throw ArgError(where + " = " + std::to_string(v) + " does not fit a 4-byte parameter");
        return bytes_of<int32_t>(static_cast<int32_t>(v));
      }
      if (w == 8) return bytes_of<int64_t>(v);
      if (w == 1 || w == 2) {
        // bool, char, int8_t, short: the value must fit the parameter (signed or not).
        const int64_t lo = w == 1 ? -128 : -32768, hi = w == 1 ? 255 : 65535;
        if (v < lo || v > hi)
          throw ArgError(where + " = " + std::to_string(v) + " does not fit a " +
                         std::to_string(w) + "-byte parameter");
        return w == 1 ? bytes_of<int8_t>(static_cast<int8_t>(v))
                      : bytes_of<int16_t>(static_cast<int16_t>(v));
      }
      throw ArgError(where + ": an integer needs a 1-, 2-, 4- or 8-byte parameter, not " +
                     std::to_string(w));
    }
    case ArgKind::Accessor:
      return accessor_bytes(a, w, plan, p, vars, ptrs, where);
    case ArgKind::Struct:
      return struct_bytes(a, w, plan, p, vars, ptrs, where);
    case ArgKind::None:  // a null pointer (an optional tensor the kernel does not get)
      return pointer(0, w, where, "a null pointer");
    case ArgKind::IntList:
    case ArgKind::TensorList:
    case ArgKind::Bool:
      break;
  }
  throw ArgError(where + ": a list, true or false is an argument of torch steps only");
}

}  // namespace kernrl
