// The element types of problem tensors: names, sizes in memory, and kinds.
#pragma once

#include <optional>
#include <string>

namespace kernrl {

struct DType {
  std::string name;  // float32, int64, uint32, complex64, ...
  int bytes = 4;     // element size in memory
  bool is_float = false;
  bool is_complex = false;
};
// nullopt for an unknown name.
std::optional<DType> dtype_from_name(const std::string& name);

}  // namespace kernrl
