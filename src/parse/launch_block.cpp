#include "parse/launch_block.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "core/yaml_guard.h"
#include "parse/python_block.h"
#include "parse/yaml_prepass.h"
#include "protocol/struct_arg.h"
#include "protocol/tensor_accessor.h"

namespace kernrl {
namespace {

int count_lines(const std::string& s, size_t upto) {
  return static_cast<int>(std::count(s.begin(), s.begin() + static_cast<long>(upto), '\n'));
}

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool is_identifier(const std::string& s) {
  return !s.empty() && s.size() <= kMaxNameChars && is_ident_start(s[0]) &&
         std::all_of(s.begin(), s.end(), is_ident_char);
}

// The literal spellings of infinities and NaNs, which no kernel argument may be.
bool is_non_finite_word(std::string s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.erase(0, 1);
  if (!s.empty() && (s.back() == 'f' || s.back() == 'F') && s.size() > 3) s.pop_back();
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "nan" || s == "inf" || s == "infinity" || s == ".nan" || s == ".inf";
}

// The spellings of a left-out argument: an optional tensor of a torch step, a null pointer of a
// kernel (YAML's null and `~`, Python's None, C++'s nullptr).
bool is_null_word(const std::string& s) {
  return s == "none" || s == "None" || s == "null" || s == "~" || s == "nullptr";
}

// YAML's "cannot read this" messages, each with what usually causes it.
std::string yaml_hint(const std::string& msg) {
  if (msg.find("anchor") != std::string::npos || msg.find("alias") != std::string::npos)
    return "YAML anchors and aliases (&name, *name) are not allowed: write the value out, or quote "
           "it";
  if (msg.find("flow") != std::string::npos)
    return "a [ or { is not closed where it should be: check the brackets of this line";
  if (msg.find("illegal map value") != std::string::npos)
    return "a ': ' inside a value: put the value in quotes";
  if (msg.find("end of string") != std::string::npos) return "a quoted value is never closed";
  if (msg.find("end of map") != std::string::npos ||
      msg.find("end of sequence") != std::string::npos || msg.find("block") != std::string::npos)
    return "check the indentation: the keys of one launch line up under each other and each launch "
           "starts with '- '";
  return "values that contain ': ' or ' #', or start with one of [ ] { } , & * ! | > ' \" % @ `, "
         "need quotes";
}

class BlockReader {
 public:
  BlockReader(int base_line, bool triton = false) : base_(base_line), triton_(triton) {}
  int line_of(const YAML::Node& n) const {
    return n.Mark().line >= 0 ? base_ + n.Mark().line : base_;
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& why) const {
    throw FormatError(why, line_of(n));
  }
  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, "'" + what + "' must be a single value");
    if (n.Scalar().size() > kMaxExprChars)
      fail(n, "'" + what + "' is " + std::to_string(n.Scalar().size()) +
                  " characters long; the limit is " + std::to_string(kMaxExprChars));
    return n.Scalar();
  }
  // A list, or a single value that may hold several comma-separated items (`grid: cdiv(n, 256),
  // 4`).
  std::vector<std::string> items(const YAML::Node& n, const std::string& what) const {
    std::vector<std::string> out;
    if (n.IsScalar()) return split_top_level(scalar(n, what));
    if (!n.IsSequence()) fail(n, "'" + what + "' must be a list");
    for (const auto& d : n)  // YAML's null (`null`, `~`) as an argument: a null pointer
      out.push_back(d.IsNull() && what == "args" ? "null" : scalar(d, what));
    return out;
  }
  std::vector<std::string> dims(const YAML::Node& n, const std::string& what) const {
    auto out = items(n, what);
    if (out.empty() || out.size() > 3)
      fail(n, "'" + what + "' must be a list of 1 to 3 integer expressions");
    return out;
  }

  YAML::Node load(const std::string& yaml_text) const {
    // Tabs in indentation: the first tab width at which the YAML reads wins (4, then 8, then 2);
    // without tabs there is only one reading.
    std::vector<int> widths = {4};
    if (yaml_text.find('\t') != std::string::npos) widths = {4, 8, 2};
    std::optional<FormatError> first;
    for (int w : widths) {
      int unclosed = -1;
      std::string text = prepare_launch_yaml(yaml_text, w, &unclosed);
      if (unclosed >= 0)
        throw FormatError("launch block: the quoted value at line " +
                              std::to_string(base_ + unclosed) +
                              " is never closed (add the closing quote)",
                          base_ + unclosed);
      try {
        check_yaml_shape(text, YamlLimits{16, 10000});
        return YAML::Load(text);
      } catch (const YamlShapeError& e) {
        if (!first)
          first =
              FormatError("launch block: " + std::string(e.what()), base_ + std::max(0, e.line));
      } catch (const YAML::Exception& e) {
        if (!first) {
          int line = base_ + std::max(0, e.mark.line);
          first = FormatError("launch block is not valid YAML at line " + std::to_string(line) +
                                  ": " + e.msg + " (" + yaml_hint(e.msg) + ")",
                              line);
        }
      }
    }
    throw *first;
  }

  LaunchPlan read(const std::string& yaml_text) {
    YAML::Node root = load(yaml_text);
    if (!root.IsMap())
      throw FormatError("launch block must be a YAML mapping with 'launches'", base_);
    LaunchPlan plan;
    plan.line = base_;
    if (triton_) plan.language = "triton";
    for (const auto& kv : root) {
      auto k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (k != "problem" && k != "launches" && k != "scratch" && k != "values")
        fail(kv.first, "unknown launch-block key '" + printable(k) +
                           "' (the keys are problem, values, launches, scratch)");
    }
    if (auto vs = root["values"]; vs && !vs.IsNull()) {
      if (!vs.IsMap()) fail(vs, "'values' must map names to integer or real expressions");
      for (const auto& kv : vs) {
        PlanValue v;
        v.name = kv.first.IsScalar() ? kv.first.Scalar() : "";
        v.line = line_of(kv.first);
        if (!is_identifier(v.name))
          fail(kv.first,
               "value name '" + printable(v.name) + "' must be an identifier (letters, digits, _)");
        if (is_builtin_name(v.name))
          fail(kv.first, "value '" + v.name + "' shadows the built-in " + v.name +
                             (v.name == "num_sms" ? "" : "()") + " of expressions");
        if (is_argument_word(v.name))
          fail(kv.first, "value '" + v.name + "' would be read as the argument word " + v.name +
                             " (null, none, None, nullptr, true, false are no names)");
        for (const auto& before : plan.values)
          if (before.name == v.name) fail(kv.first, "value '" + v.name + "' defined twice");
        v.expr = scalar(kv.second, "values." + v.name);
        if (trimmed(v.expr).empty()) fail(kv.second, "value '" + v.name + "' has no expression");
        plan.values.push_back(v);
      }
    }
    if (root["problem"]) {
      plan.problem = scalar(root["problem"], "problem");
      if (plan.problem.size() > kMaxNameChars ||
          !std::all_of(plan.problem.begin(), plan.problem.end(),
                       [](char c) { return is_ident_char(c); }))
        fail(root["problem"], "'problem' must be a problem id such as L1_23_Softmax, not '" +
                                  printable(plan.problem) + "'");
    }
    auto launches = root["launches"];
    if (!launches || !launches.IsSequence() || launches.size() == 0)
      throw FormatError("launch block needs a non-empty 'launches' list", base_);
    for (const auto& l : launches) plan.launches.push_back(launch(l));
    if (auto sc = root["scratch"]; sc && !sc.IsNull()) {
      if (!sc.IsMap()) fail(sc, "'scratch' must map names to {dtype, count}");
      for (const auto& kv : sc) {
        ScratchSpec s;
        s.name = kv.first.IsScalar() ? kv.first.Scalar() : "";
        s.line = line_of(kv.first);
        if (!is_identifier(s.name))
          fail(kv.first, "scratch name '" + printable(s.name) +
                             "' must be an identifier (letters, digits, _)");
        if (!kv.second.IsMap() || !kv.second["dtype"] ||
            (!kv.second["count"] == !kv.second["shape"]))
          fail(kv.first, "scratch '" + s.name + "' needs {dtype, count} or {dtype, shape}");
        for (const auto& f : kv.second)
          if (!f.first.IsScalar() || (f.first.Scalar() != "dtype" && f.first.Scalar() != "count" &&
                                      f.first.Scalar() != "shape"))
            fail(f.first, "scratch '" + s.name + "' takes only dtype and count (or shape)");
        auto dt = dtype_from_name(scalar(kv.second["dtype"], "dtype"));
        if (!dt)
          fail(kv.second["dtype"],
               "unknown dtype '" + printable(kv.second["dtype"].Scalar()) + "'");
        s.dtype = *dt;
        if (kv.second["shape"]) {
          s.shape = items(kv.second["shape"], "shape");
          if (s.shape.empty() || s.shape.size() > 8)
            fail(kv.second["shape"],
                 "scratch '" + s.name + "': 'shape' must list 1 to 8 dimensions");
          for (const auto& d : s.shape) s.count += (s.count.empty() ? "(" : " * (") + d + ")";
        } else {
          s.count = scalar(kv.second["count"], "count");
        }
        plan.scratch.push_back(s);
      }
    }
    return plan;
  }

 private:
  // Why a Triton launch may not have `key` (empty when it may).
  static std::string triton_only_problem(const std::string& key) {
    if (key == "block")
      return "a Triton launch has no 'block': it is 32 x num_warps threads (set num_warps)";
    if (key == "shared_bytes")
      return "a Triton launch has no 'shared_bytes': Triton's compiler sizes shared memory";
    if (key == "cluster") return "a Triton launch has no 'cluster': set num_ctas";
    if (key == "cooperative") return "a Triton launch has no 'cooperative'";
    return "";
  }

  void check_keys(const YAML::Node& n) {
    const auto& keys = triton_ ? triton_launch_keys() : launch_keys();
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    for (const auto& kv : n) {
      std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (std::find(keys.begin(), keys.end(), k) != keys.end()) continue;
      if (std::string why = triton_ ? triton_only_problem(k) : ""; !why.empty())
        fail(kv.first, why);
      fail(kv.first, "unknown launch key '" + printable(k) + "' (the keys are " + list + ")");
    }
  }

  // A Triton launch's constexprs and compile options.
  void triton_fields(const YAML::Node& n, LaunchSpec& l) {
    if (auto c = n["constexprs"]; c && !c.IsNull()) {
      if (!c.IsMap()) fail(c, "'constexprs' must map each tl.constexpr parameter to its value");
      for (const auto& kv : c) {
        std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
        if (!is_identifier(name))
          fail(kv.first, "constexpr name '" + printable(name) + "' must be a parameter name");
        std::string v = scalar(kv.second, "constexprs." + name);
        std::string lower = v;
        for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lower == "true" || lower == "false") v = lower;
        for (const auto& [k, _] : l.constexprs)
          if (k == name) fail(kv.first, "constexpr '" + name + "' given twice");
        l.constexprs.emplace_back(name, v);
      }
    }
    if (n["num_warps"]) l.num_warps = scalar(n["num_warps"], "num_warps");
    if (n["num_stages"]) l.num_stages = scalar(n["num_stages"], "num_stages");
    if (n["num_ctas"]) l.num_ctas = scalar(n["num_ctas"], "num_ctas");
  }

  // A torch step: `{torch: OP, args: [...], out: NAME}` (docs/kernel-format.md, "PyTorch
  // operators"). An argument is a name or an expression, or a list of integer expressions.
  LaunchSpec torch_step(const YAML::Node& n) {
    if (triton_) fail(n["torch"], "torch steps are for CUDA kernel files");
    for (const auto& kv : n) {
      std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (k != "torch" && k != "args" && k != "out" && k != "repeat" && k != "result")
        fail(kv.first, "unknown key '" + printable(k) +
                           "' of a torch step (the keys are torch, "
                           "args, out, result, repeat)");
    }
    LaunchSpec l;
    l.line = line_of(n);
    l.torch = scalar(n["torch"], "torch");
    if (!is_identifier(l.torch))
      fail(n["torch"],
           "torch '" + printable(l.torch) + "' must be an operator name such as linear");
    if (!n["out"]) fail(n, "torch step " + l.torch + " is missing 'out'");
    l.out = scalar(n["out"], "out");
    if (n["result"]) l.result = torch_result(n["result"]);
    if (auto a = n["args"]; a && !a.IsNull()) {
      if (!a.IsSequence()) fail(a, "'args' of a torch step must be a list");
      for (const auto& item : a) {
        if (item.IsSequence()) {
          std::string text;
          for (const auto& d : item) text += (text.empty() ? "" : ", ") + scalar(d, "args");
          l.args.push_back({text, ArgKind::IntList});
          continue;
        }
        std::string t = item.IsNull() ? "null" : scalar(item, "args");
        if (is_non_finite_word(t))
          fail(item, "argument '" + printable(t) +
                         "' is not a finite number; float arguments must be finite");
        if (is_float_literal(t)) {
          std::string why = float_literal_problem(t);
          if (!why.empty()) fail(item, "argument '" + t + "': " + why);
        }
        ArgKind k = is_null_word(t)               ? ArgKind::None
                    : t == "true" || t == "false" ? ArgKind::Bool
                                                  : ArgKind::IntExpr;
        l.args.push_back({t, k});
      }
    }
    repeat(n, l);
    return l;
  }

  // `result: N` of a torch step: a non-negative integer literal (checked against the operator's
  // results by check_torch_step).
  int torch_result(const YAML::Node& n) {
    std::string t = scalar(n, "result");
    if (t.empty() || t.size() > 3 ||
        !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
      fail(n, "result '" + printable(t) +
                  "' of a torch step must be a non-negative integer (which of the operator's "
                  "results goes to out)");
    return std::stoi(t);
  }

  // `repeat: {count, var}` of a launch or a torch step: run `count` times, `var` = 0..count-1.
  void repeat(const YAML::Node& n, LaunchSpec& l) {
    auto r = n["repeat"];
    if (!r) return;
    if (!r.IsMap() || !r["count"]) fail(r, "'repeat' needs {count, var}");
    for (const auto& f : r)
      if (!f.first.IsScalar() || (f.first.Scalar() != "count" && f.first.Scalar() != "var"))
        fail(f.first, "'repeat' takes only count and var");
    l.repeat_count = scalar(r["count"], "repeat.count");
    if (r["var"]) {
      l.repeat_var = scalar(r["var"], "repeat.var");
      if (!is_identifier(l.repeat_var))
        fail(r["var"], "repeat.var '" + printable(l.repeat_var) +
                           "' must be an identifier (letters, digits, _)");
    }
  }

  LaunchSpec launch(const YAML::Node& n) {
    if (n.IsMap() && n["torch"]) return torch_step(n);
    if (!n.IsMap())
      fail(n, triton_ ? "each launch must be a mapping with kernel, grid, args"
                      : "each launch must be a mapping with kernel, grid, block, args");
    check_keys(n);
    LaunchSpec l;
    l.line = line_of(n);
    for (const char* k : {"kernel", "grid", "block"})
      if (!n[k] && !(triton_ && std::string(k) == "block"))
        fail(n, std::string("launch is missing '") + k + "'");
    l.kernel = scalar(n["kernel"], "kernel");
    if (std::string why = kernel_name_problem(l.kernel); !why.empty()) fail(n["kernel"], why);
    if (triton_ && !is_identifier(l.kernel))
      fail(n["kernel"], "kernel '" + printable(l.kernel) +
                            "' must be the name of a @triton.jit function of this file");
    l.grid = dims(n["grid"], "grid");
    if (triton_)
      triton_fields(n, l);
    else
      l.block = dims(n["block"], "block");
    if (n["cluster"]) l.cluster = dims(n["cluster"], "cluster");
    if (n["shared_bytes"]) l.shared_bytes = scalar(n["shared_bytes"], "shared_bytes");
    if (n["args"] && !n["args"].IsNull()) {
      for (const auto& t : items(n["args"], "args")) {
        if (is_non_finite_word(t))
          fail(n["args"], "argument '" + printable(t) +
                              "' is not a finite number; float arguments must be finite");
        if (is_float_literal(t)) {
          std::string why = float_literal_problem(t);
          if (!why.empty()) fail(n["args"], "argument '" + t + "': " + why);
        }
        l.args.push_back({t, ArgKind::IntExpr});
      }
    }
    repeat(n, l);
    if (n["cooperative"]) {
      try {
        l.cooperative = n["cooperative"].as<bool>();
      } catch (const YAML::Exception&) {
        fail(n["cooperative"], "'cooperative' must be true or false");
      }
    }
    return l;
  }
  int base_;
  bool triton_ = false;
};

}  // namespace

std::string printable(const std::string& s, size_t max_chars) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    auto u = static_cast<unsigned char>(s[i]);
    if (u == '\n')
      out += "\\n";
    else if (u == '\t')
      out += "\\t";
    else if (u < 0x20 || u >= 0x7f)
      out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    else
      out += s[i];
  }
  return out;
}

bool is_float_literal(const std::string& s) {
  // [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)? [fF]?, with a '.' or an exponent.
  size_t i = 0, n = s.size();
  auto digits = [&] {
    size_t b = i;
    while (i < n && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > b;
  };
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  bool mantissa = digits(), mark = false;
  if (i < n && s[i] == '.') {
    ++i;
    mark = true;
    mantissa = digits() || mantissa;
  }
  if (!mantissa) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
    mark = true;
  }
  if (i < n && (s[i] == 'f' || s[i] == 'F')) ++i;
  return mark && i == n;
}

std::string float_literal_problem(const std::string& s) {
  std::string t = s;
  if (!t.empty() && (t.back() == 'f' || t.back() == 'F')) t.pop_back();
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return "not a number";
  if (!std::isfinite(v) || (errno == ERANGE && std::fabs(v) > 1))
    return "out of the range of a double (about 1.8e308): not a finite number";
  if (errno == ERANGE) return "too small for a double: it would be rounded to 0 or lose precision";
  return "";
}

std::string kernel_name_problem(const std::string& k) {
  if (k.empty()) return "empty kernel name";
  if (k.size() > kMaxNameChars)
    return "kernel name of " + std::to_string(k.size()) + " characters; the limit is " +
           std::to_string(kMaxNameChars);
  for (char c : k) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f)
      return "kernel name '" + printable(k) + "' contains a control or non-ASCII character";
    if (!is_ident_char(c) && !std::strchr(":<>, *&()+-.", c))
      return "kernel name '" + printable(k) + "' contains '" + std::string(1, c) +
             "'; a kernel is a C++ name, optionally with template arguments, like gemm<128, 64>";
  }
  if (!is_ident_start(k[0]) && k[0] != ':')
    return "kernel name '" + printable(k) + "' must start with a letter, '_' or '::'";
  return "";
}

const std::vector<std::string>& launch_keys() {
  static const std::vector<std::string> keys = {"kernel", "grid",   "block",       "shared_bytes",
                                                "args",   "repeat", "cooperative", "cluster"};
  return keys;
}

const std::vector<std::string>& triton_launch_keys() {
  static const std::vector<std::string> keys = {"kernel",    "grid",       "args",     "constexprs",
                                                "num_warps", "num_stages", "num_ctas", "repeat"};
  return keys;
}

LaunchPlan parse_launch_block(const ExtractedSource& src) {
  if (src.language == "triton") {
    PythonBlock b = python_launch_block(src.code);
    return BlockReader(src.first_line + b.line, true).read(b.yaml);
  }
  const std::string& code = src.code;
  size_t open = code.find("/* kernrl");
  if (open == std::string::npos) throw FormatError("no /* kernrl launch block found");
  if (code.find("/* kernrl", open + 1) != std::string::npos)
    throw FormatError("more than one /* kernrl launch block",
                      src.first_line + count_lines(code, code.find("/* kernrl", open + 1)));
  size_t body = open + 9;
  size_t close = code.find("*/", body);
  int line = src.first_line + count_lines(code, open);
  if (close == std::string::npos)
    throw FormatError("the /* kernrl block is never closed with */", line);
  return BlockReader(line).read(code.substr(body, close - body));
}

namespace {

// "batch_size=3 dim=256" (sizes in the problem's order), with the repeat variable when there is
// one.
std::string size_set_text(const ProblemSpec& p, const Vars& vars, const std::string& repeat_var) {
  std::string out;
  for (const auto& n : p.size_names) {
    auto it = vars.find(n);
    if (it != vars.end()) out += (out.empty() ? "" : " ") + n + "=" + std::to_string(it->second);
  }
  if (!repeat_var.empty() && vars.count(repeat_var))
    out += (out.empty() ? "" : " ") + repeat_var + "=" + std::to_string(vars.at(repeat_var));
  return out.empty() ? "(no sizes)" : out;
}

}  // namespace

namespace {

// A Triton launch's constexprs and options at one size set: each evaluates, and the options are
// in Triton's ranges.
template <typename Eval>
void check_triton_launch(const LaunchSpec& l, const Vars& vars, Eval& eval) {
  for (const auto& [name, value] : l.constexprs)
    if (value != "true" && value != "false" && !is_float_literal(value))
      eval(value, vars, l.line, "constexpr " + name + " of " + l.kernel);
  auto option = [&](const std::string& text, const char* what, int64_t lo, int64_t hi,
                    bool power_of_two) {
    if (text.empty()) return;
    int64_t v = eval(text, vars, l.line, std::string(what) + " of " + l.kernel);
    if (v < lo || v > hi || (power_of_two && (v & (v - 1)) != 0))
      throw FormatError(std::string(what) + " of " + l.kernel + " is " + std::to_string(v) +
                            "; it must be " + (power_of_two ? "a power of two " : "") + "from " +
                            std::to_string(lo) + " to " + std::to_string(hi),
                        l.line);
  };
  option(l.num_warps, "num_warps", 1, 32, true);
  option(l.num_stages, "num_stages", 1, 8, false);
  option(l.num_ctas, "num_ctas", 1, 16, true);
}

}  // namespace

namespace {

// What a launch argument names: a tensor of the problem, a scratch buffer, `NAME + EXPR` (a pointer
// into one of those), a scalar, a float literal, a real expression (with a float literal or a float
// scalar), else an integer expression.
ArgKind arg_kind(const std::string& text, const ProblemSpec& p,
                 const std::set<std::string>& scratch, const std::set<std::string>& real_values) {
  if (looks_like_accessor_arg(text)) return ArgKind::Accessor;
  if (looks_like_struct_arg(text)) return ArgKind::Struct;
  if (p.find_tensor(text)) return ArgKind::Tensor;
  if (scratch.count(text)) return ArgKind::Scratch;
  if (auto o = split_offset_arg(text); o && (p.find_tensor(o->buffer) || scratch.count(o->buffer)))
    return ArgKind::Offset;
  if (is_null_word(text)) return ArgKind::None;
  if (p.find_scalar(text)) return ArgKind::Scalar;
  if (is_float_literal(text)) return ArgKind::FloatLiteral;
  if (has_real_literal(text)) return ArgKind::FloatExpr;
  try {
    for (const auto& n : expr_names(text, true)) {
      if (const ScalarSpec* s = p.find_scalar(n); s && s->is_float()) return ArgKind::FloatExpr;
      if (real_values.count(n)) return ArgKind::FloatExpr;
    }
  } catch (const ExprError&) {
  }
  return ArgKind::IntExpr;
}

// Checks an integer or real expression argument at one size set: its names are the problem's,
// and it evaluates (no division by zero, overflow, or a value that is not finite).
void check_value_arg(const LaunchArg& a, const LaunchPlan& plan, const ProblemSpec& p,
                     const Vars& vars, const std::string& of, int line) {
  bool real = a.kind == ArgKind::FloatExpr;
  try {
    RealVars reals = real ? plan_reals(plan, p, vars) : RealVars{};
    for (const auto& n : expr_names(a.text, real))
      if (!vars.count(n) && !reals.count(n))
        throw FormatError("argument '" + a.text + "' of " + of + ": unknown name '" + n +
                              "' (not a tensor, scratch buffer, scalar or size of " + p.id + ")",
                          line);
    if (real)
      eval_real_expr(a.text, vars, reals);
    else
      eval_expr(a.text, vars);
  } catch (const ExprError& err) {
    throw FormatError("argument '" + a.text + "' of " + of + ": " + err.what(), line);
  }
}

// An argument `NAME + EXPR` at one size set: EXPR's names are the problem's and it evaluates.
// Returns why the pointer cannot be passed there (offset_arg_at's problem, `at` naming the size
// set), empty when it can.
std::string check_offset_arg(const LaunchArg& a, const LaunchPlan& plan, const ProblemSpec& p,
                             const Vars& vars, const std::string& of, int line,
                             const std::string& at) {
  try {
    for (const auto& n : expr_names(split_offset_arg(a.text)->offset))
      if (!vars.count(n))
        throw FormatError("argument '" + a.text + "' of " + of + ": unknown name '" + n +
                              "' in its offset (not a size or integer scalar of " + p.id + ")",
                          line);
    return offset_arg_at(a.text, plan, p, vars, at).problem;
  } catch (const ExprError& err) {
    throw FormatError("argument '" + a.text + "' of " + of + ": " + err.what(), line);
  }
}

// A torch step's `result` against its operator's results (torch_step_ops).
void check_torch_result(const LaunchSpec& l) {
  for (const auto& o : torch_step_ops()) {
    if (o.name != l.torch || l.result < o.results) continue;
    throw FormatError("torch step " + l.torch + ": result " + std::to_string(l.result) +
                          (o.results == 1 ? " is not its result: aten::" + l.torch +
                                                " has one result, result 0 (the default)"
                                          : " is not one of its results: aten::" + l.torch +
                                                " has " + std::to_string(o.results) +
                                                ", results 0 to " + std::to_string(o.results - 1)),
                      l.line);
  }
}

// A torch step's operator, out buffer and arguments (classified here) against the problem.
void check_torch_step(LaunchSpec& l, const ProblemSpec& p, const std::set<std::string>& scratch,
                      const std::set<std::string>& real_values) {
  const std::string what = "torch step " + l.torch;
  if (p.torchscript.empty())
    throw FormatError(what +
                          ": torch steps are allowed on problems of suites built from "
                          "KernelBench (whose forward may call PyTorch), not on " +
                          p.id + ", whose kernels must do all of the work",
                      l.line);
  if (std::string why = torch_step_op_problem(l.torch); !why.empty())
    throw FormatError(what + ": " + why, l.line);
  check_torch_result(l);
  const TensorSpec* out_t = p.find_tensor(l.out);
  bool out_is_output = false;
  if (out_t)
    for (const auto& o : p.outputs) out_is_output = out_is_output || o.name == l.out;
  if (!out_is_output && !scratch.count(l.out))
    throw FormatError(what + ": out '" + printable(l.out) +
                          (out_t ? "' is an input; inputs must stay unchanged"
                                 : "' is not an output or scratch buffer of this file"),
                      l.line);
  for (auto& a : l.args) {
    if (a.kind == ArgKind::IntList || a.kind == ArgKind::TensorList) {
      // A list of tensor or scratch names (`cat`'s tensors), else of integer expressions.
      auto items = split_top_level(a.text);
      size_t named = 0;
      for (const auto& it : items) named += p.find_tensor(it) || scratch.count(it) ? 1 : 0;
      if (named > 0 && named != items.size())
        throw FormatError("argument [" + a.text + "] of " + what +
                              ": a list is of tensors or of integers, not both",
                          l.line);
      a.kind = named > 0 ? ArgKind::TensorList : ArgKind::IntList;
      for (const auto& it : items)
        if (named > 0 && it == l.out)
          throw FormatError(what + ": out '" + printable(l.out) + "' is also one of its tensors",
                            l.line);
      continue;
    }
    if (a.kind != ArgKind::None && a.kind != ArgKind::Bool)
      a.kind = arg_kind(a.text, p, scratch, real_values);
    if (a.kind == ArgKind::Offset)
      throw FormatError("argument '" + a.text + "' of " + what +
                            ": a torch step takes whole tensors; NAME + EXPR (a pointer into a "
                            "buffer) is an argument of CUDA kernels",
                        l.line);
    if (a.kind == ArgKind::Accessor)
      throw FormatError("argument '" + printable(a.text) + "' of " + what +
                            ": a tensor accessor is an argument of CUDA kernels; a torch step "
                            "takes the tensor's name",
                        l.line);
    if (a.kind == ArgKind::Struct)
      throw FormatError("argument '" + printable(a.text) + "' of " + what +
                            ": a struct is an argument of CUDA kernels; a torch step takes "
                            "tensors, numbers and lists",
                        l.line);
  }
}

// A torch step's integer and real arguments at one size set (and pass of its repeat): their
// names are the problem's, and they evaluate.
void check_torch_args(const LaunchSpec& l, const LaunchPlan& plan, const ProblemSpec& p,
                      const Vars& vars) {
  const std::string what = "torch step " + l.torch;
  for (const auto& a : l.args) {
    if (a.kind == ArgKind::FloatExpr) check_value_arg(a, plan, p, vars, what, l.line);
    std::vector<std::string> exprs;
    if (a.kind == ArgKind::IntExpr) exprs = {a.text};
    if (a.kind == ArgKind::IntList) exprs = split_top_level(a.text);
    for (const auto& e : exprs) {
      try {
        for (const auto& n : expr_names(e))
          if (!vars.count(n))
            throw FormatError("argument '" + a.text + "' of " + what + ": unknown name '" + n +
                                  "' (not a tensor, scratch buffer, scalar or size of " + p.id +
                                  ")",
                              l.line);
        eval_expr(e, vars);
      } catch (const ExprError& err) {
        throw FormatError("argument '" + a.text + "' of " + what + ": " + err.what(), l.line);
      }
    }
  }
}

// The buffer an accessor argument names (a tensor or a scratch buffer of the plan) and how many
// dimensions it has; FormatError when the argument is malformed, names nothing, is given to a
// Triton kernel, or its rank is not the buffer's.
AccessorArg check_accessor_arg(const LaunchArg& a, const LaunchPlan& plan, const ProblemSpec& p,
                               const std::string& of, int line) {
  std::string why;
  auto acc = parse_accessor_arg(a.text, &why);
  const std::string where = "argument '" + printable(a.text) + "' of " + of;
  if (!acc) throw FormatError(where + ": " + why, line);
  if (plan.language == "triton")
    throw FormatError(where +
                          ": a tensor accessor is an argument of CUDA kernels; a Triton kernel "
                          "takes the tensor's name",
                      line);
  size_t rank = 0;
  if (const TensorSpec* t = p.find_tensor(acc->buffer)) {
    rank = t->shape.size();
  } else {
    const ScratchSpec* found = nullptr;
    for (const auto& s : plan.scratch)
      if (s.name == acc->buffer) found = &s;
    if (!found)
      throw FormatError(where + ": '" + printable(acc->buffer) +
                            "' is not a tensor or scratch buffer of this file",
                        line);
    rank = found->shape.empty() ? 1 : found->shape.size();
  }
  if (rank != static_cast<size_t>(acc->rank))
    throw FormatError(where + ": '" + acc->buffer + "' has " + std::to_string(rank) +
                          (rank == 1 ? " dimension" : " dimensions") + ", not " +
                          std::to_string(acc->rank),
                      line);
  return *acc;
}

// A struct argument's fields (protocol/struct_arg.h): FormatError when it is malformed (naming
// the field), given to a Triton kernel, or a pointer field names no tensor or scratch buffer.
StructArg check_struct_arg(const LaunchArg& a, const LaunchPlan& plan, const ProblemSpec& p,
                           const std::set<std::string>& scratch, const std::string& of, int line) {
  std::string why;
  auto s = parse_struct_arg(a.text, &why);
  const std::string where = "argument '" + printable(a.text) + "' of " + of;
  if (!s) throw FormatError(where + ": " + why, line);
  if (plan.language == "triton")
    throw FormatError(where +
                          ": a struct is an argument of CUDA kernels; a Triton kernel takes "
                          "tensors and values",
                      line);
  for (size_t k = 0; k < s->fields.size(); ++k) {
    const StructField& f = s->fields[k];
    if (f.type != FieldType::Ptr || is_null_pointer_word(f.value)) continue;
    auto o = split_offset_arg(f.value);
    std::string buffer = o ? o->buffer : f.value;
    if (!p.find_tensor(buffer) && !scratch.count(buffer))
      throw FormatError(where + ": field " + std::to_string(k + 1) + " (ptr " + f.value + "): '" +
                            printable(buffer) + "' is not a tensor or scratch buffer of this file",
                        line);
  }
  return *s;
}

// A struct argument's fields at one size set (and pass of a repeat): their names are the
// problem's and they evaluate (else FormatError naming the field); returns why a field's value
// cannot be passed there (an integer beyond its type, a real beyond float's, a pointer offset
// outside its buffer), naming the field, empty when all can.
std::string check_struct_fields(const StructArg& s, const LaunchArg& a, const LaunchPlan& plan,
                                const ProblemSpec& p, const Vars& vars, const std::string& of,
                                int line, const std::string& at) {
  for (size_t k = 0; k < s.fields.size(); ++k) {
    const StructField& f = s.fields[k];
    const std::string field =
        "field " + std::to_string(k + 1) + " (" + field_type_name(f.type) + " " + f.value + ")";
    const std::string where = "argument '" + printable(a.text) + "' of " + of + ", " + field;
    try {
      std::string names_of = f.value;
      bool real = real_field(f.type);
      if (f.type == FieldType::Ptr) {
        auto o = split_offset_arg(f.value);
        names_of = o ? o->offset : "";
      }
      RealVars reals = real ? plan_reals(plan, p, vars) : RealVars{};
      if (!names_of.empty())
        for (const auto& n : expr_names(names_of, real))
          if (!vars.count(n) && !reals.count(n))
            throw FormatError(where + ": unknown name '" + n + "' (not a size or " +
                                  (real ? "scalar" : "integer scalar") + " of " + p.id + ")",
                              line);
      FieldAt v = struct_field_at(f, plan, p, vars, at);
      if (!v.problem.empty()) return field + " " + v.problem;
    } catch (const ExprError& err) {
      throw FormatError(where + ": " + err.what(), line);
    } catch (const std::invalid_argument& err) {
      throw FormatError(where + ": " + err.what(), line);
    }
  }
  return "";
}

// The plan's values (`values:`): no name shadows a size, scalar, tensor, scratch buffer or repeat
// variable; each uses only the sizes, scalars, num_sms and the values before it, and evaluates at
// every size set (FormatError naming the value, and the size set where it does not evaluate).
// Returns the names of the real values.
std::set<std::string> check_values(const LaunchPlan& plan, const ProblemSpec& p,
                                   const std::set<std::string>& scratch,
                                   const std::vector<Vars>& size_sets, int64_t num_sms) {
  std::set<std::string> defined, reals;
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const PlanValue& v = plan.values[i];
    const std::string what = "value '" + v.name + "'";
    std::string shadows;
    if (is_builtin_name(v.name))
      shadows = "the built-in " + v.name;
    else if (p.bench.count(v.name) ||
             std::find(p.size_names.begin(), p.size_names.end(), v.name) != p.size_names.end())
      shadows = "the size " + v.name + " of " + p.id;
    else if (p.find_scalar(v.name))
      shadows = "the scalar " + v.name + " of " + p.id;
    else if (p.find_tensor(v.name))
      shadows = "the tensor " + v.name + " of " + p.id;
    else if (scratch.count(v.name))
      shadows = "the scratch buffer " + v.name;
    for (const auto& l : plan.launches)
      if (shadows.empty() && l.repeat_var == v.name)
        shadows = "the repeat variable " + v.name + " of " +
                  (l.torch.empty() ? l.kernel : "torch step " + l.torch);
    if (!shadows.empty()) throw FormatError(what + " shadows " + shadows, v.line);
    try {
      for (const auto& n : expr_names(v.expr, true)) {
        if (defined.count(n) || n == "num_sms" || p.find_scalar(n) || p.bench.count(n)) continue;
        bool later = false;
        for (size_t k = i; k < plan.values.size(); ++k) later = later || plan.values[k].name == n;
        throw FormatError(
            what + ": " +
                (later ? "'" + n + "' is " +
                             (n == v.name ? "the value itself" : "a value defined after it") +
                             "; a value may use the sizes, the scalars, num_sms and the values "
                             "before it"
                       : "unknown name '" + n + "' (not a size, scalar or value of " + p.id + ")"),
            v.line);
      }
    } catch (const ExprError& err) {
      throw FormatError(what + ": " + err.what(), v.line);
    }
    defined.insert(v.name);
  }
  for (const auto& sizes : size_sets) {
    Vars vars = plan_vars(p, sizes, num_sms);
    RealVars r = plan_reals(p);
    for (const auto& v : plan.values) {
      try {
        if (bind_plan_value(v, p, vars, r)) reals.insert(v.name);
      } catch (const ExprError& err) {
        throw FormatError(err.what(), v.line);
      }
    }
  }
  return reals;
}

}  // namespace

void check_plan(LaunchPlan& plan, const ProblemSpec& p, int64_t num_sms) {
  std::set<std::string> scratch_names;
  for (const auto& s : plan.scratch) {
    if (p.find_tensor(s.name) || p.find_scalar(s.name) || p.bench.count(s.name) ||
        s.name == "num_sms")
      throw FormatError("scratch name '" + s.name + "' shadows a name of the problem", s.line);
    if (!scratch_names.insert(s.name).second)
      throw FormatError("scratch '" + s.name + "' defined twice", s.line);
  }
  std::vector<Vars> size_sets = p.tests;
  size_sets.push_back(p.bench);
  const std::set<std::string> real_values =
      check_values(plan, p, scratch_names, size_sets, num_sms);
  auto check_expr = [&](const std::string& e, const Vars& vars, int line,
                        const std::string& what) -> int64_t {
    try {
      return eval_expr(e, vars);
    } catch (const ExprError& err) {
      throw FormatError(what + ": " + err.what(), line);
    }
  };
  static const char* kAxis = "xyz";
  // Expressions that do not evaluate are format errors at any size set; the first configuration
  // that cannot run is kept and thrown once every expression has evaluated.
  std::optional<LaunchConfigError> config_error;
  auto cannot_run = [&](const std::string& msg, int line) {
    if (!config_error) config_error = LaunchConfigError(msg, line);
  };
  // The variables of each size set, values included (evaluated once: they are checked above).
  std::vector<Vars> set_vars;
  for (const auto& sizes : size_sets) set_vars.push_back(plan_vars(plan, p, sizes, num_sms));
  for (size_t li = 0; li < plan.launches.size(); ++li) {
    auto& l = plan.launches[li];
    const bool torch = !l.torch.empty();
    const std::string name = torch ? "torch step " + l.torch : l.kernel;
    const std::string launch_name = "launch " + std::to_string(li + 1) + " (" + l.kernel + ")";
    if (torch) {
      check_torch_step(l, p, scratch_names, real_values);
    } else {
      for (auto& a : l.args) {
        a.kind = arg_kind(a.text, p, scratch_names, real_values);
        if (a.kind == ArgKind::Offset && plan.language == "triton")
          throw FormatError("argument '" + a.text + "' of " + l.kernel +
                                ": NAME + EXPR (a pointer into a buffer) is an argument of CUDA "
                                "kernels; a Triton kernel takes whole tensors (add the offset "
                                "inside the kernel)",
                            l.line);
      }
    }
    std::vector<AccessorArg> accessors;
    std::map<size_t, StructArg> structs;  // by argument index
    for (size_t ai = 0; ai < l.args.size(); ++ai) {
      const auto& a = l.args[ai];
      if (a.kind == ArgKind::Accessor)
        accessors.push_back(check_accessor_arg(a, plan, p, l.kernel, l.line));
      if (a.kind == ArgKind::Struct)
        structs[ai] = check_struct_arg(a, plan, p, scratch_names, l.kernel, l.line);
    }
    if (!l.repeat_var.empty() &&
        (p.bench.count(l.repeat_var) || l.repeat_var == "num_sms" || p.find_tensor(l.repeat_var) ||
         p.find_scalar(l.repeat_var) || scratch_names.count(l.repeat_var)))
      throw FormatError("repeat var '" + l.repeat_var + "' shadows a name of the problem", l.line);
    for (const Vars& base : set_vars) {
      int64_t reps = check_expr(l.repeat_count, base, l.line, "repeat.count of " + name);
      if (reps < 0 || reps > 100000)
        throw FormatError(
            "repeat.count of " + name + " is " + std::to_string(reps) + " (0..100000)", l.line);
      // An accessor's sizes and strides must fit its index type where the launch runs.
      for (const auto& acc : accessors) {
        std::vector<int64_t> shape;
        try {
          shape = *buffer_shape(acc.buffer, plan, p, base);
        } catch (const ExprError& err) {
          throw FormatError("the shape of '" + acc.buffer + "': " + err.what(), l.line);
        }
        std::string why = accessor_shape_problem(shape, acc.bits);
        if (reps > 0 && !why.empty())
          cannot_run(launch_name + ": accessor" + std::to_string(acc.bits) + "(" + acc.buffer +
                         ", " + std::to_string(acc.rank) + ") at " + size_set_text(p, base, "") +
                         ": '" + acc.buffer + "' has " + why,
                     l.line);
      }
      // Every pass when there are few, else the first 256 and the last: the checks are cheap but
      // the count may be 100000 at each of several size sets.
      std::vector<int64_t> passes;
      if (l.repeat_var.empty() || reps <= 1)
        passes = {0};
      else {
        for (int64_t r = 0; r < std::min<int64_t>(reps, 256); ++r) passes.push_back(r);
        if (reps > 256) passes.push_back(reps - 1);
      }
      for (int64_t pass : passes) {
        Vars vars = base;
        if (!l.repeat_var.empty()) vars[l.repeat_var] = pass;
        // A torch step's arguments evaluate at every size set, as a launch's expressions do
        // (its operator and out buffer are checked where it runs, by the worker).
        if (torch) {
          check_torch_args(l, plan, p, vars);
          continue;
        }
        // A launch that runs no time at this size set (count 0) still has to evaluate, not to fit.
        bool runs = reps > 0;
        auto where = [&] { return " at " + size_set_text(p, vars, l.repeat_var); };
        int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1};
        // One list of dimensions into `out`, each 1 to limit(axis) where the launch runs.
        auto dims = [&](const std::string& what, const std::vector<std::string>& exprs,
                        int64_t* out, auto limit, auto rule) {
          for (size_t i = 0; i < exprs.size(); ++i) {
            out[i] = check_expr(exprs[i], vars, l.line, what + " of " + l.kernel);
            if (runs && (out[i] < 1 || out[i] > limit(i)))
              cannot_run(launch_name + ": " + what + "." + kAxis[i] + " = " + exprs[i] + " is " +
                             std::to_string(out[i]) + where() + "; " + rule(i),
                         l.line);
          }
        };
        // The product of dimensions that are each within their limits, at most `max`.
        auto at_most = [&](const std::string& what, const int64_t* d, bool each_ok, int64_t max,
                           const std::string& unit) {
          if (runs && each_ok && d[0] * d[1] * d[2] > max)
            cannot_run(launch_name + ": the " + what + " is " + std::to_string(d[0]) + " x " +
                           std::to_string(d[1]) + " x " + std::to_string(d[2]) + " = " +
                           std::to_string(d[0] * d[1] * d[2]) + " " + unit + where() + "; a " +
                           what + " has at most " + std::to_string(max) + " " + unit,
                       l.line);
        };
        auto grid_limit = [](size_t i) -> int64_t { return i == 0 ? 2147483647 : 65535; };
        auto block_limit = [](size_t i) -> int64_t { return i == 2 ? 64 : 1024; };
        auto axis_rule = [](const std::string& what, auto limit) {
          return [what, limit](size_t i) {
            return what + "." + kAxis[i] + " must be 1 to " + std::to_string(limit(i));
          };
        };
        dims("grid", l.grid, grid, grid_limit, axis_rule("grid", grid_limit));
        dims("block", l.block, block, block_limit, axis_rule("block", block_limit));
        at_most("block", block,
                block[0] >= 1 && block[1] >= 1 && block[2] >= 1 && block[0] <= 1024 &&
                    block[1] <= 1024 && block[2] <= 64,
                1024, "threads");
        dims(
            "cluster", l.cluster, cluster, [](size_t) -> int64_t { return 8; },
            [](size_t) { return std::string("cluster dimensions must be 1 to 8"); });
        for (size_t i = 0; i < l.cluster.size(); ++i)
          if (runs && cluster[i] >= 1 && grid[i] >= 1 && grid[i] % cluster[i] != 0)
            cannot_run(launch_name + ": grid." + kAxis[i] + " = " + std::to_string(grid[i]) +
                           " is not a multiple of cluster." + kAxis[i] + " = " +
                           std::to_string(cluster[i]) + where(),
                       l.line);
        at_most("cluster", cluster,
                std::all_of(cluster, cluster + 3, [](int64_t c) { return c >= 1 && c <= 8; }), 8,
                "blocks");
        int64_t shared = check_expr(l.shared_bytes, vars, l.line, "shared_bytes of " + l.kernel);
        if (runs && (shared < 0 || shared > kMaxDynamicSharedBytes))
          cannot_run(launch_name + ": shared_bytes = " + l.shared_bytes + " is " +
                         std::to_string(shared) + where() +
                         "; dynamic shared memory must be 0 to " +
                         std::to_string(kMaxDynamicSharedBytes) + " bytes (227 KiB)",
                     l.line);
        for (size_t ai = 0; ai < l.args.size(); ++ai) {
          const auto& a = l.args[ai];
          if (a.kind == ArgKind::IntExpr || a.kind == ArgKind::FloatExpr)
            check_value_arg(a, plan, p, vars, l.kernel, l.line);
          if (a.kind == ArgKind::Struct) {
            std::string why =
                check_struct_fields(structs.at(ai), a, plan, p, vars, l.kernel, l.line, where());
            if (runs && !why.empty())
              cannot_run(launch_name + ": argument " + std::to_string(ai + 1) + " (struct), " + why,
                         l.line);
            continue;
          }
          if (a.kind != ArgKind::Offset) continue;
          std::string why = check_offset_arg(a, plan, p, vars, l.kernel, l.line, where());
          if (runs && !why.empty())
            cannot_run(
                launch_name + ": argument " + std::to_string(ai + 1) + " = " + a.text + " " + why,
                l.line);
        }
        if (plan.language == "triton") check_triton_launch(l, vars, check_expr);
      }
    }
  }
  for (const auto& s : plan.scratch)
    for (const Vars& sizes : set_vars) {
      for (const auto& d : s.shape) {
        int64_t v = check_expr(d, sizes, s.line, "scratch " + s.name);
        if (v < 0)
          throw FormatError("scratch " + s.name + " has dimension " + d + " = " +
                                std::to_string(v) + " at " + size_set_text(p, sizes, ""),
                            s.line);
      }
      int64_t n = check_expr(s.count, sizes, s.line, "scratch " + s.name);
      if (n < 0 || n > (int64_t{1} << 34))
        throw FormatError("scratch " + s.name + " has count " + std::to_string(n), s.line);
    }
  if (!plan.launches.empty() && plan.kernel_names().empty())
    throw FormatError(
        "the launch block has torch steps only; a kernel file must launch at least "
        "one of its own kernels",
        plan.line);
  if (config_error) throw *config_error;
}

}  // namespace kernrl
