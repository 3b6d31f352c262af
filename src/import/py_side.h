// The Python side of the KernelBench converter (py_*.cpp): the module read symbolically, its
// forward() run with values kernrl knows. Internal to the converter.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "import/converter.h"

namespace kernrl::kbimport::py {

inline bool tok_is(const PyTok& t, const char* text) {
  return t.text == text && (t.kind == PyTok::Op || t.kind == PyTok::Name);
}

// `torch.nn.Sequential` or `nn.Sequential`, a resolved dotted name.
inline bool is_sequential(const std::string& f) {
  return f == "torch.nn.Sequential" || f == "nn.Sequential";
}

// The expression of toks[begin, end), or nullptr where it does not parse.
inline PyExprP try_parse_expr(const std::vector<PyTok>& toks, size_t begin, size_t end) {
  try {
    return py_parse_expr(toks, begin, end);
  } catch (const ImportError&) {
    return nullptr;
  }
}

// A Python block: a def's or a class's body lines.
struct Block {
  size_t begin = 0, end = 0;  // indices into lines
};

inline Block body_of(const std::vector<PyLine>& lines, size_t header) {
  Block b{header + 1, header + 1};
  while (b.end < lines.size() && lines[b.end].indent > lines[header].indent) ++b.end;
  return b;
}

// The clauses of the `if`/`elif`/`else` chain whose `if` is lines[i], within lines[0, to): each
// clause's header line and the end of its body.
inline std::vector<std::pair<size_t, size_t>> if_chain(const std::vector<PyLine>& lines, size_t i,
                                                       size_t to) {
  std::vector<std::pair<size_t, size_t>> clauses;
  size_t h = i;
  while (h < to) {
    const auto& ct = lines[h].toks;
    if (lines[h].indent != lines[i].indent ||
        !(h == i ? tok_is(ct[0], "if") : tok_is(ct[0], "elif") || tok_is(ct[0], "else")))
      break;
    size_t e = h + 1;
    while (e < to && lines[e].indent > lines[i].indent) ++e;
    clauses.push_back({h, e});
    h = e;
    if (tok_is(ct[0], "else")) break;
  }
  return clauses;
}

// The index of the first top-level ':' of a compound statement's header (0 when none).
inline size_t header_colon(const std::vector<PyTok>& toks) {
  int d = 0;
  for (size_t i = 0; i < toks.size(); ++i) {
    const PyTok& t = toks[i];
    if (t.kind != PyTok::Op) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") ++d;
    if (t.text == ")" || t.text == "]" || t.text == "}") --d;
    if (d == 0 && t.text == ":") return i;
  }
  return 0;
}

class PySide {
 public:
  PySide(Converter& c, const std::string& python) : C(c), src_(python) {}

  struct Result {
    Val ret;
    std::string fn_names;  // host functions called, for the header comment
  };

  Result run();

  std::vector<std::string> host_calls;

 private:
  Converter& C;
  const std::string& src_;
  std::vector<PyLine> lines_;
  std::map<std::string, std::string> aliases_;  // import aliases: F -> torch.nn.functional
  std::map<std::string, PyExprP> module_vars_;
  std::set<std::string> module_defs_;
  std::map<std::string, PyExprP> init_attrs_;  // self.X = expr in ModelNew.__init__
  // Attributes __init__ sets more than once or not by one top-level `self.X = value`.
  std::set<std::string> init_attrs_changed_;
  // Attributes __init__ changes in place (`self.sizes.append(n)`, `self.w[0] = 1`).
  std::set<std::string> init_attrs_mutated_;
  // Attributes __init__ assigns inside after setting them (`self.t.layers[0].norm_first = True`):
  // that statement and its line, for the message (not followed).
  std::map<std::string, std::string> init_attrs_inside_;
  // Attributes __init__ sets under an `if` kernrl cannot decide: why not (for the message).
  std::map<std::string, std::string> init_attrs_undecided_;
  bool init_setattr_ = false;  // __init__ calls setattr with a name kernrl cannot read
  int init_depth_ = 0;         // nested evaluations of __init__ values (init_computed)
  // `self.X = nn.Parameter(...)` in ModelNew.__init__, in statement order; and the X of
  // `nn.init.kaiming_uniform_(self.X, a=math.sqrt(5))` statements there (the initialisation
  // torch's Linear and ConvNd layers give their weight), in statement order; `other_inits_`: any
  // other call of nn.init or of a random draw in __init__.
  std::vector<std::string> own_params_, kaiming_inits_;
  bool other_inits_ = false;
  // What __init__ (ModelNew's, or a submodule class's) does to an attribute after building it
  // other than by assigning it again (py_init_changes.cpp): attribute ("*": all of `self`) -> the
  // statement and its line. Values: an in-place tensor method or an nn.init function given it
  // (which the suite's tensors reflect where ModelNew's __init__ is the reference's); settings:
  // any other change (an assignment inside it, also through another name or a loop over
  // self.modules(), self.apply, a function of the file given it).
  std::map<std::string, std::string> init_values_changed_, init_settings_changed_;
  std::string model_values_all_, model_settings_all_;          // ModelNew's "*" entries
  std::vector<std::pair<int, std::vector<PyTok>>> init_read_;  // __init__'s statements read
  std::set<int> init_kaiming_lines_;  // the lines of the kaiming_inits_ statements
  void scan_init_changes();
  // Why forward cannot read `self.attr` after those changes ("" when it can).
  std::string init_change_why(const std::string& attr) const;
  std::set<std::string> init_params_;
  // Names ModelNew's __init__ binds itself: the expression of one bound once at its top by
  // `name = value`, else null (not followed). See init_local.
  std::map<std::string, PyExprP> init_locals_;
  // A name read by an __init__ expression (an attribute's value, a layer's argument) that
  // __init__ binds itself: its value where it is bound once at the top of __init__, else Unknown
  // naming it; nullopt for a name __init__ does not bind.
  std::optional<Val> init_local(const std::string& name, int depth = 0);
  // An attribute's value computed in __init__ from its arguments and locals (`k if s is None else
  // s`, `(k - 1) // 2`, `1.0 / math.sqrt(d)`): arithmetic, comparisons and pure builtins only;
  // Unknown otherwise.
  Val init_computed(const std::string& attr, const PyExprP& v);
  // The expressions the readers of layers __init__ builds through functions and loops
  // (py_init_methods.cpp, py_init_lists.cpp) take: a value of arithmetic, comparisons,
  // `a if c else b` and the pure builtins (`int`, `float`, `bool`, `min`, `max`, `abs`, `round`,
  // `math.*`) that the module does not bind itself, never `self`; and a standard torch.nn layer's
  // constructor call of such values (a class name, not a container, a parameter or `nn.init` /
  // `nn.functional`), or an nn.Sequential of such calls.
  bool init_value_expr(const PyExprP& x) const;
  // Whether the tensor a creation call `torch.F(dims...)` (or `torch.F((dims))`) of __init__
  // makes has `want`'s shape at every size set of the problem.
  bool creates_shape(const PyExprP& creation, const TensorSpec& want);
  bool init_layer_expr(const PyExprP& x) const;
  // ModelNew.__init__'s parameters in order, each with its default's tokens (empty: none), and
  // the value each takes when KernelBench builds ModelNew(*get_init_inputs()) (py_torch.cpp).
  std::vector<std::pair<std::string, std::vector<PyTok>>> init_signature_;
  std::map<std::string, Val> init_args_;
  std::set<std::string> class_defs_;         // methods of ModelNew
  std::map<std::string, int> ext_by_var_;    // "name" or "self.name" -> ext index
  std::map<std::string, int> param_tensor_;  // problem parameter -> tensor
  std::map<std::string, Val> self_overrides_;
  // What `self` is: "" for ModelNew, else the module path of the submodule whose forward runs
  // (`features.3`), an instance of the class of the file at lines_[self_class_line_].
  std::string self_path_;
  size_t self_class_line_ = 0;
  int submodule_depth_ = 0;  // nested submodule calls
  // The state that describes `self` (its __init__ as read, its methods), swapped out while a
  // submodule's forward runs (submodule_call) and back after.
  struct SelfScope {
    std::map<std::string, PyExprP> init_attrs;
    std::set<std::string> init_attrs_changed, init_attrs_mutated;
    std::map<std::string, std::string> init_attrs_inside;
    std::map<std::string, std::string> init_attrs_undecided, init_method_why;
    bool init_setattr = false;
    std::vector<std::string> own_params, kaiming_inits;
    bool other_inits = false;
    std::map<std::string, std::string> init_values_changed, init_settings_changed;
    std::set<std::string> init_params;
    std::map<std::string, PyExprP> init_locals;
    std::vector<std::pair<std::string, std::vector<PyTok>>> init_signature;
    std::map<std::string, Val> init_args;
    std::set<std::string> class_defs;
    std::map<std::string, size_t> method_headers;
    std::map<std::string, Val> self_overrides;
    std::string self_path;
    size_t self_class_line = 0;
  };
  void swap_scope(SelfScope& s);
  // An attribute __init__ sets from a call of a method of the class or of a function of the
  // module that returns an nn.Sequential (`self.b = self._make_block(32, 2)`): nullopt for a call
  // of none such, else the same nn.Sequential built in place, the function's parameters
  // replaced by the call's arguments (null where kernrl refuses it, *why saying why).
  std::optional<PyExprP> init_method_sequential(const PyExprP& call, std::string* why);
  void read_init_methods();  // rewrites init_attrs_ so (py_init_methods.cpp)
  // An attribute ModelNew's __init__ sets to `nn.Sequential(*NAME)` of a list of layers NAME it
  // builds at its top level (in loops, through functions it defines inside itself): nullopt for
  // an attribute set otherwise, else the same nn.Sequential built in place (null where kernrl
  // refuses it, *why saying why; init_list_why_ keeps it). (py_init_lists.cpp) Its layers are
  // taken as built so (rel_layer_ctor) only where ModelNew builds its layers as the reference
  // does: their settings are then the reference's, whose parameters the suite has.
  std::optional<PyExprP> init_list_sequential(const std::string& attr, std::string* why);
  std::map<std::string, PyExprP> init_list_built_;
  std::map<std::string, std::string> init_list_why_;
  std::map<std::string, std::string> init_method_why_;  // attributes refused there: why
  // `self.<attr>` as a module path from ModelNew (`features.3.squeeze` for `self.squeeze` of the
  // submodule `features.3`), and a module path as one relative to the current `self` (nullopt
  // for a path outside it).
  std::string scoped(const std::string& attr) const {
    return self_path_.empty() ? attr : self_path_ + "." + attr;
  }
  std::optional<std::string> relative(const std::string& path) const;
  // The name `self` has in messages: ModelNew, or the submodule's class and path.
  std::string self_name() const;
  // Reads the body of the class at lines_[cls_line] (its methods, __init__ through read_init);
  // the line of its forward's `def` in *forward_header (0: none).
  void read_class(size_t cls_line, bool* any_inline, bool* load_files, size_t* forward_header);
  // The class of the file whose instance ModelNew's __init__ builds at `path` (relative to the
  // current `self`): its `class` line, and the constructor call; nullopt when the layer is not
  // built by such a call (*why says why not where it is a class of the file kernrl cannot follow).
  std::optional<std::pair<size_t, PyExprP>> file_class_ctor(const std::string& path,
                                                            std::string* why);
  bool file_instance(const Val& layer);  // a Layer built by file_class_ctor (or refused there)
  // The module path of a file_instance that holds the layer at `path` (`block` for
  // `block.linear`), "" for none: such a layer is followed within that instance's forward only.
  std::string held_by_file_instance(const std::string& path);
  // Binds a submodule's __init__ parameters (init_signature_) to its constructor's arguments
  // (evaluated where the parent builds it), defaults evaluated at module level.
  std::vector<Val> sub_pos_args_;
  std::vector<std::pair<std::string, Val>> sub_kw_args_;
  void bind_submodule_args();
  size_t class_line_ = 0;
  bool have_class_ = false;
  Block forward_{0, 0};
  size_t forward_header_ = 0;
  bool have_forward_ = false;
  int module_eval_depth_ = 0;

  // ---------------------------------------------------------------- module scan
  std::string resolve(const std::string& dotted) const;

  void scan_imports(const PyLine& l);

  bool is_load_inline(const PyExprP& e) const;
  bool is_load_files(const PyExprP& e) const;

  // The value of a string expression of the module (sources are usually module-level strings).
  std::vector<std::string> strings_of(const PyExprP& e, int line);

  std::string format_fstring(const std::string& text, int line);
  // What Python's str() writes for a module constant's literal (a number or a plain string), or
  // nothing where kernrl does not know it.
  static std::optional<std::string> field_text(const PyExpr& c);

  PyExprP kwarg(const PyExprP& call, const char* name, size_t position);

  int add_ext(const std::string& var, const PyExprP& call, int line);
  // The strings of load_inline's flags argument `what` (a list or tuple of strings, a name bound
  // once at module level to one, `+` of them), and the macros their -D and -U flags leave
  // defined (NAME -> value) as the shell, nvcc (`nvcc`) or the host compiler read them; refused
  // where kernrl cannot tell.
  std::vector<std::string> flag_items(const PyExprP& e, const std::string& what, int line);
  std::map<std::string, std::string> flag_macros(const std::vector<std::string>& items, bool nvcc,
                                                 int line);

  // Splits "target = value" at the top-level '='.
  static size_t assign_at(const std::vector<PyTok>& t);

  void forget_rebound_module_names();
  // Module-level names bound other than once at the top level, and how (not known).
  std::map<std::string, std::string> module_rebound_;
  void scan_module();

  bool read_register_buffer(const std::vector<PyTok>& lt);
  void read_init(size_t header, const Block& b, bool* any_inline, bool* load_files);
  void read_init_call(const std::vector<PyTok>& lt);
  // The truth of an `if` condition of __init__ (at lines_[line]; __init__'s body starts at
  // lines_[from]) from the constructor's arguments, module constants and what __init__ set
  // before it, the same at every size set; nullopt with the reason in *why otherwise.
  std::optional<bool> init_condition(const PyExprP& cond, size_t from, size_t line,
                                     std::string* why);

  // ---------------------------------------------------------------- values
  Val tensor_val(int idx);

  std::vector<Val> shape_of(const TensorSpec& t);

  Val problem_param(const std::string& name, const std::string& as_written);
  // The problem parameter ModelNew's own `self.<attr> = nn.Parameter(torch.empty(...))` is, on
  // a suite built from KernelBench, when KernelBench's seeding gives it that parameter's values:
  // every parameter of ModelNew is its own, each at the same place in the parameters' order as a
  // parameter of the reference's layers, of the same shape at every size set, and initialised as
  // that layer initialises it: a weight of a Linear or convolution without bias drawn with
  // kaiming_uniform_(a=sqrt(5)) in the same order, or a normalisation layer's weight created with
  // torch.ones and bias with torch.zeros (no draw). nullopt otherwise.
  std::optional<std::string> positional_param(const std::string& attr, const PyExprP& call);
  // "" when ModelNew's own parameters are the problem's by place (positional_param), else why not.
  std::string own_params_by_place();
  std::string own_params_why_;  // the last reason positional_param refused, for the message
  // How ModelNew's own parameter `attr` is created: "empty", "ones" or "zeros" for
  // `nn.Parameter(torch.<that>(dims))` (no keyword arguments), else "".
  std::string own_param_init(const std::string& attr) const;
  // torch.nn layers whose construction draws the weight with kaiming_uniform_(a=sqrt(5)) (and a
  // bias, if any), and the normalisation layers, whose weight is ones and bias zeros (no draw).
  static const std::set<std::string>& kaiming_layers();
  static const std::set<std::string>& norm_layers();
  // The indices of the problem's tensors that are the reference's parameters
  // (nn.Module.parameters(), in order), not its buffers (normalisation layers' running
  // statistics).
  std::vector<size_t> reference_params() const;

  Val from_problem_name(const std::string& n);
  // A module's `training` flag: true (KernelBench never calls eval(); kernrl's references run in
  // training mode), unless the file changes a mode anywhere (then unknown: host_logic where it
  // is used, naming `what`).
  Val training_mode(const std::string& what);

  Val self_attr(const std::string& attr);

  Val init_value(const std::string& attr, const PyExprP& v);

  Val module_value(const std::string& name);

  static Val number(const std::string& lit);

  // ---------------------------------------------------------------- forward
  struct Env {
    std::map<std::string, Val> locals;
    std::optional<Val> ret;
    bool brk = false, cont = false;  // a `break` or `continue` of the innermost loop
    // Lists made by a list display (`[]`, `[a] * n`) in this function (Val::list_id): the ones
    // its statements may append to; and those a `for` of it iterates over now.
    std::set<int> own_lists, iterating;
  };
  int next_list_id_ = 0;
  // A new list made here (a list display): its own identity, which `env` may change in place.
  Val own_list(Env& env, Val list);
  // `NAME.append(x)` as a statement of forward (or a function of the file it calls): the list
  // changed in place, in every name and attribute that holds it; false when `e` is no such call.
  bool append_statement(Env& env, const PyExprP& e, int line);
  // `NAME += items` / `NAME *= n` on a list: Python extends the list in place (every name that
  // holds it sees the change), so kernrl does so on a list made in this function and refuses
  // any other.
  void list_augmented(Env& env, const PyExprP& target, const std::string& op, const Val& value,
                      int line);
  // Checks that `name` holds a list `env` may change in place and returns its identity (what:
  // the statement, and verb: what it does, for errors).
  int mutable_list(Env& env, const std::string& name, const std::string& what, const char* verb);
  // Replaces the list `id` by `now` in every name of `env` and attribute of `self` that holds it.
  void replace_list(Env& env, int id, const Val& now);

  // ------------------------------------------------------------- loops over layers
  // (py_loops.cpp) `for`, `while` and list comprehensions in forward, unrolled over what they
  // iterate: lists kernrl knows and the children of an nn.Sequential / nn.ModuleList, whose
  // classes a suite built from KernelBench records (problem.yaml's modules).
  static constexpr int kMaxUnrolled = 4096;  // iterations of all loops of one forward
  int unrolled_ = 0;
  void count_iteration(int line);
  std::string module_class(const Val& layer) const;  // "" when kernrl does not know it
  // Whether ModelNew's __init__ builds the layer at `path` (inside a container) itself, as the
  // torch.nn class `cls`, in place in the constructor call of a container it sets once, at its
  // top, and never changes.
  bool built_in_place(const std::string& path, const std::string& cls) const;
  // The class and its torch.nn bases (problem.yaml's modules, else ModelNew's own constructor).
  std::vector<std::string> module_classes(const Val& layer) const;
  // "" when ModelNew's __init__ builds its layers as the reference's does; else why not.
  std::string layers_built_as_reference() const;  // compare_init_with_reference(), once
  // "" when KernelBench's seeding gives ModelNew's own weights the reference's values (see
  // positional_param), else why not.
  std::string own_params_drawn_as_reference() const;
  // "" when ModelNew's own parameter `self.<attr>`, the problem's parameter of that name, has the
  // reference's values under KernelBench's seeding: created as the reference creates it and,
  // when drawn, after the same draws; else why not (cached per attribute).
  std::string own_param_by_name(const std::string& attr);
  std::map<std::string, std::string> own_param_by_name_why_;
  // "" when ModelNew is a plain nn.Module of torch's (one undecorated __init__, no attribute
  // hooks, torch and nn not rebound), else what is not.
  std::string plain_module() const;
  std::string compare_init_with_reference() const;
  // `self.<attr>` where ModelNew's __init__ builds it, after the reference's statements, as a
  // list of the layers of one of its containers (`plan = []`, `for m in self.features:`,
  // `plan.append(m)`, or `plan.extend(list(m))` for an nn.Sequential child, `self._plan =
  // plan`): those layers, from problem.yaml's modules; nullopt where __init__ does not.
  std::optional<Val> listed_layers(const std::string& attr);
  mutable std::optional<std::string> layers_built_;
  std::vector<Val> layer_children(const Val& layer, const std::string& text) const;
  std::vector<Val> items_of(const Val& v, const std::string& text) const;
  // obj[start:stop:step] of a list (a shape, a tuple) or of an nn.Sequential / nn.ModuleList's
  // layers, as Python slices: bounds known integers or None.
  Val sliced(Env& env, const Val& obj, const PyExprP& slice, const std::string& text);
  size_t exec_for(Env& env, size_t i, size_t next);
  size_t exec_while(Env& env, size_t i, size_t next);
  // Runs a loop's body once: false when a `break` ended the loop.
  bool loop_body(Env& env, size_t i, size_t next);
  // With stop_at (a generator consumed by any() or all(), text the call): items are made one at a
  // time and the first whose truth is *stop_at is the last, as Python stops there; each item's
  // truth must be known at every size set.
  Val comprehension(Env& env, const PyExprP& e, std::optional<bool> stop_at = std::nullopt,
                    const std::string& text = "");
  Val builtin_isinstance(const std::vector<Val>& args, const std::string& text) const;

  // ---------------------------------------------------------------- PyTorch operators
  // (py_torch.cpp) init_args_ from the reference's get_init_inputs() (in the problem's PyTorch
  // text) and the defaults of ModelNew.__init__.
  void bind_init_args();
  // A constructor parameter's value: init_args_, else the problem's scalar or size of that name.
  Val init_param_value(const std::string& name);
  // A value of __init__ (a layer's constructor arguments): numbers, tuples, parameters, constants.
  Val init_expr(const PyExprP& e, int depth = 0);
  // The constructor arguments of layer `self.<name>` by the class's parameter names, defaults
  // filled in; nullopt for a class kernrl does not know.
  std::optional<std::map<std::string, Val>> layer_config(const Val& layer);
  // The constructor call of ModelNew's layer at `path` (`conv`, `features.0`): its own
  // attribute's, or the argument of the nn.Sequential / nn.ModuleList that built it in place;
  // null when kernrl cannot tell.
  PyExprP layer_ctor(const std::string& path) const;
  PyExprP rel_layer_ctor(const std::string& path) const;  // `path` relative to the current self
  // (py_composites.cpp) A layer that a composite torch.nn module (nn.TransformerEncoder,
  // nn.TransformerEncoderLayer, nn.MultiheadAttention) builds inside itself, at `path`: its class
  // and a constructor call giving its settings as torch builds it from the composite's own call.
  struct Inner {
    std::string cls;           // its torch.nn class
    PyExprP call;              // its constructor call (null for a TransformerEncoder's layers)
    PyExprP clones;            // a TransformerEncoder's layers: the encoder layer's call
    Val count;                 // and their number (num_layers)
    bool non_dynamic = false;  // MultiheadAttention's out_proj (a Linear subclass)
    std::string owner;         // `nn.TransformerEncoderLayer `self.t.layers.0``, for messages
    std::string why;           // kernrl cannot tell its settings: why not
  };
  // nullopt where `path` is no layer a composite kernrl models builds.
  std::optional<Inner> built_inside(const std::string& path, int depth = 0);
  static bool inner_class_matches(const Inner& in, const std::string& elem);
  // The torch.nn class a constructor call names (`nn.Linear(...)`: Linear), "" for none.
  std::string torch_class_of(const PyExprP& call) const;
  // A composite's constructor arguments by parameter name; nullopt (*why) for a call kernrl does
  // not bind (an argument it does not model, `*args`).
  std::optional<std::map<std::string, PyExprP>> composite_args(const std::string& cls,
                                                               const PyExprP& call,
                                                               std::string* why) const;
  // "" where the current self's __init__ changes nothing of its attribute `top` after building
  // it (reads it once, in its one assignment), else why it may.
  std::string composite_untouched(const std::string& top) const;
  // layer_config's settings of a composite: its attributes (the constructor arguments that are
  // none kept as `#name`), the activation of an nn.TransformerEncoderLayer as F.relu or F.gelu.
  void composite_settings(const std::string& cls, const PyExprP& call, const std::string& path,
                          std::map<std::string, Val>& cfg);
  // Whether the layer certainly has the attribute `name` (getattr with a default): a layer a
  // composite builds inside it, or a setting of a class whose settings are all attributes.
  std::optional<bool> has_setting(const Val& layer, const std::string& name);
  // A PyTorch operator forward calls, as a torch step (nullopt: not one kernrl maps).
  std::optional<Val> torch_call(Env& env, const std::string& name, const PyExprP& e);
  Val layer_call(Env& env, const Val& layer, const PyExprP& e);
  // The same, of `input` where not null (a child of an nn.Sequential `e` calls), else of e's
  // argument.
  Val layer_call_on(Env& env, const Val& layer, const PyExprP& e, const Val* input,
                    const std::string& text);
  // (py_rnn.cpp) A call of an nn.LSTM / nn.GRU layer as one torch step (lstm, gru), its
  // `result` the one forward uses: the call an assignment unpacks (`target`, with the names of
  // it that the function's body reads, `used`) or an index picks (`index`). rnn_unpacking sets
  // rnn_use_ before a tuple assignment's value is evaluated; rnn_call consumes it.
  struct RnnUse {
    PyExprP call, target;
    std::set<std::string> used;
    int index = -1;
  };
  RnnUse rnn_use_;
  void rnn_unpacking(const std::vector<PyTok>& t, size_t from, size_t eq, int line,
                     const PyExprP& target, const PyExprP& value);
  Val rnn_call(Env& env, const Val& layer, const PyExprP& e);
  // The constructor arguments of an nn.LSTM / nn.GRU layer by name, defaults filled in; nullopt
  // when kernrl does not read its constructor call.
  std::optional<std::map<std::string, Val>> rnn_config(const Val& layer, const std::string& text);
  // conv1d/2d/3d on [input, weight, bias, stride, padding, dilation, groups] (stride, padding and
  // dilation an integer or a list of `nd`).
  Val conv_step(const std::string& op, size_t nd, std::vector<Val> a, const std::string& text);
  Val conv_transpose_step(size_t nd, std::vector<Val> a, const std::string& text);
  Val matmul(const Val& a, const Val& b, const std::string& text);
  // transpose / swapaxes / permute / narrow / select / unfold / split / chunk of a tensor in
  // forward (a suite's problem): lazy views (Converter::lazy_view), copied by torch steps where
  // an operator reads them (split and chunk: a tuple of pieces, their count the same at every
  // size set).
  // x[a:b], x[:, a:b], x[:, 0], x[..., -1]: basic indexing, slices (step 1) as narrow views,
  // integers as select views, one `...`; other indexes are refused.
  Val tensor_index(Env& env, const Val& obj, const PyExprP& idx, const std::string& text);
  // x.select(dim, index), x[..., i]: a select view (Converter::lazy_view), the index known at
  // every size set, negative at all of them (counted from the end) or at none, within the
  // dimension (else `mismatch`: PyTorch raises).
  Val select_view(const Val& obj, const Val& dim, const Val& index, const std::string& text);
  Val view_op(const Val& obj, const std::string& m, std::vector<Val> args,
              const std::vector<std::pair<std::string, Val>>& kwargs, const std::string& text);
  // Appends a torch step of `op` on `args` whose result (a new buffer of `shape`) it returns.
  Val torch_step(const std::string& op, const std::vector<Val>& args, std::vector<Val> shape,
                 std::string dtype, const std::string& text);
  const TensorInfo& tensor_of(const Val& v, const std::string& text);
  // x.view/reshape/flatten/squeeze/unsqueeze/view_as(...): the tensor itself when the shape is
  // unchanged, else a view (TensorInfo::base) of its buffer with the new shape.
  Val reshaped(Env& env, const Val& obj, const std::string& m, const std::vector<Val>& args,
               const PyExprP& e, const std::string& text);

  Result run_forward();

  [[noreturn]] void torch_op(const std::string& what, const std::string& text);

  void exec_lines(Env& env, size_t begin, size_t end);
  // Whether lines_[header, next) only update BatchNorm running statistics in place: a
  // `with torch.no_grad():` block, or one statement (`bn.num_batches_tracked.add_(1)`); the
  // updated statistics' (line, tokens before the statistic) in *updated.
  bool updates_running_stats_only(size_t header, size_t next,
                                  std::vector<std::pair<size_t, size_t>>* updated) const;
  std::set<std::string> stale_;  // running statistics forward updated (skipped): not read again
  std::set<std::string> stats_read_;  // running statistics forward has read (by module path)
  // Records the running statistics among values forward passes to the extension or a torch step.
  void note_stat_reads(const std::vector<Val>& args);
  bool is_running_stat(const Val& v) const;
  static bool same_stat_name(const std::string& tensor, const std::string& layer,
                             const std::string& stat);
  bool same_stat(const Val& v, const std::string& layer, const std::string& stat) const;
  void note_once(const std::string& text);

  void exec_inline(Env& env, const PyLine& l, size_t from);

  size_t exec_if(Env& env, size_t i, size_t end);

  std::optional<bool> truth(const Val& v);

  void exec_simple(Env& env, const std::vector<PyTok>& t, size_t from, int line);

  void bind(Env& env, const PyExprP& target, const Val& value, int line);

  void name_alloc(const Val& v, const std::string& name);

  Val binop(const std::string& op, const Val& a, const Val& b, const std::string& text);
  // Python's `+ - * /` of two numbers, one of them a float or a true division (a Ratio) kernrl
  // knows only as an expression of the sizes (`1.0 / D_out`, `scale * n`): a real expression
  // (docs/kernel-format.md) computed as Python does, in double, checked to evaluate at every size
  // set. nullopt where `op` or an operand is not such (`//` and `%` of a float are refused).
  std::optional<Val> real_binop(const std::string& op, const Val& a, const Val& b,
                                const std::string& text);
  // An operand of such an operation as kernrl expression text (an integer as written: converted
  // where it meets the double); and the real expression `e` as a Float, refused (`text`) where it
  // does not evaluate to a finite number at some size set.
  std::string real_operand(const Val& v, const std::string& text);
  Val real_value(const std::string& e, const std::string& text);
  // `x * s`, `s * x`, `x / s` (`scalar_first`: `s * x`): a tensor by a Python number, a `mul` or
  // `div` torch step on a suite built from KernelBench (torch_op_in_forward otherwise).
  Val scalar_step(const std::string& op, const Val& tensor, const Val& number, bool scalar_first,
                  const std::string& text);

  Val eval(Env& env, const PyExprP& e);
  // The value of an f-string of forward (its text as the parser keeps it) whose fields are each
  // an integer kernrl knows or a plain string, read from names, numbers and integer arithmetic
  // (`f"weight_ih_l{l}"`, `f"{2 * i + 1}"`); nullopt for any other field, a format spec or a
  // conversion (`{l:02d}`, `{s!r}`, `{x=}`).
  std::optional<std::string> formatted(Env& env, const std::string& text);
  // `getattr(obj, name)` with a name kernrl knows: what `obj.<name>` is.
  Val builtin_getattr(Env& env, const PyExprP& e);
  // `self.modules()`, `self.children()` of ModelNew (the call `e`) as the iterable of a
  // generator that any() or all() consumes (`walk_ok_`): ModelNew, then the reference's
  // submodules in the order nn.Module registers them (problem.yaml's modules), where ModelNew
  // builds its layers as the reference does. Elsewhere refused: modules() yields a module
  // registered under two names once, which `modules` does not tell (any() and all() do not depend
  // on it); named_modules() and named_children() (their names would) are refused.
  Val module_walk(const PyExprP& e, const std::string& m);
  const PyExpr* walk_ok_ = nullptr;

  Val attr(Env& env, const PyExprP& e);

  std::vector<Val> shape_args(Env& env, const PyExprP& call, size_t first, std::string* dtype);

  Val as_int(const Val& v, const std::string& text);

  Val call(Env& env, const PyExprP& e);
  // A call of a function of the file (a method of ModelNew, `self.helper(x)`, or a module-level
  // `def`) whose `def` is at lines_[header]: its body runs as forward's does, with the arguments
  // bound to its parameters (defaults evaluated at module level); what it returns.
  Val call_def(Env& caller, size_t header, bool method, const PyExprP& e);
  // `assert cond[, msg]` in a function of the module run for a value of __init__
  // (init_computed): cond must be true; false is a mismatch (Python raises), unknown host_logic.
  void exec_init_assert(Env& env, const PyLine& l);
  // A call of a submodule of a class of the file (`self.block(x)`, `m(x)` for a child of an
  // nn.Sequential): its forward's body runs as ModelNew's methods run, with `self` that
  // submodule: its attributes those its own __init__ sets from the constructor's arguments.
  Val submodule_call(Env& env, const Val& layer, size_t cls_line, const PyExprP& ctor,
                     const PyExprP& e);
  // call_def with its arguments evaluated already (positional, then keywords).
  Val run_def(size_t header, bool method, const std::vector<Val>& args,
              const std::vector<std::pair<std::string, Val>>& kwargs);
  std::set<std::string> stats_copied_;  // running statistics given to the extension as a copy
  int with_depth_ = 0;                  // `with` blocks forward is running the body of
  int def_depth_ = 0;                   // nested calls of the file's functions
  int module_depth_ = 0;                // module constants defined through other module constants
  std::map<std::string, size_t> method_headers_;      // ModelNew's methods: their def lines
  std::map<std::string, size_t> module_def_headers_;  // the module's functions: their def lines

  Val tensor_method(Env& env, const Val& obj, const std::string& m, const PyExprP& e);
};

}  // namespace kernrl::kbimport::py
