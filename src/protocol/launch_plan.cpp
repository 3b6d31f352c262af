#include "protocol/launch_plan.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace kernrl {

std::vector<std::string> LaunchPlan::kernel_names() const {
  std::vector<std::string> names;
  for (const auto& l : launches)
    if (l.torch.empty() && std::find(names.begin(), names.end(), l.kernel) == names.end())
      names.push_back(l.kernel);
  return names;
}

bool LaunchPlan::has_torch_steps() const {
  return std::any_of(launches.begin(), launches.end(),
                     [](const LaunchSpec& l) { return !l.torch.empty(); });
}

const std::vector<TorchOp>& torch_step_ops() {
  static const std::vector<TorchOp> t = {
      {"linear", ""},
      {"mm", ""},
      {"bmm", ""},
      {"matmul", ""},
      {"addmm", ""},
      {"baddbmm", ""},
      {"conv1d", ""},
      {"conv2d", ""},
      {"conv3d", ""},
      {"conv_transpose1d", ""},
      {"conv_transpose2d", "input"},
      {"conv_transpose3d", "input"},
      {"max_pool1d", ""},
      {"max_pool2d", ""},
      {"max_pool3d", ""},
      {"avg_pool1d", ""},
      {"avg_pool2d", ""},
      {"avg_pool3d", ""},
      {"adaptive_avg_pool1d", ""},
      {"adaptive_avg_pool2d", ""},
      {"adaptive_avg_pool3d", ""},
      {"layer_norm", ""},
      {"group_norm", ""},
      {"softmax", "int"},
      {"log_softmax", "int"},
      {"relu", ""},
      {"gelu", ""},
      {"sigmoid", ""},
      {"tanh", ""},
      {"mul", "Scalar"},  // a tensor times a number (Python's `x * 0.5`)
      {"div", "Scalar"},  // a tensor divided by a number (`x / n`)
      {"reshape", ""},
      {"transpose", "int"},
      {"permute", ""},
      {"narrow", ""},
      {"select", "int"},  // x[:, i]: the dimension dropped (a view, copied)
      {"unfold", ""},     // windows along a dimension (a view, copied)
      {"cat", ""},
      {"lstm", "input", 3},  // output, h_n, c_n
      {"gru", "input", 2},   // output, h_n
  };
  return t;
}

std::string torch_step_op_problem(const std::string& op) {
  std::string list;
  for (const auto& o : torch_step_ops()) {
    if (o.name == op) return "";
    list += (list.empty() ? "" : ", ") + o.name;
  }
  return "'" + op + "' is not an operator a torch step may call (" + list + ")";
}

Vars plan_vars(const Vars& sizes, int64_t num_sms) {
  Vars v = sizes;
  v["num_sms"] = num_sms;
  return v;
}

Vars plan_vars(const ProblemSpec& p, const Vars& sizes, int64_t num_sms) {
  Vars v = plan_vars(sizes, num_sms);
  for (const auto& s : p.scalars)
    if (!s.is_float() && !v.count(s.name)) v[s.name] = static_cast<int64_t>(s.value);
  return v;
}

RealVars plan_reals(const ProblemSpec& p) {
  RealVars r;
  for (const auto& s : p.scalars)
    if (s.is_float()) r[s.name] = s.value;
  return r;
}

bool bind_plan_value(const PlanValue& v, const ProblemSpec& p, Vars& vars, RealVars& reals) {
  try {
    // Real where a float literal or a real name is in it, as C types the expression.
    bool real = has_real_literal(v.expr);
    for (const auto& n : expr_names(v.expr, true)) real = real || reals.count(n) > 0;
    if (real)
      reals[v.name] = eval_real_expr(v.expr, vars, reals);
    else
      vars[v.name] = eval_expr(v.expr, vars);
    return real;
  } catch (const ExprError& err) {
    std::string at;
    for (const auto& s : p.size_names)
      if (auto it = vars.find(s); it != vars.end())
        at += (at.empty() ? "" : " ") + s + "=" + std::to_string(it->second);
    throw ExprError("value " + v.name + " at " + (at.empty() ? "(no sizes)" : at) + ": " +
                    err.what());
  }
}

void bind_plan_values(const LaunchPlan& plan, const ProblemSpec& p, Vars& vars, RealVars& reals) {
  for (const auto& v : plan.values) bind_plan_value(v, p, vars, reals);
}

Vars plan_vars(const LaunchPlan& plan, const ProblemSpec& p, const Vars& sizes, int64_t num_sms) {
  Vars v = plan_vars(p, sizes, num_sms);
  if (plan.values.empty()) return v;
  RealVars r = plan_reals(p);
  bind_plan_values(plan, p, v, r);
  return v;
}

RealVars plan_reals(const LaunchPlan& plan, const ProblemSpec& p, const Vars& vars) {
  RealVars r = plan_reals(p);
  Vars v = vars;
  // An integer value in `vars` already (plan_vars bound it: no other name may be a value's) is
  // not evaluated again.
  for (const auto& value : plan.values)
    if (!vars.count(value.name)) bind_plan_value(value, p, v, r);
  return r;
}

bool is_builtin_name(const std::string& name) {
  return name == "cdiv" || name == "min" || name == "max" || name == "num_sms";
}

bool is_argument_word(const std::string& name) {
  return name == "null" || name == "none" || name == "None" || name == "nullptr" ||
         name == "true" || name == "false";
}

std::string trimmed(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

bool is_buffer_name(const std::string& s) {
  if (s.empty() || s.size() > 256) return false;
  auto identifier = [](const std::string& part) {
    return !part.empty() && (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_') &&
           std::all_of(part.begin(), part.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
           });
  };
  size_t from = 0;
  while (true) {
    size_t dot = s.find('.', from);
    std::string part = s.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    bool digits =
        !part.empty() && from > 0 && part.find_first_not_of("0123456789") == std::string::npos;
    if (!identifier(part) && !digits) return false;
    if (dot == std::string::npos) return true;
    from = dot + 1;
  }
}

std::optional<OffsetArg> split_offset_arg(const std::string& text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c != '+' || depth != 0) continue;
    OffsetArg o{trimmed(text.substr(0, i)), trimmed(text.substr(i + 1))};
    if (o.buffer.empty() || o.offset.empty()) return std::nullopt;
    return o;
  }
  return std::nullopt;
}

OffsetAt offset_arg_at(const std::string& text, const LaunchPlan& plan, const ProblemSpec& p,
                       const Vars& vars, const std::string& at) {
  auto split = split_offset_arg(text);
  if (!split) throw std::invalid_argument("'" + text + "' is not NAME + EXPR");
  OffsetAt o;
  o.buffer = split->buffer;
  if (const TensorSpec* t = p.find_tensor(o.buffer)) {
    o.elements = p.numel_of(*t, vars);
    o.elem_bytes = t->dtype.bytes;
  } else {
    auto s = std::find_if(plan.scratch.begin(), plan.scratch.end(),
                          [&](const ScratchSpec& sc) { return sc.name == o.buffer; });
    if (s == plan.scratch.end())
      throw std::invalid_argument("'" + o.buffer + "' is no tensor or scratch buffer");
    o.elements = eval_expr(s->count, vars);
    o.elem_bytes = s->dtype.bytes;
  }
  o.offset = eval_expr(split->offset, vars);
  if (o.offset < 0 || o.offset > o.elements)
    o.problem = "offsets " + o.buffer + " by " + std::to_string(o.offset) + " elements" + at +
                "; an offset into " + o.buffer + " must be 0 to its " + std::to_string(o.elements) +
                " elements";
  return o;
}

void LaunchSpec::choose(size_t c) {
  const LaunchChoice& ch = autotune.at(c);
  kernel = ch.kernel;
  block = ch.block;
  cluster = ch.cluster;
  shared_bytes = ch.shared_bytes;
  cooperative = ch.cooperative;
  variants = ch.variants;
}

namespace {

nlohmann::json variant_json(const LaunchVariant& v) {
  return {{"sizes", v.sizes},
          {"kernel", v.kernel},
          {"block", v.block},
          {"cluster", v.cluster},
          {"shared_bytes", v.shared_bytes},
          {"cooperative", v.cooperative}};
}

LaunchVariant variant_from(const nlohmann::json& v) {
  LaunchVariant lv;
  lv.sizes = v.at("sizes").get<Vars>();
  lv.kernel = v.at("kernel").get<std::string>();
  lv.block = v.at("block").get<std::vector<std::string>>();
  lv.cluster = v.at("cluster").get<std::vector<std::string>>();
  lv.shared_bytes = v.at("shared_bytes").get<std::string>();
  lv.cooperative = v.at("cooperative").get<bool>();
  return lv;
}

}  // namespace

nlohmann::json LaunchPlan::to_json() const {
  nlohmann::json ls = nlohmann::json::array();
  for (const auto& l : launches) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : l.args)
      args.push_back({{"text", a.text}, {"kind", static_cast<int>(a.kind)}});
    ls.push_back({{"kernel", l.kernel},
                  {"grid", l.grid},
                  {"block", l.block},
                  {"cluster", l.cluster},
                  {"shared_bytes", l.shared_bytes},
                  {"args", args},
                  {"repeat_count", l.repeat_count},
                  {"repeat_var", l.repeat_var},
                  {"cooperative", l.cooperative},
                  {"line", l.line}});
    if (!l.torch.empty()) {
      ls.back()["torch"] = l.torch;
      ls.back()["out"] = l.out;
      if (l.result != 0) ls.back()["result"] = l.result;
    }
    if (language == "triton") {
      nlohmann::json c = nlohmann::json::array();
      for (const auto& [k, v] : l.constexprs) c.push_back({k, v});
      ls.back()["constexprs"] = c;
      ls.back()["num_warps"] = l.num_warps;
      ls.back()["num_stages"] = l.num_stages;
      ls.back()["num_ctas"] = l.num_ctas;
      nlohmann::json vs = nlohmann::json::array();
      for (const auto& v : l.variants) vs.push_back(variant_json(v));
      if (!vs.empty()) ls.back()["variants"] = vs;
      nlohmann::json tune = nlohmann::json::array();
      for (const auto& ch : l.autotune) {
        nlohmann::json cvs = nlohmann::json::array();
        for (const auto& v : ch.variants) cvs.push_back(variant_json(v));
        tune.push_back({{"config", ch.config},
                        {"kernel", ch.kernel},
                        {"block", ch.block},
                        {"cluster", ch.cluster},
                        {"shared_bytes", ch.shared_bytes},
                        {"cooperative", ch.cooperative},
                        {"variants", cvs}});
      }
      if (!tune.empty()) {
        ls.back()["autotune"] = tune;
        ls.back()["tune_group"] = l.tune_group;
      }
    }
  }
  nlohmann::json sc = nlohmann::json::array();
  for (const auto& s : scratch) {
    sc.push_back({{"name", s.name}, {"dtype", s.dtype.name}, {"count", s.count}, {"line", s.line}});
    if (!s.shape.empty()) sc.back()["shape"] = s.shape;
  }
  nlohmann::json out = {{"problem", problem}, {"launches", ls}, {"scratch", sc}, {"line", line}};
  if (language != "cuda") out["language"] = language;
  if (!values.empty()) {
    nlohmann::json vs = nlohmann::json::array();
    for (const auto& v : values)
      vs.push_back({{"name", v.name}, {"expr", v.expr}, {"line", v.line}});
    out["values"] = vs;
  }
  return out;
}

LaunchPlan LaunchPlan::from_json(const nlohmann::json& j) {
  LaunchPlan p;
  p.problem = j.at("problem");
  p.line = j.at("line");
  p.language = j.value("language", "cuda");
  if (j.contains("values"))
    for (const auto& v : j.at("values"))
      p.values.push_back({v.at("name").get<std::string>(), v.at("expr").get<std::string>(),
                          v.at("line").get<int>()});
  for (const auto& l : j.at("launches")) {
    LaunchSpec s;
    s.kernel = l.at("kernel");
    s.grid = l.at("grid").get<std::vector<std::string>>();
    s.block = l.at("block").get<std::vector<std::string>>();
    s.cluster = l.at("cluster").get<std::vector<std::string>>();
    s.shared_bytes = l.at("shared_bytes");
    for (const auto& a : l.at("args")) {
      int kind = a.at("kind").get<int>();
      if (kind < 0 || kind > static_cast<int>(ArgKind::Struct))
        throw std::runtime_error("launch plan: unknown argument kind " + std::to_string(kind));
      s.args.push_back({a.at("text"), static_cast<ArgKind>(kind)});
    }
    s.repeat_count = l.at("repeat_count");
    s.repeat_var = l.at("repeat_var");
    s.cooperative = l.at("cooperative");
    s.line = l.at("line");
    s.torch = l.value("torch", "");
    s.out = l.value("out", "");
    s.result = l.value("result", 0);
    if (l.contains("constexprs"))
      for (const auto& c : l.at("constexprs"))
        s.constexprs.emplace_back(c.at(0).get<std::string>(), c.at(1).get<std::string>());
    s.num_warps = l.value("num_warps", "");
    s.num_stages = l.value("num_stages", "");
    s.num_ctas = l.value("num_ctas", "");
    if (l.contains("variants"))
      for (const auto& v : l.at("variants")) s.variants.push_back(variant_from(v));
    if (l.contains("autotune")) {
      for (const auto& c : l.at("autotune")) {
        LaunchChoice ch;
        ch.config = c.at("config").get<int>();
        ch.kernel = c.at("kernel").get<std::string>();
        ch.block = c.at("block").get<std::vector<std::string>>();
        ch.cluster = c.at("cluster").get<std::vector<std::string>>();
        ch.shared_bytes = c.at("shared_bytes").get<std::string>();
        ch.cooperative = c.at("cooperative").get<bool>();
        for (const auto& v : c.at("variants")) ch.variants.push_back(variant_from(v));
        s.autotune.push_back(ch);
      }
      s.tune_group = l.value("tune_group", "");
    }
    p.launches.push_back(s);
  }
  for (const auto& s : j.at("scratch")) {
    ScratchSpec sp;
    sp.name = s.at("name");
    sp.dtype = *dtype_from_name(s.at("dtype"));
    sp.count = s.at("count");
    sp.line = s.at("line");
    if (s.contains("shape")) sp.shape = s.at("shape").get<std::vector<std::string>>();
    p.scratch.push_back(sp);
  }
  return p;
}

}  // namespace kernrl
