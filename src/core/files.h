// Writing a file whole or not at all.
#pragma once

#include <string>

namespace kernrl {

// Writes `text` to `path` whole or not at all (a temporary file renamed over it; a path that is
// not a regular file, such as /dev/stdout, is written directly). Missing folders are created.
// Returns "" or the reason it could not.
std::string write_whole_file(const std::string& path, const std::string& text);

}  // namespace kernrl
