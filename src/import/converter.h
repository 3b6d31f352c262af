// The converter's internals, shared by its Python side (py_side.h) and its C++ host side
// (host_interp.h). Values are what a host program computes, known exactly where kernrl
// knows them (constants, dtypes, the problem's scalars) and as kernrl expressions over the sizes
// where they vary with the size set.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/problem.h"
#include "import/cxx_reader.h"
#include "import/import_error.h"
#include "import/python_reader.h"

namespace kernrl::kbimport {

// Every buffer kernrl gives a kernel (inputs, parameters, outputs, scratch) starts at a multiple
// of this many bytes.
constexpr int64_t kBufferAlignment = 16;

struct Val {
  enum Kind {
    Void,
    Int,     // k: constant; else e: an expression over the sizes (and num_sms, repeat variables)
    Float,   // f: the value; text: the literal as written or the scalar's name; else e: a real
             // expression over the sizes (`1.0 * (n) / (2)`, docs/kernel-format.md)
    Bool,    // k (0/1), or per_set: the value at each size set of the problem
    Tensor,  // tensor: index into Converter::tensors
    Ptr,     // tensor (-1: null), elem: the pointee C type ("" for void); items: {the offset
             // from the tensor's start in elements of its dtype, an Int} once advanced (p + n)
    Dim3,    // items: 3 Ints
    List,    // items
    Opts,    // dtype (TensorOptions)
    DType,   // dtype (a kernrl dtype name)
    Device,
    Stream,  // created: a stream made with cudaStreamCreate
    Props,   // cudaDeviceProp
    Ratio,   // items[0] / items[1] computed in floating point: (float)a / b
    Type,    // elem: a C type (scalar_t, float)
    Func,    // name: a function of the source (or a lambda: first/last token range)
    Ext,     // ext: a load_inline module
    ExtFn,   // ext, name
    Layer,   // name: a torch.nn module attribute of ModelNew; elem: its class
    Str,
    // A PyTorch packed tensor accessor (x.packed_accessor32<T, N, Traits>()): tensor, elem (the
    // element C type), k (N), text ("32" or "64": its index width), name (its PtrTraits),
    // items (the tensor's shape when it was made).
    Accessor,
    // A plain struct of the source (host_structs.cpp): name (its type), items (one per data
    // member in declaration order, an array member a List).
    Struct,
    Unknown  // why: what it is, for the message if it is used
  } kind = Void;
  std::optional<int64_t> k;
  std::string e;
  std::string scalar;  // Int/Float taken unchanged from a problem scalar
  std::optional<double> f;
  std::string text;
  bool floaty = false;   // an Int converted to a floating type
  bool fstring = false;  // a Str written as an f-string: its text is not its value
  // List from Python: 't' a tuple (or torch.Size, a tuple), 'l' a list, 0 anything else (range,
  // reversed, a layer list): what == between sequences depends on.
  char seq = 0;
  // A Python list made by a list display in forward: its identity (0: none), shared by every
  // value that is that list, so that changing it in place (`lo.append(x)`) changes them all.
  int list_id = 0;
  std::vector<char> per_set;
  int tensor = -1;
  std::string elem;
  std::string dtype;
  std::string name;
  int ext = -1;
  bool created = false;
  bool optional = false;  // a `c10::optional<torch::Tensor>` parameter's value (a Tensor or Void)
  bool uns = false;       // an Int of an unsigned C type (never negative at any size set)
  // An Int of a C integer type of 32 bits or fewer (`int`, `unsigned`, narrower ones promoted to
  // `int`, an integer literal that fits an `int`): C++ computes + - * << of two such in 32 bits.
  bool c32 = false;
  std::vector<Val> items;
  std::vector<std::string> path;  // &var.member[i]: the member/index path of `name`
  std::string why;
  // Unknown: an integer known to be a multiple of this (a buffer's address: kernrl's buffers are
  // 16-byte aligned), so that an alignment check on it can be decided; 0 when nothing is known.
  int64_t multiple_of = 0;
  // Tensor: a view made in the C++ wrapper (view, reshape, flatten, squeeze...) whose shape the
  // wrapper does not follow: its shape is not its tensor's.
  bool reshaped = false;
  size_t first = 0, last = 0;  // lambda body tokens
  const std::vector<CTok>* toks = nullptr;
};

Val make_int(int64_t v);
Val make_int_expr(const std::string& e);
Val make_float(double v, const std::string& text = "");
Val make_bool(bool b);
Val make_unknown(const std::string& why);

// An Int's text as a kernrl expression; atomic ones (a name, a number) unwrapped.
std::string int_text(const Val& v);

struct TensorInfo {
  std::string role;  // input, parameter, alloc
  std::string name;  // the problem's name (inputs, parameters) or the variable's (allocs)
  std::string dtype;
  std::vector<Val> shape;  // Ints
  std::string fill;        // allocs: "" (empty), or the value it was filled with ("0", "1.0")
  int fill_launch = -1;    // index of the launch that fills it
  int line = 0;
  std::string origin;  // "torch::zeros(...)" for messages
  int base = -1;       // a view (x.view(...) in forward): the tensor whose buffer it is
  // A view of forward that is not a reshape of a buffer (transpose, permute, narrow, select,
  // unfold, split, chunk, and views of those; Val::elem "lazy"): `view_op` ("transpose",
  // "permute", "narrow", "select", "unfold" or "view") with `view_args` on the tensor `view_src`,
  // with PyTorch's strides at each size set.
  // It has no buffer: where an operator reads it, torch steps copy it into one
  // (Converter::materialized); a kernel is never given one.
  int view_src = -1;
  std::string view_op;
  std::vector<Val> view_args;
  std::vector<std::vector<int64_t>> strides;  // per size set (lazy views)
  int copy = -1;         // the buffer it was last copied into, while its storage is unchanged
  int copy_writes = -1;  // the storage's writes when it was
  // A buffer holding an operator's result that PyTorch lays out as its input (Val::elem
  // "permuted": relu of a transposed view, empty_like of one): PyTorch's strides at each size
  // set (the buffer itself holds the values in order); `layout_unknown` where they are not known.
  std::vector<std::vector<int64_t>> layout;
  bool layout_unknown = false;
};

struct LaunchArgOut {
  int tensor = -1;           // a tensor's pointer
  std::string offset;        // with it: advanced by this many of its elements (an expression)
  std::vector<int> tensors;  // else a torch step's list of tensors (`cat`)
  std::string text;          // else the argument's text
  // A tensor's packed accessor (`accessor32(x, N)`): its index width (32 or 64; 0 for a
  // pointer), and the shape the kernel is given (the tensor's when the accessor was made).
  int accessor_bits = 0;
  std::vector<Val> accessor_shape;
  // A field of a struct passed by value (`struct(...)`, docs/kernel-format.md): its type (i8 ...
  // f64, ptr); a struct's fields follow each other in `args`, `struct_first` set on the first.
  std::string field;
  bool struct_first = false;
};

struct LaunchOut {
  std::string kernel;
  std::vector<std::string> grid, block;
  std::string shared = "0";
  std::vector<LaunchArgOut> args;
  std::string repeat_count, repeat_var;
  bool fill = false;  // a fill kernel kernrl added
  int fills = -1;     // fill: the tensor
  // A torch step (docs/kernel-format.md, "PyTorch operators"): the operator, its result's tensor.
  std::string torch;
  int out = -1;
  int result = 0;  // which of the operator's results goes to `out` (`result: N`)
};

// One load_inline module.
struct ExtModule {
  std::string var;  // the Python name it is bound to ("softmax_ext", "self.ext")
  std::vector<std::string> cuda_sources, cpp_sources;
  std::vector<std::string> functions;
  // The macros the -D flags of extra_cuda_cflags (the CUDA sources' compile) and of extra_cflags
  // (the C++ sources') define, NAME -> value: what each translation unit sees before its own
  // directives (load_inline compiles each with its own flags only).
  std::map<std::string, std::string> cuda_flag_macros, cpp_flag_macros;
  int line = 0;
  bool used = false;
  // Parsed sources: one per string.
  struct Source {
    std::string text;
    bool cuda = true;
    std::vector<CTok> toks;
    std::vector<CItem> items;
  };
  std::vector<Source> sources;
};

class Converter {
 public:
  Converter(const ProblemSpec& p, const std::string& python) : P(p), python_(python) {}
  std::string run(const std::string& source_name);  // the kernel file; throws ImportError
  std::vector<std::string> notes;

  // ---- state shared by both sides ----
  const ProblemSpec& P;
  std::vector<TensorInfo> tensors;
  std::vector<LaunchOut> launches;
  std::vector<ExtModule> exts;
  std::set<std::string> fill_types;  // C types of the fill kernels to add
  std::vector<Vars> size_sets;       // bench then tests
  std::set<std::string> reserved;    // names taken in the launch block

  // ---- C++ host side (host_interp.cpp) ----
  // Calls host function `fn` of module `ext` with Python-side arguments; returns what it returns.
  Val call_host(int ext, const std::string& fn, const std::vector<Val>& args,
                const std::vector<std::pair<std::string, Val>>& kwargs);
  std::map<std::string, std::vector<CTok>> macros;  // object-like #defines: NAME -> body tokens
  struct FnMacro {
    std::vector<std::string> params;
    bool variadic = false;  // `...` among the parameters
    std::vector<CTok> body;
  };
  std::map<std::string, FnMacro> fn_macros;  // function-like #defines (the last of each name)
  // Every #define and #undef of a name, in source order. A name with more than one is
  // positional: the definition that applies at a use is the last directive before it in the
  // same source (host_primary.cpp, Interp::find_macro).
  struct MacroEvent {
    const std::vector<CTok>* toks = nullptr;  // the source's tokens
    size_t index = 0;                         // the directive's token
    bool define = false;                      // false: #undef
    bool fn_like = false;
    std::vector<CTok> body;  // object-like
    FnMacro fn;              // function-like
  };
  std::map<std::string, std::vector<MacroEvent>> macro_events;
  // Macros defined or #undef'd inside #if / #ifdef / #ifndef: kernrl does not evaluate the
  // preprocessor's conditions, so their uses are refused.
  std::set<std::string> conditional_macros;
  // Reads the directives of one source. `defined` holds what the preprocessor knows of each name
  // in the translation unit the source is part of (load_inline joins a module's CUDA sources into
  // one, its C++ sources into another): 1 defined, 0 not (#undef'd), -1 not known here (a
  // directive under a condition kernrl does not evaluate); the source's #define and #undef update
  // it in order. `cuda`: compiled by nvcc (__CUDACC__ is defined), else by the host compiler.
  void add_macros(const std::vector<CTok>& toks, std::map<std::string, int>& defined, bool cuda);
  // What the headers every load_inline translation unit includes (torch's, CUDA's, the C and C++
  // library's) make of a name the source does not define: 1 defined, with the value kernrl uses
  // (M_PI, INT_MAX ...); -1 perhaps defined (a name of a list kernrl keeps: C10_*, CUDA_VERSION,
  // FLT_MAX ...); 0 not defined (any other name, such as BLOCK_SIZE).
  static int header_macro(const std::string& name);

  // ---- shared helpers ----
  int add_tensor(TensorInfo t);
  Val alloc(const std::vector<Val>& shape, const std::string& dtype, const std::string& fill,
            const std::string& origin, const std::string& var);
  void add_fill(int tensor, const std::string& value);
  // torch_steps.cpp (suites built from KernelBench; docs/kernel-format.md, "PyTorch
  // operators"): a torch step of `op` on `args` appended to the launches, its result a new buffer
  // of `shape` (returned). `category` names what refuses an argument it cannot write.
  Val torch_step(const std::string& op, const std::vector<Val>& args, std::vector<Val> shape,
                 std::string dtype, const std::string& text, const std::string& category);
  // A view of forward copied by torch steps into a buffer of its shape, which the next operator
  // reads: a reshape of a buffer (TensorInfo::base) by a `reshape` step, a lazy view by its
  // operators (each source copied first); a tensor that is no view, unchanged. A view made in the
  // C++ wrapper (a "reshaped" tensor without a base) is refused.
  // `fresh`: a copy of its own for the caller to keep (.contiguous(), .clone(), a reshape that
  // copies), never the copy an operator's argument reuses.
  Val materialized(const Val& view, const std::string& text, const std::string& category,
                   bool fresh = false);
  // A copy of `v`'s values that is the caller's own, in order: a view copied by its operators, a
  // buffer by a `reshape` torch step.
  Val copy_of(const Val& v, const std::string& text, const std::string& category);
  // A lazy view (TensorInfo::view_src) of `x` by `op` (transpose, permute, narrow, select,
  // unfold, view) with `args` (as the torch step of that name takes them), of `shape`; its
  // strides are computed from x's, and narrow's, select's and unfold's arguments checked to be
  // within x at every size set. Nothing is launched.
  Val lazy_view(const std::string& op, const Val& x, const std::vector<Val>& args,
                std::vector<Val> shape, const std::string& text, const std::string& category);
  // The shape of x.view(dims) / x.reshape(dims) for a tensor of shape `old`: `dims` as given
  // (integers, or one list of them), one of them -1 at most (the element count over the others);
  // nullopt where kernrl cannot compute it.
  static std::optional<std::vector<Val>> view_shape(const std::vector<Val>& old,
                                                    std::vector<Val> dims, const std::string& text);
  // `x` seen in `shape` (a view, reshape, flatten...): x itself in its own shape; of a lazy view,
  // a lazy view where PyTorch can make one (always, `view_only`: Tensor.view, which refuses
  // otherwise), else a copy viewed in that shape; of a buffer, a view of it ("reshaped",
  // TensorInfo::base) in that shape.
  Val shaped(const Val& x, std::vector<Val> shape, bool view_only, const std::string& text,
             const std::string& category);
  // A dimension argument of an operator on a tensor of `rank` dimensions, counted from the end
  // when negative, checked as PyTorch checks it; refused (`category`, naming `text`) otherwise.
  int64_t dimension(const Val& v, int64_t rank, const std::string& text,
                    const std::string& category);
  // x.transpose(a, b) / x.permute(dims) (`dims` as given: integers, or one list of them) as a
  // lazy view, the dimensions checked as PyTorch checks them; a transpose of a dimension with
  // itself is x. Used by forward and by the C++ wrapper.
  Val reorder_view(const std::string& op, const Val& x, std::vector<Val> dims,
                   const std::string& text, const std::string& category);
  // PyTorch's strides of tensor `t` at each size set: a buffer's are contiguous; nullopt where a
  // dimension depends on the GPU.
  std::optional<std::vector<std::vector<int64_t>>> strides_of(int t) const;
  // Whether tensor `t` (a view or a buffer with a layout) is contiguous at every size set
  // (nullopt: at some only, or its layout is not known).
  std::optional<bool> contiguous(int t) const;
  // Whether PyTorch's suggest_memory_format of tensor `t` is channels-last at some size set: its
  // strides like a channels-last tensor's (c10's is_channels_last_strides_2d/3d, for 4 and 5
  // dimensions); nullopt where its strides are not known.
  std::optional<bool> channels_last_like(int t) const;
  // The strides PyTorch gives a result laid out as tensor `t` (an elementwise operator's, a
  // clone's, empty_like's): t's strides where t is dense (no gaps, no overlap) at every size set,
  // else contiguous; empty when contiguous or not known (*unknown set).
  std::vector<std::vector<int64_t>> layout_like(int t, bool* unknown) const;
  // `v` (a buffer) with the layout of a result laid out as `like`: Val::elem "permuted" where
  // that layout is not contiguous.
  Val laid_out_as(Val v, int like);
  // The strides a view of tensor `t` in `shape` has at each size set, as PyTorch computes them
  // for Tensor.view; nullopt where PyTorch refuses the view at some size set.
  std::optional<std::vector<std::vector<int64_t>>> view_strides(
      int t, const std::vector<Val>& shape) const;
  // The tensor whose memory `t` is (through views), and the kernel launches that were given it so
  // far (each may have written it).
  int storage_of(int t) const;
  // A narrow (`h0[2 * l:2 * l + 2]`) or select (`x[0]`) of a dense buffer (or a reshaped view of
  // one) that is contiguous at every size set: the offset of its first element in storage_of(t),
  // in elements,
  // so that its data pointer is that buffer's advanced by it, as in PyTorch; nullopt for any
  // other tensor.
  std::optional<Val> offset_in_storage(int t) const;
  // A transpose or permute of a dense buffer (`out.transpose(0, 1)`, the output of an RNN step
  // with batch_first): that buffer's memory read through PyTorch's strides, each an integer
  // expression over the sizes; nullopt for any other tensor. Its data pointer is the buffer's.
  std::optional<std::vector<Val>> reordered_strides(int t) const;
  std::map<int, int> writes;
  // a @ b as a torch step: linear when b is a transposed weight (b.t(), b.T), else mm, matmul or
  // bmm by the shapes, matmul for a batch of products with the same batch dimensions.
  Val product(const Val& a, const Val& b, const std::string& text, const std::string& category);
  // linear(x, w[, bias]) as a torch step: the result is x's shape with its last dimension w's
  // first.
  Val linear(const Val& x, const Val& w, const Val& bias, const std::string& text,
             const std::string& category);
  // Per size set values of an Int (nullopt when it depends on num_sms or a repeat variable).
  std::optional<std::vector<int64_t>> per_set(const Val& v) const;
  // The value of an Int that is the same at every size set (a constant, or a size the suite keeps
  // at one value, such as a head size); nullopt otherwise.
  std::optional<int64_t> one_value(const Val& v) const;
  std::string size_expr(const std::string& shape_entry) const;
  // Named values of the launch block (`values:`, docs/kernel-format.md): with name_values (set
  // where a conversion without them made an expression past the length limit), a host integer
  // whose expression is longer than kValueChars, named where a host variable takes it, stands for
  // it by its name (docs/import-kernelbench.md), in order. Only those the launch block uses are
  // written.
  bool name_values = false;
  static constexpr size_t kValueChars = 256;
  std::vector<std::pair<std::string, std::string>> named_values;
  // `vars` (sizes, perhaps num_sms and a repeat variable) with each value that evaluates there
  // added, in order: the variables of an expression that may name values.
  Vars with_values(Vars vars) const;
  // `v` (an Int, or a Bool's 0-or-1 expression, held by host variable `var`) as a value's name
  // when its expression is long and a value may hold it (it uses only sizes, integer scalars,
  // num_sms and values, and evaluates at every size set with num_sms as on an H100); else `v`.
  Val named_value(const Val& v, const std::string& var);
  std::string repeat_count_, repeat_var_;  // set while a loop runs as a launch-block repeat
  int host_depth_ = 0;

 private:
  const std::string& python_;
};

// Helpers shared by both sides.
inline bool starts_with(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}
inline bool contains(const std::string& s, const char* p) {
  return s.find(p) != std::string::npos;
}
[[noreturn]] inline void fail(const std::string& category, const std::string& msg) {
  throw ImportError(category, msg);
}
// The device code of one of a module's sources, as the kernel file keeps it (device_code.cpp).
std::string device_code(const ExtModule& m, const ExtModule::Source& s);
std::string c_type_of(const std::string& dtype);      // float32 -> float
std::string dtype_of_c(const std::string& c_type);    // float -> float32 ("" if none)
std::string dtype_of_torch(const std::string& name);  // kFloat32 / float32 / torch.float -> float32
int dtype_bytes(const std::string& dtype);
std::string float_literal(double v);
// A number's value as a kernrl real expression (a float argument computed from the sizes, such
// as `1.0f / (float)n`): a Float, an Int or Bool (as a double), a Ratio; nullopt for anything else.
std::optional<std::string> real_text(const Val& v);
// Integer + - * / % of two Ints: constants folded, else a kernrl expression (`what` for errors).
Val int_binop(const std::string& op, const Val& a, const Val& b, const std::string& what);
bool int_type(const std::string& c_type);
bool unsigned_int_type(const std::string& c_type);  // unsigned, size_t, uint32_t, ...
bool float_type(const std::string& c_type);
int c_type_bytes(const std::string& c_type);  // 0 when unknown

}  // namespace kernrl::kbimport
