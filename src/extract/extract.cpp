#include "extract/extract.h"

#include <md4c.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace kernrl {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string normalize_text(const std::string& text) {
  size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::string out;
  out.reserve(text.size() - start);
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] != '\r')
      out += text[i];
    else if (i + 1 >= text.size() || text[i + 1] != '\n')
      out += '\n';
  }
  return out;
}

namespace {

const char* const kContract =
    "kernrl expects CUDA C++ __global__ kernels with a /* kernrl launch block, as a .cu file or a "
    "fenced code "
    "block of a markdown answer (see docs/kernel-format.md)";

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i])
      return false;
  return true;
}

bool has(const std::string& s, const char* what) {
  return s.find(what) != std::string::npos;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// One code block of a markdown answer: its content lines, the first at file line `first_line`.
struct Block {
  std::string lang;  // first word of the info string, lower case ("" for none or an indented block)
  bool fenced = false;
  int first_line = 0;
  std::vector<std::string> lines;
  bool aligned = true;  // every content line sits on the file line its position says

  std::string code() const {
    std::string c;
    for (const auto& l : lines) c += l + "\n";
    return c;
  }
  int end_line() const { return first_line + static_cast<int>(lines.size()); }  // one past the last
};

// Code blocks as CommonMark defines them (md4c): fenced with ``` or ~~~ of any length, indented
// fences, fences in list items and block quotes, indented code blocks.
class BlockCollector {
 public:
  explicit BlockCollector(const std::string& text) : text_(text) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Block> run() {
    MD_PARSER parser{};
    parser.abi_version = 0;
    parser.flags = 0;  // plain CommonMark
    parser.enter_block = [](MD_BLOCKTYPE t, void* detail, void* self) {
      return static_cast<BlockCollector*>(self)->enter(t, detail);
    };
    parser.leave_block = [](MD_BLOCKTYPE t, void*, void* self) {
      return static_cast<BlockCollector*>(self)->leave(t);
    };
    parser.enter_span = [](MD_SPANTYPE, void*, void*) { return 0; };
    parser.leave_span = [](MD_SPANTYPE, void*, void*) { return 0; };
    parser.text = [](MD_TEXTTYPE t, const MD_CHAR* s, MD_SIZE n, void* self) {
      return static_cast<BlockCollector*>(self)->on_text(t, s, n);
    };
    if (md_parse(text_.data(), static_cast<MD_SIZE>(text_.size()), &parser, this) != 0)
      throw FormatError("the markdown answer could not be read");
    return std::move(blocks_);
  }

 private:
  int line_of(size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return static_cast<int>(it - line_starts_.begin());  // 1-based
  }
  int enter(MD_BLOCKTYPE t, void* detail) {
    if (t != MD_BLOCK_CODE) return 0;
    auto* d = static_cast<MD_BLOCK_CODE_DETAIL*>(detail);
    cur_ = Block{};
    cur_.fenced = d->fence_char != 0;
    if (d->lang.text && d->lang.size)
      for (MD_SIZE i = 0; i < d->lang.size; ++i)
        cur_.lang += static_cast<char>(std::tolower(static_cast<unsigned char>(d->lang.text[i])));
    line_.clear();
    in_code_ = true;
    return 0;
  }
  int leave(MD_BLOCKTYPE t) {
    if (t != MD_BLOCK_CODE || !in_code_) return 0;
    if (!line_.empty()) cur_.lines.push_back(line_);
    in_code_ = false;
    if (cur_.first_line > 0)
      blocks_.push_back(std::move(cur_));  // a block of blank lines has no place
    return 0;
  }
  int on_text(MD_TEXTTYPE t, const MD_CHAR* s, MD_SIZE n) {
    if (!in_code_ || (t != MD_TEXT_CODE && t != MD_TEXT_NULLCHAR)) return 0;
    // md4c hands over each line's text as a pointer into the document, and line ends and the
    // indentation it re-creates (tabs in list items) from its own strings: the line number comes
    // from the former.
    bool inside = s >= text_.data() && s < text_.data() + text_.size();
    if (inside && n > 0 && (n != 1 || *s != '\n')) {
      int line = line_of(static_cast<size_t>(s - text_.data()));
      int expect = cur_.first_line + static_cast<int>(cur_.lines.size());
      if (cur_.first_line == 0)
        cur_.first_line = line - static_cast<int>(cur_.lines.size());
      else if (line != expect)
        cur_.aligned = false;
    }
    for (MD_SIZE i = 0; i < n; ++i) {
      if (s[i] == '\n') {
        cur_.lines.push_back(line_);
        line_.clear();
      } else {
        line_ += s[i];
      }
    }
    return 0;
  }

  const std::string& text_;
  std::vector<size_t> line_starts_;
  std::vector<Block> blocks_;
  Block cur_;
  std::string line_;
  bool in_code_ = false;
};

// What an answer in another format is ("" when it is none of the known ones).
std::string other_format(const std::string& code, bool python_file) {
  if (is_triton_source(code)) return "a Triton kernel (@triton.jit)";
  if (has(code, "load_inline") || has(code, "cpp_extension")) {
    if (has(code, "ModelNew"))
      return "a KernelBench-style Python module (class ModelNew with load_inline CUDA source)";
    return "a Python module that builds CUDA through torch.utils.cpp_extension";
  }
  bool torch = has(code, "import torch") || has(code, "nn.Module") || has(code, "torch.");
  if (torch && !has(code, "__global__"))
    return "a PyTorch-only answer (nn.Module / torch operations, no CUDA kernel)";
  if (python_file) return "a Python file";
  return "";
}

[[noreturn]] void other_format_error(const std::string& what) {
  throw FormatError("this answer is " + what + "; " + kContract);
}

bool launch_only(const Block& b) {
  if (b.lang == "yaml" || b.lang == "yml") return true;
  std::string c = b.code();
  size_t open = c.find("/* kernrl");
  size_t close = c.find("*/", open + 2);
  std::string rest = c.substr(0, open) + (close == std::string::npos ? "" : c.substr(close + 2));
  return trim(std::string(rest.begin(), std::remove(rest.begin(), rest.end(), '\n'))).empty();
}

// A launch block written as plain YAML in a block of its own: its first line is `kernrl`, or it
// starts with the launch block's keys.
bool bare_launch_yaml(const Block& b) {
  bool launches = false;
  for (const auto& l : b.lines)
    if (trim(l).rfind("launches:", 0) == 0) launches = true;
  if (!launches) return false;
  for (const auto& l : b.lines) {
    std::string t = trim(l);
    if (t.empty() || t[0] == '#') continue;
    return t == "kernrl" || t.rfind("launches:", 0) == 0 || t.rfind("problem:", 0) == 0 ||
           t.rfind("scratch:", 0) == 0;
  }
  return false;
}

ExtractedSource whole(const Block& b) {
  return {b.code(), b.first_line, true};
}

// The kernel block `k` and the launch block `y` as one source: the lines between them stay, blank,
// so every line keeps its file line. `wrap` puts a bare YAML block inside /* kernrl ... */.
ExtractedSource join(const Block& k, const Block& y, bool wrap) {
  std::map<int, std::string> lines;
  for (size_t i = 0; i < k.lines.size(); ++i)
    lines[k.first_line + static_cast<int>(i)] = k.lines[i];
  for (size_t i = 0; i < y.lines.size(); ++i)
    lines[y.first_line + static_cast<int>(i)] = y.lines[i];
  if (wrap) {
    if (y.code().find("*/") != std::string::npos)
      throw FormatError("the launch block in the code block at line " +
                            std::to_string(y.first_line) +
                            " contains */; write it as /* kernrl ... */ without another */",
                        y.first_line);
    int open_line = y.first_line - 1;
    for (size_t i = 0; i < y.lines.size(); ++i) {
      std::string t = trim(y.lines[i]);
      if (t.empty() || t[0] == '#') continue;
      if (t == "kernrl") open_line = y.first_line + static_cast<int>(i);
      break;
    }
    int close_line = y.end_line();
    bool taken =
        (open_line == y.first_line - 1 && lines.count(open_line)) || lines.count(close_line);
    if (taken || open_line < 1)
      throw FormatError("cannot join the launch block at line " + std::to_string(y.first_line) +
                            " with the kernels: put /* kernrl ... */ around it",
                        y.first_line);
    lines[open_line] = "/* kernrl";
    lines[close_line] = "*/";
  }
  ExtractedSource src;
  src.first_line = lines.begin()->first;
  src.from_markdown = true;
  for (int n = src.first_line; n <= lines.rbegin()->first; ++n) {
    auto it = lines.find(n);
    if (it != lines.end()) src.code += it->second;
    src.code += "\n";
  }
  return src;
}

ExtractedSource extract_markdown(const std::string& text) {
  std::vector<Block> blocks = BlockCollector(text).run();
  auto holds = [](const Block& b, const char* what) {
    return b.code().find(what) != std::string::npos;
  };
  auto kernel_block_near = [&](size_t at) -> const Block* {
    auto fits = [&](const Block& b) {
      return holds(b, "__global__") && !holds(b, "/* kernrl") && b.aligned;
    };
    for (size_t i = at; i-- > 0;)
      if (fits(blocks[i])) return &blocks[i];
    for (size_t i = at + 1; i < blocks.size(); ++i)
      if (fits(blocks[i])) return &blocks[i];
    return nullptr;
  };
  auto no_kernels = [](const Block& y) -> FormatError {
    return FormatError(
        "the launch block at line " + std::to_string(y.first_line) +
            " is in a code block of its own, and no other code block holds __global__ kernels",
        y.first_line);
  };
  for (size_t i = blocks.size(); i-- > 0;) {
    const Block& b = blocks[i];
    if (!holds(b, "/* kernrl")) continue;
    if (holds(b, "__global__") || !launch_only(b)) return whole(b);
    if (const Block* k = kernel_block_near(i)) return join(*k, b, false);
    throw no_kernels(b);
  }
  for (size_t i = blocks.size(); i-- > 0;) {
    if (!bare_launch_yaml(blocks[i])) continue;
    if (const Block* k = kernel_block_near(i)) return join(*k, blocks[i], true);
    throw no_kernels(blocks[i]);
  }
  for (size_t i = blocks.size(); i-- > 0;)
    if (is_triton_source(blocks[i].code())) {
      ExtractedSource src = whole(blocks[i]);
      src.language = "triton";
      return src;
    }
  for (const auto& b : blocks)
    if (std::string what = other_format(b.code(), b.lang == "python" || b.lang == "py");
        !what.empty())
      other_format_error(what);
  if (blocks.empty()) {
    if (text.find("/* kernrl") != std::string::npos) return {text, 1, true};
    if (std::string what = other_format(text, false); !what.empty()) other_format_error(what);
    throw FormatError(std::string("no fenced code block found in the answer; ") + kContract);
  }
  throw FormatError("no fenced code block contains a /* kernrl launch block (" +
                    std::to_string(blocks.size()) + " code block(s) found); " + kContract);
}

}  // namespace

bool is_triton_source(const std::string& code) {
  return has(code, "triton.jit") || has(code, "import triton") || has(code, "from triton") ||
         has(code, "triton.language");
}

ExtractedSource extract_kernel(const std::string& raw, const std::string& filename) {
  if (raw.size() > kMaxSourceBytes)
    throw FormatError("file is " + std::to_string(raw.size()) + " bytes; the limit is " +
                      std::to_string(kMaxSourceBytes) + " bytes");
  if (raw.find('\0') != std::string::npos) throw FormatError("file contains NUL bytes (not text)");
  std::string text = normalize_text(raw);
  for (size_t pos = 0, line = 1; pos < text.size(); ++line) {
    size_t nl = text.find('\n', pos);
    size_t len = (nl == std::string::npos ? text.size() : nl) - pos;
    if (len > kMaxLineChars)
      throw FormatError("line " + std::to_string(line) + " is " + std::to_string(len) +
                            " characters long; the limit is " + std::to_string(kMaxLineChars) +
                            " (break it into shorter lines)",
                        static_cast<int>(line));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  if (ends_with(filename, ".cu") || ends_with(filename, ".cuh")) return {text, 1, false};
  if (ends_with(filename, ".py")) {
    if (is_triton_source(text)) return {text, 1, false, "triton"};
    other_format_error(other_format(text, true));
  }
  return extract_markdown(text);
}

}  // namespace kernrl
