// Text that goes into a trace record: always valid UTF-8, and bounded in size.
//
// Submissions are bytes: a Latin-1 comment, a file name in another encoding or a compiler log that
// quotes such a line must not make a record unwritable, nor make two different byte strings look
// the same. Every byte that is not part of a valid UTF-8 sequence is written as the four
// characters `\xNN` (Python's "backslashreplace"); valid text, including its backslashes, is kept
// as it is. Logs are cut to a configured size, keeping their beginning and end, with a note of how
// much was cut (docs/trace-format.md).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kernrl {

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view s);

// `s` with every byte outside a valid UTF-8 sequence replaced by `\xNN` (lower-case hex, as Python
// writes it).
std::string escape_invalid_utf8(std::string_view s);

// C++ source for NVRTC, whose input must be UTF-8: every byte outside a valid UTF-8 sequence
// becomes a three-digit octal escape (`\351`). Inside a comment that is inert text; inside a string
// or character literal it denotes the very same byte; it can never form a line splice, a comment
// delimiter, a quote or a trigraph, and it adds no line. (Raw string literals are the exception:
// there it reads as four characters.) Valid text is returned unchanged.
std::string octal_escape_invalid_utf8(std::string_view s);

// Every string (and object key) inside `j`, recursively, through escape_invalid_utf8.
void escape_invalid_utf8_in(nlohmann::json& j);

// `s` cut to at most `cap` bytes (for cap >= 64): its beginning (`head_share` of the budget) and
// its end (the rest) are kept, on UTF-8 character boundaries, around a line
// "[... kernrl cut N of M bytes ...]". `cut` (optional) gets N; 0 and `s` unchanged when it fits.
std::string cap_text(const std::string& s, size_t cap, size_t* cut, double head_share = 0.75);

// The caps applied to a record's free text (Config's `records:` section).
struct RecordLimits {
  size_t compile_log_bytes = 16384;  // compile.log and error.log of a compile_error (the first
                                     // three quarters kept: the first errors matter most)
  size_t worker_log_bytes = 16384;   // error.log of any other status: the GPU worker's output,
                                     // device printf included (the last three quarters kept)
  size_t message_bytes = 4096;       // error.message
};

// bound_record (record/trace_record.h) applies these caps to a record.

}  // namespace kernrl
