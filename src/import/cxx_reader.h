// Enough of C++ to split a load_inline CUDA source into device code and host functions: tokens,
// top-level items, function signatures and statements.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kernrl::kbimport {

struct CTok {
  enum Kind { Ident, Number, String, Char, Punct, Directive } kind = Punct;
  std::string text;           // a directive: the whole line(s), continuations joined
  size_t begin = 0, end = 0;  // byte offsets in the source
  int line = 0;
};

// Comments are dropped; `<<<` and `>>>` are single tokens. Never throws: an unclosed comment or
// literal ends at the end of the text.
std::vector<CTok> c_tokens(const std::string& text);

// Index of the token closing the bracket at `open` ((, [, {, or < of a template), or toks.size().
size_t c_match(const std::vector<CTok>& toks, size_t open, size_t end);

struct CParam {
  std::string type;  // without the name: "const float*", "int64_t", "torch::Tensor"
  std::string base;  // qualifiers, *, & and __restrict__ removed: "float", "torch::Tensor"
  std::string name;
  bool pointer = false;
  bool reference = false;
};

struct CTemplateParam {
  bool is_type = false;  // typename T / class T; else a value (int N)
  std::string type;      // for values
  std::string name;
};

// A top-level item of the source.
struct CItem {
  enum Kind { Directive, Function, Declaration, Type, Block } kind = Declaration;
  size_t first = 0, last = 0;  // token range [first, last)
  // Functions:
  std::string name;
  bool is_global = false, is_device = false, is_host = false;
  std::vector<CTemplateParam> tparams;
  bool is_template = false;
  std::string return_type;
  std::vector<CParam> params;
  size_t body_open = 0, body_close = 0;  // the braces of the body
  // Blocks (namespace, extern "C" { }): the items inside.
  std::vector<CItem> children;
};

// Splits toks[begin, end) into top-level items. Throws ImportError("unsupported_cuda") when a
// bracket is not closed.
std::vector<CItem> c_items(const std::vector<CTok>& toks, size_t begin, size_t end);

// Splits a parameter list toks[begin, end) (inside the parentheses).
std::vector<CParam> c_params(const std::vector<CTok>& toks, size_t begin, size_t end);

// The tokens' text joined with single spaces where the source had space.
std::string c_text(const std::vector<CTok>& toks, size_t begin, size_t end);

}  // namespace kernrl::kbimport
