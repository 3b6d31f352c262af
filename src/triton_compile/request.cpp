#include "triton_compile/request.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace kernrl {
using nlohmann::json;

std::string triton_type(const DType& d) {
  static const std::map<std::string, std::string> names = {
      {"float32", "fp32"}, {"float64", "fp64"}, {"float16", "fp16"}, {"bfloat16", "bf16"},
      {"int8", "i8"},      {"uint8", "u8"},     {"int16", "i16"},    {"int32", "i32"},
      {"uint32", "u32"},   {"int64", "i64"},    {"bool", "i1"}};
  auto it = names.find(d.name);
  if (it == names.end()) throw FormatError("Triton kernels cannot take " + d.name + " tensors");
  return it->second;
}

namespace {

// An integer argument's type and Triton's specialisation at one value.
json int_arg(int64_t v) {
  bool fits32 = v >= INT32_MIN && v <= INT32_MAX;
  return {{"type", fits32 ? "i32" : "i64"}, {"divisible_by_16", v % 16 == 0}, {"value", v}};
}

json arg_at(const LaunchArg& a, const LaunchPlan& plan, const ProblemSpec& p, const Vars& vars,
            int line) {
  switch (a.kind) {
    case ArgKind::Tensor:
      return {{"type", "*" + triton_type(p.find_tensor(a.text)->dtype)}, {"divisible_by_16", true}};
    case ArgKind::Scratch:
      for (const auto& s : plan.scratch)
        if (s.name == a.text)
          return {{"type", "*" + triton_type(s.dtype)}, {"divisible_by_16", true}};
      break;
    case ArgKind::Scalar: {
      const ScalarSpec* s = p.find_scalar(a.text);
      if (s->is_float()) return {{"type", "fp32"}, {"value", s->value}};
      return int_arg(static_cast<int64_t>(s->value));
    }
    case ArgKind::FloatLiteral:
      return {{"type", "fp32"}, {"value", std::stod(a.text)}};
    case ArgKind::FloatExpr:
      try {
        return {{"type", "fp32"},
                {"value", eval_real_expr(a.text, vars, plan_reals(plan, p, vars))}};
      } catch (const ExprError& e) {
        throw FormatError("argument '" + a.text + "': " + e.what(), line);
      }
    case ArgKind::IntExpr:
      try {
        return int_arg(eval_expr(a.text, vars));
      } catch (const ExprError& e) {
        throw FormatError("argument '" + a.text + "': " + e.what(), line);
      }
    case ArgKind::None:
      throw FormatError("argument '" + a.text +
                            "': a null pointer is an argument of CUDA kernels; a Triton kernel "
                            "takes tensors and values",
                        line);
    case ArgKind::Offset:  // refused by the launch block's check
      throw FormatError("argument '" + a.text +
                            "': a pointer into a buffer is an argument of CUDA kernels; a Triton "
                            "kernel takes whole tensors",
                        line);
    case ArgKind::Accessor:
      throw FormatError("argument '" + a.text +
                            "': a tensor accessor is an argument of CUDA kernels; a Triton kernel "
                            "takes the tensor's name",
                        line);
    case ArgKind::Struct:  // refused by the launch block's check
      throw FormatError("argument '" + a.text +
                            "': a struct is an argument of CUDA kernels; a Triton kernel takes "
                            "tensors and values",
                        line);
    case ArgKind::IntList:
    case ArgKind::TensorList:
    case ArgKind::Bool:
      break;  // torch steps only, which Triton plans do not have
  }
  throw FormatError("argument '" + a.text + "' names nothing of the problem", line);
}

json constexpr_at(const std::string& name, const std::string& value, const Vars& vars, int line) {
  if (value == "true" || value == "false") return value == "true";
  if (is_float_literal(value)) return std::stod(value);
  try {
    return eval_expr(value, vars);
  } catch (const ExprError& e) {
    throw FormatError("constexpr " + name + ": " + e.what(), line);
  }
}

json options_at(const LaunchSpec& l, const Vars& vars) {
  json o = json::object();
  if (!l.num_warps.empty()) o["num_warps"] = eval_expr(l.num_warps, vars);
  if (!l.num_stages.empty()) o["num_stages"] = eval_expr(l.num_stages, vars);
  if (!l.num_ctas.empty()) o["num_ctas"] = eval_expr(l.num_ctas, vars);
  return o;
}

}  // namespace

TritonRequest triton_request(const ExtractedSource& src, const std::string& filename,
                             const LaunchPlan& plan, const ProblemSpec& p,
                             const std::vector<Vars>& size_sets, int64_t num_sms, int arch) {
  TritonRequest r;
  r.size_sets = size_sets;
  json kernels = json::array();
  std::map<std::string, size_t> seen;  // a kernel request's text -> its index
  for (const auto& l : plan.launches) {
    std::vector<size_t> per_set;
    // Divisibility by 16 of each argument at every size set but the last (the bench): the test
    // sets share one specialisation, what holds at all of them; the bench's is its own, exactly
    // as Triton's JIT makes it.
    std::vector<bool> tests_divisible(l.args.size(), true);
    for (size_t si = 0; si + 1 < size_sets.size(); ++si) {
      Vars vars = plan_vars(plan, p, size_sets[si], num_sms);
      if (!l.repeat_var.empty()) vars[l.repeat_var] = 0;
      for (size_t ai = 0; ai < l.args.size(); ++ai)
        if (!arg_at(l.args[ai], plan, p, vars, l.line).value("divisible_by_16", false))
          tests_divisible[ai] = false;
    }
    for (size_t si = 0; si < size_sets.size(); ++si) {
      const Vars& sizes = size_sets[si];
      bool bench = si + 1 == size_sets.size();
      Vars vars = plan_vars(plan, p, sizes, num_sms);
      if (!l.repeat_var.empty()) vars[l.repeat_var] = 0;
      json k = {{"kernel", l.kernel}, {"line", l.line}};
      json args = json::array();
      for (size_t ai = 0; ai < l.args.size(); ++ai) {
        json a = arg_at(l.args[ai], plan, p, vars, l.line);
        if (!bench && a.contains("divisible_by_16")) a["divisible_by_16"] = tests_divisible[ai];
        args.push_back(a);
      }
      json cx = json::object();
      for (const auto& [name, value] : l.constexprs)
        cx[name] = constexpr_at(name, value, vars, l.line);
      k["args"] = args;
      k["constexprs"] = cx;
      k["options"] = options_at(l, vars);
      // Size sets whose request is the same text share a kernel; requests that differ only in
      // values (which heuristics see) are compiled once by the helper when the heuristics give
      // the same constexprs.
      std::string text = k.dump();
      auto it = seen.find(text);
      if (it == seen.end()) {
        it = seen.emplace(text, kernels.size()).first;
        k["key"] = l.kernel;
        kernels.push_back(k);
      }
      per_set.push_back(it->second);
    }
    r.launch_kernels.push_back(per_set);
  }
  // Keys: the kernel's name where it is compiled once, name#2, name#3... where more often.
  std::map<std::string, int> count;
  for (auto& k : kernels) ++count[k["kernel"].get<std::string>()];
  std::map<std::string, int> next;
  for (auto& k : kernels) {
    std::string name = k["kernel"];
    int n = ++next[name];
    k["key"] = count[name] == 1 || n == 1 ? name : name + "#" + std::to_string(n);
  }
  r.json = {{"source", src.code},
            {"filename", filename},
            {"first_line", src.first_line},
            {"arch", arch},
            {"kernels", kernels}};
  return r;
}

namespace {

int64_t meta_int(const json& m, const char* key, int64_t fallback) {
  auto it = m.find(key);
  if (it == m.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
  if (it->is_number()) return it->get<int64_t>();
  return fallback;
}

// The launch configuration of one compiled kernel for `grid` (the launch's grid expressions).
LaunchVariant variant_of(const TritonKernel& k, const std::vector<std::string>& grid) {
  LaunchVariant v;
  v.kernel = k.key;
  int64_t warps = meta_int(k.metadata, "num_warps", 4);
  v.block = {std::to_string(32 * warps)};
  v.shared_bytes = std::to_string(meta_int(k.metadata, "shared", 0));
  int64_t ctas = meta_int(k.metadata, "num_ctas", 1);
  if (ctas > 1) v.cluster = {std::to_string(ctas), "1", "1"};
  v.cooperative = meta_int(k.metadata, "launch_cooperative_grid", 0) != 0;
  (void)grid;
  return v;
}

// The grid's program count as an expression.
std::string programs(const std::vector<std::string>& grid) {
  std::string e;
  for (const auto& g : grid) e += (e.empty() ? "" : " * ") + ("(" + g + ")");
  return e;
}

}  // namespace

namespace {

// The launch's fields when `at[si]` is the kernel of size set si: one kernel for all, or a variant
// per size set.
LaunchChoice choice_of(const std::vector<const TritonKernel*>& at, const LaunchSpec& l,
                       const TritonRequest& req, const ProblemSpec& p) {
  LaunchChoice c;
  c.config = at.back()->autotune_config;
  std::set<std::string> keys;
  for (const TritonKernel* k : at) keys.insert(k->key);
  auto fill = [&c](const LaunchVariant& v) {
    c.kernel = v.kernel;
    c.block = v.block;
    c.cluster = v.cluster;
    c.shared_bytes = v.shared_bytes;
    c.cooperative = v.cooperative;
  };
  if (keys.size() == 1) {
    fill(variant_of(*at[0], l.grid));
    return c;
  }
  for (size_t si = 0; si < at.size(); ++si) {
    LaunchVariant v = variant_of(*at[si], l.grid);
    for (const auto& n : p.size_names)
      if (req.size_sets[si].count(n)) v.sizes[n] = req.size_sets[si].at(n);
    c.variants.push_back(v);
  }
  fill(c.variants.back());  // the fields of the launch itself: the bench's variant
  return c;
}

// The choices of an autotuned launch: each config compiled at the bench size that also compiled
// at every other size set, with `ctas` CTAs per program.
std::vector<LaunchChoice> autotune_choices(const std::vector<const TritonKernel*>& at,
                                           const LaunchSpec& l, const TritonRequest& req,
                                           const ProblemSpec& p, int64_t ctas) {
  std::vector<LaunchChoice> out;
  for (const TritonKernel& bench : at.back()->configs) {
    std::vector<const TritonKernel*> with;
    for (const TritonKernel* k : at) {
      auto it = std::find_if(k->configs.begin(), k->configs.end(), [&](const TritonKernel& c) {
        return c.autotune_config == bench.autotune_config;
      });
      // The grid is multiplied by the first kernel's num_ctas: a config with another is not tried.
      if (it == k->configs.end() || meta_int(it->metadata, "num_ctas", 1) != ctas) break;
      with.push_back(&*it);
    }
    if (with.size() == at.size()) out.push_back(choice_of(with, l, req, p));
  }
  return out;
}

}  // namespace

TritonLaunchable triton_launch_plan(const LaunchPlan& plan, const TritonRequest& req,
                                    const std::vector<TritonKernel>& kernels,
                                    const ProblemSpec& p) {
  TritonLaunchable out;
  out.plan = plan;
  for (const auto& k : kernels) {
    out.lowered[k.key] = k.symbol;
    out.modules[k.key] = k.cubin_path;
    for (const auto& c : k.configs) {
      out.lowered[c.key] = c.symbol;
      out.modules[c.key] = c.cubin_path;
    }
  }
  for (size_t li = 0; li < plan.launches.size(); ++li) {
    LaunchSpec& l = out.plan.launches[li];
    const auto& per_set = req.launch_kernels.at(li);
    std::vector<const TritonKernel*> at;
    for (size_t ki : per_set) at.push_back(&kernels.at(ki));
    // Every compiled kernel the launch may run (each size set's, each autotune config's), by key.
    std::map<std::string, const TritonKernel*> distinct;
    for (const TritonKernel* k : at) {
      distinct.emplace(k->key, k);
      for (const auto& c : k->configs) distinct.emplace(c.key, &c);
    }
    // Hidden parameters: global scratch, then profile scratch (Triton 3.5+), as the compiled
    // kernel has them; one scratch buffer each, sized for the largest variant.
    const TritonKernel& first = *at.at(0);
    size_t hidden = first.ptx_params - std::min(first.ptx_params, first.runtime_params);
    if (first.runtime_params != l.args.size())
      throw FormatError("kernel " + l.kernel + " was compiled with " +
                            std::to_string(first.runtime_params) +
                            " arguments but the launch passes " + std::to_string(l.args.size()),
                        l.line);
    if (hidden > 2)
      throw FormatError(
          "the compiled kernel " + l.kernel + " has " + std::to_string(hidden) +
              " parameters kernrl does not know (Triton's hidden scratch pointers are "
              "at most 2)",
          l.line);
    static const char* kScratchKeys[2][2] = {{"global_scratch_size", "global_scratch"},
                                             {"profile_scratch_size", "profile_scratch"}};
    for (size_t h = 0; h < hidden; ++h) {
      std::string count;
      for (const auto& [key, k] : distinct) {
        if (k->ptx_params != first.ptx_params)
          throw FormatError("the variants of " + l.kernel + " differ in their parameters", l.line);
        int64_t bytes = meta_int(k->metadata, kScratchKeys[h][0], 0);
        int64_t ctas = meta_int(k->metadata, "num_ctas", 1);
        std::string e = bytes > 0 ? programs(l.grid) + " * " + std::to_string(bytes * ctas) : "1";
        count = count.empty() ? e : "max(" + count + ", " + e + ")";
      }
      ScratchSpec s;
      s.name = "triton_" + std::string(kScratchKeys[h][1]) + "_" + std::to_string(li + 1);
      s.dtype = *dtype_from_name("uint8");
      s.count = "max(1, " + count + ")";
      s.line = l.line;
      out.plan.scratch.push_back(s);
      l.args.push_back({s.name, ArgKind::Scratch});
    }
    std::vector<LaunchChoice> choices;
    if (at.back()->configs.size() > 1)
      choices = autotune_choices(at, l, req, p, meta_int(first.metadata, "num_ctas", 1));
    LaunchChoice c = choices.empty() ? choice_of(at, l, req, p) : choices.front();
    if (choices.size() > 1) {
      l.autotune = choices;
      l.tune_group = at.back()->key;
    }
    l.kernel = c.kernel;
    l.block = c.block;
    l.cluster = c.cluster;
    l.shared_bytes = c.shared_bytes;
    l.cooperative = c.cooperative;
    l.variants = c.variants;
    // num_ctas > 1: Triton launches grid x num_ctas blocks in clusters of num_ctas.
    int64_t ctas = meta_int(first.metadata, "num_ctas", 1);
    if (ctas > 1) l.grid[0] = "(" + l.grid[0] + ") * " + std::to_string(ctas);
  }
  return out;
}

}  // namespace kernrl
