#include "parse/python_block.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <vector>

#include "extract/extract.h"

namespace kernrl {
namespace {

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    size_t nl = s.find('\n', pos);
    out.push_back(s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::string strip_left(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b);
}

std::string strip(const std::string& s) {
  std::string t = strip_left(s);
  size_t e = t.find_last_not_of(" \t\r");
  return e == std::string::npos ? "" : t.substr(0, e + 1);
}

// `"""kernrl ...` (or ''' , r""") at the start of a line: the quote it opens with, if any.
std::optional<std::string> docstring_opening(const std::string& line) {
  std::string t = line;
  if (!t.empty() && (t[0] == 'r' || t[0] == 'R')) t.erase(0, 1);
  for (const char* q : {"\"\"\"", "'''"}) {
    std::string quote = q;
    if (t.rfind(quote, 0) != 0) continue;
    std::string rest = t.substr(3);
    size_t b = rest.find_first_not_of(" \t");
    if (b != std::string::npos && rest.compare(b, 6, "kernrl") == 0 &&
        (rest.size() == b + 6 || !std::isalnum(static_cast<unsigned char>(rest[b + 6]))))
      return quote;
  }
  return std::nullopt;
}

bool comment_marker(const std::string& line) {
  std::string t = strip(line);
  if (t.empty() || t[0] != '#') return false;
  return strip(t.substr(1)) == "kernrl";
}

// A comment line's text with `#` and one following space removed.
std::string uncomment(const std::string& line) {
  std::string t = strip_left(line);
  t.erase(0, 1);
  if (!t.empty() && t[0] == ' ') t.erase(0, 1);
  return t;
}

}  // namespace

namespace {

// Every launch block of `code`. Throws FormatError for a docstring that is never closed.
std::vector<PythonBlock> python_blocks(const std::string& code) {
  std::vector<std::string> lines = split_lines(code);
  std::vector<PythonBlock> found;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (auto quote = docstring_opening(lines[i])) {
      PythonBlock b;
      b.line = static_cast<int>(i);
      size_t open = lines[i].find(*quote) + 3;
      std::string first = lines[i].substr(open);
      first = first.substr(first.find("kernrl") + 6);
      size_t close = first.find(*quote);
      if (close != std::string::npos) {
        b.yaml = first.substr(0, close);
        found.push_back(b);
        continue;
      }
      b.yaml = first;
      size_t j = i + 1;
      for (; j < lines.size(); ++j) {
        size_t c = lines[j].find(*quote);
        if (c != std::string::npos) {
          b.yaml += "\n" + lines[j].substr(0, c);
          break;
        }
        b.yaml += "\n" + lines[j];
      }
      if (j == lines.size())
        throw FormatError("the kernrl docstring opened at line " + std::to_string(i + 1) +
                              " is never closed with " + *quote,
                          static_cast<int>(i + 1));
      found.push_back(b);
      i = j;
    } else if (comment_marker(lines[i])) {
      PythonBlock b;
      b.line = static_cast<int>(i);
      size_t j = i + 1;
      for (; j < lines.size(); ++j) {
        std::string t = strip_left(lines[j]);
        if (t.empty() || t[0] != '#') break;
        b.yaml += "\n" + uncomment(lines[j]);
      }
      found.push_back(b);
      i = j - 1;
    }
  }
  return found;
}

}  // namespace

bool has_python_launch_block(const std::string& code) {
  try {
    return !python_blocks(code).empty();
  } catch (const FormatError&) {
    return true;  // a block that is never closed: the parser says so
  }
}

PythonBlock python_launch_block(const std::string& code) {
  std::vector<PythonBlock> found = python_blocks(code);
  if (found.empty()) {
    std::string why =
        "no kernrl launch block found: a Triton file needs a module docstring that starts with "
        "\"\"\"kernrl, or a '# kernrl' comment block, naming each launch (kernel, grid, args, "
        "constexprs)";
    if (std::regex_search(code, std::regex(R"(\w\s*\[[^\]\n]+\]\s*\()")) &&
        code.find("def forward") != std::string::npos)
      why +=
          ". This file launches its kernels from a host wrapper (forward calls kernel[grid](...)): "
          "kernrl derives the launch plan from a ModelNew (or Model) class whose forward makes "
          "the launches (docs/kernel-format.md, \"Host wrappers\"), else write them as the "
          "launch block";
    throw FormatError(why);
  }
  if (found.size() > 1)
    throw FormatError("more than one kernrl launch block (lines " +
                          std::to_string(found[0].line + 1) + " and " +
                          std::to_string(found[1].line + 1) + ")",
                      found[1].line + 1);
  return found[0];
}

}  // namespace kernrl
