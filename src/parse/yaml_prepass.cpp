#include "parse/yaml_prepass.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace kernrl {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t';
}

class Prepass {
 public:
  Prepass(const std::string& text, int tab_width) : tab_(std::max(1, tab_width)) {
    // Line ends first: CRLF and a lone CR both become LF (as C compilers and CommonMark read them).
    s_.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\r')
        s_ += text[i];
      else if (i + 1 >= text.size() || text[i + 1] != '\n')
        s_ += '\n';
    }
  }

  std::string run() {
    out_.reserve(s_.size() + s_.size() / 8);
    while (i_ < s_.size()) {
      if (line_start_) {
        start_line();
        continue;
      }
      char c = s_[i_];
      if (c == '\n') {
        newline();
      } else if (flow_.empty()) {
        block_char(c);
      } else {
        flow_char(c);
      }
    }
    return out_;
  }

 private:
  size_t column() const {
    size_t nl = out_.rfind('\n');
    return nl == std::string::npos ? out_.size() : out_.size() - nl - 1;
  }
  void put(char c) {
    if (c == '\t') {
      size_t col = column();
      out_.append(tab_ - col % tab_, ' ');
    } else {
      out_ += c;
    }
  }
  void newline() {
    out_ += '\n';
    ++i_;
    line_start_ = true;
  }
  // The rest of the line as it is (comments).
  void copy_to_eol() {
    while (i_ < s_.size() && s_[i_] != '\n') out_ += s_[i_++];
  }
  bool comment_here() const {
    return s_[i_] == '#' && (i_ == 0 || blank(s_[i_ - 1]) || s_[i_ - 1] == '\n');
  }
  bool ends_token(size_t j) const { return j >= s_.size() || blank(s_[j]) || s_[j] == '\n'; }

  void start_line() {
    line_start_ = false;
    size_t j = i_;
    while (j < s_.size() && blank(s_[j])) ++j;
    bool empty = j >= s_.size() || s_[j] == '\n';
    if (block_parent_ >= 0) {
      // Inside a block scalar: lines indented more than its parent (and blank lines) are content.
      size_t col = 0;
      for (size_t k = i_; k < j; ++k) col = s_[k] == '\t' ? (col / tab_ + 1) * tab_ : col + 1;
      if (empty || static_cast<int>(col) > block_parent_) {
        copy_to_eol();
        return;
      }
      block_parent_ = -1;
    }
    while (i_ < j) put(s_[i_++]);
    node_start_ = true;
    key_col_ = static_cast<int>(column());
  }

  int line_at(size_t pos) const {
    return static_cast<int>(std::count(s_.begin(), s_.begin() + static_cast<long>(pos), '\n'));
  }

  void quoted() {
    size_t open = i_;
    char q = s_[i_];
    out_ += s_[i_++];
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (q == '"' && c == '\\' && i_ + 1 < s_.size()) {
        out_ += c;
        out_ += s_[i_ + 1];
        i_ += 2;
        continue;
      }
      out_ += c;
      ++i_;
      if (c == q) {
        if (q == '\'' && i_ < s_.size() && s_[i_] == '\'') {
          out_ += s_[i_++];
          continue;
        }
        return;
      }
    }
    if (unclosed_ < 0) unclosed_ = line_at(open);
  }

  // An anchor, alias or tag token (`&a`, `*a`, `!!str`): copied to the next blank or flow
  // indicator.
  void token() {
    while (i_ < s_.size() && !blank(s_[i_]) && s_[i_] != '\n' &&
           (flow_.empty() || !std::strchr(",[]{}", s_[i_])))
      put(s_[i_++]);
  }

  void block_char(char c) {
    if (blank(c)) {
      put(c);
      ++i_;
      return;
    }
    if (comment_here()) {
      copy_to_eol();
      return;
    }
    if (!node_start_) {
      // After a quoted scalar or a closed flow collection: only `:` (a key), text to keep as is.
      if (c == ':' && ends_token(i_ + 1)) node_start_ = true;
      put(c);
      ++i_;
      return;
    }
    if (c == '[' || c == '{') {
      flow_.push_back(c);
      put(c);
      ++i_;
      return;
    }
    if (c == '"' || c == '\'') {
      quoted();
      node_start_ = false;
      return;
    }
    if ((c == '-' || c == '?' || c == ':') && ends_token(i_ + 1)) {
      put(c);
      ++i_;
      if (c == '-' || c == '?') {
        // A nested node starts after `- ` / `? `; a key of a mapping there sets its column.
        size_t j = i_;
        size_t col = column();
        while (j < s_.size() && blank(s_[j]))
          col = s_[j++] == '\t' ? (col / tab_ + 1) * tab_ : col + 1;
        key_col_ = static_cast<int>(col);
      }
      return;
    }
    if (c == '&' || c == '!' || c == '*') {
      token();
      return;
    }
    if (c == '|' || c == '>') {
      block_parent_ = key_col_;
      copy_to_eol();
      node_start_ = false;
      return;
    }
    // A plain scalar in block context: it may hold commas and parentheses as it is. It ends at a
    // comment, at the end of the line, or at `: ` when it is a key.
    int scalar_col = static_cast<int>(column());
    while (i_ < s_.size() && s_[i_] != '\n') {
      if (comment_here()) return;
      if (s_[i_] == ':' && ends_token(i_ + 1)) {
        put(s_[i_++]);
        node_start_ = true;
        key_col_ = scalar_col;
        return;
      }
      put(s_[i_++]);
    }
  }

  void flow_char(char c) {
    if (blank(c)) {
      put(c);
      ++i_;
      return;
    }
    if (comment_here()) {
      copy_to_eol();
      return;
    }
    switch (c) {
      case '[':
      case '{':
        flow_.push_back(c);
        put(c);
        ++i_;
        return;
      case ']':
      case '}':
        flow_.pop_back();
        put(c);
        ++i_;
        if (flow_.empty()) node_start_ = false;
        return;
      case ',':
      case ':':
        put(c);
        ++i_;
        return;
      case '"':
      case '\'':
        quoted();
        return;
      case '&':
      case '!':
      case '*':
        token();
        return;
      case '?':
        if (ends_token(i_ + 1)) {
          put(c);
          ++i_;
          return;
        }
        break;
      default:
        break;
    }
    flow_scalar();
  }

  // A plain scalar in flow context. Commas and `: ` inside (), <> do not end it; it is quoted when
  // it holds any of ( < :, which YAML would otherwise split or misread.
  void flow_scalar() {
    size_t start = i_;
    int paren = 0, angle = 0;
    bool quote = false;
    while (i_ < s_.size()) {
      char c = s_[i_];
      bool nested = paren > 0 || angle > 0;
      if (c == '\n') {
        if (!nested) break;
        ++i_;
        continue;
      }
      if (c == '[' || c == ']' || c == '{' || c == '}') break;
      if (!nested && c == ',') break;
      if (!nested && c == ':' &&
          (i_ + 1 >= s_.size() || blank(s_[i_ + 1]) || s_[i_ + 1] == '\n' ||
           std::strchr(",[]{}", s_[i_ + 1])))
        break;
      if (c == '#' && i_ > start && blank(s_[i_ - 1])) break;
      if (c == '(')
        ++paren, quote = true;
      else if (c == ')' && paren > 0)
        --paren;
      else if (c == '<')
        ++angle, quote = true;
      else if (c == '>' && angle > 0)
        --angle;
      else if (c == ':')
        quote = true;
      ++i_;
    }
    size_t end = i_;
    while (end > start && (blank(s_[end - 1]) || s_[end - 1] == '\n')) --end;
    if (!quote) {
      for (size_t k = start; k < i_; ++k) put(s_[k]);
      return;
    }
    out_ += '"';
    for (size_t k = start; k < end; ++k) {
      char c = s_[k];
      if (c == '"' || c == '\\') out_ += '\\';
      if (c == '\t')
        out_ += ' ';
      else
        out_ += c;
    }
    out_ += '"';
    for (size_t k = end; k < i_; ++k) put(s_[k]);
  }

 public:
  int unclosed_ = -1;

 private:
  std::string s_;
  std::string out_;
  size_t i_ = 0;
  int tab_;
  std::vector<char> flow_;
  bool line_start_ = true;
  bool node_start_ = true;
  int key_col_ = 0;
  int block_parent_ = -1;
};

}  // namespace

std::string prepare_launch_yaml(const std::string& text, int tab_width, int* unclosed_quote_line) {
  Prepass p(text, tab_width);
  std::string out = p.run();
  if (unclosed_quote_line) *unclosed_quote_line = p.unclosed_;
  return out;
}

}  // namespace kernrl
