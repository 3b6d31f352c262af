// The Python side (py_side.h): submodules of a class the file defines (`self.block(x)`, `m(x)` for
// a child of an nn.Sequential), whose forward runs as ModelNew's methods run, with `self` the
// submodule.
#include <algorithm>
#include <set>

#include "import/nesting.h"
#include "import/py_side.h"

namespace kernrl::kbimport::py {

void PySide::swap_scope(SelfScope& s) {
  std::swap(init_attrs_, s.init_attrs);
  std::swap(init_attrs_changed_, s.init_attrs_changed);
  std::swap(init_attrs_mutated_, s.init_attrs_mutated);
  std::swap(init_attrs_inside_, s.init_attrs_inside);
  std::swap(init_attrs_undecided_, s.init_attrs_undecided);
  std::swap(init_method_why_, s.init_method_why);
  std::swap(init_setattr_, s.init_setattr);
  std::swap(own_params_, s.own_params);
  std::swap(kaiming_inits_, s.kaiming_inits);
  std::swap(other_inits_, s.other_inits);
  std::swap(init_values_changed_, s.init_values_changed);
  std::swap(init_settings_changed_, s.init_settings_changed);
  std::swap(init_params_, s.init_params);
  std::swap(init_locals_, s.init_locals);
  std::swap(init_signature_, s.init_signature);
  std::swap(init_args_, s.init_args);
  std::swap(class_defs_, s.class_defs);
  std::swap(method_headers_, s.method_headers);
  std::swap(self_overrides_, s.self_overrides);
  std::swap(self_path_, s.self_path);
  std::swap(self_class_line_, s.self_class_line);
}

std::optional<std::string> PySide::relative(const std::string& path) const {
  if (self_path_.empty()) return path;
  if (path.size() > self_path_.size() + 1 && path.compare(0, self_path_.size(), self_path_) == 0 &&
      path[self_path_.size()] == '.')
    return path.substr(self_path_.size() + 1);
  return std::nullopt;
}

std::string PySide::self_name() const {
  if (self_path_.empty()) return "ModelNew";
  const auto& t = lines_[self_class_line_].toks;
  return (t.size() > 1 ? t[1].text : std::string("?")) + " (`self." + self_path_ + "`)";
}

namespace {

// The `class NAME` lines at the top level of the file.
std::vector<size_t> class_lines(const std::vector<PyLine>& lines, const std::string& name) {
  std::vector<size_t> out;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].indent == 0 && lines[i].toks.size() > 1 && tok_is(lines[i].toks[0], "class") &&
        lines[i].toks[1].text == name)
      out.push_back(i);
  return out;
}

}  // namespace

std::optional<std::pair<size_t, PyExprP>> PySide::file_class_ctor(const std::string& path,
                                                                  std::string* why) {
  auto rel = relative(path);
  if (!rel) return std::nullopt;
  PyExprP call = layer_ctor(path);
  if (!call || call->kind != PyExpr::Call || call->kids.empty() ||
      call->kids[0]->kind != PyExpr::Name)
    return std::nullopt;
  const std::string name = call->kids[0]->text;
  std::vector<size_t> defs = class_lines(lines_, name);
  if (defs.empty()) return std::nullopt;
  const std::string what = "`self." + path + "` (an instance of the file's class " + name + ")";
  // The name must be that class when __init__ runs: defined once, never rebound.
  if (defs.size() != 1 || module_vars_.count(name) || module_defs_.count(name) ||
      aliases_.count(name) || module_rebound_.count(name)) {
    *why = what + ": the file binds `" + name + "` more than once";
    return std::nullopt;
  }
  // Built once, in place, by an attribute __init__ sets once at its top and never changes.
  const std::string top = rel->substr(0, rel->find('.'));
  if (init_setattr_ || !init_attrs_.count(top) || init_attrs_changed_.count(top) ||
      init_attrs_mutated_.count(top)) {
    *why = what + ": " + self_name() + "'s __init__ does not set `self." + top +
           "` once, at its top, and leave it unchanged";
    return std::nullopt;
  }
  return std::make_pair(defs[0], call);
}

bool PySide::file_instance(const Val& layer) {
  if (layer.kind != Val::Layer || layer.name == "self") return false;
  std::string why;
  return file_class_ctor(layer.name, &why) || !why.empty();
}

std::string PySide::held_by_file_instance(const std::string& path) {
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
    Val holder;
    holder.kind = Val::Layer;
    holder.name = path.substr(0, dot);
    if (file_instance(holder)) return holder.name;
  }
  return "";
}

void PySide::bind_submodule_args() {
  const std::string who = self_name();
  if (sub_pos_args_.size() > init_signature_.size())
    fail("mismatch", who + " is built with " + std::to_string(sub_pos_args_.size()) +
                         " arguments; its __init__ takes " +
                         std::to_string(init_signature_.size()));
  for (const auto& kw_arg : sub_kw_args_) {
    const std::string& k = kw_arg.first;  // (a structured binding: lambdas cannot capture it)
    auto at = std::find_if(init_signature_.begin(), init_signature_.end(),
                           [&](const auto& p) { return p.first == k; });
    if (at == init_signature_.end() ||
        static_cast<size_t>(at - init_signature_.begin()) < sub_pos_args_.size())
      fail("mismatch", who + " is built with the keyword argument `" + k +
                           "`, which its __init__ does not take or is given already");
  }
  for (size_t i = 0; i < init_signature_.size(); ++i) {
    const std::string& name = init_signature_[i].first;
    const auto& def = init_signature_[i].second;
    if (i < sub_pos_args_.size()) {
      init_args_[name] = sub_pos_args_[i];
      continue;
    }
    auto kw = std::find_if(sub_kw_args_.begin(), sub_kw_args_.end(),
                           [&](const auto& a) { return a.first == name; });
    if (kw != sub_kw_args_.end()) {
      init_args_[name] = kw->second;
      continue;
    }
    if (def.empty()) fail("mismatch", who + " is built without its argument `" + name + "`");
    // Python evaluated the default where the class was defined: at module level.
    Val v = make_unknown("the default of `" + name + "` of " + who + "'s __init__");
    try {
      Nesting module_scope(module_depth_);
      Val d = init_expr(py_parse_expr(def, 0, def.size()));
      if (d.kind == Val::Int || d.kind == Val::Float || d.kind == Val::Bool ||
          d.kind == Val::List || d.kind == Val::Void)
        v = d;
    } catch (const ImportError&) {
    }
    init_args_[name] = v;
  }
}

Val PySide::submodule_call(Env& env, const Val& layer, size_t cls_line, const PyExprP& ctor,
                           const PyExprP& e) {
  const std::string text = py_text(e);
  const auto& head = lines_[cls_line].toks;
  const std::string cls = head[1].text;
  const std::string what = "`self." + layer.name + "` (the file's class " + cls + ", line " +
                           std::to_string(lines_[cls_line].line) + ")";
  auto refuse = [&](const std::string& why) {
    fail("host_logic",
         "forward calls " + what + " (`" + text + "`), " + why +
             "; kernrl follows the forward of a plain nn.Module subclass of the file");
  };
  if (submodule_depth_ >= 8) refuse("more than 8 submodules deep");
  if (cls == "ModelNew") refuse("an instance of ModelNew itself");
  // class X(nn.Module): with torch's nn, and nothing that changes how a call of it runs.
  std::string header;
  for (const auto& x : head) header += x.text;
  if ((header != "class" + cls + "(nn.Module):" &&
       header != "class" + cls + "(torch.nn.Module):") ||
      resolve("nn") != "torch.nn" || resolve("torch") != "torch" || module_vars_.count("nn") ||
      module_vars_.count("torch"))
    refuse("whose class derives from something else than torch's nn.Module");
  if (cls_line > 0 && !lines_[cls_line - 1].toks.empty() &&
      tok_is(lines_[cls_line - 1].toks[0], "@"))
    refuse("whose class is decorated");
  static const std::set<std::string> hooks = {
      "register_forward_hook",        "register_forward_pre_hook",
      "register_module_forward_hook", "register_module_forward_pre_hook",
      "register_full_backward_hook",  "register_full_backward_pre_hook",
      "register_backward_hook",       "_call_impl"};
  for (const auto& l : lines_)
    for (const auto& t : l.toks)
      if (t.kind == PyTok::Name && hooks.count(t.text))
        refuse("and the file uses `" + t.text + "` (a hook)");
  Block body = body_of(lines_, cls_line);
  if (body.begin >= body.end) refuse("whose class has no body");
  const int indent = lines_[body.begin].indent;
  static const std::set<std::string> special = {"__call__",         "__getattr__", "__setattr__",
                                                "__getattribute__", "__new__",     "__delattr__",
                                                "__init_subclass__"};
  size_t inits = 0, init_line = 0, forward_line = 0;
  for (size_t i = body.begin; i < body.end; ++i) {
    const auto& t = lines_[i].toks;
    if (tok_is(t[0], "def") && t.size() > 1) {
      if (special.count(t[1].text)) refuse("whose class defines " + t[1].text);
      if (t[1].text == "__init__") {
        ++inits;
        init_line = i;
      }
      if (t[1].text == "forward" && lines_[i].indent == indent) forward_line = i;
      continue;
    }
    if (lines_[i].indent != indent) continue;
    // The class body's own statements: methods, their decorators, a docstring, `pass`.
    bool docstring = t.size() == 1 && t[0].kind == PyTok::String;
    if (!tok_is(t[0], "@") && !tok_is(t[0], "pass") && !docstring)
      refuse("whose class body has the statement at line " + std::to_string(lines_[i].line));
  }
  if (inits != 1 || lines_[init_line].indent != indent)
    refuse("whose class does not define __init__ once");
  if (!forward_line) refuse("whose class defines no forward of its own");
  for (size_t h : {init_line, forward_line})
    if (h > body.begin && tok_is(lines_[h - 1].toks[0], "@") && lines_[h - 1].indent == indent)
      refuse("whose " + lines_[h].toks[1].text + " is decorated");
  {
    int d = 0;
    for (const auto& t : lines_[init_line].toks) {
      if (t.kind == PyTok::Op && (t.text == "(" || t.text == "[" || t.text == "{")) ++d;
      if (t.kind == PyTok::Op && (t.text == ")" || t.text == "]" || t.text == "}")) --d;
      if (d == 1 && t.kind == PyTok::Op && (t.text == "*" || t.text == "**" || t.text == "/"))
        refuse("whose __init__ takes `" + t.text +
               "` parameters (kernrl binds arguments by position and name only)");
    }
  }
  Block init_body = body_of(lines_, init_line);
  for (size_t i = init_body.begin; i < init_body.end; ++i)
    for (const auto& t : lines_[i].toks)
      if (t.kind == PyTok::Name && (t.text == "load_inline" || t.text == "load"))
        refuse("whose __init__ builds an extension");
  // The constructor's arguments, where the parent builds it; forward's, where it is called.
  std::vector<Val> ctor_args;
  std::vector<std::pair<std::string, Val>> ctor_kwargs;
  for (size_t i = 1; i < ctor->kids.size(); ++i) ctor_args.push_back(init_expr(ctor->kids[i]));
  for (const auto& [k, v] : ctor->kwargs) {
    if (k == "*") refuse("built with unpacked arguments (`" + py_text(ctor) + "`)");
    ctor_kwargs.push_back({k, init_expr(v)});
  }
  std::vector<Val> args;
  std::vector<std::pair<std::string, Val>> kwargs;
  for (size_t i = 1; i < e->kids.size(); ++i) args.push_back(eval(env, e->kids[i]));
  for (const auto& [k, v] : e->kwargs) {
    if (k == "*") refuse("called with unpacked arguments");
    kwargs.push_back({k, eval(env, v)});
  }
  // `self` is the submodule from here on: its __init__ read with those arguments, its methods.
  SelfScope sub;
  sub.self_path = layer.name;
  sub.self_class_line = cls_line;
  struct Swapped {
    PySide& side;
    SelfScope& other;
    Swapped(PySide& s, SelfScope& o) : side(s), other(o) { side.swap_scope(other); }
    ~Swapped() { side.swap_scope(other); }
  } swapped(*this, sub);
  sub_pos_args_ = ctor_args;
  sub_kw_args_ = ctor_kwargs;
  bool any_inline = false, load_files = false;
  size_t forward_header = 0;
  read_class(cls_line, &any_inline, &load_files, &forward_header);
  Nesting nest(submodule_depth_);
  return run_def(forward_line, true, args, kwargs);
}

}  // namespace kernrl::kbimport::py
