#include "protocol/tensor_accessor.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace kernrl {

bool looks_like_accessor_arg(const std::string& text) {
  std::string t = trimmed(text);
  return (t.rfind("accessor32", 0) == 0 || t.rfind("accessor64", 0) == 0) &&
         trimmed(t.substr(10)).rfind('(', 0) == 0;
}

std::optional<AccessorArg> parse_accessor_arg(const std::string& text, std::string* why) {
  auto no = [&](const std::string& reason) -> std::optional<AccessorArg> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const std::string form =
      "an accessor argument is accessor32(NAME, RANK) or accessor64(NAME, RANK)";
  if (!looks_like_accessor_arg(text)) return no(form);
  std::string t = trimmed(text);
  AccessorArg a;
  a.bits = t.compare(0, 10, "accessor64") == 0 ? 64 : 32;
  std::string rest = trimmed(t.substr(10));
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return no(form);
  std::string inner = rest.substr(1, rest.size() - 2);
  size_t comma = inner.find(',');
  if (comma == std::string::npos || inner.find(',', comma + 1) != std::string::npos)
    return no(form);
  a.buffer = trimmed(inner.substr(0, comma));
  std::string rank = trimmed(inner.substr(comma + 1));
  if (!is_buffer_name(a.buffer)) return no(form + ", NAME a tensor or scratch buffer");
  if (rank.empty() || rank.size() > 2 || rank.find_first_not_of("0123456789") != std::string::npos)
    return no(form + ", RANK a number of dimensions (1 to " + std::to_string(kMaxAccessorRank) +
              ")");
  a.rank = std::stoi(rank);
  if (a.rank < 1 || a.rank > kMaxAccessorRank)
    return no("the rank of an accessor argument is 1 to " + std::to_string(kMaxAccessorRank) +
              ", not " + rank);
  return a;
}

size_t accessor_param_bytes(int rank, int bits) {
  size_t r = static_cast<size_t>(rank), index = bits == 64 ? 8 : 4;
  size_t bytes = 8 + 2 * r * index;
  return (bytes + 7) / 8 * 8;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) {
    int64_t next = shape[d] > 1 ? shape[d] : 1;
    // A product past int64 is caught by the element count first (accessor_shape_problem).
    if (__builtin_mul_overflow(s[d], next, &s[d - 1]))
      s[d - 1] = std::numeric_limits<int64_t>::max();
  }
  return s;
}

std::string accessor_shape_problem(const std::vector<int64_t>& shape, int bits) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return "a negative size (" + std::to_string(d) + ")";
    if (__builtin_mul_overflow(n, d, &n)) return "more elements than a 64-bit count holds";
  }
  if (bits != 32) return "";
  const int64_t most = std::numeric_limits<int32_t>::max();
  if (n > most)
    return std::to_string(n) +
           " elements, more than a 32-bit accessor indexes (2147483647): use accessor64";
  for (int64_t d : shape)
    if (d > most) return "a size of " + std::to_string(d) + ", more than 2147483647";
  for (int64_t s : contiguous_strides(shape))
    if (s > most) return "a stride of " + std::to_string(s) + ", more than 2147483647";
  return "";
}

std::vector<unsigned char> pack_accessor(uint64_t data, const std::vector<int64_t>& shape,
                                         int bits) {
  if (std::string why = accessor_shape_problem(shape, bits); !why.empty())
    throw std::invalid_argument(why);
  const int rank = static_cast<int>(shape.size());
  std::vector<unsigned char> b(accessor_param_bytes(rank, bits), 0);
  std::memcpy(b.data(), &data, 8);
  const std::vector<int64_t> strides = contiguous_strides(shape);
  size_t at = 8;
  for (const auto* list : {&shape, &strides})
    for (int64_t v : *list) {
      if (bits == 64) {
        std::memcpy(b.data() + at, &v, 8);
        at += 8;
      } else {
        int32_t w = static_cast<int32_t>(v);
        std::memcpy(b.data() + at, &w, 4);
        at += 4;
      }
    }
  return b;
}

std::optional<std::vector<int64_t>> buffer_shape(const std::string& name, const LaunchPlan& plan,
                                                 const ProblemSpec& p, const Vars& vars) {
  if (const TensorSpec* t = p.find_tensor(name)) return p.shape_of(*t, vars);
  for (const auto& s : plan.scratch) {
    if (s.name != name) continue;
    std::vector<int64_t> shape;
    for (const auto& d : s.shape) shape.push_back(eval_expr(d, vars));
    if (shape.empty()) shape.push_back(eval_expr(s.count, vars));
    return shape;
  }
  return std::nullopt;
}

}  // namespace kernrl
