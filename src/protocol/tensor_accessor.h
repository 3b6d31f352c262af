// A PyTorch packed tensor accessor as a kernel argument (docs/kernel-format.md, "Arguments"):
// `accessor32(x, 3)` or `accessor64(x, 3)` in a launch block gives the kernel a
// `PackedTensorAccessor32/64<T, 3, ...>` of buffer x (kernrl/tensor_accessor.h). How the argument
// is written and read, and the bytes of the parameter, shared by the parser and the worker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/launch_plan.h"

namespace kernrl {

// The most dimensions an accessor argument may have.
constexpr int kMaxAccessorRank = 16;

struct AccessorArg {
  std::string buffer;  // a tensor or scratch name
  int rank = 0;        // N of PackedTensorAccessor<T, N>
  int bits = 32;       // 32 or 64: the width of its sizes and strides
};

// Whether `text` is written as an accessor argument: `accessor32(` or `accessor64(` followed by
// anything up to a closing `)`.
bool looks_like_accessor_arg(const std::string& text);

// `text` read as `accessor32(NAME, RANK)` or `accessor64(NAME, RANK)` (blanks allowed around the
// items); nullopt with `*why` set when it is not one (a bad name, a rank that is not 1 to
// kMaxAccessorRank).
std::optional<AccessorArg> parse_accessor_arg(const std::string& text, std::string* why = nullptr);

// The size in bytes of the parameter: the data pointer, then `rank` sizes and `rank` strides of
// `bits` bits each, in a struct aligned to 8 bytes (8 + 8 * rank for 32 bits, 8 + 16 * rank for
// 64).
size_t accessor_param_bytes(int rank, int bits);

// Row-major strides of a contiguous tensor of `shape` (in elements).
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

// Why a `bits`-bit accessor cannot describe a contiguous tensor of `shape` (empty when it can):
// a 32-bit one needs the element count, every size and every stride at most INT32_MAX, as
// PyTorch's packed_accessor32 requires; any needs no negative size.
std::string accessor_shape_problem(const std::vector<int64_t>& shape, int bits);

// The parameter's bytes for a contiguous tensor of `shape` at device address `data`: the pointer,
// the sizes, the row-major strides (little-endian, as the GPU reads them). Throws
// std::invalid_argument with accessor_shape_problem's reason when the shape does not fit.
std::vector<unsigned char> pack_accessor(uint64_t data, const std::vector<int64_t>& shape,
                                         int bits);

// The shape of buffer `name` at `vars` (the plan's variables at a size set): a tensor of the
// problem, or a scratch buffer of the plan (one without a shape has one dimension, its count);
// nullopt when it is neither. Throws ExprError when a dimension does not evaluate.
std::optional<std::vector<int64_t>> buffer_shape(const std::string& name, const LaunchPlan& plan,
                                                 const ProblemSpec& p, const Vars& vars);

}  // namespace kernrl
