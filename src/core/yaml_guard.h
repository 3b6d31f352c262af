// A look at YAML text before any document is built: yaml-cpp's event parser runs with a handler
// that refuses anchors and aliases (billion-laughs expansion), nesting deeper than a bound, more
// nodes than a bound and more than one document. Work is linear in the text and stops at the first
// violation, so hostile text costs milliseconds and no memory.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace kernrl {

struct YamlLimits {
  int max_depth = 32;         // nested sequences/mappings
  size_t max_nodes = 100000;  // scalars, sequences, mappings and nulls
};

// A violation of the limits; `line` is 0-based within the text, as yaml-cpp's marks are.
struct YamlShapeError : std::runtime_error {
  YamlShapeError(const std::string& msg, int at_line) : std::runtime_error(msg), line(at_line) {}
  int line;
};

// Throws YamlShapeError for a violation and YAML::ParserException for text that is not YAML.
void check_yaml_shape(const std::string& text, const YamlLimits& limits);

}  // namespace kernrl
