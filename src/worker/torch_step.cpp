#include "worker/torch_step.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <utility>

namespace kernrl {

namespace {

std::string shape_text(c10::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The argument as the schema's parameter takes it.
c10::IValue convert(const TorchStepArg& a, const c10::Argument& param, const std::string& where) {
  c10::TypePtr type = param.type();
  std::string what = where + ": argument '" + a.text + "' for parameter '" + param.name() + "' (" +
                     type->str() + ")";
  if (type->kind() == c10::TypeKind::OptionalType) {
    if (a.kind == TorchStepArg::None) return c10::IValue();
    type = type->expectRef<c10::OptionalType>().getElementType();
  }
  std::string t = type->str();
  if (type->kind() == c10::TypeKind::ListType) {
    std::string elem = type->expectRef<c10::ListType>().getElementType()->str();
    if (elem == "Tensor") {
      if (a.kind != TorchStepArg::TensorList)
        throw TorchStepError(what + " needs a list of tensors");
      return c10::IValue(c10::List<at::Tensor>(a.tensors));
    }
    if (elem != "int" && elem != "SymInt") throw TorchStepError(what + " is not supported");
    std::vector<int64_t> v;
    if (a.kind == TorchStepArg::IntList)
      v = a.list;
    else if (a.kind == TorchStepArg::Int)
      v.assign(static_cast<size_t>(param.N().value_or(1)), a.i);  // stride=1 means [1, 1]
    else
      throw TorchStepError(what + " needs integers");
    if (param.N() && v.size() != static_cast<size_t>(*param.N()))
      throw TorchStepError(what + " needs " + std::to_string(*param.N()) + " integers, not " +
                           std::to_string(v.size()));
    return c10::IValue(v);
  }
  if (t == "Tensor") {
    if (a.kind != TorchStepArg::Tensor) throw TorchStepError(what + " needs a tensor");
    return c10::IValue(a.tensor);
  }
  if (t == "int" || t == "SymInt") {
    if (a.kind != TorchStepArg::Int) throw TorchStepError(what + " needs an integer");
    return c10::IValue(a.i);
  }
  if (t == "float") {
    if (a.kind == TorchStepArg::Float) return c10::IValue(a.f);
    if (a.kind == TorchStepArg::Int) return c10::IValue(static_cast<double>(a.i));
    throw TorchStepError(what + " needs a number");
  }
  if (t == "Scalar") {
    if (a.kind == TorchStepArg::Float) return c10::IValue(c10::Scalar(a.f));
    if (a.kind == TorchStepArg::Int) return c10::IValue(c10::Scalar(a.i));
    throw TorchStepError(what + " needs a number");
  }
  if (t == "bool") {
    if (a.kind != TorchStepArg::Bool) throw TorchStepError(what + " needs true or false");
    return c10::IValue(a.b);
  }
  throw TorchStepError(what + " is not supported (only its default)");
}

// `result` as an index of the schema's returns, which must be a Tensor there.
size_t checked_result(const c10::FunctionSchema& schema, int result, const std::string& where) {
  const auto& returns = schema.returns();
  if (result < 0 || static_cast<size_t>(result) >= returns.size())
    throw TorchStepError(where + ": result " + std::to_string(result) +
                         " of aten::" + schema.name().substr(schema.name().find("::") + 2) +
                         ", which returns " + std::to_string(returns.size()) + " result" +
                         (returns.size() == 1 ? "" : "s"));
  const c10::Argument& r = returns[static_cast<size_t>(result)];
  if (r.type()->kind() != c10::TypeKind::TensorType)
    throw TorchStepError(where + ": result " + std::to_string(result) +
                         " of aten::" + schema.name().substr(schema.name().find("::") + 2) +
                         " is a " + r.type()->str() + ", not a tensor");
  return static_cast<size_t>(result);
}

}  // namespace

TorchStep::TorchStep(const std::string& op, std::vector<TorchStepArg> args, torch::Tensor out,
                     bool flat_out, const std::string& where, int result_index)
    : op_(op), where_(where) {
  if (std::string why = torch_step_op_problem(op); !why.empty())
    throw TorchStepError(where + ": " + why);
  std::string overload;
  for (const auto& o : torch_step_ops())
    if (o.name == op) overload = o.overload;
  auto& dispatcher = c10::Dispatcher::singleton();
  if (auto h = dispatcher.findSchema({"aten::" + op, overload})) fn_ = *h;
  if (!fn_) throw TorchStepError(where + ": this libtorch has no aten::" + op);
  result_ = checked_result(fn_->schema(), result_index, where);
  const auto& params = fn_->schema().arguments();
  if (args.size() > params.size())
    throw TorchStepError(where + ": aten::" + op + " takes at most " +
                         std::to_string(params.size()) + " arguments, not " +
                         std::to_string(args.size()));
  for (size_t i = 0; i < params.size(); ++i) {
    if (i < args.size())
      args_.push_back(convert(args[i], params[i], where));
    else if (params[i].default_value())
      args_.push_back(*params[i].default_value());
    else
      throw TorchStepError(where + ": aten::" + op + " needs its argument '" + params[i].name() +
                           "'");
  }
  // The result's shape: on meta tensors where the operator has a meta kernel, else by running it.
  torch::Tensor result;
  try {
    auto meta = [](const at::Tensor& t) {
      return at::empty_strided(t.sizes(), t.strides(), t.options().device(torch::kMeta));
    };
    std::vector<c10::IValue> stack;
    for (const auto& v : args_) {
      if (v.isTensorList()) {
        c10::List<at::Tensor> m;
        const c10::List<at::Tensor> in = v.toTensorList();
        for (size_t i = 0; i < in.size(); ++i) m.push_back(meta(in.get(i)));
        stack.emplace_back(m);
      } else {
        stack.push_back(v.isTensor() ? c10::IValue(meta(v.toTensor())) : v);
      }
    }
    fn_->callBoxed(&stack);
    result = stack.at(result_).toTensor();
  } catch (const c10::Error&) {
    try {
      std::vector<c10::IValue> stack = args_;
      fn_->callBoxed(&stack);
      result = stack.at(result_).toTensor();
    } catch (const c10::Error& e) {
      throw TorchStepError(where + ": aten::" + op +
                           " refused its arguments: " + e.what_without_backtrace());
    }
  }
  shape_ = result.sizes().vec();
  if (result.scalar_type() != out.scalar_type())
    throw TorchStepError(where + ": aten::" + op + " gives " +
                         std::string(c10::toString(result.scalar_type())) +
                         " but its out buffer is " + c10::toString(out.scalar_type()));
  if (flat_out && out.numel() == result.numel())
    out_ = out.view(shape_);
  else if (out.sizes() == result.sizes())
    out_ = out;
  else
    throw TorchStepError(where + ": the result of aten::" + op + " has shape " +
                         shape_text(result.sizes()) + "; its out buffer has shape " +
                         shape_text(out.sizes()));
  // The `.out` overload, where its arguments are the functional ones and then `out`.
  auto o = dispatcher.findSchema({"aten::" + op, overload.empty() ? "out" : overload + "_out"});
  if (o && o->schema().arguments().size() == params.size() + 1 &&
      o->schema().arguments().back().name() == "out") {
    // The `.out` overload writes the operator's one result.
    if (result_ != 0)
      throw TorchStepError(where + ": result " + std::to_string(result_) + " of aten::" + op +
                           ", whose .out overload writes its result 0 only");
    out_fn_ = *o;
  }
}

void TorchStep::run() {
  try {
    if (out_fn_) {
      void* before = out_.data_ptr();
      std::vector<c10::IValue> stack = args_;
      stack.emplace_back(out_);
      out_fn_->callBoxed(&stack);
      // An operator may resize `out`: never allowed, the buffer's place and size are kernrl's.
      if (out_.data_ptr() != before || out_.sizes().vec() != shape_)
        throw TorchStepError(where_ + ": aten::" + op_ + " moved or resized its out buffer");
      return;
    }
    std::vector<c10::IValue> stack = args_;
    fn_->callBoxed(&stack);
    out_.copy_(stack.at(result_).toTensor());
  } catch (const c10::Error& e) {
    throw TorchStepError(where_ + ": aten::" + op_ + " failed: " + e.what_without_backtrace());
  }
}

}  // namespace kernrl
