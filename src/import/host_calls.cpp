// The host side (host_interp.h): calls of library and torch functions, lambdas.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "core/expr.h"
#include "import/host_interp.h"

namespace kernrl::kbimport::host {

Val Interp::call_value(Ex& x, const Val& callee, const std::vector<std::pair<size_t, size_t>>& args,
                       const std::string& what) {
  Frame& fr = x.fr;
  if (callee.kind == Val::Type) {
    std::vector<Val> vals = eval_args(fr, x.T, args);
    if (strip_std(callee.elem) == "dim3") return make_dim3(vals, what, fr);
    if (vals.size() == 1) return cast_to(fr, callee.elem, vals[0], what);
    if (vals.empty()) return int_type(strip_std(callee.elem)) ? make_int(0) : make_float(0.0);
    fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "`");
  }
  if (callee.kind == Val::Func && callee.name == "(lambda)") {
    return run_lambda(fr, callee);
  }
  if (callee.kind != Val::Func) {
    if (callee.kind == Val::Unknown) fail_value(callee, "a function", what, fr);
    fail("host_logic", "host logic in `" + fr.fn + "`: cannot follow the call `" + what + "`");
  }
  const std::string& name = callee.name;
  if ((name == "static_cast" || name == "reinterpret_cast" || name == "const_cast" ||
       name == "dynamic_cast" || name == "std::static_pointer_cast") &&
      args.size() == 1)
    return cast_to(fr, callee.text, eval(fr, x.T, args[0].first, args[0].second), what);
  // Functions of the source.
  if (FnRef f = find_function(name, false); f.item) {
    if (f.ambiguous)
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` calls `" + name +
                             "`, which the source defines more than once (overloads or "
                             "specializations); kernrl does not choose between them");
    std::vector<std::string> targ_types;
    if (!callee.text.empty() && callee.toks)
      for (auto [a, b] : split_args(*callee.toks, callee.first + 1, callee.last))
        targ_types.push_back(resolve_type(fr, c_text(*callee.toks, a, b)));
    return call(f, eval_args(fr, x.T, args), targ_types, &fr);
  }
  if (FnRef k = find_function(name, true); k.item)
    fail("unsupported_cuda", "`" + what + "` in `" + fr.fn + "` calls the __global__ kernel `" +
                                 name + "` without <<<...>>>");
  return builtin(x, name, args, what);
}

Val Interp::run_lambda(Frame& fr, const Val& f) {
  Frame lf;
  lf.parent = &fr;
  lf.fn = fr.fn;
  lf.ext = fr.ext;
  lf.T = f.toks;
  lf.depth_base = depth(fr);
  lf.tensors0 = C.tensors.size();
  lf.scopes.emplace_back();
  exec_range(lf, f.first, f.last);
  return lf.ret ? *lf.ret : Val{};
}

Val Interp::dispatch(Ex& x, const std::string& name,
                     const std::vector<std::pair<size_t, size_t>>& args, const std::string& what) {
  Frame& fr = x.fr;
  if (args.size() < 3)
    fail("unsupported_cuda",
         "`" + name + "` in `" + fr.fn + "` with " + std::to_string(args.size()) + " arguments");
  Val ty = eval(fr, x.T, args[0].first, args[0].second);
  if (ty.kind != Val::DType)
    fail("host_logic",
         "`" + name + "` in `" + fr.fn + "` dispatches on something other than a tensor's dtype");
  // The types the macro covers.
  std::set<std::string> covered;
  std::string n = name;
  auto add = [&](std::initializer_list<const char*> l) {
    for (const char* d : l) covered.insert(d);
  };
  if (contains(n, "FLOATING_AND_COMPLEX"))
    add({"float32", "float64", "complex64", "complex128"});
  else if (contains(n, "REDUCED_FLOATING"))
    add({"float16", "bfloat16"});
  else if (contains(n, "FLOATING"))
    add({"float32", "float64"});
  if (contains(n, "ALL_TYPES"))
    add({"float32", "float64", "int8", "uint8", "int16", "int32", "int64"});
  if (contains(n, "INTEGRAL")) add({"int8", "uint8", "int16", "int32", "int64"});
  if (contains(n, "AND_HALF")) add({"float16"});
  if (contains(n, "COMPLEX") && !contains(n, "FLOATING_AND_COMPLEX"))
    add({"complex64", "complex128"});
  // _AND / _AND2 / _AND3: the extra ScalarTypes come first.
  size_t extra = 0;
  if (contains(n, "_AND3"))
    extra = 3;
  else if (contains(n, "_AND2"))
    extra = 2;
  else if (std::string::npos != n.find("_AND(") ||
           (n.size() > 4 && n.compare(n.size() - 4, 4, "_AND") == 0))
    extra = 1;
  size_t type_arg = 0;
  if (extra) {
    for (size_t k = 0; k < extra && k < args.size(); ++k) {
      Val d = eval(fr, x.T, args[k].first, args[k].second);
      if (d.kind == Val::DType) covered.insert(d.dtype);
    }
    type_arg = extra;
    ty = eval(fr, x.T, args[type_arg].first, args[type_arg].second);
    if (ty.kind != Val::DType)
      fail("host_logic",
           "`" + name + "` in `" + fr.fn + "` dispatches on something other than a tensor's dtype");
  }
  if (!covered.empty() && !covered.count(ty.dtype))
    fail("mismatch", "`" + name + "` in `" + fr.fn + "` does not cover " + ty.dtype +
                         " (PyTorch would refuse this problem's tensors)");
  Val lambda = eval(fr, x.T, args.back().first, args.back().second);
  if (lambda.kind != Val::Func || lambda.name != "(lambda)")
    fail("unsupported_cuda", "`" + name + "` in `" + fr.fn + "` without a lambda");
  Frame lf;
  lf.parent = &fr;
  lf.fn = fr.fn;
  lf.ext = fr.ext;
  lf.T = lambda.toks;
  lf.depth_base = depth(fr);
  lf.tensors0 = C.tensors.size();
  lf.scopes.emplace_back();
  lf.types["scalar_t"] = c_type_of(ty.dtype);
  (void)what;
  exec_range(lf, lambda.first, lambda.last);
  return lf.ret ? *lf.ret : Val{};
}

Val Interp::alloc_call(Ex& x, const std::string& s,
                       const std::vector<std::pair<size_t, size_t>>& args, const std::string& what,
                       const std::string& var) {
  Frame& fr = x.fr;
  std::vector<Val> vals = eval_args(fr, x.T, args);
  bool like = contains(s, "_like");
  std::string kind = s.substr(0, s.find('_'));  // empty zeros ones full
  std::string fill = kind == "zeros" ? "0" : kind == "ones" ? "1" : "";
  std::vector<Val> shape;
  std::string dtype = "float32";
  size_t k = 0;
  if (like) {
    if (vals.empty() || vals[0].kind != Val::Tensor)
      fail("host_logic",
           "`" + what + "` in `" + fr.fn + "`: the _like argument is not a tensor kernrl follows");
    // PyTorch keeps the view's strides; kernrl's buffers are dense (a contiguous narrow's are).
    if (vals[0].elem == "lazy" && !C.offset_in_storage(vals[0].tensor))
      fail("library_call",
           "`" + what + "` in `" + fr.fn + "`: a tensor laid out as a view (permute, transpose)");
    const TensorInfo& src = C.tensors[static_cast<size_t>(vals[0].tensor)];
    shape = src.shape;
    dtype = src.dtype;
    k = 1;
  } else {
    if (vals.empty()) fail("host_logic", "`" + what + "` in `" + fr.fn + "` without a shape");
    const Val& sh = vals[0];
    if (sh.kind == Val::List) {
      for (const Val& d : sh.items) shape.push_back(to_int(d, what, fr));
    } else if (sh.kind == Val::Int) {
      shape.push_back(sh);
    } else {
      fail_value(sh, "a shape", what, fr);
    }
    k = 1;
  }
  if (kind == "full") {
    if (k >= vals.size())
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` without a fill value");
    const Val& fv = vals[k];
    if (fv.kind == Val::Int && fv.k)
      fill = std::to_string(*fv.k);
    else if (fv.kind == Val::Float && fv.f)
      fill = float_literal(*fv.f);
    else
      fail("host_logic",
           "`" + what + "` in `" + fr.fn + "` fills with a value kernrl cannot compute");
    ++k;
  }
  for (; k < vals.size(); ++k) {
    if ((vals[k].kind == Val::Opts || vals[k].kind == Val::DType) && !vals[k].dtype.empty())
      dtype = vals[k].dtype;
    if (vals[k].kind == Val::Type) dtype = dtype_of_c(strip_std(vals[k].elem));
  }
  return C.alloc(shape, dtype, fill, what, var);
}

Val Interp::builtin(Ex& x, const std::string& name,
                    const std::vector<std::pair<size_t, size_t>>& args, const std::string& what) {
  Frame& fr = x.fr;
  std::string s = strip_std(name);
  auto a = [&](size_t k) {
    if (k >= args.size()) fail("host_logic", "`" + what + "` in `" + fr.fn + "`: missing argument");
    return eval(fr, x.T, args[k].first, args[k].second);
  };
  // Checks and prints: no effect on what runs.
  if (starts_with(s, "TORCH_") || starts_with(s, "AT_ASSERT") || starts_with(s, "AT_ERROR") ||
      s == "assert" || starts_with(s, "CHECK") || s == "printf" || s == "fprintf" || s == "puts" ||
      s == "C10_CUDA_KERNEL_LAUNCH_CHECK" || s == "cudaGetLastError" ||
      s == "cudaPeekAtLastError" || s == "cudaDeviceSynchronize" || s == "cudaGetErrorString" ||
      s == "cudaStreamSynchronize" || s == "cudaStreamDestroy" || starts_with(s, "cudaEvent") ||
      s == "cudaFuncSetAttribute" || s == "cudaFuncSetCacheConfig" || s == "cudaSetDevice" ||
      s == "cudaStreamWaitEvent" || s == "cudaDeviceSetCacheConfig" ||
      s == "cudaDeviceSetSharedMemConfig" || s == "cudaFuncSetSharedMemConfig" ||
      s == "cudaProfilerStart" || s == "cudaProfilerStop" || s == "cuda::device_guard" ||
      s == "device_of" || s == "cuda::getCurrentCUDAStream" || s == "cuda::getDefaultCUDAStream" ||
      s == "cuda::getStreamFromPool" || s == "cuda::getCurrentCUDAStream().stream" ||
      s == "cudaGetDevice" || s == "NVTX_RANGE" || starts_with(s, "nvtx")) {
    if (s == "cudaGetDevice" && !args.empty()) {
      Val p = a(0);
      if (!p.name.empty()) store(fr, p.name, p.path, make_int(0), what);
    }
    if (contains(s, "Stream") && !starts_with(s, "cudaStream")) {
      Val st;
      st.kind = Val::Stream;
      return st;
    }
    if (s == "cudaGetLastError" || s == "cudaPeekAtLastError" || s == "cudaDeviceSynchronize")
      return make_int(0);
    if (s == "device_of") {
      Val d;
      d.kind = Val::Device;
      return d;
    }
    return Val{};
  }
  if (starts_with(s, "AT_DISPATCH")) {
    if (contains(s, "SWITCH") || contains(s, "CASE"))
      fail("unsupported_cuda",
           "`" + s + "` in `" + fr.fn + "`; use AT_DISPATCH_FLOATING_TYPES-style macros");
    return dispatch(x, s, args, what);
  }
  if (s == "cudaStreamCreate" || s == "cudaStreamCreateWithFlags" ||
      s == "cudaStreamCreateWithPriority") {
    Val p = a(0);
    Val st;
    st.kind = Val::Stream;
    st.created = true;
    if (!p.name.empty()) store(fr, p.name, p.path, st, what);
    if (std::find(C.notes.begin(), C.notes.end(),
                  std::string(
                      "launches on the streams the wrapper creates run in order on one stream")) ==
        C.notes.end())
      C.notes.push_back("launches on the streams the wrapper creates run in order on one stream");
    return make_int(0);
  }
  if (s == "cudaGetDeviceProperties") {
    Val p = a(0);
    Val props;
    props.kind = Val::Props;
    if (!p.name.empty()) store(fr, p.name, p.path, props, what);
    return make_int(0);
  }
  if (s == "cuda::getCurrentDeviceProperties" || s == "cuda::getDeviceProperties") {
    Val props;
    props.kind = Val::Props;
    return props;
  }
  if (s == "cudaDeviceGetAttribute") {
    Val p = a(0);
    Val attr = a(1);
    Val value;
    if (attr.text == "cudaDevAttrMultiProcessorCount")
      value = make_int_expr("num_sms");
    else if (attr.text == "cudaDevAttrMaxThreadsPerBlock")
      value = make_int(1024);
    else if (attr.text == "cudaDevAttrMaxSharedMemoryPerBlockOptin")
      value = make_int(232448);
    else if (attr.text == "cudaDevAttrWarpSize")
      value = make_int(32);
    else
      fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                             "` reads a device attribute that depends on the GPU");
    if (!p.name.empty()) store(fr, p.name, p.path, value, what);
    return make_int(0);
  }
  if (s == "cudaMemset" || s == "cudaMemsetAsync") {
    Val p = a(0), val = a(1), bytes = to_int(a(2), what, fr);
    if (p.kind != Val::Ptr || p.tensor < 0)
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` clears memory kernrl does not know");
    if (!(val.kind == Val::Int && val.k && *val.k == 0))
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` fills memory with a byte pattern");
    const TensorInfo& t = C.tensors[static_cast<size_t>(p.tensor)];
    Val whole = arith("*", numel(t, what, fr), make_int(dtype_bytes(t.dtype)), what, fr);
    auto have = C.per_set(bytes), want = C.per_set(whole);
    if (!have || !want || *have != *want || has_offset(p))
      fail("host_logic", "`" + what + "` in `" + fr.fn + "` clears part of `" + t.name +
                             "`; kernrl fills whole tensors");
    if (t.role != "alloc")
      fail("in_place", "`" + what + "` in `" + fr.fn + "` writes into the " + t.role + " `" +
                           t.name + "`; kernrl's inputs must stay unchanged");
    C.add_fill(p.tensor, "0");
    return make_int(0);
  }
  if (starts_with(s, "cudaMemcpy")) {
    std::string all;
    for (auto [ra, rb] : args) all += c_text(x.T, ra, rb) + " ";
    if (contains(all, "DeviceToHost") || contains(all, "cudaMemcpyDefault"))
      fail("data_dependent_host",
           "`" + what + "` in `" + fr.fn + "` copies GPU results to the host");
    fail("host_logic",
         "`" + what + "` in `" + fr.fn + "` copies memory on the host side (" + s + ")");
  }
  if (starts_with(s, "cudaMalloc") || s == "cudaFree" || s == "cudaFreeAsync" ||
      s == "cudaMallocManaged" || s == "cudaHostAlloc")
    fail("host_logic", "`" + what + "` in `" + fr.fn + "` allocates device memory itself (" + s +
                           "); kernrl allocates every buffer");
  if (starts_with(s, "cudaLaunch") || s == "cuLaunchKernel" || s == "cudaLaunchCooperativeKernel")
    fail("unsupported_cuda",
         "`" + what + "` in `" + fr.fn + "` launches through " + s +
             "; kernrl reads launches written as kernel<<<grid, block, shared>>>(...)");
  if (starts_with(s, "cudaOccupancy"))
    fail("host_logic", "`" + what + "` in `" + fr.fn +
                           "` sizes the grid with the occupancy API, which depends on the GPU "
                           "and the compiled kernel");
  if (s == "cudaGraphLaunch" || starts_with(s, "cudaGraph") ||
      starts_with(s, "cudaStreamBeginCapture"))
    fail("host_logic", "`" + what + "` in `" + fr.fn + "` uses CUDA graphs");
  if (std::string lib = library_of(name); !lib.empty())
    fail("library_call", "library call `" + name + "` (" + lib + ") in the host wrapper `" + fr.fn +
                             "`; kernrl runs only the file's __global__ kernels");
  // Allocations.
  static const std::set<std::string> allocs = {
      "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like"};
  if ((starts_with(name, "torch::") || starts_with(name, "at::")) && allocs.count(s))
    return alloc_call(x, s, args, what, "");
  if (s == "empty_strided" || s == "empty_strided_like")
    fail("library_call", "`" + what + "` in `" + fr.fn + "` allocates a strided tensor");
  if (s == "dtype") {
    Val o;
    o.kind = Val::Opts;
    Val d = a(0);
    o.dtype = d.kind == Val::DType  ? d.dtype
              : d.kind == Val::Type ? dtype_of_c(strip_std(d.elem))
                                    : "";
    return o;
  }
  if (s == "TensorOptions" || s == "device" || s == "device_of") {
    Val o;
    o.kind = Val::Opts;
    return o;
  }
  if (s == "min" || s == "max" || s == "fmin" || s == "fmax" || s == "fminf" || s == "fmaxf") {
    if (args.size() == 1) {
      Val l = a(0);
      if (l.kind != Val::List || l.items.empty())
        fail("host_logic", "`" + what + "` in `" + fr.fn + "`");
      Val r = l.items[0];
      for (size_t k = 1; k < l.items.size(); ++k)
        r = minmax(s.find("min") != std::string::npos ? "min" : "max", r, l.items[k], what, fr);
      return r;
    }
    return minmax(s.find("min") != std::string::npos ? "min" : "max", a(0), a(1), what, fr);
  }
  if (s == "ceil" || s == "ceilf" || s == "floor" || s == "floorf" || s == "round" ||
      s == "roundf") {
    Val v = a(0);
    if (v.kind == Val::Ratio) {
      if (starts_with(s, "ceil"))
        return make_int_expr("cdiv(" + int_text(v.items[0]) + ", " + int_text(v.items[1]) + ")");
      if (starts_with(s, "floor")) {
        Val r = arith("/", v.items[0], v.items[1], what, fr);
        r.floaty = true;
        return r;
      }
    }
    if (v.kind == Val::Float && v.f)
      return make_float(starts_with(s, "ceil")    ? std::ceil(*v.f)
                        : starts_with(s, "floor") ? std::floor(*v.f)
                                                  : std::round(*v.f));
    if (v.kind == Val::Int) return v;
    fail("host_logic",
         "host logic in `" + fr.fn + "`: `" + what + "` rounds a value kernrl cannot compute");
  }
  if (s == "sqrt" || s == "sqrtf" || s == "pow" || s == "powf" || s == "log2" || s == "exp" ||
      s == "expf" || s == "log" || s == "logf" || s == "rsqrt" || s == "abs" || s == "fabs" ||
      s == "fabsf") {
    std::vector<Val> vals = eval_args(fr, x.T, args);
    std::vector<double> d;
    for (const Val& v : vals) {
      // A size with one value at every size set (a head size the suite keeps) is that value.
      std::optional<int64_t> one = C.one_value(v);
      if (v.kind == Val::Float && v.f)
        d.push_back(*v.f);
      else if (v.kind == Val::Int && v.k)
        d.push_back(static_cast<double>(*v.k));
      else if (one)
        d.push_back(static_cast<double>(*one));
      else
        fail("host_logic", "host logic in `" + fr.fn + "`: `" + what +
                               "` computes with sizes in floating point on the host" +
                               (C.per_set(v) ? " (a size that differs between size sets)" : ""));
    }
    double r = s.rfind("sqrt", 0) == 0  ? std::sqrt(d[0])
               : s.rfind("pow", 0) == 0 ? std::pow(d[0], d.at(1))
               : s == "log2"            ? std::log2(d[0])
               : s.rfind("exp", 0) == 0 ? std::exp(d[0])
               : s.rfind("log", 0) == 0 ? std::log(d[0])
               : s == "rsqrt"           ? 1 / std::sqrt(d[0])
                                        : std::fabs(d[0]);
    if (s == "abs" && vals[0].kind == Val::Int) return make_int(static_cast<int64_t>(r));
    return make_float(r);
  }
  if (s == "make_tuple" || s == "tuple" || s == "vector" || s == "make_pair" || s == "pair" ||
      s == "tie") {
    return list_of(eval_args(fr, x.T, args));
  }
  if (s == "move" || s == "forward") return a(0);
  if (s == "swap" && args.size() == 2) {
    // std::swap(a, b) of two variables (ping-pong buffers in a loop of known length).
    auto name_of = [&](std::pair<size_t, size_t> r) {
      return r.second == r.first + 1 && x.T[r.first].kind == CTok::Ident ? x.T[r.first].text : "";
    };
    std::string na = name_of(args[0]), nb = name_of(args[1]);
    Var* va = na.empty() ? nullptr : lookup(fr, na);
    Var* vb = nb.empty() ? nullptr : lookup(fr, nb);
    if (!va || !vb)
      fail("host_logic",
           "host logic in `" + fr.fn + "`: `" + what + "` swaps values kernrl cannot follow");
    Val ta = va->v, tb = vb->v;
    store(fr, na, {}, tb, what);
    store(fr, nb, {}, ta, what);
    return Val{};
  }
  if (s == "cuda::CUDAStreamGuard" || s == "cuda::OptionalCUDAGuard" || s == "cuda::CUDAGuard")
    return Val{};
  if (!C.P.torchscript.empty() && (starts_with(name, "torch::") || starts_with(name, "at::"))) {
    // On a suite built from KernelBench, a product in the wrapper is a torch step, as in forward.
    const std::string op = name.substr(name.rfind("::") + 2);
    if ((op == "matmul" || op == "mm" || op == "bmm") && args.size() == 2)
      return C.product(a(0), a(1), what, "library_call");
    if (op == "linear" && (args.size() == 2 || args.size() == 3))
      return C.linear(a(0), a(1), args.size() == 3 ? a(2) : Val{}, what, "library_call");
  }
  if (starts_with(name, "torch::") || starts_with(name, "at::") || starts_with(name, "c10::") ||
      starts_with(name, "F::"))
    fail("library_call",
         "PyTorch op `" + name + "` in the host wrapper `" + fr.fn + "` (`" + what + "`)");
  if (starts_with(s, "cuda"))
    fail("host_logic",
         "`" + what + "` in `" + fr.fn + "` calls " + s + ", which kernrl does not follow");
  fail("host_logic", "host logic in `" + fr.fn + "`: `" + what + "` calls `" + name +
                         "`, which the source does not define");
}

}  // namespace kernrl::kbimport::host
