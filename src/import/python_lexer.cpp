// Python text into tokens and logical lines (py_lines).
#include <cctype>
#include <cstdint>
#include <cstring>

#include "import/import_error.h"
#include "import/python_reader.h"

namespace kernrl::kbimport {

namespace {

[[noreturn]] void syntax(int line, const std::string& what) {
  throw ImportError("python_syntax", "the Python text cannot be read: " + what + " (line " +
                                         std::to_string(line) + ")");
}

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) {
  return ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes the escape at body[i] (a backslash) onto out and returns the index of its last
// character. In an f-string a brace written as an escape (`\x7b`, `\173`, `\u007b`) is literal
// text, so it is written doubled, as the f-string's own `{{` and `}}` are.
size_t decode_escape(const std::string& body, size_t i, std::string& out, bool fstr, bool bytes,
                     int line) {
  auto put = [&](uint32_t cp) {
    append_utf8(out, cp);
    if (fstr && (cp == '{' || cp == '}')) out += static_cast<char>(cp);
  };
  char n = body[++i];
  switch (n) {
    case '\n':
      break;  // line continuation inside the string
    case '\\':
      out += '\\';
      break;
    case '\'':
      out += '\'';
      break;
    case '"':
      out += '"';
      break;
    case 'n':
      out += '\n';
      break;
    case 't':
      out += '\t';
      break;
    case 'r':
      out += '\r';
      break;
    case 'a':
      out += '\a';
      break;
    case 'b':
      out += '\b';
      break;
    case 'f':
      out += '\f';
      break;
    case 'v':
      out += '\v';
      break;
    case 'N':
      if (bytes) {
        out += "\\N";  // not an escape in a bytes literal
        break;
      }
      syntax(line, "a string with a \\N{...} escape, which kernrl does not decode");
    case 'x':
    case 'u':
    case 'U': {
      if (bytes && n != 'x') {
        out += std::string("\\") + n;  // not an escape in a bytes literal
        break;
      }
      size_t digits = n == 'x' ? 2 : n == 'u' ? 4 : 8;
      uint32_t cp = 0;
      size_t k = 0;
      for (; k < digits && i + 1 < body.size() && hex_value(body[i + 1]) >= 0; ++k)
        cp = cp * 16 + static_cast<uint32_t>(hex_value(body[++i]));
      if (k != digits) syntax(line, std::string("a string with a truncated \\") + n + " escape");
      put(cp);
      break;
    }
    default:
      if (n >= '0' && n <= '7') {
        uint32_t cp = static_cast<uint32_t>(n - '0');
        for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
             ++k)
          cp = cp * 8 + static_cast<uint32_t>(body[++i] - '0');
        put(cp);
      } else {
        out += '\\';  // Python keeps unknown escapes as written
        out += n;
      }
  }
  return i;
}

// The value of a string literal's body as Python decodes it. For an f-string: its text with
// the literal parts decoded (literal braces doubled) and every {field} as written, so that
// an escape inside a field stays a backslash, which the field readers refuse.
std::string decode(const std::string& body, bool raw, bool fstr, bool bytes, int line) {
  if (raw) return body;
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (fstr && c == '{' && i + 1 < body.size() && body[i + 1] == '{') {
      out += "{{";
      ++i;
      continue;
    }
    if (fstr && c == '{') {
      // A field, up to its matching brace, as written. A quote in it: the rest as written
      // (the field readers refuse fields with strings).
      int depth = 0;
      for (; i < body.size(); ++i) {
        char d = body[i];
        if (d == '"' || d == '\'') {
          out += body.substr(i);
          return out;
        }
        out += d;
        if (d == '{') ++depth;
        if (d == '}' && --depth == 0) break;
      }
      continue;
    }
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    if (fstr && (body[i + 1] == '{' || body[i + 1] == '}')) {
      out += c;  // `\{x}`: a backslash, then the field (or brace) as Python reads it
      continue;
    }
    i = decode_escape(body, i, out, fstr, bytes, line);
  }
  return out;
}

}  // namespace

std::vector<PyLine> py_lines(const std::string& text) {
  std::vector<PyLine> lines;
  PyLine cur;
  int depth = 0;
  int line = 1;
  bool at_line_start = true;
  size_t i = 0;
  const size_t n = text.size();
  auto flush = [&]() {
    if (!cur.toks.empty()) lines.push_back(std::move(cur));
    cur = PyLine{};
    at_line_start = true;
  };
  while (i < n) {
    if (at_line_start && depth == 0) {
      int col = 0;
      size_t j = i;
      while (j < n && (text[j] == ' ' || text[j] == '\t' || text[j] == '\f')) {
        col = text[j] == '\t' ? (col / 8 + 1) * 8 : col + 1;
        ++j;
      }
      i = j;
      if (i < n && (text[i] == '\n' || text[i] == '#' || text[i] == '\r')) {
        // Blank or comment-only line: no indentation of its own.
        while (i < n && text[i] != '\n') ++i;
        if (i < n) ++i, ++line;
        continue;
      }
      cur.indent = col;
      cur.line = line;
      at_line_start = false;
      continue;
    }
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      if (depth == 0) flush();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (c == '\\' && i + 1 < n && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      i += text[i + 1] == '\r' && i + 2 < n && text[i + 2] == '\n' ? 3 : 2;
      ++line;
      continue;
    }
    // String literal, with an optional prefix.
    size_t p = i;
    bool raw = false, fstr = false, bytes = false;
    while (p < n && p - i < 3 && text[p] != '\0' && std::strchr("rRbBuUfF", text[p])) {
      char l = static_cast<char>(std::tolower(static_cast<unsigned char>(text[p])));
      raw |= l == 'r';
      fstr |= l == 'f';
      bytes |= l == 'b';
      ++p;
    }
    if (p < n && (text[p] == '"' || text[p] == '\'')) {
      {
        char q = text[p];
        bool triple = p + 2 < n && text[p + 1] == q && text[p + 2] == q;
        size_t start = p + (triple ? 3 : 1);
        size_t j = start;
        int start_line = line;
        for (;;) {
          if (j >= n) syntax(start_line, "a string that is never closed");
          char d = text[j];
          if (d == '\\' && j + 1 < n) {
            if (text[j + 1] == '\n') ++line;
            j += 2;
            continue;
          }
          if (d == '\n') {
            if (!triple) syntax(start_line, "a string that is never closed");
            ++line;
          }
          if (d == q && (!triple || (j + 2 < n && text[j + 1] == q && text[j + 2] == q))) break;
          ++j;
        }
        PyTok t;
        t.kind = PyTok::String;
        t.text = decode(text.substr(start, j - start), raw, fstr, bytes, start_line);
        t.line = start_line;
        t.fstring = fstr;
        t.bytes = bytes;
        cur.toks.push_back(std::move(t));
        i = j + (triple ? 3 : 1);
        continue;
      }
    }
    if (ident_start(c)) {
      size_t j = i;
      while (j < n && ident_char(text[j])) ++j;
      cur.toks.push_back({PyTok::Name, text.substr(i, j - i), line});
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      size_t j = i;
      while (j < n) {
        char d = text[j];
        if (std::isalnum(static_cast<unsigned char>(d)) || d == '_' || d == '.') {
          ++j;
        } else if ((d == '+' || d == '-') && j > i && (text[j - 1] == 'e' || text[j - 1] == 'E') &&
                   !(text.compare(i, 2, "0x") == 0 || text.compare(i, 2, "0X") == 0)) {
          ++j;
        } else {
          break;
        }
      }
      cur.toks.push_back({PyTok::Number, text.substr(i, j - i), line});
      i = j;
      continue;
    }
    static const char* const ops3[] = {"**=", "//=", ">>=", "<<=", "..."};
    static const char* const ops2[] = {"**", "//", "==", "!=", "<=", ">=", "->", "+=", "-=", "*=",
                                       "/=", "%=", "&=", "|=", "^=", "@=", ":=", "<<", ">>"};
    std::string op;
    for (const char* o : ops3)
      if (text.compare(i, 3, o) == 0) op = o;
    if (op.empty())
      for (const char* o : ops2)
        if (text.compare(i, 2, o) == 0) op = o;
    if (op.empty()) op = std::string(1, c);
    if (op == "(" || op == "[" || op == "{") ++depth;
    if (op == ")" || op == "]" || op == "}") {
      if (depth == 0) syntax(line, "an unmatched '" + op + "'");
      --depth;
    }
    cur.toks.push_back({PyTok::Op, op, line});
    i += op.size();
  }
  if (depth != 0) syntax(line, "a bracket that is never closed");
  flush();
  return lines;
}

}  // namespace kernrl::kbimport
