// The C++ host side of a load_inline module (host_*.cpp), shared by its files: the interpreter
// class and its helpers. Internal to the converter.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "import/converter.h"

namespace kernrl::kbimport::host {

constexpr int kMaxCallDepth = 24;
constexpr int kMaxLoopIterations = 4096;
constexpr int kMaxMacroDepth = 32;

inline std::string strip_std(std::string t) {
  for (const char* p : {"std::", "::", "c10::", "at::", "torch::"})
    if (starts_with(t, p)) t = t.substr(std::char_traits<char>::length(p));
  return t;
}

inline bool is_punct(const CTok& t, const char* p) {
  return t.kind == CTok::Punct && t.text == p;
}
inline bool is_ident(const CTok& t, const char* p) {
  return t.kind == CTok::Ident && t.text == p;
}

// Where T[k] opens template arguments (`f<1, 2>(n)`, `x.packed_accessor32<float, 3>()`,
// `S<T>::v`, `V<int>{...}`: a `<` after a name, matched, followed by `(`, `::` or `{`), the index
// of its `>`; else 0. Tokens from `from` on are T's range, `end` its end.
inline size_t template_args_close(const std::vector<CTok>& T, size_t k, size_t from, size_t end) {
  if (!is_punct(T[k], "<") || k <= from || T[k - 1].kind != CTok::Ident) return 0;
  size_t c = c_match(T, k, end);
  if (c < end && c + 1 < end &&
      (is_punct(T[c + 1], "(") || is_punct(T[c + 1], "::") || is_punct(T[c + 1], "{")))
    return c;
  return 0;
}

// Library prefixes: a call to one of these is a library call, never converted.
inline std::string library_of(const std::string& name) {
  static const std::pair<const char*, const char*> libs[] = {
      {"cublasLt", "cuBLASLt"}, {"cublas", "cuBLAS"},   {"cudnn", "cuDNN"},
      {"cufft", "cuFFT"},       {"curand", "cuRAND"},   {"cusparse", "cuSPARSE"},
      {"cusolver", "cuSOLVER"}, {"thrust::", "Thrust"}, {"cub::Device", "CUB (device-wide)"},
      {"cutlass::", "CUTLASS"}, {"nccl", "NCCL"},       {"cute::", "CuTe"}};
  for (const auto& [prefix, lib] : libs)
    if (starts_with(name, prefix)) return lib;
  return "";
}

// A pointer's offset from its tensor's start, in elements of the tensor's dtype (Val::Ptr).
inline Val ptr_offset(const Val& p) {
  return p.items.empty() ? make_int(0) : p.items[0];
}
inline bool has_offset(const Val& p) {
  Val o = ptr_offset(p);
  return !(o.k && *o.k == 0);
}

struct Var {
  Val v;
  int depth = 0;
  // Why an assignment to it is refused ("" where it is not): a reference (`Args& r = a;`), or a
  // variable a reference refers to; kernrl holds values, not references to them.
  std::string ref;
  // A variable of a C integer type narrower than 64 bits, or of `float`: its type, to which an
  // assignment converts (`int8_t c; c = 200;` holds -56), "" otherwise.
  std::string ctype;
};

struct Frame {
  Frame* parent = nullptr;  // a lambda sees the variables of the frame it is written in
  std::vector<std::map<std::string, Var>> scopes;
  std::map<std::string, std::string> types;  // type aliases (scalar_t -> float)
  std::string fn;
  int ext = -1;
  const std::vector<CTok>* T = nullptr;
  std::optional<Val> ret;
  bool returned = false;
  int depth_base = 0;   // depth of scopes[0], counting the frames it nests in
  int loop_depth = -1;  // while a loop body runs as a repeat: the body's depth; assignments to
                        // variables of shallower depth are host logic
  size_t tensors0 = 0;  // Converter::tensors' size when the function (or lambda) began
};

struct FnRef {
  const CItem* item = nullptr;
  const ExtModule::Source* src = nullptr;
  // Another definition of that name (an overload, an explicit specialization `template <>`):
  // which one C++ calls depends on the arguments' types, which kernrl does not resolve.
  bool ambiguous = false;
};

class Interp {
 public:
  Interp(Converter& c, int ext) : C(c), ext_(ext) {}

  Val call_named(const std::string& fn, std::vector<Val> args,
                 const std::vector<std::pair<std::string, Val>>& kwargs);

 private:
  Converter& C;
  int ext_;
  int call_depth_ = 0;
  int macro_depth_ = 0;

  // Top-level constants of the sources (constexpr int BLOCK = 256;), seen by every host function.
  Frame globals_;
  void load_globals();
  void load_globals(const ExtModule::Source& s, const std::vector<CItem>& items);

  // ---------------------------------------------------------------- lookup
  void collect(const std::vector<CItem>& items, const ExtModule::Source& src,
               const std::string& name, bool kernel, FnRef* out) const;
  FnRef find_function(const std::string& name, bool kernel) const;
  // Whether `type` is a struct, class or union the sources define (`struct CatArgs {...};`).
  bool source_struct(const std::string& type) const;

  // ---------------------------------------------------------------- structs (host_structs.cpp)
  // A plain struct of the source as a kernel argument: its data members in declaration order,
  // each with its launch block field type (i8 ... f64, ptr) and its array length (0: not an
  // array); `why` says why kernrl does not pass it (a member that is no plain scalar, pointer or
  // array of them, a constructor, a base, a bitfield, a reference), with no fields.
  struct StructDecl {
    struct Field {
      std::string name, ctype, type;
      size_t count = 0;
    };
    std::string name, why;
    std::vector<Field> fields;
  };
  std::map<std::string, StructDecl> struct_decls_;
  // `written` without std::, struct and class prefixes.
  static std::string struct_type_name(const std::string& written);
  // The struct `written` names, read once; nullptr when it is no struct of the source.
  const StructDecl* struct_decl(const std::string& written);
  // A Val::Struct of `d` for variable `var`: every field not set (Unknown naming it), or, `zero`,
  // value-initialised (`T a{};`: zeros and null pointers).
  Val new_struct(const StructDecl& d, const std::string& var, bool zero);
  // `v` as the value of field `f` (an integer, a float or a pointer by its type).
  Val struct_field_value(const StructDecl::Field& f, const Val& v, const std::string& what,
                         Frame& fr);

  // ---------------------------------------------------------------- variables
  Var* lookup(Frame& fr, const std::string& name);
  std::string alias(Frame& fr, const std::string& name);
  int depth(Frame& fr);
  void declare(Frame& fr, const std::string& name, Val v);
  int loop_depth(Frame& fr);
  void store(Frame& fr, const std::string& name, const std::vector<std::string>& path, Val v,
             const std::string& what);

  // ---------------------------------------------------------------- conversions
  Val to_int(const Val& v, const std::string& what, Frame& fr);
  // v as a value of an unsigned C type: refused where it is negative at some size set.
  Val as_unsigned(Val v, const std::string& what, Frame& fr);
  Val to_float(const Val& v, const std::string& what, Frame& fr);
  [[noreturn]] void fail_value(const Val& v, const std::string& wanted, const std::string& what,
                               Frame& fr);

  // A C integer type by any of its spellings (`std::int64_t`, `long int`, `unsigned`, `size_t`):
  // its size in bytes and signedness; nullopt for none (`char`, a character to pybind11).
  struct CInt {
    int bytes = 0;
    bool is_signed = true;
  };
  static std::optional<CInt> c_int(const std::string& written);
  // `written` without std:: (anywhere), spaces collapsed: "std::int64_t" -> "int64_t".
  static std::string plain_type(const std::string& written);
  // Integer `v` as a value of the C integer type `t` (written `ctype`). `wrap`: as C++ converts
  // it, a constant beyond t's range wraps to it (two's complement); else (pybind11) such a
  // constant is refused. A value of the sizes must be within t's range at every size set
  // (`unknown_ok`: one kernrl cannot evaluate at each size set is kept as it is).
  Val narrow_int(const Val& v, const CInt& t, const std::string& ctype, bool wrap,
                 const std::string& what, Frame& fr, bool unknown_ok = false);
  // `v` converted to the C integer type `type` (int_type) as C++ converts it at a cast, an
  // argument of a function of the source or a value it returns: an integer as convert_decl
  // converts it (a constant wraps around to a type narrower than 64 bits, a value of the sizes must
  // fit it at every size set), a floating-point value truncated (refused where it is beyond the
  // type's range: undefined in C++).
  Val to_c_int(const Val& v, const std::string& type, const std::string& what, Frame& fr);
  // Float `v` as a value of a C `float` (`f32`) or `double`: a constant rounded to a float's
  // precision (other values are as they were: a float field read back refuses them).
  static Val narrow_float(const Val& v, bool f32);

  // ---------------------------------------------------------------- integer arithmetic
  Val address_arith(const std::string& op, const Val& a, const Val& b, const std::string& what,
                    Frame& fr);
  // `p + n`, `n + p`, `p - n` on a tensor's data pointer: the pointer advanced by n of its
  // pointee type, as an offset in the tensor's elements (docs/kernel-format.md, "Arguments").
  Val pointer_arith(const std::string& op, const Val& a, const Val& b, const std::string& what,
                    Frame& fr);
  Val arith(const std::string& op, const Val& a0, const Val& b0, const std::string& what,
            Frame& fr);
  Val minmax(const std::string& which, const Val& a, const Val& b, const std::string& what,
             Frame& fr);
  Val compare(const std::string& op, const Val& a, const Val& b, const std::string& what,
              Frame& fr);
  // Set by truth() when a condition was decided by the problem's size sets, not by constants.
  bool last_by_sizes_ = false;
  void note_decided(Frame& fr, const std::optional<bool>& cond, const std::string& what);

  // A condition's value when it is the same at every size set of the problem.
  std::optional<bool> truth(const Val& v);
  Val logic(const std::string& op, const Val& a, const Val& b, const std::string& what, Frame& fr);

  // ---------------------------------------------------------------- types
  std::string resolve_type(Frame& fr, const std::string& t);
  bool type_word(Frame& fr, const CTok& t);
  // Whether T[i, end) starts a declaration: a type then a name then = ( { ; , or [.
  bool is_declaration(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);

  // ---------------------------------------------------------------- statements
  size_t find_semi(const std::vector<CTok>& T, size_t i, size_t end);
  size_t close_of(const std::vector<CTok>& T, size_t open, size_t end);
  size_t stmt_end(const std::vector<CTok>& T, size_t i, size_t end);

  // Whether T[i, end) does anything but checks: no launch, no assignment, no call of the source's
  // functions, no return of a value.
  // Whether tokens [i, end) only check and report (no launch, assignment or call of the file's
  // functions); `exits_count`: a return, break, continue or goto is not a check either.
  bool only_checks(const std::vector<CTok>& T, size_t i, size_t end, bool exits_count = false);
  int eval_depth_ = 0;  // nested eval calls (parentheses, calls)

  void exec_range(Frame& fr, size_t i, size_t end);

  void exec_block(Frame& fr, size_t i, size_t end);

  // Runs one statement (or a braced body) T[i, stmt_end).
  void exec_body(Frame& fr, size_t i, size_t end);

  std::string snippet(const std::vector<CTok>& T, size_t i, size_t end);

  size_t exec_stmt(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);

  void eval_statement_expr(Frame& fr, const std::vector<CTok>& T, size_t i, size_t e);

  bool macro_is_check(const Converter::FnMacro& m, int depth = 0);

  size_t exec_if(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);
  // `switch (x) { case A: ...; break; default: ... }` where every size set takes the same case
  // (a dispatch on a kernel size, a head size): that case's statements, falling through to the
  // next as C++ does until a `break`; else host_logic.
  size_t exec_switch(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);
  // A case's statements from `begin` (after its label) before `stop` (the next label or the end
  // of the body): [first, break), the break's position `stop` when it has none.
  std::pair<size_t, size_t> case_statements(const std::vector<CTok>& T, size_t begin, size_t stop);
  // host_branches.cpp: a condition that is not the same at every size set, as arithmetic.
  // A condition's 0-or-1 integer expression over the sizes ("" when it has none).
  static std::string cond_expr(const Val& v);
  static std::string compare_expr(const std::string& op, const std::string& x,
                                  const std::string& y);
  // Whether integer expression `e` evaluates at every size set (num_sms as on an H100, a repeat
  // variable at 0): a branch's value where that branch does not run must still evaluate (no
  // division by zero), since the launch block evaluates every expression at every size set.
  bool evaluates(const std::string& e) const;
  // Why `e` does not evaluate at some size set (the expression error), "" where it does.
  std::string expr_problem(const std::string& e) const;
  // Why the last exec_both_branches could not follow both branches, where that is more than
  // "the launch block cannot branch" (an integer the branches set has no expression the launch
  // block can evaluate); "" otherwise. For exec_if's refusal.
  std::string branch_why_;
  // Whether integer expression `e` is at least 0 at every size set (as `evaluates` sees them).
  bool non_negative(const std::string& e) const;
  // `cond ? a : b` for integers: b + (a - b) * cond.
  static Val select_int(const std::string& cond, const Val& a, const Val& b);
  // Runs both branches of an `if` on copies of the frame: each launch and torch step of the
  // then-branch runs `cond` times, each of the else-branch 1 - cond times, and an integer
  // variable the branches set differently takes select_int's value. Allocations in a branch are
  // buffers at every size set, with rows only where their branch runs (their dimensions must be
  // sizes at every size set). Where one branch
  // returns, the statements [rest_begin, rest_end) after the `if` in its block are the other's;
  // where both return, the function returns merged_return's value. False (nothing changed) when
  // the branches do something else differently (set a non-integer, return only in one).
  // `statements`: each branch is a run of statements (a switch's case), not one statement.
  bool exec_both_branches(Frame& fr, const std::string& cond, size_t then_begin, size_t then_end,
                          size_t else_begin, size_t else_end, bool statements = false,
                          size_t rest_begin = 0, size_t rest_end = 0);
  // What a function returns when the then-branch returns `a` and the else-branch `b`: the value
  // when it is the same, an integer chosen by `cond`, or (on a suite) one branch's tensor copied
  // into the other's buffer by a reshape step where that branch runs (`mark(side)` marks the
  // steps added as the then-branch's or the else-branch's); nullopt when it cannot be one value.
  std::optional<Val> merged_return(Frame& fr, const Val& a, const Val& b, const std::string& cond,
                                   const std::function<void(bool)>& mark);

  bool contains_launch(const std::vector<CTok>& T, size_t i, size_t end);

  size_t exec_for(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);

  // A loop whose trip count depends on the sizes: `for (int i = C; i < E; ++i)` with launches that
  // do not change host state becomes a launch-block repeat {count: E - C, var: i}.
  void run_as_repeat(Frame& fr, const std::vector<CTok>& T, size_t open, size_t s1, size_t s2,
                     size_t close, size_t body, size_t body_end, const std::string& what);

  size_t exec_while(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);

  size_t exec_decl(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);

  size_t next_declarator(const std::vector<CTok>& T, size_t k, size_t e);

  Val construct(Frame& fr, const std::vector<CTok>& T, const std::string& type,
                const std::vector<std::pair<size_t, size_t>>& args, const std::string& what,
                bool braces);

  Val make_dim3(const std::vector<Val>& vals, const std::string& what, Frame& fr);

  Val convert_decl(Frame& fr, const std::string& type, bool ptr, bool has_init, Val v,
                   const std::string& name, const std::string& what);

  std::vector<std::pair<size_t, size_t>> split_args(const std::vector<CTok>& T, size_t i,
                                                    size_t end);

  // ---------------------------------------------------------------- expressions
  struct Ex {
    Frame& fr;
    const std::vector<CTok>& T;
    size_t i, end;
    // The lvalue just parsed: a variable and member/index path ("" name: none).
    std::string lv_name;
    std::vector<std::string> lv_path;
    // The variable (and member path) a method is called on, for the methods that change it
    // (`shape.push_back(n)`); empty when the object is not a variable.
    std::string obj_name;
    std::vector<std::string> obj_path;
    // Set by `&` for the postfix expression that follows it: `&p[i]` is p + i, not a read.
    bool address_of = false;
  };

  Val eval(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end);

  std::string what_of(const Ex& x, size_t from);
  bool at(const Ex& x, const char* p);

  Val comma(Ex& x);

  Val assign(Ex& x);

  Val ternary(Ex& x);
  // `a < b ? a : b` as min(a, b) (and max): the value where the condition is not decided.
  std::optional<Val> ternary_min_max(Ex& x, size_t from, size_t q, size_t colon, size_t else_end,
                                     const std::string& what);

  Val binary(const std::string& op, const Val& a, const Val& b, const std::string& what, Frame& fr);

  template <typename Next>
  Val left(Ex& x, std::initializer_list<const char*> ops, Next next) {
    size_t from = x.i;
    Val v = next();
    for (;;) {
      const char* found = nullptr;
      for (const char* op : ops)
        if (at(x, op)) found = op;
      if (!found) return v;
      ++x.i;
      Val r = next();
      x.lv_name.clear();
      v = binary(found, v, r, what_of(x, from), x.fr);
    }
  }
  Val short_circuit(Ex& x, const char* op, const std::function<Val()>& next);
  // Kernels launched and tensors made so far: what evaluating an expression may add.
  // (and variables written: `g++` in a branch of `?:`).
  size_t side_effects() const { return C.launches.size() + C.tensors.size() + writes_; }
  size_t writes_ = 0;  // assignments so far (store)
  Val logical_or(Ex& x);
  Val logical_and(Ex& x);
  Val bit_or(Ex& x);
  Val bit_xor(Ex& x);
  Val bit_and(Ex& x);
  Val equality(Ex& x);
  Val relational(Ex& x);
  Val shift(Ex& x);
  Val additive(Ex& x);
  Val multiplicative(Ex& x);

  bool cast_ahead(Ex& x, size_t open, size_t close);

  Val cast_to(Frame& fr, const std::string& type_text, const Val& v, const std::string& what);

  Val unary(Ex& x);

  // ---------------------------------------------------------------- postfix and primary
  Val postfix(Ex& x);

  Val number(const std::string& lit);

  // A qualified name: a::b::c (with template arguments when a call follows).
  std::string qualified(Ex& x);

  Val primary(Ex& x);

  // A macro used in an expression, its name at x.T[from] (x.i past the use): the value of its
  // expansion, where that is what the expansion spliced into the expression computes.
  Val expand_object_macro(Ex& x, size_t from, const std::string& name,
                          const std::vector<CTok>& body);

  Val expand_fn_macro(Ex& x, size_t from, const std::string& name, const Converter::FnMacro& m,
                      const std::vector<std::pair<size_t, size_t>>& args);
  // Refuses an expansion whose value alone differs from what it computes spliced between the
  // tokens around its use (`#define N 2 + 3` in `N * 4`).
  void check_macro_unit(const Ex& x, size_t from, const std::string& name,
                        const std::vector<CTok>& E);
  std::vector<std::shared_ptr<std::vector<CTok>>> keep_alive_;

  // The macro `name` names at token i of T, as the preprocessor sees it there: the last #define
  // before the use (none after an #undef). `object` or `fn` is set, or neither (not a macro).
  struct MacroRef {
    const std::vector<CTok>* object = nullptr;
    const Converter::FnMacro* fn = nullptr;
  };
  MacroRef find_macro(const std::string& name, const std::vector<CTok>& T, size_t i);
  // Where the tokens of a macro's expansion were used: the source tokens and the index of the
  // outermost macro name (an expansion's own uses are expanded where the outermost one is).
  std::map<const std::vector<CTok>*, std::pair<const std::vector<CTok>*, size_t>> macro_site_;
  // The tokens of the -D flag macros used (by compile, CUDA or C++, and name).
  std::map<std::pair<bool, std::string>, std::vector<CTok>> flag_toks_;
  // The tokens of the function-like macro `m` used at T[at] with arguments `args` (token ranges
  // of T): its body with each parameter replaced by its argument's tokens, as the preprocessor
  // substitutes them; `#` and `##` and variadic macros are refused.
  std::shared_ptr<std::vector<CTok>> macro_tokens(
      const std::string& name, const Converter::FnMacro& m, const std::vector<CTok>& T, size_t at,
      const std::vector<std::pair<size_t, size_t>>& args);
  // A statement that begins with a function-like macro: its expansion runs as the statements it
  // is, followed by the tokens after the use; returns the index in T where the next statement
  // begins.
  size_t exec_macro_stmt(Frame& fr, const std::vector<CTok>& T, size_t i, size_t end,
                         const std::string& name, const Converter::FnMacro& m);

  // ---------------------------------------------------------------- members
  Val field(Ex& x, const Val& v, const std::string& member, const std::string& what);

  std::string shape_text(const TensorInfo& t);

  Val numel(const TensorInfo& t, const std::string& what, Frame& fr);

  Val list_of(const std::vector<Val>& items);

  int64_t dim_index(const Val& idx, size_t rank, const std::string& what, Frame& fr);

  std::vector<Val> eval_args(Frame& fr, const std::vector<CTok>& T,
                             const std::vector<std::pair<size_t, size_t>>& args);

  // x.packed_accessor32<T, N, Traits>() (and packed_accessor64, packed_accessor<T, N, Traits,
  // index_t>) of the tensor `t` that `v` is: a Val::Accessor, refused for anything but a plain
  // buffer of N dimensions and T its dtype.
  Val packed_accessor(Frame& fr, const Val& v, const TensorInfo& t, const std::string& m,
                      const std::string& targs, const std::string& what);
  // Template arguments written as text, split at their top-level commas.
  static std::vector<std::string> template_args(const std::string& text);
  // A PtrTraits template argument (`torch::RestrictPtrTraits`, empty: the default) by its name in
  // at::, or "" when it is neither of PyTorch's two.
  static std::string ptr_traits(const std::string& text);
  Val method(Ex& x, const Val& v, const std::string& m, const std::string& targs,
             const std::vector<std::pair<size_t, size_t>>& args, const std::string& what);

  // ---------------------------------------------------------------- calls
  Val call_value(Ex& x, const Val& callee, const std::vector<std::pair<size_t, size_t>>& args,
                 const std::string& what);

  Val run_lambda(Frame& fr, const Val& f);

  Val dispatch(Ex& x, const std::string& name, const std::vector<std::pair<size_t, size_t>>& args,
               const std::string& what);

  Val alloc_call(Ex& x, const std::string& s, const std::vector<std::pair<size_t, size_t>>& args,
                 const std::string& what, const std::string& var);

  Val builtin(Ex& x, const std::string& name, const std::vector<std::pair<size_t, size_t>>& args,
              const std::string& what);

  // ---------------------------------------------------------------- function calls
  // `v` as the value of parameter `p` of `fn`: converted as C++ converts an argument, or, where
  // forward calls `fn` (`from_python`), as pybind11 converts a Python value (refused where it
  // raises a TypeError).
  Val bind_param(const CParam& p, const Val& v, const std::string& fn, Frame& fr, bool from_python);
  // The value a function of the source returns converted to its declared return type (an
  // integer, floating or bool type; others are kept as they are).
  Val convert_return(const CItem& it, const Val& v, Frame& fr);

  Val call(const FnRef& f, std::vector<Val> args, const std::vector<std::string>& targ_types,
           Frame* caller);

  // ---------------------------------------------------------------- launches
  // A kernel parameter that is a PackedTensorAccessor32/64<T, N, Traits> (or the generic one with
  // an int32_t or int64_t index): its index width, T and N as written, its PtrTraits.
  struct AccessorParam {
    int bits = 64;
    std::string elem, rank, traits;
  };
  static std::optional<AccessorParam> accessor_param(const CParam& p);
  std::string kernel_param_problem(const CParam& p);

  Val launch(Ex& x, const std::string& name, size_t targ_open, size_t targ_close, size_t from);
};

}  // namespace kernrl::kbimport::host
