// Reading problem.yaml: the spec reader (every mistake as "file:line: what") and load_problem.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "core/problem.h"
#include "core/problem_score.h"
#include "core/yaml_guard.h"

namespace kernrl {
namespace fs = std::filesystem;

namespace {

// Reads one problem.yaml, turning every mistake into "file:line: what".
class SpecReader {
 public:
  SpecReader(std::string name, const std::string& text) : file_(std::move(name)), text_(text) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& why) const {
    std::string where = file_;
    if (at.IsDefined() && at.Mark().line >= 0) where += ":" + std::to_string(at.Mark().line + 1);
    throw SpecError(where + ": " + why);
  }
  YAML::Node need(const YAML::Node& map, const char* key) const {
    if (!map.IsMap()) fail(map, "expected a mapping");
    YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) fail(map, std::string("missing '") + key + "'");
    return n;
  }
  template <typename T>
  T as(const YAML::Node& n, const char* what) const {
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, std::string("'") + what + "' has the wrong type");
    }
  }
  // A number that must be finite and within [lo, hi].
  double number(const YAML::Node& n, const char* what, double lo, double hi) const {
    double v = as<double>(n, what);
    if (!std::isfinite(v) || v < lo || v > hi)
      fail(n, std::string("'") + what + "' is " + n.Scalar() +
                  "; it must be a finite number from " + fmt(lo) + " to " + fmt(hi));
    return v;
  }
  static std::string fmt(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
  }
  int64_t size_value(const YAML::Node& n) const {
    auto v = as<int64_t>(n, "size");
    if (v < 0 || v > kMaxSize) fail(n, "size " + n.Scalar() + " is out of range (0 to 2^40)");
    return v;
  }
  // Integer expressions may be written as YAML numbers or strings.
  std::string expr(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail(n, std::string("'") + what + "' must be an integer expression");
    return n.Scalar();
  }
  void check_expr(const YAML::Node& n, const std::string& e,
                  const std::set<std::string>& names) const {
    try {
      for (const auto& v : expr_names(e))
        if (!names.count(v)) fail(n, "unknown size '" + v + "' in \"" + e + "\"");
    } catch (const ExprError& err) {
      fail(n, err.what());
    }
  }

  Tolerance tolerance(const YAML::Node& n, Tolerance base) const {
    if (!n.IsDefined()) return base;
    if (!n.IsMap()) fail(n, "tolerance must be a mapping {atol, rtol, rel_l2}");
    for (const auto& kv : n) {
      auto k = kv.first.Scalar();
      if (k == "atol")
        base.atol = number(kv.second, "atol", 0, 1e30);
      else if (k == "rtol")
        base.rtol = number(kv.second, "rtol", 0, 1e30);
      else if (k == "rel_l2")
        base.rel_l2 = number(kv.second, "rel_l2", 0, 1e30);
      else
        fail(kv.first, "unknown tolerance key '" + k + "'");
    }
    return base;
  }

  TensorSpec tensor(const YAML::Node& n, bool output, const ProblemSpec& p,
                    const std::set<std::string>& sizes) const {
    TensorSpec t;
    t.name = as<std::string>(need(n, "name"), "name");
    auto dt_node = need(n, "dtype");
    auto dt = dtype_from_name(as<std::string>(dt_node, "dtype"));
    if (!dt) fail(dt_node, "unknown dtype '" + dt_node.Scalar() + "'");
    t.dtype = *dt;
    auto shape = need(n, "shape");
    if (!shape.IsSequence()) fail(shape, "shape must be a list of expressions ([] for a scalar)");
    for (const auto& d : shape) {
      t.shape.push_back(expr(d, "shape"));
      check_expr(d, t.shape.back(), sizes);
    }
    if (output) {
      t.compare = p.compare;
      if (!t.dtype.is_float) t.compare = "exact";
      if (n["compare"]) t.compare = as<std::string>(n["compare"], "compare");
      if (t.compare != "allclose" && t.compare != "exact")
        fail(n["compare"], "compare must be allclose or exact");
      if (t.compare == "allclose" && !t.dtype.is_float)
        fail(n, "allclose needs a float output; use exact");
      t.tolerance = tolerance(n["tolerance"], p.tolerance);
      if (n["count"]) t.count = as<std::string>(n["count"], "count");
      if (n["init"]) fail(n["init"], "outputs take no init");
    } else {
      t.init = init(need(n, "init"), sizes);
    }
    for (const auto& kv : n) {
      static const std::set<std::string> in_keys = {"name", "dtype", "shape", "init"};
      static const std::set<std::string> out_keys = {"name",    "dtype",     "shape",
                                                     "compare", "tolerance", "count"};
      if (!(output ? out_keys : in_keys).count(kv.first.Scalar()))
        fail(kv.first, "unknown key '" + kv.first.Scalar() + "' in tensor '" + t.name + "'");
    }
    return t;
  }

  // `reference: {torchscript: DIR, weights: SUBMODULE, inputs: DIR}` (folders inside the
  // problem's): a TorchScript reference, read by the worker (worker/torchscript_reference.h).
  void check_reference(const YAML::Node& n) const {
    if (!n.IsMap()) fail(n, "reference must be a mapping such as {torchscript: torchscript}");
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      if (k == "forward") {
        if (!kv.second.IsSequence())
          fail(kv.second, "reference.forward must be a list of input and scalar names");
        continue;
      }
      std::string v = as<std::string>(kv.second, k.c_str());
      if (k == "torchscript" || k == "inputs") {
        if (v.empty() || v.find("..") != std::string::npos || v[0] == '/')
          fail(kv.second, "reference." + k + " must be a folder inside the problem's folder");
      } else if (k != "weights") {
        fail(kv.first, "reference has only torchscript, weights, inputs and forward");
      }
    }
    if (!n["torchscript"]) fail(n, "reference needs torchscript: the folder of its modules");
  }

  InitSpec init(const YAML::Node& n, const std::set<std::string>& sizes) const {
    InitSpec s;
    if (n.IsScalar()) {
      s.kind = n.Scalar();
      if (s.kind != "custom")
        fail(n, "init '" + s.kind + "' needs parameters, e.g. {normal: {mean: 0, std: 1}}");
      return s;
    }
    if (!n.IsMap() || n.size() != 1) fail(n, "init must have exactly one kind");
    auto kv = *n.begin();
    s.kind = kv.first.Scalar();
    if (s.kind == "custom") return s;  // {custom: {}} is the same as `custom`
    static const std::map<std::string, std::vector<std::string>> params = {
        {"normal", {"mean", "std"}},     {"uniform", {"low", "high"}}, {"randint", {"low", "high"}},
        {"kaiming_uniform", {"fan_in"}}, {"bernoulli", {"p"}},         {"constant", {"value"}}};
    auto it = params.find(s.kind);
    if (it == params.end()) fail(kv.first, "unknown init '" + s.kind + "'");
    if (!kv.second.IsMap())
      fail(kv.second, "init " + s.kind + " takes a mapping of its parameters, e.g. {" + s.kind +
                          ": {" + it->second.front() + ": ...}}");
    for (const auto& key : it->second) {
      auto v = kv.second[key];
      if (!v.IsDefined()) fail(kv.second, "init " + s.kind + " needs '" + key + "'");
      if (key == "fan_in") {
        s.fan_in = expr(v, "fan_in");
        check_expr(v, s.fan_in, sizes);
      } else {
        double lo = key == "std" ? 0 : key == "p" ? 0 : -1e30, hi = key == "p" ? 1 : 1e30;
        s.params[key] = number(v, key.c_str(), lo, hi);
      }
    }
    if (s.kind == "randint" && s.params["high"] <= s.params["low"])
      fail(kv.second, "randint needs low < high");
    return s;
  }

  ProblemSpec read() {
    YAML::Node root;
    try {
      check_yaml_shape(text_, YamlLimits{32, 100000});
      root = YAML::Load(text_);
    } catch (const YamlShapeError& e) {
      throw SpecError(file_ + ":" + std::to_string(e.line + 1) + ": " + e.what());
    } catch (const YAML::ParserException& e) {
      throw SpecError(file_ + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (!root.IsMap()) throw SpecError(file_ + ": a problem spec is a YAML mapping");
    static const std::set<std::string> keys = {
        "id",         "level",   "name",    "description", "sizes",     "inputs",
        "parameters", "scalars", "outputs", "tolerance",   "compare",   "flops",
        "bytes",      "torch",   "score",   "throughput",  "reference", "modules"};
    for (const auto& kv : root)
      if (!kv.first.IsScalar() || !keys.count(kv.first.Scalar()))
        fail(kv.first, "unknown key '" + kv.first.Scalar() + "'");

    ProblemSpec p;
    p.id = as<std::string>(need(root, "id"), "id");
    p.level = as<int>(need(root, "level"), "level");
    p.name = as<std::string>(need(root, "name"), "name");
    p.description = as<std::string>(need(root, "description"), "description");
    p.torch = as<std::string>(need(root, "torch"), "torch");
    if (root["compare"]) p.compare = as<std::string>(root["compare"], "compare");
    if (p.compare != "allclose" && p.compare != "exact")
      fail(root["compare"], "compare must be allclose or exact");
    p.tolerance = tolerance(root["tolerance"], Tolerance{});

    // sizes
    auto sizes = need(root, "sizes");
    auto bench = need(sizes, "bench");
    if (!bench.IsMap() || bench.size() == 0) fail(bench, "sizes.bench must be a non-empty mapping");
    for (const auto& kv : bench) {
      p.size_names.push_back(kv.first.Scalar());
      if (!kv.first.IsScalar() || kv.first.Scalar().empty() || kv.first.Scalar().size() > 64)
        fail(kv.first, "a size needs a name");
      if (p.bench.count(kv.first.Scalar()))
        fail(kv.first, "size '" + kv.first.Scalar() + "' is given twice");
      p.bench[kv.first.Scalar()] = size_value(kv.second);
    }
    std::set<std::string> names(p.size_names.begin(), p.size_names.end());
    auto tests = need(sizes, "test");
    if (!tests.IsSequence() || tests.size() < 2)
      fail(tests, "sizes.test needs at least two size sets");
    for (const auto& t : tests) {
      if (!t.IsMap()) fail(t, "each test size set is a mapping of sizes");
      Vars v;
      for (const auto& kv : t) {
        if (!names.count(kv.first.Scalar()))
          fail(kv.first, "size '" + kv.first.Scalar() + "' is not in sizes.bench");
        v[kv.first.Scalar()] = size_value(kv.second);
      }
      if (v.size() != names.size())
        fail(t, "every test size set must define all sizes of sizes.bench");
      p.tests.push_back(v);
    }
    if (!sizes.IsMap()) fail(sizes, "sizes must be a mapping with bench and test");
    for (const auto& kv : sizes)
      if (kv.first.Scalar() != "bench" && kv.first.Scalar() != "test")
        fail(kv.first, "sizes has only bench and test");

    auto list = [&](const YAML::Node& n, const char* what) {
      if (!n.IsSequence()) fail(n, std::string("'") + what + "' must be a list of tensors");
      return n;
    };
    for (const auto& n : list(need(root, "inputs"), "inputs"))
      p.inputs.push_back(tensor(n, false, p, names));
    if (auto m = root["modules"]) {
      if (!m.IsMap()) fail(m, "modules must be a mapping of module paths to classes");
      for (const auto& kv : m) {
        std::vector<std::string> classes;
        bool ok = kv.first.IsScalar() && !kv.first.Scalar().empty() &&
                  (kv.second.IsScalar() || (kv.second.IsSequence() && kv.second.size() > 0));
        if (ok && kv.second.IsScalar()) classes.push_back(kv.second.Scalar());
        if (ok && kv.second.IsSequence())
          for (const auto& c : kv.second) {
            if (!c.IsScalar()) ok = false;
            if (ok) classes.push_back(c.Scalar());
          }
        if (!ok ||
            std::any_of(classes.begin(), classes.end(), [](const auto& c) { return c.empty(); }))
          fail(kv.first, "each module is `path: [Class, BaseClass, ...]`");
        p.modules.push_back({kv.first.Scalar(), classes});
      }
    }
    if (root["parameters"])
      for (const auto& n : list(root["parameters"], "parameters"))
        p.parameters.push_back(tensor(n, false, p, names));
    for (const auto& n : list(need(root, "outputs"), "outputs"))
      p.outputs.push_back(tensor(n, true, p, names));
    if (p.outputs.empty()) fail(root["outputs"], "a problem needs at least one output");
    if (root["scalars"]) {
      auto sc = root["scalars"];
      if (!sc.IsMap()) fail(sc, "scalars must map names to {dtype, value}");
      for (const auto& kv : sc) {
        ScalarSpec s;
        s.name = kv.first.Scalar();
        s.dtype = as<std::string>(need(kv.second, "dtype"), "dtype");
        if (s.dtype != "float32" && s.dtype != "float64" && s.dtype != "int32" &&
            s.dtype != "int64")
          fail(kv.second, "scalar dtype must be float32, float64, int32 or int64");
        s.value = number(need(kv.second, "value"), "value", -1e300, 1e300);
        p.scalars.push_back(s);
      }
    }
    p.flops = expr(need(root, "flops"), "flops");
    check_expr(root["flops"], p.flops, names);
    p.bytes = expr(need(root, "bytes"), "bytes");
    if (p.bytes != "auto") check_expr(root["bytes"], p.bytes, names);
    read_score_fields(root, p, names, file_);
    if (root["reference"]) {
      check_reference(root["reference"]);
      p.torchscript = root["reference"]["torchscript"].Scalar();
      if (auto f = root["reference"]["forward"]) {
        // Each input exactly once, the rest scalars of the problem.
        std::set<std::string> given;
        for (const auto& n : f) {
          std::string name = as<std::string>(n, "reference.forward");
          bool input = false;
          for (const auto& t : p.inputs) input = input || t.name == name;
          if (!input && !p.find_scalar(name))
            fail(n, "reference.forward: '" + name + "' is not an input or scalar of the problem");
          if (!given.insert(name).second)
            fail(n, "reference.forward: '" + name + "' is given twice");
          p.forward_args.push_back(name);
        }
        for (const auto& t : p.inputs)
          if (!given.count(t.name)) fail(f, "reference.forward: input '" + t.name + "' is missing");
      }
    }

    // Names must be unique across sizes, tensors and scalars: launch blocks refer to them bare.
    std::set<std::string> seen(names);
    auto unique = [&](const std::string& n, const YAML::Node& at) {
      if (!seen.insert(n).second) fail(at, "name '" + n + "' is used twice");
    };
    for (const auto& t : p.inputs) unique(t.name, root["inputs"]);
    for (const auto& t : p.parameters) unique(t.name, root["parameters"]);
    for (const auto& t : p.outputs) unique(t.name, root["outputs"]);
    for (const auto& s : p.scalars) unique(s.name, root["scalars"]);
    for (const auto& t : p.outputs) {
      if (t.count.empty()) continue;
      const TensorSpec* c = p.find_tensor(t.count);
      if (!c || c->dtype.is_float || &*c == &t)
        fail(root["outputs"],
             "output '" + t.name + "' has count '" + t.count + "', which is not an integer output");
    }
    // Every expression evaluates at every size set: no division by zero, no overflow, no
    // negative dimension, tensors and work that fit 64 bits.
    std::vector<Vars> sets = p.tests;
    sets.push_back(p.bench);
    for (const auto& v : sets) {
      try {
        for (const auto* l : {&p.inputs, &p.parameters, &p.outputs})
          for (const auto& t : *l) {
            p.numel_of(t, v);
            if (!t.init.fan_in.empty()) eval_expr(t.init.fan_in, v);
          }
        p.flops_at(v);
        p.bytes_at(v);
        if (!p.throughput.count.empty()) eval_expr(p.throughput.count, v);
      } catch (const ExprError& e) {
        std::string at;
        for (const auto& n : p.size_names)
          at += (at.empty() ? "" : " ") + n + "=" + std::to_string(v.at(n));
        throw SpecError(file_ + ": at " + at + ": " + e.what());
      }
    }
    return p;
  }

 private:
  std::string file_;
  const std::string& text_;
};

}  // namespace

ProblemSpec parse_problem_yaml(const std::string& text, const std::string& name) {
  try {
    return SpecReader(name, text).read();
  } catch (const YAML::Exception& e) {
    // A node of one kind read as another that no check above caught: still the file's error.
    throw SpecError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

std::string read_problem_yaml(const fs::path& dir) {
  fs::path file = dir / "problem.yaml";
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SpecError(file.string() + ": cannot read file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ProblemSpec problem_from_yaml(const fs::path& dir, const std::string& text) {
  fs::path file = dir / "problem.yaml";
  ProblemSpec p = parse_problem_yaml(text, file.string());
  p.dir = dir;
  std::string expect = problem_id_of_dir(dir);
  if (p.id != expect)
    throw SpecError(file.string() + ": id '" + p.id + "' does not match its folder (" + expect +
                    ")");
  if (p.id.rfind("L" + std::to_string(p.level) + "_", 0) != 0)
    throw SpecError(file.string() + ": level " + std::to_string(p.level) + " does not match id " +
                    p.id);
  auto rest = p.id.substr(p.id.find('_') + 1);
  p.number = std::atoi(rest.c_str());
  return p;
}

ProblemSpec load_problem(const fs::path& dir) {
  return problem_from_yaml(dir, read_problem_yaml(dir));
}

}  // namespace kernrl
