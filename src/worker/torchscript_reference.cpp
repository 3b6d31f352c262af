#include "worker/torchscript_reference.h"

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

namespace kernrl {
namespace {

// problem.yaml's `reference` (docs/problem-format.md), validated by the spec reader.
struct ReferenceSource {
  std::string torchscript;  // folder of the modules, one per size set
  std::string weights;      // submodule whose parameters and buffers are the problem's parameters
  std::string inputs;       // folder of the traced input generators, or empty
};

// The `reference` of p's problem.yaml; empty `torchscript` for a libtorch problem.
ReferenceSource reference_source(const ProblemSpec& p) {
  ReferenceSource r;
  YAML::Node n = YAML::LoadFile((p.dir / "problem.yaml").string())["reference"];
  if (!n || !n.IsMap()) return r;
  if (n["torchscript"]) r.torchscript = n["torchscript"].as<std::string>();
  if (n["weights"]) r.weights = n["weights"].as<std::string>();
  if (n["inputs"]) r.inputs = n["inputs"].as<std::string>();
  return r;
}

// The TorchScript reference of one problem: its spec (names, size sets) and its loaded modules.
class ScriptReference {
 public:
  ScriptReference(const ProblemSpec& p, ReferenceSource source) : p_(p), src_(std::move(source)) {
    entry_.run = [this](const RefContext& ctx) { return run(ctx); };
    entry_.generate = [this](const RefContext& ctx) { return generate(ctx); };
  }
  const ReferenceEntry& entry() const { return entry_; }

 private:
  // "bench" or "test<i>": the size set `sizes` is (the modules are saved per size set).
  std::string set_name(const std::map<std::string, int64_t>& sizes) const {
    auto same = [&](const Vars& v) {
      for (const auto& n : p_.size_names) {
        auto it = sizes.find(n);
        if (it == sizes.end() || it->second != v.at(n)) return false;
      }
      return true;
    };
    if (same(p_.bench)) return "bench";
    for (size_t i = 0; i < p_.tests.size(); ++i)
      if (same(p_.tests[i])) return "test" + std::to_string(i);
    throw std::runtime_error(p_.id +
                             ": a TorchScript reference runs only at the problem's own size sets "
                             "(its bench and test sets); other sizes (--size) have no module");
  }

  torch::jit::Module& module(const std::string& folder, const std::string& set,
                             torch::Device device) {
    std::string path = (p_.dir / folder / (set + ".pt")).string();
    auto key = path + "@" + device.str();
    auto it = modules_.find(key);
    if (it != modules_.end()) return it->second;
    // The module runs op by op, as the eager module does: no fusion by the graph executor, so
    // that the reference and its timing are PyTorch eager's (KernelBench's baseline).
    torch::jit::setGraphExecutorOptimize(false);
    try {
      return modules_.emplace(key, torch::jit::load(path, device)).first->second;
    } catch (const c10::Error& e) {
      throw std::runtime_error(
          path + ": cannot load the TorchScript module: " + e.what_without_backtrace());
    }
  }

  TensorMap run(const RefContext& ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    torch::jit::Module& m = module(src_.torchscript, set_name(ctx.sizes), ctx.device);
    std::vector<torch::jit::IValue> args;
    for (const auto& t : p_.inputs) args.emplace_back(ctx.t(t.name));
    torch::jit::IValue out = m.forward(args);
    std::vector<torch::Tensor> outs;
    if (out.isTuple()) {
      for (const auto& v : out.toTupleRef().elements()) outs.push_back(v.toTensor());
    } else if (out.isTensorList()) {
      outs = out.toTensorVector();
    } else {
      outs.push_back(out.toTensor());
    }
    if (outs.size() != p_.outputs.size())
      throw std::runtime_error(p_.id + ": the TorchScript reference returned " +
                               std::to_string(outs.size()) + " tensors, the spec has " +
                               std::to_string(p_.outputs.size()) + " outputs");
    TensorMap r;
    for (size_t i = 0; i < outs.size(); ++i) r[p_.outputs[i].name] = outs[i];
    return r;
  }

  // The weights (by module path, below the `weights` submodule) and the traced inputs.
  TensorMap generate(const RefContext& ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string set = set_name(ctx.sizes);
    torch::jit::Module& m = module(src_.torchscript, set, ctx.device);
    std::string prefix = src_.weights.empty() ? "" : src_.weights + ".";
    TensorMap r;
    auto take = [&](const std::string& name, const torch::Tensor& t) {
      if (name.compare(0, prefix.size(), prefix) == 0)
        r[name.substr(prefix.size())] = t.detach().clone();
    };
    for (const auto& np : m.named_parameters(true)) take(np.name, np.value);
    for (const auto& nb : m.named_buffers(true)) take(nb.name, nb.value);
    if (!src_.inputs.empty()) {
      // The generator draws from torch's generator (seeded by the caller for this trial) on the
      // inputs' device: drawn on the CPU, KernelBench's 8 GiB loss inputs took seconds each, and
      // an evaluation draws them several times. Where the moved generator fails at a size set's
      // first draw (a CPU tensor constant in its graph), that set draws on the CPU, as traced,
      // from then on. The path never changes after a draw on the device: a trial draws its
      // inputs twice from one seed and compares them, and the CPU's and the GPU's generators
      // give different numbers, so a later failure (out of memory) is an error, not a fallback.
      torch::jit::IValue out;
      bool drawn = false;
      const std::string key = set + "@" + ctx.device.str();
      if (!ctx.device.is_cpu() && !cpu_only_.count(key)) {
        try {
          torch::jit::Module& g = device_generator(set, ctx.device);
          out = g.forward({torch::zeros({1}, torch::TensorOptions().device(ctx.device))});
          drawn = true;
          on_device_.insert(key);
        } catch (const std::exception& e) {
          if (on_device_.count(key)) throw;
          cpu_only_.insert(key);
          std::fprintf(stderr, "kernrl-worker: %s: the input generator draws on the CPU (%s)\n",
                       p_.id.c_str(), first_line(e.what()).c_str());
        }
      }
      if (!drawn) {
        torch::jit::Module& g = module(src_.inputs, set, torch::Device(torch::kCPU));
        out = g.forward({torch::zeros({1})});
      }
      std::vector<torch::Tensor> xs;
      if (out.isTuple()) {
        for (const auto& v : out.toTupleRef().elements()) xs.push_back(v.toTensor());
      } else {
        xs.push_back(out.toTensor());
      }
      if (xs.size() != p_.inputs.size())
        throw std::runtime_error(p_.id + ": the input generator returned " +
                                 std::to_string(xs.size()) + " tensors for " +
                                 std::to_string(p_.inputs.size()) + " inputs");
      for (size_t i = 0; i < xs.size(); ++i) r[p_.inputs[i].name] = xs[i].to(ctx.device);
    }
    return r;
  }

  // The input generator of `set` loaded for `device`, its device constants moved there.
  torch::jit::Module& device_generator(const std::string& set, torch::Device device) {
    std::string path = (p_.dir / src_.inputs / (set + ".pt")).string();
    auto key = path + "@moved:" + device.str();
    auto it = modules_.find(key);
    if (it != modules_.end()) return it->second;
    torch::jit::setGraphExecutorOptimize(false);
    torch::jit::Module m = torch::jit::load(path, device);
    move_device_constants(*m.get_method("forward").graph(), device);
    return modules_.emplace(key, std::move(m)).first->second;
  }

  static std::string first_line(const std::string& s) {
    return s.substr(0, std::min(s.find('\n'), size_t{200}));
  }

  ProblemSpec p_;
  ReferenceSource src_;
  ReferenceEntry entry_;
  std::map<std::string, torch::jit::Module> modules_;
  std::set<std::string> cpu_only_;   // "set@device" whose moved generator failed
  std::set<std::string> on_device_;  // "set@device" drawn on the device at least once
  std::mutex mu_;
};

}  // namespace

int move_device_constants(torch::jit::Graph& graph, const c10::Device& device) {
  int changed = 0;
  std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* b) {
    for (torch::jit::Node* n : b->nodes()) {
      for (torch::jit::Block* sub : n->blocks()) walk(sub);
      if (n->kind() == c10::prim::Constant && n->outputs().size() == 1 &&
          n->output()->type()->kind() == c10::TypeKind::DeviceObjType &&
          n->hasAttribute(c10::attr::value)) {
        n->s_(c10::attr::value, device.str());
        ++changed;
      }
    }
  };
  walk(graph.block());
  return changed;
}

const ReferenceEntry* reference_for(const ProblemSpec& p) {
  // Per problem folder: its TorchScript reference, or nullptr for a libtorch problem. A suite's
  // problem may share its id with one of kernrl's own, so the folder decides, not the id.
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<ScriptReference>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto key = p.dir.string() + "\n" + p.id;
  auto it = loaded.find(key);
  if (it == loaded.end()) {
    ReferenceSource src = p.dir.empty() ? ReferenceSource{} : reference_source(p);
    std::unique_ptr<ScriptReference> ref;
    if (!src.torchscript.empty()) ref = std::make_unique<ScriptReference>(p, std::move(src));
    it = loaded.emplace(key, std::move(ref)).first;
  }
  return it->second ? &it->second->entry() : find_reference(p.id);
}

}  // namespace kernrl
