// A stage before extraction: an answer in another format (a KernelBench module, ...) converted
// into a kernel file. A session converts only with the converters its options name
// (SessionOptions::converters); the kernrl commands name the KernelBench one (src/import).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/problem.h"

namespace kernrl {

class SourceConverter {
 public:
  virtual ~SourceConverter() = default;
  // What the record's `converted.from` says ("kernelbench").
  virtual std::string name() const = 0;
  // Whether it reads the file called `file` (by its name).
  virtual bool reads(const std::string& file) const = 0;
  // Why a file it reads cannot be graded when no problem is named for it.
  virtual std::string needs_problem() const = 0;
  // The kernel file for `problem` from `text`, with notes on what it assumed. Throws FormatError
  // with the reason it cannot be converted.
  virtual std::string convert(const std::string& text, const std::string& file,
                              const ProblemSpec& problem,
                              std::vector<std::string>* notes) const = 0;
};

using Converters = std::vector<std::shared_ptr<const SourceConverter>>;

// The converter of `converters` that reads `file`, or null.
inline const SourceConverter* converter_for(const Converters& converters, const std::string& file) {
  for (const auto& c : converters)
    if (c && c->reads(file)) return c.get();
  return nullptr;
}

}  // namespace kernrl
