#include "core/dtype.h"

#include <map>

namespace kernrl {

std::optional<DType> dtype_from_name(const std::string& n) {
  static const std::map<std::string, DType> table = {
      {"float32", {"float32", 4, true, false}},    {"float64", {"float64", 8, true, false}},
      {"float16", {"float16", 2, true, false}},    {"bfloat16", {"bfloat16", 2, true, false}},
      {"complex64", {"complex64", 8, true, true}}, {"int8", {"int8", 1, false, false}},
      {"uint8", {"uint8", 1, false, false}},       {"int16", {"int16", 2, false, false}},
      {"int32", {"int32", 4, false, false}},       {"uint32", {"uint32", 4, false, false}},
      {"int64", {"int64", 8, false, false}},       {"bool", {"bool", 1, false, false}},
  };
  auto it = table.find(n);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

}  // namespace kernrl
