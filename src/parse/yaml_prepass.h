// A pre-pass over launch-block YAML so that what models write reads as meant:
//  - in flow context (`[...]`, `{...}`), a plain scalar holding parentheses, angle brackets or
//    `::` is double-quoted, so `[cdiv(n, 256), 1]` is two items and
//    `{dtype: float32, count: cdiv(n, 256)}` has two keys (YAML would split at every comma);
//  - tabs outside quoted scalars and comments become spaces up to the next tab stop (YAML forbids
//    tabs in indentation);
//  - carriage returns go (CRLF and lone CR both end a line).
// Quoted scalars, comments and block scalars (`|`, `>`) are copied as they are. The output has
// exactly as many lines as the input, so YAML's line numbers stay those of the file.
#pragma once

#include <string>

namespace kernrl {

// `unclosed_quote_line`, when given, is set to the 0-based line of a quoted scalar that is never
// closed (YAML readers take such a scalar to the end of the text), else to -1.
std::string prepare_launch_yaml(const std::string& text, int tab_width,
                                int* unclosed_quote_line = nullptr);

}  // namespace kernrl
