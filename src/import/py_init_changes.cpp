// The Python side (py_side.h): what ModelNew's __init__ (or a submodule class's) does to a layer
// or tensor after building it other than by assigning the attribute again. kernrl reads a
// layer's settings from its constructor and its tensors from the suite (the reference's values),
// so a statement that changes either in place (`self.conv.weight.mul_(s)`,
// `nn.init.zeros_(self.conv.bias)`, `d = self.drop; d.p = 0.5`, a loop over self.modules()
// that assigns, self.apply(...)) makes what forward reads of that attribute unknown.
#include <algorithm>
#include <functional>
#include <set>

#include "import/py_side.h"

namespace kernrl::kbimport::py {

namespace {

bool opens(const PyTok& t) {
  return t.kind == PyTok::Op && (t.text == "(" || t.text == "[" || t.text == "{");
}
bool closes(const PyTok& t) {
  return t.kind == PyTok::Op && (t.text == ")" || t.text == "]" || t.text == "}");
}
bool is_name(const PyTok& t) {
  return t.kind == PyTok::Name;
}

// `=`, `+=` and the other assignment operators (not `==`, `<=`, `>=`, `!=`, `:=`).
bool assign_op(const PyTok& t) {
  const std::string& x = t.text;
  return t.kind == PyTok::Op && !x.empty() && x.back() == '=' && x != "==" && x != "<=" &&
         x != ">=" && x != "!=" && x != ":=";
}

// The `)` `]` or `}` that closes t[open] (z when none before z).
size_t closing(const std::vector<PyTok>& t, size_t open, size_t z) {
  int d = 0;
  for (size_t k = open; k < z; ++k) {
    if (opens(t[k])) ++d;
    if (closes(t[k]) && --d == 0) return k;
  }
  return z;
}

// The `(` `[` or `{` that t[close] closes (a when none at or after a).
size_t opening(const std::vector<PyTok>& t, size_t a, size_t close) {
  int d = 0;
  for (size_t k = close + 1; k-- > a;) {
    if (closes(t[k])) ++d;
    if (opens(t[k]) && --d == 0) return k;
  }
  return a;
}

// Where the postfix chain that ends at t[last] begins (`self.layers[i].weight` for `weight`).
size_t chain_start(const std::vector<PyTok>& t, size_t a, size_t last) {
  size_t k = last;
  while (true) {
    if (closes(t[k])) {
      size_t o = opening(t, a, k);
      if (o > a && (is_name(t[o - 1]) || closes(t[o - 1]))) {
        k = o - 1;
        continue;
      }
      return o;
    }
    if (k >= a + 2 && tok_is(t[k - 1], ".")) {
      k -= 2;
      continue;
    }
    return k;
  }
}

// A statement's tokens as source-like text, for messages.
std::string statement_text(const std::vector<PyTok>& t, size_t a, size_t z) {
  std::string s;
  for (size_t k = a; k < z; ++k) {
    std::string x = t[k].kind == PyTok::String ? "'" + t[k].text + "'" : t[k].text;
    bool tight_before = x == "." || x == "(" || x == "[" || x == ")" || x == "]" || x == "," ||
                        x == ":" || x == "}";
    bool tight_after = k > a && (t[k - 1].text == "." || t[k - 1].text == "(" ||
                                 t[k - 1].text == "[" || t[k - 1].text == "{");
    if (tight_before && (x == "(" || x == "[") && k > a && !is_name(t[k - 1]) && !closes(t[k - 1]))
      tight_before = false;
    if (!s.empty() && !tight_before && !tight_after) s += " ";
    s += x;
  }
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  return s;
}

// nn.Module's members that reach every module, parameter or buffer of it.
const std::set<std::string>& walkers() {
  static const std::set<std::string> s = {
      "modules",    "children",         "named_modules", "named_children",
      "parameters", "named_parameters", "buffers",       "named_buffers",
      "state_dict", "_modules",         "_parameters",   "_buffers",
      "__dict__",   "get_submodule",    "get_parameter", "get_buffer"};
  return s;
}

// nn.Module's methods that change the module they are called on (other than by a name that
// ends in `_`). (train and eval: PySide::training_mode refuses a file that calls either.)
const std::set<std::string>& module_changers() {
  static const std::set<std::string> s = {"register_parameter",
                                          "register_buffer",
                                          "register_module",
                                          "add_module",
                                          "apply",
                                          "load_state_dict",
                                          "set_extra_state",
                                          "register_forward_hook",
                                          "register_forward_pre_hook",
                                          "register_full_backward_hook",
                                          "register_full_backward_pre_hook",
                                          "register_backward_hook",
                                          "__setattr__",
                                          "__delattr__",
                                          "__setstate__"};
  return s;
}

// nn.Module's conversions (in place for a module, a new tensor for a tensor).
const std::set<std::string>& conversions() {
  static const std::set<std::string> s = {"to",   "half", "float", "double",  "bfloat16",
                                          "cuda", "cpu",  "type",  "to_empty"};
  return s;
}

bool is_parameter(const ProblemSpec& p, const std::string& name) {
  for (const auto& t : p.parameters)
    if (t.name == name) return true;
  return false;
}

}  // namespace

void PySide::scan_init_changes() {
  std::vector<std::pair<int, std::vector<PyTok>>> stmts;
  std::swap(stmts, init_read_);
  std::set<int> kaiming;
  std::swap(kaiming, init_kaiming_lines_);
  // `self.Y = <value reaching self.X>`: Y and X hold the same objects (a change to one is a
  // change to the other).
  std::map<std::string, std::set<std::string>> links;
  std::set<std::string> visited;
  // Attributes of `self` that can hold something changed in place (an int, a float, a string or
  // a tuple cannot): unknown ones included.
  auto object_valued = [&](const std::string& attr) {
    auto it = init_attrs_.find(attr);
    if (it == init_attrs_.end()) return true;
    const auto k = it->second->kind;
    return !(k == PyExpr::Num || k == PyExpr::Str || k == PyExpr::Const || k == PyExpr::BinOp ||
             k == PyExpr::Unary || k == PyExpr::Name || k == PyExpr::Tuple);
  };
  std::function<void(const std::vector<std::pair<int, std::vector<PyTok>>>&, int)> scan =
      [&](const std::vector<std::pair<int, std::vector<PyTok>>>& body, int depth) {
        std::map<std::string, std::set<std::string>> aliases;  // local name -> attributes
        std::set<std::string> nested_defs;
        for (const auto& [line, t] : body)
          for (size_t k = 0; k + 1 < t.size(); ++k)
            if (tok_is(t[k], "def") && is_name(t[k + 1])) nested_defs.insert(t[k + 1].text);
        auto member = [&](const std::string& n) {
          return walkers().count(n) || (method_headers_.count(n) && n != "__init__") ? "*" : n;
        };
        // What the tokens [a, z) reach of `self`: attributes, "*" for all of it.
        auto roots_in = [&](const std::vector<PyTok>& t, size_t a, size_t z) {
          std::set<std::string> r;
          for (size_t k = a; k < z; ++k) {
            if (!is_name(t[k]) || (k > 0 && tok_is(t[k - 1], "."))) continue;
            if (t[k].text == "self") {
              if (k + 2 < z && tok_is(t[k + 1], ".") && is_name(t[k + 2])) {
                r.insert(member(t[k + 2].text));
                continue;
              }
              // `super(ModelNew, self)`: the base class's constructor.
              if (k >= 4 && tok_is(t[k - 1], ",") && tok_is(t[k - 3], "(") &&
                  tok_is(t[k - 4], "super"))
                continue;
              r.insert("*");
              continue;
            }
            auto al = aliases.find(t[k].text);
            if (al == aliases.end()) continue;
            // `f(m=...)`: a keyword argument's name.
            if (k + 1 < z && tok_is(t[k + 1], "=") && k > a &&
                (tok_is(t[k - 1], "(") || tok_is(t[k - 1], ",")))
              continue;
            r.insert(al->second.begin(), al->second.end());
          }
          return r;
        };
        // What the chain t[s..last] is (its head: self's attribute, a local name for one).
        auto chain_roots = [&](const std::vector<PyTok>& t, size_t s, size_t last) {
          if (tok_is(t[s], "self")) {
            if (s + 2 <= last && tok_is(t[s + 1], ".") && is_name(t[s + 2]))
              return std::set<std::string>{member(t[s + 2].text)};
            if (s == last) return std::set<std::string>{"*"};
          }
          if (is_name(t[s]) && (s == last || !tok_is(t[s + 1], "("))) {
            auto al = aliases.find(t[s].text);
            return al == aliases.end() ? std::set<std::string>{} : al->second;
          }
          return roots_in(t, s, last + 1);
        };
        auto bind = [&](const std::string& name, const std::set<std::string>& r, bool* grew) {
          auto& to = aliases[name];
          for (const auto& x : r)
            if (to.insert(x).second) *grew = true;
        };
        auto note = [&](std::map<std::string, std::string>& into, const std::set<std::string>& r,
                        const std::string& what) {
          std::set<std::string> all;
          std::vector<std::string> todo(r.begin(), r.end());
          while (!todo.empty()) {
            std::string x = todo.back();
            todo.pop_back();
            if (!all.insert(x).second) continue;
            for (const auto& y : links[x]) todo.push_back(y);
          }
          for (const auto& x : all) into.emplace(x, what);
        };
        // One simple statement or compound header, tokens [a, z). pass 0 binds names, pass 1
        // notes changes.
        std::function<void(const std::vector<PyTok>&, size_t, size_t, int, int, bool*)> stmt =
            [&](const std::vector<PyTok>& t, size_t a, size_t z, int line, int pass, bool* grew) {
              if (a >= z) return;
              // `;`-separated statements.
              {
                int d = 0;
                for (size_t k = a; k < z; ++k) {
                  if (opens(t[k])) ++d;
                  if (closes(t[k])) --d;
                  if (d == 0 && tok_is(t[k], ";")) {
                    stmt(t, a, k, line, pass, grew);
                    stmt(t, k + 1, z, line, pass, grew);
                    return;
                  }
                }
              }
              const std::string what =
                  "`" + statement_text(t, a, z) + "` (line " + std::to_string(line) + ")";
              // Calls in [x, y) of the statement: in-place methods and functions given `self`.
              auto calls = [&](size_t x, size_t y) {
                for (size_t k = x + 1; k < y; ++k) {
                  if (!tok_is(t[k], "(") || !is_name(t[k - 1])) continue;
                  const std::string& name = t[k - 1].text;
                  const size_t close = closing(t, k, y);
                  if (name == "__init__") continue;
                  if (k >= x + 3 && tok_is(t[k - 2], ".")) {
                    // A method: of what?
                    const size_t last = k - 3;
                    const size_t s = chain_start(t, x, last);
                    if (s == last && tok_is(t[s], "self")) {
                      // Of ModelNew itself.
                      if (name == "register_buffer") continue;
                      if (name == "register_parameter" || name == "add_module" ||
                          name == "register_module") {
                        const bool named = k + 1 < close && t[k + 1].kind == PyTok::String;
                        note(init_settings_changed_, {named ? t[k + 1].text : std::string("*")},
                             what);
                      } else if (module_changers().count(name) || conversions().count(name) ||
                                 (name.back() == '_' && !starts_with(name, "__"))) {
                        note(init_settings_changed_, {"*"}, what);
                      } else if (method_headers_.count(name) && name != "forward" && depth < 8 &&
                                 visited.insert(name).second) {
                        // A method of the class: its body runs here.
                        std::vector<std::pair<int, std::vector<PyTok>>> mb;
                        Block b = body_of(lines_, method_headers_.at(name));
                        for (size_t i = b.begin; i < b.end; ++i)
                          mb.push_back({lines_[i].line, lines_[i].toks});
                        scan(mb, depth + 1);
                      }
                      if (method_headers_.count(name)) {
                        std::set<std::string> given;
                        for (const auto& r : roots_in(t, k + 1, close))
                          if (r == "*" || object_valued(r)) given.insert(r);
                        note(init_settings_changed_, given, what);
                      }
                      continue;
                    }
                    // `nn.init.zeros_(...)`: a function of a module (below), not a method.
                    bool dotted_name = !aliases.count(t[s].text) && !tok_is(t[s], "self");
                    for (size_t q = s; q <= last && dotted_name; ++q)
                      dotted_name = (q - s) % 2 == 0 ? is_name(t[q]) : tok_is(t[q], ".");
                    if (!dotted_name) {
                      std::set<std::string> r = chain_roots(t, s, last);
                      if (r.empty()) continue;
                      if (name.back() == '_' && !starts_with(name, "__"))
                        note(init_values_changed_, r, what);
                      else if (module_changers().count(name) ||
                               (conversions().count(name) && s == a && close + 1 == z))
                        note(init_settings_changed_, r, what);
                      continue;
                    }
                  }
                  // A function: which?
                  size_t ds = k - 1;
                  while (ds >= x + 2 && tok_is(t[ds - 1], ".") && is_name(t[ds - 2])) ds -= 2;
                  if (ds > x && tok_is(t[ds - 1], ".")) continue;
                  std::string dotted;
                  for (size_t q = ds; q < k; ++q) dotted += t[q].text;
                  if (dotted == "super") continue;
                  std::set<std::string> r = roots_in(t, k + 1, close);
                  if (r.empty()) continue;
                  const std::string f = resolve(dotted);
                  const std::string leaf = f.substr(f.rfind('.') + 1);
                  if (starts_with(f, "torch.nn.init.")) {
                    if (leaf != "calculate_gain" && !starts_with(leaf, "_calculate"))
                      note(init_values_changed_, r, what);
                  } else if (starts_with(f, "torch.nn.utils.") || dotted == "delattr") {
                    note(init_settings_changed_, r, what);
                  } else if (!leaf.empty() && leaf.back() == '_' && !starts_with(leaf, "__")) {
                    note(init_values_changed_, r, what);
                  } else if (module_def_headers_.count(dotted) || nested_defs.count(dotted) ||
                             std::any_of(lines_.begin(), lines_.end(), [&](const PyLine& l) {
                               return l.indent == 0 && l.toks.size() > 1 &&
                                      tok_is(l.toks[0], "class") && l.toks[1].text == dotted;
                             })) {
                    // A function or class of the file given `self` or a layer of it.
                    std::set<std::string> given;
                    for (const auto& x2 : r)
                      if (x2 == "*" || object_valued(x2)) given.insert(x2);
                    note(init_settings_changed_, given, what);
                  }
                }
              };
              static const std::set<std::string> compound = {"if",      "elif",  "else", "for",
                                                             "while",   "with",  "try",  "except",
                                                             "finally", "async", "def",  "class"};
              if (is_name(t[a]) && compound.count(t[a].text)) {
                size_t colon = z;
                int d = 0;
                for (size_t k = a; k < z; ++k) {
                  if (opens(t[k])) ++d;
                  if (closes(t[k])) --d;
                  if (d == 0 && tok_is(t[k], ":")) {
                    colon = k;
                    break;
                  }
                }
                size_t h = tok_is(t[a], "async") ? a + 1 : a;
                if (tok_is(t[h], "def") || tok_is(t[h], "class")) {
                  // A nested def's header: its parameters are its own.
                  stmt(t, colon + 1, z, line, pass, grew);
                  return;
                }
                if (pass == 0 && tok_is(t[h], "for")) {
                  size_t in = h + 1;
                  while (in < colon && !tok_is(t[in], "in")) ++in;
                  std::set<std::string> r = roots_in(t, in, colon);
                  for (size_t k = h + 1; k < in; ++k)
                    if (is_name(t[k])) bind(t[k].text, r, grew);
                }
                if (pass == 0 && tok_is(t[h], "with")) {
                  size_t from = h + 1;
                  int dd = 0;
                  for (size_t k = h + 1; k <= colon; ++k) {
                    if (k < colon && opens(t[k])) ++dd;
                    if (k < colon && closes(t[k])) --dd;
                    if (k < colon && !(dd == 0 && tok_is(t[k], ","))) continue;
                    for (size_t q = from; q + 1 < k; ++q)
                      if (tok_is(t[q], "as")) {
                        std::set<std::string> r = roots_in(t, from, q);
                        for (size_t n = q + 1; n < k; ++n)
                          if (is_name(t[n])) bind(t[n].text, r, grew);
                      }
                    from = k + 1;
                  }
                }
                if (pass == 1) calls(h, colon);
                stmt(t, colon + 1, z, line, pass, grew);
                return;
              }
              // Assignments: every top-level `=` of a chain and augmented ones.
              std::vector<std::pair<size_t, size_t>> targets;
              std::vector<std::string> ops;
              size_t seg = a;
              {
                int d = 0;
                for (size_t k = a; k < z; ++k) {
                  if (opens(t[k])) ++d;
                  if (closes(t[k])) --d;
                  if (d != 0 || !assign_op(t[k])) continue;
                  size_t e = k;  // an annotated target (`x: int = 3`) ends at its `:`
                  for (size_t c = seg; c < k; ++c)
                    if (tok_is(t[c], ":")) e = c;
                  targets.push_back({seg, e});
                  ops.push_back(t[k].text);
                  seg = k + 1;
                }
              }
              if (pass == 0) {
                const std::set<std::string> value = roots_in(t, seg, z);
                for (size_t i = 0; i < targets.size(); ++i) {
                  const auto [s, e] = targets[i];
                  if (ops[i] != "=" || s >= e) continue;
                  // `self.Y = ...`: Y holds what the value reaches.
                  if (e == s + 3 && tok_is(t[s], "self") && tok_is(t[s + 1], ".") &&
                      is_name(t[s + 2])) {
                    for (const auto& x : value) {
                      if (links[t[s + 2].text].insert(x).second) *grew = true;
                      if (x != "*" && links[x].insert(t[s + 2].text).second) *grew = true;
                    }
                    continue;
                  }
                  // Names (`w = ...`, `a, b = ...`): what the value reaches.
                  bool names = true;
                  for (size_t k = s; k < e; ++k)
                    names = names && (is_name(t[k]) || tok_is(t[k], ",") || tok_is(t[k], "(") ||
                                      tok_is(t[k], ")") || tok_is(t[k], "[") || tok_is(t[k], "]") ||
                                      tok_is(t[k], "*"));
                  if (names)
                    for (size_t k = s; k < e; ++k)
                      if (is_name(t[k])) bind(t[k].text, value, grew);
                }
                for (size_t k = a; k + 1 < z; ++k) {
                  // `(n := self.conv)`, a comprehension's `for m in self.modules()`.
                  if (is_name(t[k]) && tok_is(t[k + 1], ":="))
                    bind(t[k].text, roots_in(t, k + 2, z), grew);
                  if (tok_is(t[k], "for") && k > a) {
                    size_t in = k + 1;
                    while (in < z && !tok_is(t[in], "in")) ++in;
                    std::set<std::string> r = roots_in(t, in, z);
                    for (size_t q = k + 1; q < in; ++q)
                      if (is_name(t[q])) bind(t[q].text, r, grew);
                  }
                  // `mods.append(self.conv)`: the list holds it.
                  if (is_name(t[k]) && (k == a || !tok_is(t[k - 1], ".")) && k + 3 < z &&
                      tok_is(t[k + 1], ".") && tok_is(t[k + 3], "(") &&
                      (t[k + 2].text == "append" || t[k + 2].text == "extend" ||
                       t[k + 2].text == "insert" || t[k + 2].text == "add" ||
                       t[k + 2].text == "update"))
                    bind(t[k].text, roots_in(t, k + 4, closing(t, k + 3, z)), grew);
                }
                return;
              }
              for (size_t i = 0; i < targets.size(); ++i) {
                const auto [s, e] = targets[i];
                if (s >= e) continue;
                const bool augmented = ops[i] != "=";
                if (tok_is(t[s], "self") && e > s + 3 && tok_is(t[s + 1], ".") &&
                    is_name(t[s + 2])) {
                  // `self.conv.weight.data *= s`, `self.t.layers[0].norm_first = True`.
                  note(init_settings_changed_, {member(t[s + 2].text)}, what);
                  continue;
                }
                if (!is_name(t[s]) || t[s].text == "self") continue;
                auto al = aliases.find(t[s].text);
                if (al == aliases.end()) continue;
                // `d.p = 0.5`, `m.weight.data *= 2`, `w *= 2` (a tensor's in place).
                if ((e > s + 1 && (tok_is(t[s + 1], ".") || tok_is(t[s + 1], "["))) ||
                    (e == s + 1 && augmented))
                  note(init_settings_changed_, al->second, what);
              }
              if (tok_is(t[a], "del"))
                for (size_t k = a + 1; k < z; ++k) {
                  if (tok_is(t[k], "self") && k + 2 < z && tok_is(t[k + 1], ".") &&
                      is_name(t[k + 2]))
                    note(init_settings_changed_, {member(t[k + 2].text)}, what);
                  auto al = aliases.find(t[k].text);
                  if (is_name(t[k]) && al != aliases.end() && k + 1 < z &&
                      (tok_is(t[k + 1], ".") || tok_is(t[k + 1], "[")))
                    note(init_settings_changed_, al->second, what);
                }
              calls(a, z);
            };
        // The names first (to a fixed point: a loop may bind a name after its use), then the
        // changes.
        for (int round = 0; round < 16; ++round) {
          bool grew = false;
          for (const auto& [line, t] : body) stmt(t, 0, t.size(), line, 0, &grew);
          if (!grew) break;
        }
        for (const auto& [line, t] : body) {
          // `nn.init.kaiming_uniform_(self.w, a=math.sqrt(5))` of an own weight: how torch's
          // layers draw theirs (PySide::read_init_call; own_params_by_place checks it).
          if (!t.empty() && kaiming.count(t[0].line)) continue;
          bool grew = false;
          stmt(t, 0, t.size(), line, 1, &grew);
        }
      };
  scan(stmts, 0);
  if (self_path_.empty()) {
    auto all = init_values_changed_.find("*");
    model_values_all_ = all == init_values_changed_.end() ? "" : all->second;
    all = init_settings_changed_.find("*");
    model_settings_all_ = all == init_settings_changed_.end() ? "" : all->second;
  }
}

std::string PySide::init_change_why(const std::string& attr) const {
  auto find = [&](const std::map<std::string, std::string>& m) -> std::string {
    auto it = m.find(attr);
    if (it != m.end()) return it->second;
    it = m.find("*");
    return it != m.end() ? it->second : "";
  };
  // The change and whose __init__ makes it: the current `self`'s, or (in a submodule) ModelNew's
  // to all of its modules.
  std::string settings = find(init_settings_changed_), values = find(init_values_changed_);
  std::string settings_by = self_name(), values_by = self_name();
  const bool sub = !self_path_.empty();
  if (sub && settings.empty() && !model_settings_all_.empty()) {
    settings = model_settings_all_;
    settings_by = "ModelNew";
  }
  bool model_values = false;
  if (sub && values.empty() && !model_values_all_.empty()) {
    values = model_values_all_;
    values_by = "ModelNew";
    model_values = true;
  }
  if (settings.empty() && values.empty()) return "";
  // ModelNew's own weight mapped by place, whose initialisation own_params_by_place checks.
  if (!sub && std::find(own_params_.begin(), own_params_.end(), attr) != own_params_.end() &&
      !is_parameter(C.P, attr))
    return "";
  const std::string a = "`self." + scoped(attr) + "`";
  if (!settings.empty())
    return a + ", which " + settings_by + "'s __init__ changes after building it, by " + settings +
           " (kernrl reads a layer's settings from its constructor and its tensors from the "
           "reference, as built)";
  // The suite's tensors are the reference's after its __init__: the same as ModelNew's where
  // its __init__ is the reference's. (A submodule's own change is never compared.)
  const bool comparable = !sub || model_values;
  std::string as_ref;
  if (comparable) {
    as_ref = layers_built_as_reference();
    if (as_ref.empty()) return "";
  }
  return a + ", whose tensors " + values_by + "'s __init__ changes in place after building it, " +
         "by " + values + " (kernrl gives them the reference's values" +
         (comparable ? ": it follows such a change only where ModelNew's __init__ is the "
                       "reference's, and " +
                           as_ref
                     : std::string()) +
         ")";
}

}  // namespace kernrl::kbimport::py
