#include "import/cxx_reader.h"

#include <cctype>

#include "import/import_error.h"

namespace kernrl::kbimport {

namespace {

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) {
  return ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

bool is(const CTok& t, const char* text) {
  return (t.kind == CTok::Punct || t.kind == CTok::Ident) && t.text == text;
}

}  // namespace

std::vector<CTok> c_tokens(const std::string& text) {
  std::vector<CTok> toks;
  size_t i = 0;
  const size_t n = text.size();
  int line = 1;
  bool line_start = true;  // only blanks so far on this line
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') {
        if (text[i] == '\\' && i + 1 < n && text[i + 1] == '\n') ++line, ++i;
        ++i;
      }
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      size_t e = text.find("*/", i + 2);
      e = e == std::string::npos ? n : e + 2;
      for (size_t k = i; k < e; ++k)
        if (text[k] == '\n') ++line;
      i = e;
      continue;
    }
    CTok t;
    t.begin = i;
    t.line = line;
    if (c == '#' && line_start) {
      // A directive: to the end of the line, with continuations; comments inside are kept.
      size_t j = i;
      while (j < n && text[j] != '\n') {
        if (text[j] == '\\' && j + 1 < n && text[j + 1] == '\n') ++line, ++j;
        ++j;
      }
      t.kind = CTok::Directive;
      t.text = text.substr(i, j - i);
      t.end = j;
      toks.push_back(std::move(t));
      i = j;
      continue;
    }
    line_start = false;
    if (c == '"' || c == '\'') {
      // Raw strings R"d(...)d" are handled by the prefix check below.
      size_t j = i + 1;
      while (j < n && text[j] != c && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      j = std::min(n, j + 1);
      t.kind = c == '"' ? CTok::String : CTok::Char;
      t.text = text.substr(i, j - i);
      t.end = j;
      toks.push_back(std::move(t));
      i = j;
      continue;
    }
    if (ident_start(c)) {
      size_t j = i;
      while (j < n && ident_char(text[j])) ++j;
      std::string word = text.substr(i, j - i);
      if (j < n && text[j] == '"' && (word == "R" || word == "u8R" || word == "LR")) {
        size_t open = text.find('(', j);
        std::string delim = open == std::string::npos ? "" : text.substr(j + 1, open - j - 1);
        size_t close = open == std::string::npos ? n : text.find(")" + delim + "\"", open);
        size_t e = close == std::string::npos ? n : close + delim.size() + 2;
        for (size_t k = i; k < e; ++k)
          if (text[k] == '\n') ++line;
        t.kind = CTok::String;
        t.text = text.substr(i, e - i);
        t.end = e;
        toks.push_back(std::move(t));
        i = e;
        continue;
      }
      if (j < n && (text[j] == '"' || text[j] == '\'') &&
          (word == "u8" || word == "u" || word == "U" || word == "L")) {
        i = j;  // the prefix belongs to the literal that follows
        continue;
      }
      t.kind = CTok::Ident;
      t.text = word;
      t.end = j;
      toks.push_back(std::move(t));
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      size_t j = i;
      bool hex = text.compare(i, 2, "0x") == 0 || text.compare(i, 2, "0X") == 0;
      while (j < n) {
        char d = text[j];
        if (std::isalnum(static_cast<unsigned char>(d)) || d == '.' || d == '\'') {
          ++j;
        } else if ((d == '+' || d == '-') && !hex && (text[j - 1] == 'e' || text[j - 1] == 'E')) {
          ++j;
        } else if ((d == '+' || d == '-') && hex && (text[j - 1] == 'p' || text[j - 1] == 'P')) {
          ++j;
        } else {
          break;
        }
      }
      t.kind = CTok::Number;
      t.text = text.substr(i, j - i);
      t.end = j;
      toks.push_back(std::move(t));
      i = j;
      continue;
    }
    static const char* const puncts[] = {
        "<<<", ">>>", "<<=", ">>=", "...", "->*", "::", "->", "++", "--", "<<", ">>", "<=", ">=",
        "==",  "!=",  "&&",  "||",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", ".*"};
    std::string p(1, c);
    for (const char* q : puncts)
      if (text.compare(i, std::char_traits<char>::length(q), q) == 0) {
        p = q;
        break;
      }
    t.kind = CTok::Punct;
    t.text = p;
    t.end = i + p.size();
    toks.push_back(std::move(t));
    i += p.size();
  }
  return toks;
}

size_t c_match(const std::vector<CTok>& toks, size_t open, size_t end) {
  const std::string& o = toks[open].text;
  if (o == "<") {
    // Template arguments: < and > nest (>> closes two); a ; or { or an unmatched ) ends the try.
    int depth = 0;
    int paren = 0;
    for (size_t i = open; i < end; ++i) {
      const CTok& t = toks[i];
      if (t.kind != CTok::Punct) continue;
      if (t.text == "(" || t.text == "[") ++paren;
      if (t.text == ")" || t.text == "]") {
        if (paren == 0) return toks.size();
        --paren;
      }
      if (paren > 0) continue;
      if (t.text == "<") ++depth;
      if (t.text == ">") --depth;
      if (t.text == ">>") depth -= 2;
      if (t.text == ";" || t.text == "{" || t.text == "}") return toks.size();
      if (depth <= 0) return i;
    }
    return toks.size();
  }
  std::string c = o == "(" ? ")" : o == "[" ? "]" : o == "{" ? "}" : o == "<<<" ? ">>>" : "";
  if (c.empty()) return toks.size();
  int depth = 0;
  for (size_t i = open; i < end; ++i) {
    const CTok& t = toks[i];
    if (t.kind != CTok::Punct) continue;
    if (t.text == o) ++depth;
    if (t.text == c && --depth == 0) return i;
  }
  return toks.size();
}

std::string c_text(const std::vector<CTok>& toks, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end && i < toks.size(); ++i) {
    if (i > begin && toks[i].begin > toks[i - 1].end) s += ' ';
    s += toks[i].text;
  }
  return s;
}

std::vector<CParam> c_params(const std::vector<CTok>& toks, size_t begin, size_t end) {
  std::vector<CParam> out;
  if (begin >= end) return out;
  if (end - begin == 1 && toks[begin].text == "void") return out;
  size_t start = begin;
  int depth = 0;
  auto finish = [&](size_t stop) {
    // Default arguments are dropped; the name is the last identifier.
    size_t e = stop;
    int d = 0;
    for (size_t i = start; i < stop; ++i) {
      const std::string& x = toks[i].text;
      if (x == "(" || x == "[" || x == "<") ++d;
      if (x == ")" || x == "]" || x == ">") --d;
      if (x == ">>") d -= 2;
      if (d == 0 && x == "=") {
        e = i;
        break;
      }
    }
    // Array parameters: float x[] -> a pointer.
    bool array = false;
    if (e > start && toks[e - 1].text == "]") {
      size_t k = e - 1;
      while (k > start && toks[k].text != "[") --k;
      e = k;
      array = true;
    }
    CParam p;
    size_t name_at = e;
    if (e > start && toks[e - 1].kind == CTok::Ident) {
      static const char* const type_words[] = {"int",  "float", "double",   "char",
                                               "long", "short", "unsigned", "signed",
                                               "bool", "void",  "size_t",   "auto"};
      bool type_word = false;
      for (const char* w : type_words)
        if (toks[e - 1].text == w) type_word = true;
      // A lone type (unnamed parameter) keeps its last word as the type.
      if (!(type_word || e - 1 == start)) name_at = e - 1;
    }
    if (name_at < e) p.name = toks[name_at].text;
    p.type = c_text(toks, start, name_at) + (array ? "*" : "");
    std::string base;
    for (size_t i = start; i < name_at; ++i) {
      const std::string& x = toks[i].text;
      if (x == "*") {
        p.pointer = true;
        continue;
      }
      if (x == "&" || x == "&&") {
        p.reference = true;
        continue;
      }
      if (x == "const" || x == "volatile" || x == "__restrict__" || x == "__restrict" ||
          x == "restrict" || x == "__grid_constant__")
        continue;
      if (!base.empty() && toks[i].kind == CTok::Ident && toks[i - 1].kind == CTok::Ident)
        base += ' ';
      base += x;
    }
    p.pointer |= array;
    p.base = base;
    out.push_back(p);
  };
  for (size_t i = begin; i < end; ++i) {
    const std::string& x = toks[i].text;
    if (toks[i].kind != CTok::Punct) continue;
    if (x == "(" || x == "[" || x == "<" || x == "{") ++depth;
    if (x == ")" || x == "]" || x == ">" || x == "}") --depth;
    if (x == ">>") depth -= 2;
    if (depth == 0 && x == ",") {
      finish(i);
      start = i + 1;
    }
  }
  finish(end);
  return out;
}

namespace {

std::vector<CTemplateParam> template_params(const std::vector<CTok>& toks, size_t begin,
                                            size_t end) {
  std::vector<CTemplateParam> out;
  for (const CParam& p : c_params(toks, begin, end)) {
    CTemplateParam t;
    t.name = p.name;
    t.is_type = p.base == "typename" || p.base == "class";
    t.type = p.base;
    out.push_back(t);
  }
  return out;
}

void describe_function(const std::vector<CTok>& toks, CItem& item, size_t body_open) {
  size_t i = item.first;
  if (i < body_open && toks[i].text == "template" && i + 1 < body_open && toks[i + 1].text == "<") {
    size_t close = c_match(toks, i + 1, body_open);
    if (close < body_open) {
      item.is_template = true;
      item.tparams = template_params(toks, i + 2, close);
      i = close + 1;
    }
  }
  size_t decl_start = i;
  // The parameter list: the first top-level ( whose preceding token names the function (not
  // __launch_bounds__, __attribute__, alignas, decltype).
  for (size_t k = i; k < body_open; ++k) {
    const CTok& t = toks[k];
    if (t.kind != CTok::Punct) continue;
    if (t.text == "<") {
      size_t c = c_match(toks, k, body_open);
      if (c < body_open) k = c;
      continue;
    }
    if (t.text != "(") continue;
    size_t close = c_match(toks, k, body_open);
    if (close >= body_open) break;
    if (k == 0) break;
    const CTok& prev = toks[k - 1];
    std::string name;
    size_t name_at = k - 1;  // the name's token
    if (prev.kind == CTok::Ident) {
      if (prev.text == "__launch_bounds__" || prev.text == "__attribute__" ||
          prev.text == "alignas" || prev.text == "decltype" || prev.text == "__align__" ||
          prev.text == "__declspec") {
        k = close;
        continue;
      }
      name = prev.text;
      if (k >= 2 && toks[k - 2].text == "::") name = toks[k - 3 < k ? k - 3 : 0].text + "::" + name;
    } else if (k >= 2 && toks[k - 2].text == "operator") {
      name = "operator" + prev.text;
    } else if (prev.text == ")" && k >= 3 && toks[k - 3].text == "operator") {
      name = "operator()";
    } else if (prev.text == ">" && k >= 3) {
      // An explicit specialization or instantiation, `fast_tanh<float>(float v)`: the name
      // before its template arguments.
      size_t open = k - 1;
      int depth = 0;
      for (size_t q = k - 1; q > decl_start; --q) {
        if (toks[q].kind != CTok::Punct) continue;
        if (toks[q].text == ">") ++depth;
        if (toks[q].text == ">>") depth += 2;
        if (toks[q].text == "<" && --depth == 0) {
          open = q;
          break;
        }
      }
      if (open == k - 1 || open == 0 || toks[open - 1].kind != CTok::Ident) {
        k = close;
        continue;
      }
      name = toks[open - 1].text;
      name_at = open - 1;
    } else {
      k = close;
      continue;
    }
    item.name = name;
    item.params = c_params(toks, k + 1, close);
    std::string ret;
    for (size_t r = decl_start; r < name_at; ++r) {
      const std::string& x = toks[r].text;
      if (x == "__global__") item.is_global = true;
      if (x == "__device__") item.is_device = true;
      if (x == "__host__") item.is_host = true;
    }
    item.return_type = c_text(toks, decl_start, name_at);
    break;
  }
  item.body_open = body_open;
  item.body_close = c_match(toks, body_open, toks.size());
}

[[noreturn]] void unclosed(const CTok& t) {
  throw ImportError("unsupported_cuda", "the CUDA source cannot be read: '" + t.text +
                                            "' at line " + std::to_string(t.line) +
                                            " of the source string is never closed");
}

}  // namespace

std::vector<CItem> c_items(const std::vector<CTok>& toks, size_t begin, size_t end) {
  std::vector<CItem> items;
  size_t i = begin;
  while (i < end) {
    if (toks[i].kind == CTok::Directive) {
      CItem d;
      d.kind = CItem::Directive;
      d.first = i;
      d.last = i + 1;
      items.push_back(d);
      ++i;
      continue;
    }
    if (is(toks[i], ";")) {
      ++i;
      continue;
    }
    CItem item;
    item.first = i;
    size_t j = i;
    bool done = false;
    while (j < end && !done) {
      const CTok& t = toks[j];
      if (t.kind == CTok::Directive) {
        // A directive inside a declaration (rare): end the item before it.
        item.kind = CItem::Declaration;
        item.last = j;
        done = true;
        break;
      }
      if (t.kind != CTok::Punct) {
        ++j;
        continue;
      }
      if (t.text == "(" || t.text == "[") {
        size_t c = c_match(toks, j, end);
        if (c >= end) unclosed(t);
        j = c + 1;
        continue;
      }
      if (t.text == ";") {
        item.kind = CItem::Declaration;
        item.last = j + 1;
        done = true;
        break;
      }
      if (t.text == "{") {
        size_t c = c_match(toks, j, end);
        if (c >= end) unclosed(t);
        bool initializer = j > i && (is(toks[j - 1], "=") || is(toks[j - 1], "]") ||
                                     toks[j - 1].kind == CTok::Ident);
        // `struct X {`, `namespace n {`, `extern "C" {`, `enum class E {`.
        std::string lead;
        bool type_kw = false, ns = false, linkage = false;
        for (size_t k = i; k < j; ++k) {
          const std::string& x = toks[k].text;
          if (x == "struct" || x == "class" || x == "union" || x == "enum") type_kw = true;
          if (x == "namespace") ns = true;
        }
        if (toks[i].text == "extern" && i + 1 < j && toks[i + 1].kind == CTok::String && i + 2 == j)
          linkage = true;
        if (ns || linkage) {
          item.kind = CItem::Block;
          item.body_open = j;
          item.body_close = c;
          item.children = c_items(toks, j + 1, c);
          item.last = c + 1;
          done = true;
          break;
        }
        bool paren_before = false;
        for (size_t k = i; k < j; ++k)
          if (is(toks[k], "(")) paren_before = true;
        if (type_kw && !paren_before) {
          // The type's body, then declarators up to ';'.
          j = c + 1;
          while (j < end && !is(toks[j], ";")) ++j;
          item.kind = CItem::Type;
          item.last = std::min(end, j + 1);
          done = true;
          break;
        }
        if (initializer && !paren_before) {
          j = c + 1;
          continue;  // `float c[3] = {...};` or `int x{3};`
        }
        if (!paren_before) {
          j = c + 1;
          continue;
        }
        item.kind = CItem::Function;
        describe_function(toks, item, j);
        item.last = c + 1;
        done = true;
        break;
      }
      ++j;
    }
    if (!done) {
      item.kind = CItem::Declaration;
      item.last = end;
    }
    if (item.last <= item.first) item.last = item.first + 1;
    items.push_back(std::move(item));
    i = items.back().last;
  }
  return items;
}

}  // namespace kernrl::kbimport
