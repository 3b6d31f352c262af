// Enough of Python to read a KernelBench generation: tokens, logical lines and expressions.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kernrl::kbimport {

struct PyTok {
  enum Kind { Name, Number, String, Op } kind = Op;
  // Strings: the decoded value; an f-string's text is its literal parts decoded, their braces
  // (`{{`, or an escape as `\x7b`) written doubled, and its {fields} as written.
  std::string text;
  int line = 0;
  bool fstring = false;  // an f-string (its {fields} are not yet substituted)
  bool bytes = false;
};

// A logical line: physical lines joined inside brackets and after a backslash.
struct PyLine {
  int indent = 0;
  int line = 0;  // first physical line
  std::vector<PyTok> toks;
};

// Throws ImportError("python_syntax") for an unclosed string or bracket, and for a string
// escape kernrl does not decode (`\N{...}`) or Python rejects (a truncated `\x`, `\u`, `\U`).
std::vector<PyLine> py_lines(const std::string& text);

// Expressions as trees. Operators and calls keep what the converter needs to name them.
struct PyExpr;
using PyExprP = std::shared_ptr<PyExpr>;
struct PyExpr {
  enum Kind {
    Name,   // text: the name
    Num,    // text: the literal
    Str,    // text: the value
    Attr,   // text: the attribute; kids[0]: the object
    Call,   // kids[0]: the callee; kids[1..]: positional args; kwargs
    Index,  // kids[0]: the object; kids[1]: the index
    BinOp,  // text: the operator; kids[0], kids[1]
    Unary,  // text: the operator; kids[0]
    Tuple,  // kids
    List,   // kids
    Const,  // text: True, False or None
    Other,  // anything else (lambda, comprehension, dict, slice, conditional); text says what
  } kind = Other;
  std::string text;
  std::vector<PyExprP> kids;
  std::vector<std::pair<std::string, PyExprP>> kwargs;
  bool fstring = false;
  int line = 0;
};

// Parses toks[begin, end) as one expression (a bare tuple `a, b` included). Throws
// ImportError("python_syntax").
PyExprP py_parse_expr(const std::vector<PyTok>& toks, size_t begin, size_t end);

// "torch.nn.functional.conv2d" for a Name/Attr chain; "" for anything else.
std::string py_dotted(const PyExprP& e);

// The source-like text of an expression, for messages.
std::string py_text(const PyExprP& e);

}  // namespace kernrl::kbimport
