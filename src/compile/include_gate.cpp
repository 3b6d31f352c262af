#include "compile/include_gate.h"

#include <cctype>
#include <sstream>

namespace kernrl {

// Translation phase 2: backslash-newline splices removed, exactly as NVRTC does (no blanks
// between). The newlines a splice removed are put back after the logical line, so later lines keep
// their numbers.
static std::string splice_lines(const std::string& code) {
  std::string out;
  out.reserve(code.size());
  int pending = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '\\') {
      size_t j = i + 1;
      if (j < code.size() && code[j] == '\r')
        ++j;  // NVRTC splices only a backslash right before the newline
      if (j < code.size() && code[j] == '\n') {
        i = j;
        ++pending;
        continue;
      }
    }
    out += code[i];
    if (code[i] == '\n') out.append(pending, '\n'), pending = 0;
  }
  return out;
}

namespace {
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The raw string starting at `i` (at its R), or npos: `R"delim(...)delim"` with an optional
// u8/u/U/L prefix that does not continue an identifier.
size_t raw_string_end(const std::string& s, size_t i) {
  if (s[i] != 'R' || i + 1 >= s.size() || s[i + 1] != '"') return std::string::npos;
  size_t start = i;
  if (start >= 2 && s.compare(start - 2, 2, "u8") == 0)
    start -= 2;
  else if (start >= 1 && (s[start - 1] == 'u' || s[start - 1] == 'U' || s[start - 1] == 'L'))
    start -= 1;
  if (start > 0 && ident_char(s[start - 1])) return std::string::npos;
  size_t open = s.find('(', i + 2);
  if (open == std::string::npos || open - (i + 2) > 16) return std::string::npos;
  std::string delim = s.substr(i + 2, open - (i + 2));
  if (delim.find_first_of(" ()\\\t\n") != std::string::npos) return std::string::npos;
  size_t close = s.find(")" + delim + "\"", open + 1);
  return close == std::string::npos ? s.size() : close + delim.size() + 2;
}

// A quote that is a digit separator (1'000'000) rather than the start of a character literal.
bool digit_separator(const std::string& s, size_t i) {
  size_t b = i;
  while (b > 0 && (ident_char(s[b - 1]) || s[b - 1] == '.')) --b;
  return b < i && std::isdigit(static_cast<unsigned char>(s[b]));
}
}  // namespace

// What the preprocessor sees, for scanning: splices joined, comments removed, raw-string literals
// blanked (their newlines kept), and the digraph %: spelled #. Ordinary literals stay: they cannot
// span lines, so they cannot hide or fake a directive.
static std::string preprocessor_view(const std::string& original) {
  const std::string code = splice_lines(original);
  std::string out;
  out.reserve(code.size());
  enum { Code, LineComment, BlockComment, String, Char } state = Code;
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i], next = i + 1 < code.size() ? code[i + 1] : '\0';
    switch (state) {
      case Code: {
        size_t raw_end = c == 'R' ? raw_string_end(code, i) : std::string::npos;
        if (raw_end != std::string::npos) {
          out += "\"\"";
          for (size_t k = i; k < raw_end && k < code.size(); ++k)
            if (code[k] == '\n') out += '\n';
          i = raw_end - 1;
        } else if (c == '/' && next == '/') {
          state = LineComment, ++i;
        } else if (c == '/' && next == '*') {
          state = BlockComment, ++i, out += ' ';
        } else if (c == '%' && next == ':') {
          out += '#', ++i;
        } else {
          if (c == '"') state = String;
          if (c == '\'' && !digit_separator(code, i)) state = Char;
          out += c;
        }
        break;
      }
      case LineComment:
        if (c == '\n') state = Code, out += c;
        break;
      case BlockComment:
        if (c == '*' && next == '/')
          state = Code, ++i;
        else if (c == '\n')
          out += c;
        break;
      case String:
      case Char:
        out += c;
        if (c == '\\' && next && next != '\n')
          out += next, ++i;
        else if ((state == String && c == '"') || (state == Char && c == '\'') || c == '\n')
          state = Code;
        break;
    }
  }
  return out;
}

namespace {
bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}
bool plain_header_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
         c == '+' || c == '-';
}
bool bad_header_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '/' || name.find("..") != std::string::npos)
    return true;
  for (char c : name)
    if (!plain_header_char(c)) return true;
  return false;
}
// Reads <name> or "name" at `i` (after blanks); returns false if it is not one.
bool header_name_at(const std::string& line, size_t& i, std::string& name) {
  while (i < line.size() && blank(line[i])) ++i;
  if (i >= line.size() || (line[i] != '<' && line[i] != '"')) return false;
  char close = line[i] == '<' ? '>' : '"';
  size_t end = line.find(close, i + 1);
  if (end == std::string::npos) return false;
  name = line.substr(i + 1, end - i - 1);
  i = end + 1;
  return true;
}
}  // namespace

// A friendly early error for includes that cannot work; the boundary itself is the compiler's
// sandbox (sandbox/sandbox.h), which this scan does not replace. Runs on what the preprocessor
// sees, so comments, line continuations and digraphs cannot hide a directive. Plain scanning,
// linear time.
std::string disallowed_include(const std::string& code, int first_line) {
  std::istringstream in(preprocessor_view(code));
  std::string line;
  const std::string rule =
      "only CUDA's headers and the standard headers kernrl provides may be included "
      "(docs/kernel-format.md)";
  for (int n = first_line; std::getline(in, line); ++n) {
    std::string where = "line " + std::to_string(n) + ": ";
    // __has_include only as __has_include(<plain name>): any other use (a macro, a pasted token) is
    // refused.
    const std::string only =
        where + "__has_include is allowed only as __has_include(<header>) with a plain header name";
    for (size_t at = line.find("__has_"); at != std::string::npos;
         at = line.find("__has_", at + 6)) {
      size_t after = at + 6;
      if (after >= line.size() || !word_char(line[after]))
        return only;  // a pasted __has_ ## include
    }
    for (size_t at = line.find("has_include"); at != std::string::npos;
         at = line.find("has_include", at + 11)) {
      size_t end = at + 11;
      bool exact = at >= 2 && line.compare(at - 2, 2, "__") == 0 &&
                   (at == 2 || !word_char(line[at - 3])) &&
                   (end >= line.size() || !word_char(line[end]));
      if (!exact) return only;
      while (end < line.size() && blank(line[end])) ++end;
      std::string name;
      size_t j = end + 1;
      if (end >= line.size() || line[end] != '(' || !header_name_at(line, j, name)) return only;
      if (bad_header_name(name))
        return where + "__has_include of \"" + name.substr(0, 200) + "\" is not allowed";
    }
    size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size() || line[i] != '#') continue;
    ++i;
    while (i < line.size() && blank(line[i])) ++i;
    size_t w = i;
    while (i < line.size() && word_char(line[i])) ++i;
    std::string directive = line.substr(w, i - w);
    if (directive != "include" && directive != "include_next" && directive != "import") continue;
    std::string name;
    if (!header_name_at(line, i, name))
      return where + "#" + directive + " must name a header in <> or \"\"";
    if (directive != "include" || bad_header_name(name))
      return where + "#" + directive + " \"" + name.substr(0, 200) + "\" is not allowed: " + rule;
  }
  return "";
}

std::vector<std::string> pch_headers(const std::string& code) {
  std::istringstream in(preprocessor_view(code));
  std::vector<std::string> leading;
  size_t heavy = 0;  // how many of `leading` end with a heavy header
  for (std::string line; std::getline(in, line);) {
    size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    if (i == line.size()) continue;
    if (line[i] != '#') break;
    ++i;
    while (i < line.size() && blank(line[i])) ++i;
    if (line.compare(i, 7, "include") != 0 || (i + 7 < line.size() && word_char(line[i + 7])))
      break;
    i += 7;
    std::string name;
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size() || line[i] != '<' || !header_name_at(line, i, name) ||
        bad_header_name(name))
      break;
    while (i < line.size() && blank(line[i])) ++i;
    if (i != line.size()) break;
    leading.push_back(name);
    for (const char* prefix : {"cub/", "thrust/", "cuda/", "cooperative_groups"})
      if (name.rfind(prefix, 0) == 0) heavy = leading.size();
  }
  leading.resize(heavy);
  return leading;
}

}  // namespace kernrl
