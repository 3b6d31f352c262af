// The Python side (py_side.h): the module scan (imports, load_inline calls, ModelNew).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "core/expr.h"
#include "import/py_side.h"

namespace kernrl::kbimport::py {

PySide::Result PySide::run() {
  lines_ = py_lines(src_);
  scan_module();
  // Macros (#define and -D flags) before any host code runs.
  for (const ExtModule& m : C.exts) {
    // One translation unit of the module's CUDA sources, one of its C++ sources, each with the
    // names its compile's -D flags define.
    std::map<std::string, int> cuda_names, cpp_names;
    for (const auto& f : m.cuda_flag_macros) cuda_names[f.first] = 1;
    for (const auto& f : m.cpp_flag_macros) cpp_names[f.first] = 1;
    for (const auto& so : m.sources)
      C.add_macros(so.toks, so.cuda ? cuda_names : cpp_names, so.cuda);
  }
  return run_forward();
}

std::string PySide::resolve(const std::string& dotted) const {
  if (dotted.empty()) return dotted;
  size_t dot = dotted.find('.');
  std::string head = dotted.substr(0, dot);
  auto it = aliases_.find(head);
  if (it == aliases_.end()) return dotted;
  return it->second + (dot == std::string::npos ? "" : dotted.substr(dot));
}

void PySide::scan_imports(const PyLine& l) {
  const auto& t = l.toks;
  if (t.empty()) return;
  if (tok_is(t[0], "import")) {
    // import a.b.c [as x], d
    size_t i = 1;
    while (i < t.size()) {
      std::string mod;
      while (i < t.size() && !tok_is(t[i], ",") && !tok_is(t[i], "as")) mod += t[i++].text;
      std::string as;
      if (i < t.size() && tok_is(t[i], "as")) {
        if (i + 1 >= t.size()) break;  // `import x as` with no name: nothing more to read
        as = t[i + 1].text;
        i += 2;
      }
      if (!as.empty()) aliases_[as] = mod;
      if (i < t.size() && !tok_is(t[i], ",")) break;  // not a list of modules: stop reading
      if (i < t.size()) ++i;
    }
  } else if (tok_is(t[0], "from")) {
    size_t i = 1;
    std::string mod;
    while (i < t.size() && !tok_is(t[i], "import")) mod += t[i++].text;
    ++i;
    while (i < t.size()) {
      if (tok_is(t[i], "(") || tok_is(t[i], ")") || tok_is(t[i], ",")) {
        ++i;
        continue;
      }
      std::string name = t[i++].text;
      std::string as = name;
      if (i + 1 < t.size() && tok_is(t[i], "as")) {
        as = t[i + 1].text;
        i += 2;
      }
      aliases_[as] = mod + "." + name;
    }
  }
}

bool PySide::is_load_inline(const PyExprP& e) const {
  if (!e || e->kind != PyExpr::Call) return false;
  std::string d = resolve(py_dotted(e->kids[0]));
  return d == "load_inline" || (d.size() > 12 && d.compare(d.size() - 12, 12, ".load_inline") == 0);
}

bool PySide::is_load_files(const PyExprP& e) const {
  if (!e || e->kind != PyExpr::Call) return false;
  std::string d = resolve(py_dotted(e->kids[0]));
  return d == "torch.utils.cpp_extension.load" || d == "cpp_extension.load";
}

std::vector<std::string> PySide::strings_of(const PyExprP& e, int line) {
  if (++module_eval_depth_ > 64)
    fail("python_syntax", "the CUDA source strings refer to each other in a loop");
  std::vector<std::string> out;
  switch (e->kind) {
    case PyExpr::Str:
      out.push_back(e->fstring ? format_fstring(e->text, line) : e->text);
      break;
    case PyExpr::Name: {
      auto it = module_vars_.find(e->text);
      if (it == module_vars_.end())
        fail("not_kernelbench", "the CUDA source `" + e->text +
                                    "` passed to load_inline is not a string of the module");
      out = strings_of(it->second, line);
      break;
    }
    case PyExpr::BinOp:
      if (e->text == "+") {
        auto a = strings_of(e->kids[0], line), b = strings_of(e->kids[1], line);
        if (a.size() == 1 && b.size() == 1) {
          out.push_back(a[0] + b[0]);
        } else {
          out = a;
          out.insert(out.end(), b.begin(), b.end());
        }
        break;
      }
      fail("not_kernelbench", "the CUDA source passed to load_inline is built with `" + e->text +
                                  "` (line " + std::to_string(line) + ")");
    case PyExpr::List:
    case PyExpr::Tuple:
      for (const auto& k : e->kids) {
        auto s = strings_of(k, line);
        out.insert(out.end(), s.begin(), s.end());
      }
      break;
    case PyExpr::Call: {
      std::string d = resolve(py_dotted(e->kids[0]));
      if ((d == "textwrap.dedent" || d == "dedent" || d == "str") && e->kids.size() == 2) {
        out = strings_of(e->kids[1], line);
        break;
      }
      if (e->kids[0]->kind == PyExpr::Attr &&
          (e->kids[0]->text == "strip" || e->kids[0]->text == "lstrip" ||
           e->kids[0]->text == "rstrip")) {
        out = strings_of(e->kids[0]->kids[0], line);
        break;
      }
      if (e->kids[0]->kind == PyExpr::Attr && e->kids[0]->text == "format")
        fail("not_kernelbench",
             "the CUDA source passed to load_inline is built with str.format (line " +
                 std::to_string(line) + ")");
      fail("not_kernelbench", "the CUDA source passed to load_inline is computed by `" +
                                  py_text(e) + "` (line " + std::to_string(line) + ")");
    }
    case PyExpr::Const:
      if (e->text == "None") break;
      [[fallthrough]];
    default:
      fail("not_kernelbench", "the CUDA source passed to load_inline is `" + py_text(e) +
                                  "` (line " + std::to_string(line) + ")");
  }
  --module_eval_depth_;
  return out;
}

std::optional<std::string> PySide::field_text(const PyExpr& c) {
  if (c.kind == PyExpr::Str) return c.fstring ? std::nullopt : std::optional<std::string>(c.text);
  Val v = number(c.text);
  if (v.kind == Val::Int && v.k) return std::to_string(*v.k);
  if (v.kind != Val::Float) return std::nullopt;
  // Python's str() of a float is its shortest round-trip text; a literal `I.F` is that text
  // where I has no leading zero, F no trailing one (unless it is `0`), the value is at least
  // 1e-4, and it has at most 15 significant digits.
  const std::string& t = c.text;
  size_t dot = t.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == t.size()) return std::nullopt;
  const std::string ip = t.substr(0, dot), fp = t.substr(dot + 1);
  auto digits = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  if (!digits(ip) || !digits(fp)) return std::nullopt;
  if (ip.size() > 1 && ip[0] == '0') return std::nullopt;
  if (fp.size() > 1 && fp.back() == '0') return std::nullopt;
  if (ip == "0" && fp.compare(0, 4, "0000") == 0) return std::nullopt;
  std::string sig = (ip == "0" ? "" : ip) + fp;
  sig.erase(0, std::min(sig.find_first_not_of('0'), sig.size()));
  if (sig.size() > 15 || ip.size() > 16) return std::nullopt;
  return t;
}

std::string PySide::format_fstring(const std::string& text, int line) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (c == '{') {
      size_t e = text.find('}', i);
      if (e == std::string::npos)
        fail("python_syntax",
             "an f-string field is never closed (line " + std::to_string(line) + ")");
      std::string name = text.substr(i + 1, e - i - 1);
      auto it = module_vars_.find(name);
      if (it == module_vars_.end() ||
          !(it->second->kind == PyExpr::Num || it->second->kind == PyExpr::Str))
        fail("not_kernelbench", "the CUDA source is an f-string with the field {" + name +
                                    "}, which is not a constant of the module (line " +
                                    std::to_string(line) + ")");
      // The text Python's str() gives the constant: a string's value (not an f-string's
      // source), an integer in decimal, a float only where written as Python writes it.
      std::optional<std::string> as_python = field_text(*it->second);
      if (!as_python)
        fail("not_kernelbench", "the CUDA source is an f-string with the field {" + name +
                                    "}, whose text kernrl does not write as Python does (line " +
                                    std::to_string(line) + ")");
      out += *as_python;
      i = e;
      continue;
    }
    out += c;
  }
  return out;
}

PyExprP PySide::kwarg(const PyExprP& call, const char* name, size_t position) {
  for (const auto& [k, v] : call->kwargs)
    if (k == name) return v;
  if (position + 1 < call->kids.size()) return call->kids[position + 1];
  return nullptr;
}

std::vector<std::string> PySide::flag_items(const PyExprP& e, const std::string& what, int line) {
  const std::string where = "the " + what + " of load_inline (line " + std::to_string(line) + ")";
  if (++module_eval_depth_ > 64) fail("python_syntax", where + " refer to each other in a loop");
  std::vector<std::string> out;
  switch (e->kind) {
    case PyExpr::List:
    case PyExpr::Tuple:
      for (const auto& k : e->kids) {
        if (k->kind != PyExpr::Str || k->fstring)
          fail("not_kernelbench", where + " hold `" + py_text(k) +
                                      "`, not a string: kernrl reads a list of strings, to "
                                      "know the macros its -D and -U flags define");
        out.push_back(k->text);
      }
      break;
    case PyExpr::Name: {
      // A name bound once at module level to a list, changed nowhere.
      auto it = module_vars_.find(e->text);
      if (it == module_vars_.end())
        fail("not_kernelbench", where + " are `" + e->text +
                                    "`, not a list bound once at module level: kernrl cannot "
                                    "read the macros its -D and -U flags define");
      // Its uses: its binding, and keyword values (`extra_cflags=flags`) or operands of `+`;
      // anything else (a method, a subscript, `del`, another name for it, an argument) may
      // change it.
      for (const auto& l : lines_) {
        const auto& t = l.toks;
        int depth = 0;
        for (size_t k = 0; k < t.size(); ++k) {
          if (tok_is(t[k], "(") || tok_is(t[k], "[") || tok_is(t[k], "{")) ++depth;
          if (tok_is(t[k], ")") || tok_is(t[k], "]") || tok_is(t[k], "}")) --depth;
          if (t[k].kind != PyTok::Name || t[k].text != e->text || (k > 0 && tok_is(t[k - 1], ".")))
            continue;
          const bool binding = l.indent == 0 && k == 0 && t.size() > 1 && tok_is(t[1], "=");
          const bool next_ok = k + 1 == t.size() || tok_is(t[k + 1], ",") ||
                               tok_is(t[k + 1], ")") || tok_is(t[k + 1], "+");
          const bool keyword = k > 0 && tok_is(t[k - 1], "=") && depth > 0;
          const bool operand =
              (k > 0 && tok_is(t[k - 1], "+")) || (k + 1 < t.size() && tok_is(t[k + 1], "+"));
          if (!binding && !((keyword || operand) && next_ok))
            fail("not_kernelbench", where + " are `" + e->text + "`, which line " +
                                        std::to_string(l.line) +
                                        " may change: kernrl reads a list bound once and used "
                                        "only as load_inline's flags");
        }
      }
      out = flag_items(it->second, what, line);
      break;
    }
    case PyExpr::BinOp:
      if (e->text == "+") {
        out = flag_items(e->kids[0], what, line);
        auto b = flag_items(e->kids[1], what, line);
        out.insert(out.end(), b.begin(), b.end());
        break;
      }
      [[fallthrough]];
    case PyExpr::Const:
      if (e->kind == PyExpr::Const && e->text == "None") break;
      [[fallthrough]];
    default:
      fail("not_kernelbench", where + " are `" + py_text(e) +
                                  "`: kernrl reads a list of strings (or a name bound once to "
                                  "one), to know the macros its -D and -U flags define");
  }
  --module_eval_depth_;
  return out;
}

std::map<std::string, std::string> PySide::flag_macros(const std::vector<std::string>& items,
                                                       bool nvcc, int line) {
  // torch writes the flags, each stripped, into a ninja file joined by spaces, and ninja runs
  // the command through the shell: the compiler's arguments are the shell's words of the line.
  const std::string what = nvcc ? "extra_cuda_cflags" : "extra_cflags";
  const std::string where = "the " + what + " of load_inline (line " + std::to_string(line) + ")";
  std::string joined;
  for (const auto& i : items) joined += i + " ";
  auto refuse = [&](const std::string& why) { fail("unsupported_cuda", where + " " + why); };
  // Words that may define or undefine a macro other than as -D and -U flags kernrl reads.
  auto macro_word = [](const std::string& w) {
    for (const char* p : {"-D", "-U", "define", "undef", "-include", "imacros"})
      if (w.find(p) != std::string::npos) return true;
    return false;
  };
  const std::string shell = "\"'\\$`;&|<>()*?[]{}#~!\n\r";
  if (joined.find_first_of(shell) != std::string::npos) {
    std::string plain;
    for (char c : joined)
      if (shell.find(c) == std::string::npos) plain += c;
    std::istringstream ws(plain);
    for (std::string w; ws >> w;)
      if (macro_word(w) || joined.find_first_of("$`\n\r") != std::string::npos)
        refuse(
            "hold characters the shell reads (quotes, `$`, `\\` ...) with -D or -U flags: "
            "kernrl does not evaluate the shell's words");
  }
  std::vector<std::string> words;
  {
    std::istringstream ws(joined);
    for (std::string w; ws >> w;)
      if (w.find_first_of(shell) == std::string::npos) words.push_back(w);
  }
  std::map<std::string, std::string> defs;
  std::set<std::string> undefs;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    std::string arg;
    bool define = false, flag = false;
    for (const char* opt : {"-D", "--define-macro", "-U", "--undefine-macro"}) {
      const std::string o = opt;
      const bool d = o == "-D" || o == "--define-macro";
      if (w == o) {
        if (i + 1 >= words.size()) refuse("end with `" + w + "` and no macro after it");
        arg = words[++i];
      } else if (starts_with(w, (o + "=").c_str()) && (nvcc || o.size() > 2)) {
        arg = w.substr(o.size() + 1);  // nvcc's -D=X; --define-macro=X
      } else if (o.size() == 2 && starts_with(w, o.c_str()) && w.size() > 2) {
        arg = w.substr(2);
      } else {
        continue;
      }
      define = d;
      flag = true;
      break;
    }
    if (!flag) {
      // An option whose next word is its argument, passed on to another tool (nvcc's
      // -Xcompiler, --compiler-options ...; gcc's -Xpreprocessor ...).
      const bool passes = starts_with(w, "-X") || w == "--compiler-options" ||
                          w == "--linker-options" || w == "--ptxas-options" ||
                          w == "--nvlink-options" || w == "--archive-options";
      if (passes && w.find('=') == std::string::npos && i + 1 < words.size()) {
        if (macro_word(words[i + 1]))
          refuse("pass `" + words[i + 1] + "` on with `" + w +
                 "`: kernrl does not read macros given to one compile pass only");
        ++i;
        continue;
      }
      if (macro_word(w))
        refuse("hold `" + w +
               "`, which may define or undefine macros in a way kernrl does not "
               "read");
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    bool ident = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ident || (!define && eq != std::string::npos))
      refuse("hold the macro flag `" + w + "`, whose macro name kernrl does not read" +
             (nvcc ? " (nvcc reads commas as separating macros)" : ""));
    const std::string value = eq == std::string::npos ? "1" : arg.substr(eq + 1);
    if (nvcc && value.find(',') != std::string::npos)
      refuse("define `" + name + "` as `" + value +
             "`: nvcc reads the commas of -D as separating macros");
    const bool header = name[0] == '_' || Converter::header_macro(name) != 0 ||
                        name == "TORCH_EXTENSION_NAME" || name == "TORCH_API_INCLUDE_EXTENSION_H";
    if (!define) {
      // -U undoes only the command line's definitions: one of these flags (refused below), or a
      // name the compiler or torch's flags may define, which stays unknown.
      if (name == "TORCH_EXTENSION_NAME" || name == "TORCH_API_INCLUDE_EXTENSION_H")
        refuse("undefine `" + name + "`, which torch's own flags define");
      undefs.insert(name);
      continue;
    }
    if (header)
      refuse("define `" + name +
             "`, a name the compiler, torch's flags or the headers may define too: which "
             "definition the source sees is not known here");
    if (auto d = defs.find(name); d != defs.end() && d->second != value)
      refuse("define `" + name + "` twice, as `" + d->second + "` and as `" + value + "`");
    defs[name] = value;
  }
  for (const auto& n : undefs)
    if (defs.count(n))
      refuse("both define and undefine `" + n + "`: kernrl does not follow their order");
  return defs;
}

int PySide::add_ext(const std::string& var, const PyExprP& call, int line) {
  auto known = ext_by_var_.find(var);
  if (known != ext_by_var_.end()) return known->second;
  ExtModule m;
  m.var = var;
  m.line = line;
  // load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
  //             extra_cuda_cflags=None, ...)
  if (auto e = kwarg(call, "cuda_sources", 2)) m.cuda_sources = strings_of(e, line);
  if (auto e = kwarg(call, "cpp_sources", 1)) m.cpp_sources = strings_of(e, line);
  if (auto e = kwarg(call, "functions", 3)) {
    if (e->kind == PyExpr::Str)
      m.functions.push_back(e->text);
    else if (e->kind == PyExpr::List || e->kind == PyExpr::Tuple)
      for (const auto& k : e->kids)
        if (k->kind == PyExpr::Str) m.functions.push_back(k->text);
  }
  for (const auto& kw : call->kwargs)
    if (kw.first == "*")
      fail("not_kernelbench", "load_inline module `" + var + "` (line " + std::to_string(line) +
                                  ") is built with `*` or `**` arguments: kernrl cannot see its "
                                  "sources and flags");
  // -D and -U flags: extra_cuda_cflags for the CUDA sources' compile, extra_cflags for the C++
  // sources' (torch compiles each with its own only).
  if (auto e = kwarg(call, "extra_cuda_cflags", 5))
    m.cuda_flag_macros = flag_macros(flag_items(e, "extra_cuda_cflags", line), true, line);
  if (auto e = kwarg(call, "extra_cflags", 4))
    m.cpp_flag_macros = flag_macros(flag_items(e, "extra_cflags", line), false, line);
  if (m.cuda_sources.empty())
    fail("not_kernelbench", "load_inline module `" + var + "` (line " + std::to_string(line) +
                                ") has no cuda_sources");
  for (const auto& s : m.cuda_sources) {
    ExtModule::Source so;
    so.text = s;
    so.cuda = true;
    so.toks = c_tokens(s);
    so.items = c_items(so.toks, 0, so.toks.size());
    m.sources.push_back(std::move(so));
  }
  for (const auto& s : m.cpp_sources) {
    ExtModule::Source so;
    so.text = s;
    so.cuda = false;
    so.toks = c_tokens(s);
    so.items = c_items(so.toks, 0, so.toks.size());
    m.sources.push_back(std::move(so));
  }
  C.exts.push_back(std::move(m));
  int idx = static_cast<int>(C.exts.size()) - 1;
  ext_by_var_[var] = idx;
  return idx;
}

namespace {

// The methods of list, dict and set that change them in place.
const std::set<std::string>& mutators() {
  static const std::set<std::string> s = {"append",  "extend",  "insert", "pop",    "remove",
                                          "reverse", "sort",    "clear",  "update", "setdefault",
                                          "popitem", "discard", "add"};
  return s;
}

// `=`, `+=`, `:=` and the other assignment operators (not `==`, `<=`, `>=`, `!=`).
bool assign_op(const PyTok& t) {
  const std::string& x = t.text;
  return t.kind == PyTok::Op && !x.empty() && x.back() == '=' && x != "==" && x != "<=" &&
         x != ">=" && x != "!=";
}

}  // namespace

size_t PySide::assign_at(const std::vector<PyTok>& t) {
  int d = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != PyTok::Op) continue;
    if (t[i].text == "(" || t[i].text == "[" || t[i].text == "{") ++d;
    if (t[i].text == ")" || t[i].text == "]" || t[i].text == "}") --d;
    if (d == 0 && t[i].text == "=") return i;
  }
  return 0;
}

// A module-level name kernrl reads is one bound once, at the top level, by a plain assignment.
// Any other binding (a second assignment, an augmented one, one inside a top-level `if`, `for`,
// `with` or `try`, a `global` statement anywhere) makes it unknown: its value is not the one
// read.
void PySide::forget_rebound_module_names() {
  std::map<std::string, int> binds;
  std::set<std::string> unknown;
  auto is_aug = [](const PyTok& t) {
    return t.kind == PyTok::Op && t.text.size() >= 2 && t.text.back() == '=' && t.text != "==" &&
           t.text != "<=" && t.text != ">=" && t.text != "!=";
  };
  // The names bound by targets toks[0, end): names not after `.` and not inside a subscript
  // (`a[i] = ...` binds no name; `[a, b] = ...` and `(a, b) = ...` bind a and b).
  auto targets = [](const std::vector<PyTok>& toks, size_t end, std::set<std::string>& out) {
    std::vector<bool> subscript;
    for (size_t k = 0; k < end && k < toks.size(); ++k) {
      const PyTok& t = toks[k];
      if (t.text == "[" || t.text == "(" || t.text == "{") {
        bool after_value = k > 0 && (toks[k - 1].kind == PyTok::Name || toks[k - 1].text == ")" ||
                                     toks[k - 1].text == "]");
        subscript.push_back(after_value || (!subscript.empty() && subscript.back()));
        continue;
      }
      if (t.text == "]" || t.text == ")" || t.text == "}") {
        if (!subscript.empty()) subscript.pop_back();
        continue;
      }
      if (t.kind == PyTok::Name && (subscript.empty() || !subscript.back()) &&
          !(k > 0 && tok_is(toks[k - 1], ".")))
        out.insert(t.text);
    }
  };
  bool in_block = false;  // inside a top-level statement other than def and class
  bool globals_touched = false;
  for (const auto& l : lines_) {
    const auto& t = l.toks;
    if (t.empty()) continue;
    if (tok_is(t[0], "global") || tok_is(t[0], "nonlocal"))
      for (size_t k = 1; k < t.size(); ++k)
        if (t[k].kind == PyTok::Name) unknown.insert(t[k].text);
    for (const auto& tok : t)  // `globals()["f"] = ...`: any module name may change
      if (tok.kind == PyTok::Name && tok.text == "globals") globals_touched = true;
    // `def f`, `class C`: a binding of f, C (twice, or inside a block: not known).
    if ((tok_is(t[0], "def") || tok_is(t[0], "class")) && t.size() > 1 &&
        t[1].kind == PyTok::Name && (l.indent == 0 || in_block)) {
      if (l.indent != 0) unknown.insert(t[1].text);
      binds[t[1].text] += 1;
    }
    if (l.indent == 0) {
      bool def = tok_is(t[0], "def") || tok_is(t[0], "class") || tok_is(t[0], "@");
      in_block =
          !def && (tok_is(t[0], "if") || tok_is(t[0], "for") || tok_is(t[0], "while") ||
                   tok_is(t[0], "with") || tok_is(t[0], "try") || tok_is(t[0], "else") ||
                   tok_is(t[0], "elif") || tok_is(t[0], "except") || tok_is(t[0], "finally"));
      if (def || tok_is(t[0], "import") || tok_is(t[0], "from")) continue;
      if (in_block) {
        std::set<std::string> names;  // `for X in`, `with ... as X`
        for (size_t k = 1; k < t.size(); ++k)
          if (t[k].kind == PyTok::Name && (tok_is(t[k - 1], "for") || tok_is(t[k - 1], "as")))
            names.insert(t[k].text);
        for (const auto& n : names) unknown.insert(n);
        continue;
      }
    } else if (!in_block) {
      continue;  // a function's or class's body
    }
    // Augmented assignments; `=` at depth 0 (every target of `a = b = 9`); annotations.
    int d = 0;
    size_t last_eq = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k].text == "(" || t[k].text == "[" || t[k].text == "{") ++d;
      if (t[k].text == ")" || t[k].text == "]" || t[k].text == "}") --d;
      if (d == 0 && is_aug(t[k]) && t[k].text != "=") {
        std::set<std::string> names;
        targets(t, k, names);
        for (const auto& n : names) unknown.insert(n);
      }
      if (d == 0 && tok_is(t[k], "=")) last_eq = k;
    }
    if (last_eq == 0) continue;
    std::set<std::string> names;
    targets(t, last_eq, names);
    for (const auto& n : names) {
      if (l.indent != 0) unknown.insert(n);
      binds[n] += 1;
    }
  }
  for (const auto& n : unknown) module_rebound_[n] = "binds in a block, by `global` or augmented";
  for (const auto& [n, c] : binds)
    if (c > 1) module_rebound_[n] = "binds more than once";
  if (globals_touched)
    for (const auto& [n, c] : binds) {
      auto v = module_vars_.find(n);
      if (v == module_vars_.end() || !is_load_inline(v->second))  // (the extension: reported
        module_rebound_[n] = "may rebind through `globals()`";    // where it is used)
    }
  for (const auto& [n, why] : module_rebound_) {
    module_vars_.erase(n);
    module_defs_.erase(n);  // a function rebound is not the `def` kernrl would run
    module_def_headers_.erase(n);
  }
}

void PySide::scan_module() {
  bool triton = false, load_files = false, any_inline = false;
  for (size_t i = 0; i < lines_.size(); ++i) {
    const PyLine& l = lines_[i];
    for (const auto& t : l.toks)
      if (t.kind == PyTok::Name && (t.text == "triton")) triton = true;
    if (l.indent != 0) continue;
    const auto& t = l.toks;
    if (tok_is(t[0], "import") || tok_is(t[0], "from")) {
      scan_imports(l);
      continue;
    }
    if (tok_is(t[0], "class") && t.size() > 1 && t[1].text == "ModelNew") {
      have_class_ = true;
      class_line_ = i;
      continue;
    }
    if (tok_is(t[0], "def") && t.size() > 1) {
      module_defs_.insert(t[1].text);
      module_def_headers_[t[1].text] = i;
      continue;
    }
    if (tok_is(t[0], "class") || tok_is(t[0], "@") || tok_is(t[0], "if") || tok_is(t[0], "with") ||
        tok_is(t[0], "for") || tok_is(t[0], "try"))
      continue;
    size_t eq = assign_at(t);
    if (eq == 1 && t[0].kind == PyTok::Name) {
      PyExprP v;
      try {
        v = py_parse_expr(t, 2, t.size());
      } catch (const ImportError&) {
        continue;  // a module-level line kernrl does not need
      }
      module_vars_[t[0].text] = v;
    } else if (eq > 1) {
      // `A, B, C = 0, 1, 2` (or `(0, 1, 2)`, `[0, 1, 2]`): each name its item. Names unpacked
      // from anything else are not known from here on.
      std::vector<std::string> names;
      bool plain = true;
      for (size_t k = 0; k < eq; ++k) {
        if (k % 2 == 0 && t[k].kind == PyTok::Name)
          names.push_back(t[k].text);
        else if (k % 2 == 0 || !tok_is(t[k], ","))
          plain = false;
      }
      if (!plain) continue;
      PyExprP v;
      try {
        v = py_parse_expr(t, eq + 1, t.size());
      } catch (const ImportError&) {
        v = nullptr;
      }
      bool items = v && (v->kind == PyExpr::Tuple || v->kind == PyExpr::List) &&
                   v->kids.size() == names.size();
      for (size_t k = 0; k < names.size(); ++k)
        if (items)
          module_vars_[names[k]] = v->kids[k];
        else
          module_vars_.erase(names[k]);
    }
  }
  forget_rebound_module_names();
  // load_inline calls at module level, in order.
  for (const auto& [name, v] : module_vars_) {
    if (is_load_inline(v)) any_inline = true;
    if (is_load_files(v)) load_files = true;
  }
  if (!have_class_) {
    if (triton)
      fail("not_kernelbench",
           "a Triton module without class ModelNew; kernrl expects CUDA kernels");
    fail("not_kernelbench", "no class ModelNew: not a KernelBench generation");
  }
  size_t forward_header = 0;
  read_class(class_line_, &any_inline, &load_files, &forward_header);
  if (forward_header) {
    forward_ = body_of(lines_, forward_header);
    forward_header_ = forward_header;
    have_forward_ = true;
  }
  if (!any_inline) {
    if (load_files)
      fail("not_kernelbench",
           "the CUDA is built from files with torch.utils.cpp_extension.load; kernrl reads "
           "load_inline sources");
    if (triton) fail("not_kernelbench", "ModelNew uses Triton kernels, not load_inline CUDA");
    fail("not_kernelbench", "ModelNew builds no CUDA with load_inline (a PyTorch-only answer)");
  }
  if (!have_forward_) fail("not_kernelbench", "class ModelNew has no forward method");
  for (const auto& [name, v] : module_vars_)
    if (is_load_inline(v)) add_ext(name, v, v->line);
}

void PySide::read_class(size_t cls_line, bool* any_inline, bool* load_files,
                        size_t* forward_header) {
  *forward_header = 0;
  // The class: __init__, forward and other methods.
  Block cls = body_of(lines_, cls_line);
  // A method is its one `def` in the class body: a name the body defines twice, or binds
  // otherwise too (`m = staticmethod(f)`), is not a method kernrl can follow.
  {
    std::map<std::string, int> binds;
    for (size_t i = cls.begin; i < cls.end; ++i) {
      const PyLine& l = lines_[i];
      if (l.indent != lines_[cls.begin].indent || l.toks.size() < 2) continue;
      if (tok_is(l.toks[0], "def") || l.toks[0].kind == PyTok::Name) {
        const std::string n = tok_is(l.toks[0], "def") ? l.toks[1].text : l.toks[0].text;
        bool assigned = !tok_is(l.toks[0], "def") &&
                        (tok_is(l.toks[1], "=") || tok_is(l.toks[1], ":") ||
                         (l.toks[1].kind == PyTok::Op && l.toks[1].text.size() >= 2 &&
                          l.toks[1].text.back() == '=' && l.toks[1].text != "=="));
        if (tok_is(l.toks[0], "def") || assigned) binds[n] += 1;
      }
    }
    for (size_t i = cls.begin; i < cls.end; ++i) {
      const PyLine& l = lines_[i];
      if (l.indent == lines_[cls.begin].indent && tok_is(l.toks[0], "def") && l.toks.size() > 1 &&
          binds[l.toks[1].text] > 1)
        fail("host_logic", "the class at line " + std::to_string(lines_[cls_line].line) +
                               " binds its method `" + l.toks[1].text +
                               "` more than once; kernrl follows a method defined once");
    }
  }
  for (size_t i = cls.begin; i < cls.end; ++i) {
    const PyLine& l = lines_[i];
    if (!tok_is(l.toks[0], "def") || l.toks.size() < 2) continue;
    std::string name = l.toks[1].text;
    class_defs_.insert(name);
    if (l.indent == lines_[cls.begin].indent) method_headers_[name] = i;
    Block b = body_of(lines_, i);
    if (name == "__init__") read_init(i, b, any_inline, load_files);
    if (name == "forward") *forward_header = i;
  }
  // Attributes set from a call of a function that returns an nn.Sequential.
  read_init_methods();
  // Attributes set outside __init__'s own statements: in a method __init__ calls
  // (`self._setup()`), or with setattr (by a name kernrl reads, else any attribute).
  auto init_it = method_headers_.find("__init__");
  if (init_it != method_headers_.end()) {
    Block ib = body_of(lines_, init_it->second);
    for (size_t i = ib.begin; i < ib.end; ++i) {
      const auto& lt = lines_[i].toks;
      for (size_t k = 0; k < lt.size(); ++k) {
        if (tok_is(lt[k], "setattr")) {
          if (k + 5 < lt.size() && tok_is(lt[k + 1], "(") && tok_is(lt[k + 2], "self") &&
              lt[k + 4].kind == PyTok::String)
            init_attrs_changed_.insert(lt[k + 4].text);
          else
            init_setattr_ = true;
        }
        if (k + 3 >= lt.size() || !tok_is(lt[k], "self") || !tok_is(lt[k + 1], ".") ||
            !tok_is(lt[k + 3], "("))
          continue;
        auto m = method_headers_.find(lt[k + 2].text);
        if (m == method_headers_.end() || m->first == "__init__") continue;
        Block mb = body_of(lines_, m->second);
        for (size_t j = mb.begin; j < mb.end; ++j) {
          const auto& mt = lines_[j].toks;
          for (size_t q = 0; q + 3 < mt.size(); ++q)
            if (tok_is(mt[q], "self") && tok_is(mt[q + 1], ".") && mt[q + 2].kind == PyTok::Name &&
                (tok_is(mt[q + 3], "=") || tok_is(mt[q + 3], ":") || tok_is(mt[q + 3], ".") ||
                 tok_is(mt[q + 3], "[") ||
                 (mt[q + 3].kind == PyTok::Op && mt[q + 3].text.size() == 2 &&
                  mt[q + 3].text.back() == '=')))
              init_attrs_changed_.insert(mt[q + 2].text);
        }
      }
    }
  }
  // What __init__ changes in place after building it.
  scan_init_changes();
}

// `self.register_buffer("name", tensor[, persistent])`: `self.name` is a tensor of the module, as
// an nn.Parameter is (the problem's tensor of that name).
bool PySide::read_register_buffer(const std::vector<PyTok>& lt) {
  if (lt.size() < 6 || !tok_is(lt[0], "self") || !tok_is(lt[1], ".") ||
      !tok_is(lt[2], "register_buffer"))
    return false;
  PyExprP call;
  try {
    call = py_parse_expr(lt, 0, lt.size());
  } catch (const ImportError&) {
    return false;
  }
  if (call->kind != PyExpr::Call || call->kids.size() < 3 || call->kids[1]->kind != PyExpr::Str)
    return false;
  auto param = std::make_shared<PyExpr>();
  param->kind = PyExpr::Call;
  param->line = call->line;
  auto callee = std::make_shared<PyExpr>();
  callee->kind = PyExpr::Name;
  callee->text = "nn.Parameter";
  param->kids = {callee, call->kids[2]};
  init_attrs_[call->kids[1]->text] = param;
  return true;
}

void PySide::read_init_call(const std::vector<PyTok>& lt) {
  // Any draw or initialisation spoils the order of KernelBench's seeded draws, unless it is
  // `nn.init.kaiming_uniform_(self.X, a=math.sqrt(5))` (also `5 ** 0.5`), noted in order.
  bool draws = false;
  for (size_t k = 0; k < lt.size(); ++k) {
    const std::string& t = lt[k].text;
    if (lt[k].kind == PyTok::Name &&
        (t == "init" || t == "randn" || t == "rand" || t == "randint" || t == "normal_" ||
         t == "uniform_" || t == "kaiming_uniform_" || t == "kaiming_normal_" ||
         t == "xavier_uniform_" || t == "xavier_normal_" || t == "trunc_normal_" ||
         t == "manual_seed" || t == "randperm" || t == "bernoulli" || t == "multinomial"))
      draws = true;
  }
  if (!draws) return;
  PyExprP e;
  try {
    e = py_parse_expr(lt, 0, lt.size());
  } catch (const ImportError&) {
    other_inits_ = true;
    return;
  }
  if (e->kind == PyExpr::Call && e->kids.size() >= 2 &&
      resolve(py_dotted(e->kids[0])) == "torch.nn.init.kaiming_uniform_") {
    const PyExprP& w = e->kids[1];
    PyExprP a = e->kids.size() > 2 ? e->kids[2] : nullptr;
    bool other_kw = false;
    for (const auto& [k, v] : e->kwargs) {
      if (k == "a" && !a)
        a = v;
      else
        other_kw = true;
    }
    std::string at = a ? py_text(a) : "";
    at.erase(std::remove(at.begin(), at.end(), ' '), at.end());
    bool sqrt5 = at == "math.sqrt(5)" || at == "5**0.5" || at == "math.sqrt(5.0)" ||
                 at == "5.0**0.5" || (at == "sqrt(5)" && resolve("sqrt") == "math.sqrt");
    if (w->kind == PyExpr::Attr && !w->kids.empty() && w->kids[0]->kind == PyExpr::Name &&
        w->kids[0]->text == "self" && sqrt5 && !other_kw && e->kids.size() <= 3) {
      kaiming_inits_.push_back(w->text);
      init_kaiming_lines_.insert(lt[0].line);
      return;
    }
  }
  other_inits_ = true;
}

void PySide::read_init(size_t header, const Block& b, bool* any_inline, bool* load_files) {
  const auto& t = lines_[header].toks;
  // def __init__(self, a, b=1, *args, **kwargs):
  int d = 0;
  bool in_default = false;
  for (size_t i = 2; i < t.size(); ++i) {
    const PyTok& k = t[i];
    if (k.kind == PyTok::Op && (k.text == "(" || k.text == "[" || k.text == "{")) ++d;
    if (k.kind == PyTok::Op && (k.text == ")" || k.text == "]" || k.text == "}")) --d;
    if (d == 1 && k.kind == PyTok::Op && k.text == ",") in_default = false;
    if (d == 1 && k.kind == PyTok::Op && (k.text == "=" || k.text == ":")) in_default = true;
    if (d == 1 && k.kind == PyTok::Name && !in_default && k.text != "self") {
      init_params_.insert(k.text);
      init_signature_.push_back({k.text, {}});
    } else if (d == 1 && in_default && !init_signature_.empty() &&
               !(k.kind == PyTok::Op && k.text == "=")) {
      // Tokens after `=` are the default (after `:` the annotation, dropped at its `=`).
      init_signature_.back().second.push_back(k);
    } else if (d == 1 && k.kind == PyTok::Op && k.text == "=" && !init_signature_.empty()) {
      init_signature_.back().second.clear();
      init_signature_.back().second.push_back(PyTok{PyTok::Op, "=", k.line, false, false});
    } else if (d > 1 && in_default && !init_signature_.empty()) {
      init_signature_.back().second.push_back(k);
    }
  }
  // Only what follows `=` is a default; a parameter with an annotation only has none.
  for (auto& [name, toks] : init_signature_) {
    if (!toks.empty() && toks[0].kind == PyTok::Op && toks[0].text == "=")
      toks.erase(toks.begin());
    else
      toks.clear();
  }
  if (self_path_.empty())
    bind_init_args();
  else
    bind_submodule_args();
  // The names __init__ binds itself (`k = kernel_size`, `stride = stride or k`, `for i in ...`,
  // `with ... as f`, `(n := ...)`): what a constructor argument or a module constant of that name
  // holds afterwards is not what kernrl knows (PySide::init_local).
  std::map<std::string, int> bound;
  std::vector<std::pair<std::string, std::string>> aliases;  // (b, a) of `b = a`
  static const std::set<std::string> compound = {"if",   "elif", "else",   "for",     "while",
                                                 "with", "try",  "except", "finally", "async"};
  // One statement's tokens [from, to) (a `;`-separated part of a line, or a one-line body after a
  // compound header): the names it binds. `top`: a statement at the top of __init__.
  std::function<void(const std::vector<PyTok>&, size_t, size_t, bool)> statement =
      [&](const std::vector<PyTok>& lt, size_t from, size_t to, bool top) {
        if (from >= to) return;
        // A target's names; a name it subscripts or reaches into (`e[0] =`, `e.x =`) is changed.
        auto target = [&](size_t a, size_t z, int weight) {
          for (size_t k = a; k < z; ++k) {
            if (lt[k].kind != PyTok::Name || (k > a && tok_is(lt[k - 1], "."))) continue;
            bool reached = k + 1 < z && (tok_is(lt[k + 1], ".") || tok_is(lt[k + 1], "["));
            bound[lt[k].text] += reached ? 2 : weight;
          }
        };
        if (lt[from].kind == PyTok::Name && compound.count(lt[from].text)) {
          // The header's own bindings (`for i in`, `with ... as f`), then a one-line body.
          int nest = 0;
          size_t colon = to;
          for (size_t k = from; k < to; ++k) {
            if (lt[k].kind == PyTok::Op &&
                (lt[k].text == "(" || lt[k].text == "[" || lt[k].text == "{"))
              ++nest;
            if (lt[k].kind == PyTok::Op &&
                (lt[k].text == ")" || lt[k].text == "]" || lt[k].text == "}"))
              --nest;
            if (nest == 0 && tok_is(lt[k], ":")) {
              colon = k;
              break;
            }
          }
          if (tok_is(lt[from], "for") || tok_is(lt[from], "async")) {
            size_t in = from + 1;
            while (in < colon && !tok_is(lt[in], "in")) ++in;
            target(from + 1, in, 2);
          }
          statement(lt, colon + 1, to, false);
          return;
        }
        // Assignments: every top-level `=` of a chain (`a = b = 0`) and augmented ones.
        int nest = 0;
        size_t seg = from;
        std::vector<std::pair<size_t, size_t>> targets;
        bool augmented = false;
        for (size_t k = from; k < to; ++k) {
          const PyTok& tk = lt[k];
          if (tk.kind == PyTok::Op && (tk.text == "(" || tk.text == "[" || tk.text == "{")) ++nest;
          if (tk.kind == PyTok::Op && (tk.text == ")" || tk.text == "]" || tk.text == "}")) --nest;
          if (nest != 0 || !assign_op(tk) || tk.text == ":=") continue;
          size_t z = k;  // an annotated target (`x: int = 3`) ends at its `:`
          for (size_t c = seg; c < k; ++c)
            if (tok_is(lt[c], ":")) z = c;
          targets.push_back({seg, z});
          augmented = augmented || tk.text != "=";
          seg = k + 1;
        }
        bool simple =
            top && targets.size() == 1 && !augmented && targets[0].second == targets[0].first + 1;
        for (const auto& [a, z] : targets) target(a, z, simple ? 1 : 2);
        // `b = a`: a second name for a's value, through which it may change in place.
        if (targets.size() == 1 && seg + 1 == to && lt[seg].kind == PyTok::Name &&
            targets[0].second == targets[0].first + 1)
          aliases.push_back({lt[targets[0].first].text, lt[seg].text});
        // A local list or dict changed in place (`sizes.append(n)`, `d.update(...)`).
        for (size_t k = from; k + 3 < to; ++k)
          if (lt[k].kind == PyTok::Name && (k == from || !tok_is(lt[k - 1], ".")) &&
              tok_is(lt[k + 1], ".") && mutators().count(lt[k + 2].text) && tok_is(lt[k + 3], "("))
            bound[lt[k].text] += 2;
        for (size_t k = from; k + 1 < to; ++k) {
          if (tok_is(lt[k + 1], ":=") && lt[k].kind == PyTok::Name) bound[lt[k].text] += 2;
          if (tok_is(lt[k], "as") && lt[k + 1].kind == PyTok::Name) bound[lt[k + 1].text] += 2;
          if (tok_is(lt[k], "del") && lt[k + 1].kind == PyTok::Name) bound[lt[k + 1].text] += 2;
        }
      };
  for (size_t i = b.begin; i < b.end; ++i) {
    const auto& lt = lines_[i].toks;
    const bool top = lines_[i].indent == lines_[b.begin].indent;
    int nest = 0;
    size_t from = 0;
    for (size_t k = 0; k <= lt.size(); ++k) {
      if (k < lt.size()) {
        const PyTok& tk = lt[k];
        if (tk.kind == PyTok::Op && (tk.text == "(" || tk.text == "[" || tk.text == "{")) ++nest;
        if (tk.kind == PyTok::Op && (tk.text == ")" || tk.text == "]" || tk.text == "}")) --nest;
        if (!(nest == 0 && tok_is(tk, ";"))) continue;
      }
      statement(lt, from, k, top && from == 0 && k == lt.size());
      from = k + 1;
    }
  }
  // A local another name refers to, when that name is rebound or changed: not followed either.
  for (const auto& [b2, a2] : aliases)
    if (bound.count(a2) && !init_params_.count(a2) && bound[b2] > 1) bound[a2] += 2;
  for (const auto& [name, n] : bound) {
    if (name == "self") continue;
    init_locals_[name] = nullptr;
    if (n != 1 || init_params_.count(name)) continue;
    // Bound once at the top of __init__ by `name = value`: that value.
    for (size_t i = b.begin; i < b.end; ++i) {
      const auto& lt = lines_[i].toks;
      if (lines_[i].indent == lines_[b.begin].indent && lt.size() > 2 && lt[0].text == name &&
          tok_is(lt[1], "=")) {
        try {
          init_locals_[name] = py_parse_expr(lt, 2, lt.size());
        } catch (const ImportError&) {
        }
      }
    }
  }
  // An `if` at the top of __init__ (or at the top of a branch taken) whose conditions kernrl
  // decides with the constructor's arguments (init_condition) runs one branch: its statements
  // are read as statements at the top of __init__, the other branches' not at all. One it cannot
  // decide is read as before (what its branches set is not followed), and the reason kept.
  const int top_indent = b.begin < b.end ? lines_[b.begin].indent : 0;
  std::vector<char> lifted(b.end - b.begin, 0), skipped(b.end - b.begin, 0);
  std::vector<std::string> undecided(b.end - b.begin);
  // One statement's tokens: `top` when it is a statement at the top of __init__.
  auto read_statement = [&](const std::vector<PyTok>& lt, size_t i, bool top) {
    init_read_.push_back({lines_[i].line, lt});
    // An attribute __init__ sets more than once, under a block or a one-line `if`, by an
    // augmented assignment or anywhere but at the start of a statement: its value is not the one
    // expression kernrl would read (PySide::self_attr refuses it).
    // An attribute changed in place (`self.sizes.append(n)`, `self.w[0] = 1`): kernrl reads the
    // value it was set to (PySide::self_attr refuses it unless it is a layer, whose structure
    // the suite's modules give).
    for (size_t k = 0; k + 4 < lt.size(); ++k)
      if (tok_is(lt[k], "self") && tok_is(lt[k + 1], ".") && lt[k + 2].kind == PyTok::Name &&
          ((tok_is(lt[k + 3], ".") && mutators().count(lt[k + 4].text) && k + 5 < lt.size() &&
            tok_is(lt[k + 5], "(")) ||
           (tok_is(lt[k + 3], "[") && assign_at(lt) > k + 3)))
        init_attrs_mutated_.insert(lt[k + 2].text);
    for (size_t k = 0; k + 3 < lt.size(); ++k) {
      if (!tok_is(lt[k], "self") || !tok_is(lt[k + 1], ".") || lt[k + 2].kind != PyTok::Name ||
          lt[k + 3].kind != PyTok::Op)
        continue;
      // `self.x: int = 3`: an annotated assignment.
      const bool annotated = tok_is(lt[k + 3], ":") && assign_at(lt) > k + 3;
      if (!annotated && !assign_op(lt[k + 3])) continue;
      const std::string op = annotated ? "=" : lt[k + 3].text;
      bool simple = k == 0 && op == "=" && top && (assign_at(lt) == 3 || annotated);
      if (!simple || init_attrs_.count(lt[k + 2].text)) init_attrs_changed_.insert(lt[k + 2].text);
      if (!undecided[i - b.begin].empty())
        init_attrs_undecided_.emplace(lt[k + 2].text, undecided[i - b.begin]);
    }
    if (read_register_buffer(lt)) return;
    read_init_call(lt);
    size_t eq = assign_at(lt);
    // `self.t.layers[0].norm_first = True`, `self.conv.weight = w` assign inside `self.t`, not to
    // it: what it holds is no longer what its one assignment built (not followed).
    if (eq > 3 && tok_is(lt[0], "self") && tok_is(lt[1], ".") && lt[2].kind == PyTok::Name &&
        !tok_is(lt[3], ":")) {
      init_attrs_mutated_.insert(lt[2].text);
      init_attrs_changed_.insert(lt[2].text);
      std::string target = lt[2].text;
      try {
        target = py_text(py_parse_expr(lt, 0, eq));
      } catch (const ImportError&) {
      }
      init_attrs_inside_.emplace(
          lt[2].text, "`" + target + " = ...` (line " + std::to_string(lines_[i].line) + ")");
      return;
    }
    if (eq >= 3 && tok_is(lt[0], "self") && tok_is(lt[1], ".") && lt[2].kind == PyTok::Name) {
      PyExprP v;
      try {
        v = py_parse_expr(lt, eq + 1, lt.size());
      } catch (const ImportError&) {
        return;
      }
      std::string attr = lt[2].text;
      init_attrs_[attr] = v;
      if (v->kind == PyExpr::Call && !v->kids.empty()) {
        std::string callee = resolve(py_dotted(v->kids[0]));
        if (callee == "torch.nn.Parameter" || callee == "nn.Parameter" ||
            callee == "torch.nn.parameter.Parameter" || callee == "Parameter")
          own_params_.push_back(attr);
      }
      if (is_load_inline(v)) {
        *any_inline = true;
        add_ext("self." + attr, v, lines_[i].line);
      }
      if (is_load_files(v)) *load_files = true;
    }
  };
  for (size_t i = b.begin; i < b.end; ++i) {
    if (skipped[i - b.begin]) continue;
    const auto& lt = lines_[i].toks;
    const bool top = lines_[i].indent == top_indent || lifted[i - b.begin];
    if (top && tok_is(lt[0], "if")) {
      // The chain's clauses: (header line, first line after its body).
      const int indent = lines_[i].indent;
      std::vector<std::pair<size_t, size_t>> clauses;
      for (size_t h = i; h < b.end;) {
        const auto& ht = lines_[h].toks;
        if (lines_[h].indent != indent ||
            !(h == i ? tok_is(ht[0], "if") : tok_is(ht[0], "elif") || tok_is(ht[0], "else")))
          break;
        size_t next = h + 1;
        while (next < b.end && lines_[next].indent > indent) ++next;
        clauses.push_back({h, next});
        h = next;
        if (tok_is(ht[0], "else")) break;
      }
      const size_t chain_end = clauses.back().second;
      // `if cond:` (line N), as the file has it.
      auto header_text = [&](size_t h) {
        const auto& ht = lines_[h].toks;
        std::string text = ht[0].text;
        if (text != "else") {
          try {
            text += " " + py_text(py_parse_expr(ht, 1, header_colon(ht)));
          } catch (const ImportError&) {
            text += " ...";
          }
        }
        return "`" + text + ":` (line " + std::to_string(lines_[h].line) + ")";
      };
      // The clause taken: the first whose condition is true, else `else`'s; none if neither.
      std::optional<size_t> taken;
      std::string why;
      for (size_t c = 0; c < clauses.size() && why.empty() && !taken; ++c) {
        const auto& ht = lines_[clauses[c].first].toks;
        if (tok_is(ht[0], "else")) {
          taken = c;
          break;
        }
        size_t colon = header_colon(ht);
        std::optional<bool> on;
        std::string cond_why;
        try {
          on = init_condition(py_parse_expr(ht, 1, colon), b.begin, i, &cond_why);
          cond_why = header_text(clauses[c].first) + ", " + cond_why;
        } catch (const ImportError&) {
          cond_why = "a condition kernrl cannot read (line " +
                     std::to_string(lines_[clauses[c].first].line) + ")";
        }
        if (!on)
          why = cond_why;
        else if (*on)
          taken = c;
      }
      // A branch taken that returns or raises ends __init__ there: not followed.
      if (taken && why.empty()) {
        const auto& [h, next] = clauses[*taken];
        const auto& ht = lines_[h].toks;
        const size_t colon = header_colon(ht);
        auto ends_at = [&](const PyTok& tok) {
          return tok_is(tok, "return") || tok_is(tok, "raise");
        };
        // A statement of the branch's own body: PyTorch's constructor returns or raises there at
        // every size set, and the rest of __init__ does not run.
        bool ends = colon + 1 < ht.size() && ends_at(ht[colon + 1]);
        // Deeper (under a nested if, a loop, a try, in a nested def): it may or may not; what the
        // chain's branches set is not followed.
        bool may_end = false;
        for (size_t j = h + 1; j < next; ++j) {
          if (!ends_at(lines_[j].toks[0])) continue;
          if (lines_[j].indent == lines_[h + 1].indent)
            ends = true;
          else
            may_end = true;
        }
        if (ends)
          fail("host_logic", "ModelNew.__init__ returns or raises in the branch " + header_text(h) +
                                 " it takes at every size set: the rest of __init__ does not run");
        if (may_end) why = header_text(h) + ", a branch that may return or raise";
      }
      if (!why.empty()) {
        for (size_t j = i; j < chain_end; ++j) undecided[j - b.begin] = why;
      } else {
        for (size_t j = i; j < chain_end; ++j) skipped[j - b.begin] = 1;
        if (taken) {
          const auto& [h, next] = clauses[*taken];
          const auto& ht = lines_[h].toks;
          const size_t colon = header_colon(ht);
          for (size_t j = h + 1; j < next; ++j) {
            skipped[j - b.begin] = 0;
            lifted[j - b.begin] = lines_[j].indent == lines_[h + 1].indent;
          }
          // A one-line branch (`if c: self.k = 3`): its statement.
          if (colon > 0 && colon + 1 < ht.size())
            read_statement(
                std::vector<PyTok>(ht.begin() + static_cast<std::ptrdiff_t>(colon) + 1, ht.end()),
                h, true);
        }
        continue;
      }
    }
    read_statement(lt, i, top);
  }
}

std::optional<bool> PySide::init_condition(const PyExprP& cond, size_t from, size_t line,
                                           std::string* why) {
  // What __init__ ran before the `if` could have set an attribute the condition reads otherwise
  // than kernrl reads it (setattr, a method of ModelNew's).
  bool reads_self = false;
  std::function<void(const PyExprP&)> find_self = [&](const PyExprP& x) {
    if (x->kind == PyExpr::Name && x->text == "self") reads_self = true;
    for (const auto& k : x->kids) find_self(k);
    for (const auto& kw : x->kwargs) find_self(kw.second);
  };
  find_self(cond);
  if (reads_self) {
    static const std::set<std::string> registers = {"register_buffer", "register_parameter",
                                                    "add_module"};
    for (size_t i = from; i < line; ++i) {
      const auto& lt = lines_[i].toks;
      for (size_t k = 0; k < lt.size(); ++k)
        if (tok_is(lt[k], "setattr") ||
            (k + 3 < lt.size() && tok_is(lt[k], "self") && tok_is(lt[k + 1], ".") &&
             tok_is(lt[k + 3], "(") && !registers.count(lt[k + 2].text))) {
          *why = "which reads `self` after __init__ calls `" +
                 (lt[k].text == "self" ? "self." + lt[k + 2].text : lt[k].text) + "` (line " +
                 std::to_string(lines_[i].line) + ")";
          return std::nullopt;
        }
    }
  }
  Val v = init_computed("<condition>", cond);
  if (auto b = truth(v)) return b;
  if (v.kind == Val::Bool && !v.per_set.empty())
    *why = "which is true at some size sets of the problem and false at others";
  else
    *why = "which kernrl cannot decide from the constructor's arguments";
  return std::nullopt;
}

}  // namespace kernrl::kbimport::py
