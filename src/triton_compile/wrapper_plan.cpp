#include "triton_compile/wrapper_plan.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "parse/launch_block.h"
#include "parse/python_block.h"
#include "triton_compile/child.h"

namespace kernrl {
using nlohmann::json;

const char* const kZeroFillSource = R"PY(

import triton as _kernrl_triton
import triton.language as _kernrl_tl


@_kernrl_triton.jit
def kernrl_zero_fill(ptr, n, BLOCK: _kernrl_tl.constexpr):
    offs = _kernrl_tl.program_id(0).to(_kernrl_tl.int64) * BLOCK + _kernrl_tl.arange(0, BLOCK)
    _kernrl_tl.store(ptr + offs, _kernrl_tl.zeros([BLOCK], dtype=ptr.dtype.element_ty),
                     mask=offs < n)
)PY";

bool wants_wrapper_plan(const ExtractedSource& src) {
  if (src.language != "triton" || has_python_launch_block(src.code)) return false;
  static const std::regex launch(R"(\]\s*\()");  // kernel[grid](, any grid
  static const std::regex model(R"((^|\n)class\s+(ModelNew|Model)\b)");
  return std::regex_search(src.code, model) && std::regex_search(src.code, launch) &&
         src.code.find("def forward") != std::string::npos;
}

namespace {

json tensor_json(const TensorSpec& t) {
  return {{"name", t.name}, {"dtype", t.dtype.name}, {"shape", t.shape}};
}

json tensors_json(const std::vector<TensorSpec>& ts) {
  json a = json::array();
  for (const auto& t : ts) a.push_back(tensor_json(t));
  return a;
}

}  // namespace

json wrapper_plan_request(const ExtractedSource& src, const std::string& filename,
                          const ProblemSpec& p, const std::vector<Vars>& size_sets,
                          int64_t num_sms) {
  json scalars = json::array();
  for (const auto& s : p.scalars)
    scalars.push_back({{"name", s.name}, {"value", s.value}, {"integer", !s.is_float()}});
  json sets = json::array();
  for (const auto& sizes : size_sets) {
    json shapes = json::object();
    for (const auto* group : {&p.inputs, &p.parameters, &p.outputs})
      for (const auto& t : *group) shapes[t.name] = p.shape_of(t, sizes);
    json named = json::object();
    for (const auto& n : p.size_names)
      if (sizes.count(n)) named[n] = sizes.at(n);
    sets.push_back({{"sizes", named}, {"shapes", shapes}});
  }
  // Lines of the answer are the file's: a markdown answer's code is moved down to its line.
  std::string source = std::string(static_cast<size_t>(std::max(0, src.first_line - 1)), '\n');
  source += src.code;
  return {{"mode", "wrapper_plan"},
          {"source", source},
          {"filename", filename},
          {"num_sms", num_sms},
          {"problem",
           {{"inputs", tensors_json(p.inputs)},
            {"parameters", tensors_json(p.parameters)},
            {"outputs", tensors_json(p.outputs)},
            {"scalars", scalars}}},
          {"size_sets", sets}};
}

namespace {

std::string in_quotes(const std::string& e) {
  return "\"" + e + "\"";
}

// 1 where `name` equals `value`, else 0, in the launch block's expression language.
std::string equals(const std::string& name, int64_t value) {
  std::string v = std::to_string(value);
  return "(1 - min(1, max(" + name + " - " + v + ", " + v + " - " + name + ")))";
}

bool gives_all(const std::string& e, const std::vector<int64_t>& values,
               const std::vector<Vars>& vars) {
  try {
    for (size_t i = 0; i < values.size(); ++i)
      if (eval_expr(e, vars[i]) != values[i]) return false;
    return true;
  } catch (const ExprError&) {
    return false;
  }
}

// The sizes whose values differ between the sets.
std::vector<std::string> varying(const std::vector<Vars>& vars) {
  std::vector<std::string> out;
  for (const auto& [name, v] : vars.front()) {
    if (name == "num_sms") continue;
    for (const auto& other : vars)
      if (!other.count(name) || other.at(name) != v) {
        out.push_back(name);
        break;
      }
  }
  return out;
}

std::string selection(const std::vector<int64_t>& values, const std::vector<Vars>& vars) {
  std::vector<std::string> names = varying(vars);
  std::string e;
  std::set<std::string> done;
  for (size_t i = 0; i < values.size(); ++i) {
    std::string ind;
    for (const auto& n : names) ind += (ind.empty() ? "" : " * ") + equals(n, vars[i].at(n));
    if (!done.insert(ind).second || values[i] == 0) continue;
    e += (e.empty() ? "" : " + ") + std::to_string(values[i]) + " * " + ind;
  }
  return e.empty() ? "0" : e;
}

}  // namespace

std::string value_expression(const std::vector<int64_t>& values,
                             const std::vector<std::string>& exprs, const std::vector<Vars>& vars,
                             const std::string& what, int line) {
  for (const auto& e : exprs)
    if (!e.empty() && gives_all(e, values, vars)) return e;
  if (std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; }))
    return std::to_string(values[0]);
  std::string e = selection(values, vars);
  if (e.size() <= kMaxExprChars && gives_all(e, values, vars)) return e;
  std::string seen;
  for (size_t i = 0; i < values.size() && i < 4; ++i)
    seen += (seen.empty() ? "" : ", ") + std::to_string(values[i]);
  throw FormatError(what + " takes values (" + seen +
                        ") at the size sets that no launch-block expression can give; write a "
                        "launch block instead",
                    line);
}

namespace {

// Per size set, the same item of every set's answer.
struct Merger {
  const json& sets;
  const ProblemSpec& p;
  std::vector<Vars> vars;

  std::string integer(const std::vector<const json*>& items, const std::string& what,
                      int line) const {
    std::vector<int64_t> values;
    std::vector<std::string> exprs;
    for (const json* j : items) {
      values.push_back(j->at("int").get<int64_t>());
      exprs.push_back(j->value("expr", ""));
    }
    return value_expression(values, exprs, vars, what, line);
  }

  // A float the same at every size set: a scalar of the problem that has this value, or a literal.
  std::string floating(const std::vector<const json*>& items, const std::string& what,
                       int line) const {
    double v = items[0]->at("float").get<double>();
    for (const json* j : items)
      if (j->at("float").get<double>() != v)
        throw FormatError(what + " is a float that differs between size sets (" +
                              std::to_string(v) + " and " +
                              std::to_string(j->at("float").get<double>()) +
                              "); a launch plan passes one float: compute it in the kernel from "
                              "the sizes",
                          line);
    for (const auto& s : p.scalars)
      if (s.is_float() && static_cast<float>(s.value) == static_cast<float>(v)) return s.name;
    std::ostringstream o;
    o.precision(17);
    o << v;
    std::string t = o.str();
    if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
    return t;
  }

  // One value (an argument, a constexpr, an option) at every set, as launch-block text.
  std::string value(const std::vector<const json*>& items, const std::string& what,
                    int line) const {
    const json& first = *items[0];
    for (const json* j : items) {
      bool same_kind = j->contains("tensor") == first.contains("tensor") &&
                       j->contains("int") == first.contains("int") &&
                       j->contains("float") == first.contains("float") &&
                       j->contains("bool") == first.contains("bool");
      if (!same_kind || (first.contains("tensor") && j->at("tensor") != first.at("tensor")) ||
          (first.contains("bool") && j->at("bool") != first.at("bool")))
        throw FormatError(what + " is not the same kind of value at every size set", line);
    }
    if (first.contains("tensor")) return first.at("tensor").get<std::string>();
    if (first.contains("bool")) return first.at("bool").get<bool>() ? "true" : "false";
    if (first.contains("float")) return floating(items, what, line);
    return in_quotes(integer(items, what, line));
  }

  std::vector<const json*> at_each(size_t li, const std::string& field,
                                   const std::string& key) const {
    std::vector<const json*> out;
    for (const auto& s : sets) {
      const json& f = s.at("launches").at(li).at(field);
      out.push_back(f.is_array() ? &f.at(std::stoul(key)) : &f.at(key));
    }
    return out;
  }

  void same_shape(size_t li, int line) const {
    const json& l0 = sets[0].at("launches").at(li);
    for (const auto& s : sets) {
      const json& l = s.at("launches").at(li);
      for (const char* f : {"grid", "args"})
        if (l.at(f).size() != l0.at(f).size())
          throw FormatError("launch of " + l0.at("kernel").get<std::string>() + " has another " +
                                f + " length at another size set",
                            line);
      for (const char* f : {"constexprs", "options"}) {
        std::set<std::string> a, b;
        for (auto& [k, v] : l.at(f).items()) a.insert(k);
        for (auto& [k, v] : l0.at(f).items()) b.insert(k);
        if (a != b)
          throw FormatError("launch of " + l0.at("kernel").get<std::string>() +
                                " sets other constexprs or options at another size set",
                            line);
      }
    }
  }

  std::string launch_yaml(size_t li) const {
    const json& l0 = sets[0].at("launches").at(li);
    std::string kernel = l0.at("kernel");
    int line = l0.at("line");
    same_shape(li, line);
    std::string what = "launch " + std::to_string(li + 1) + " (" + kernel + ")";
    std::string y = "  - kernel: " + kernel + "\n    grid: [";
    for (size_t g = 0; g < l0.at("grid").size(); ++g)
      y += (g ? ", " : "") +
           value(at_each(li, "grid", std::to_string(g)), what + ": the grid", line);
    y += "]\n    args: [";
    for (size_t a = 0; a < l0.at("args").size(); ++a)
      y += (a ? ", " : "") + value(at_each(li, "args", std::to_string(a)),
                                   what + ": argument " + std::to_string(a + 1), line);
    y += "]\n";
    if (!l0.at("constexprs").empty()) {
      std::string c;
      for (auto& [k, v] : l0.at("constexprs").items())
        c += (c.empty() ? "" : ", ") + k + ": " +
             value(at_each(li, "constexprs", k), what + ": constexpr " + k, line);
      y += "    constexprs: {" + c + "}\n";
    }
    for (auto& [k, v] : l0.at("options").items())
      y += "    " + k + ": " + value(at_each(li, "options", k), what + ": " + k, line) + "\n";
    return y;
  }

  std::string scratch_yaml() const {
    std::string y;
    for (const auto& s0 : sets[0].at("scratch")) {
      std::string name = s0.at("name");
      std::vector<int64_t> values;
      std::vector<std::string> exprs;
      for (const auto& s : sets) {
        const json* found = nullptr;
        for (const auto& b : s.at("scratch"))
          if (b.at("name") == name) found = &b;
        if (!found || found->at("dtype") != s0.at("dtype"))
          throw FormatError("the buffer allocated at line " +
                                std::to_string(s0.at("line").get<int>()) +
                                " is not passed to the same kernels at every size set",
                            s0.at("line").get<int>());
        values.push_back(found->at("count").get<int64_t>());
        exprs.push_back(found->value("expr", ""));
      }
      std::string count =
          value_expression(values, exprs, vars, "the size of buffer " + name, s0.at("line"));
      y += "  " + name + ": {dtype: " + s0.at("dtype").get<std::string>() +
           ", count: " + in_quotes(count) + "}\n";
    }
    return y.empty() ? "" : "scratch:\n" + y;
  }
};

void check_same_launches(const json& sets) {
  const json& first = sets[0].at("launches");
  for (const auto& s : sets) {
    const json& ls = s.at("launches");
    for (size_t i = 0; i < std::max(ls.size(), first.size()); ++i) {
      if (i < ls.size() && i < first.size() && ls[i].at("kernel") == first[i].at("kernel"))
        continue;
      const json& at = i < ls.size() ? ls[i] : first[std::min(i, first.size() - 1)];
      throw FormatError(
          "forward launches other kernels at other sizes (" + std::to_string(first.size()) +
              " launches at one size set, " + std::to_string(ls.size()) +
              " at another, from launch " + std::to_string(i + 1) +
              " on): a launch plan is one sequence of launches for every size; write a launch "
              "block (a launch whose repeat count is 0 at a size set is skipped there)",
          at.value("line", 0));
    }
  }
}

}  // namespace

WrapperPlan merge_wrapper_plan(const json& answer, const ProblemSpec& p,
                               const std::vector<Vars>& size_sets, int64_t num_sms) {
  if (!answer.value("ok", false))
    throw FormatError(
        "no kernrl launch block, and kernrl could not derive the launches from the "
        "host wrapper: " +
            answer.value("error", std::string("no answer")),
        answer.value("line", 0));
  const json& sets = answer.at("sets");
  if (sets.size() != size_sets.size() || sets.empty())
    throw std::runtime_error("the wrapper plan has " + std::to_string(sets.size()) +
                             " size sets, not " + std::to_string(size_sets.size()));
  check_same_launches(sets);
  Merger m{sets, p, {}};
  for (const auto& s : size_sets) m.vars.push_back(plan_vars(p, s, num_sms));
  WrapperPlan w;
  w.cls = answer.value("class", "ModelNew");
  std::string y = "launches:\n";
  // Outputs the wrapper allocates with torch.zeros: filled with zeros by the plan's first launches
  // (kernrl poisons outputs before each run).
  const json zeroed = sets[0].value("zero_outputs", json::array());
  for (const auto& s : sets)
    if (s.value("zero_outputs", json::array()) != zeroed)
      throw FormatError("forward allocates its outputs with zeros at some size sets only",
                        answer.value("forward_line", 0));
  for (const auto& name : zeroed) {
    const TensorSpec* t = p.find_tensor(name.get<std::string>());
    if (!t) continue;
    std::string n;
    for (const auto& d : t->shape) n += (n.empty() ? "(" : " * (") + d + ")";
    if (n.empty()) n = "1";
    y += "  - kernel: kernrl_zero_fill\n    grid: [" + in_quotes("cdiv(" + n + ", 1024)") +
         "]\n    args: [" + t->name + ", " + in_quotes(n) + "]\n    constexprs: {BLOCK: 1024}\n";
  }
  if (!zeroed.empty()) w.extra_source = kZeroFillSource;
  size_t n_fill = zeroed.size();
  for (size_t li = 0; li < sets[0].at("launches").size(); ++li) y += m.launch_yaml(li);
  y += m.scratch_yaml();
  w.launch_block = y;
  ExtractedSource block;
  block.language = "triton";
  block.code = "\"\"\"kernrl\n" + y + "\"\"\"\n";
  w.plan = parse_launch_block(block);
  w.plan.line = answer.value("forward_line", 0);
  for (size_t li = 0; li < w.plan.launches.size(); ++li)
    w.plan.launches[li].line = li < n_fill
                                   ? answer.value("forward_line", 0)
                                   : sets[0].at("launches").at(li - n_fill).at("line").get<int>();
  for (auto& s : w.plan.scratch)
    for (const auto& b : sets[0].at("scratch"))
      if (b.at("name") == s.name) s.line = b.at("line");
  std::set<std::string> seen;
  for (const auto& s : sets)
    for (const auto& n : s.value("notes", json::array()))
      if (seen.insert(n.get<std::string>()).second) w.notes.push_back(n);
  return w;
}

WrapperPlan derive_wrapper_plan(const ExtractedSource& src, const std::string& filename,
                                const ProblemSpec& problem, const std::vector<Vars>& size_sets,
                                int64_t num_sms, const Config& cfg) {
  json req = wrapper_plan_request(src, filename, problem, size_sets, num_sms);
  if (cfg.compile_sandbox) require_triton_sandbox(cfg);
  TritonChildResult r = run_triton(req, cfg);
  if (r.outcome != TritonChildResult::Answered)
    throw WrapperRunError("while kernrl ran the host wrapper to find its launches: " + r.error);
  if (!r.answer.value("ok", false) && !r.answer.value("refused", false))
    throw WrapperRunError("while kernrl ran the host wrapper to find its launches: " +
                          r.answer.value("error", std::string("no answer")));
  return merge_wrapper_plan(r.answer, problem, size_sets, num_sms);
}

}  // namespace kernrl
