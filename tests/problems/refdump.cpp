// kernrl_refdump ID DIR [--sizes test|bench|all] [--seed N] [--inputs-only] [--device cuda]: draws
// a problem's inputs (on CPU unless --device says otherwise, exactly as the grader draws them) at
// its test sizes (default), its bench size or both, runs the C++ reference unless --inputs-only,
// and writes the tensors as raw little-endian arrays plus meta.json. Used by
// tests/problems/torch_text_check.py and scripts/precision.py.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/paths.h"
#include "worker/inputs.h"

using namespace kernrl;
using nlohmann::json;
namespace fs = std::filesystem;

static json write_tensor(const fs::path& dir, const std::string& name, torch::Tensor t) {
  t = t.cpu().contiguous();
  std::string dtype = c10::toString(t.scalar_type());
  std::ofstream f(dir / (name + ".bin"), std::ios::binary);
  f.write(static_cast<const char*>(t.data_ptr()),
          static_cast<std::streamsize>(t.numel() * t.element_size()));
  return {{"file", name + ".bin"}, {"dtype", dtype}, {"shape", t.sizes().vec()}};
}

static int usage() {
  std::cerr << "usage: kernrl_refdump PROBLEM_ID OUT_DIR [--sizes test|bench|all] [--seed N] "
               "[--inputs-only] [--device cpu|cuda]\n";
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  std::string which = "test";
  uint64_t seed = 77;
  bool inputs_only = false;
  std::string device = "cpu";
  for (int i = 3; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      which = argv[++i];
    } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = std::stoull(argv[++i]);
    } else if (!std::strcmp(argv[i], "--device") && i + 1 < argc) {
      device = argv[++i];
    } else if (!std::strcmp(argv[i], "--inputs-only")) {
      inputs_only = true;
    } else {
      return usage();
    }
  }
  if (which != "test" && which != "bench" && which != "all") return usage();
  try {
    ProblemSpec p = load_problem(find_problem_dir(problems_dir(), argv[1]));
    fs::path out = argv[2];
    std::vector<std::pair<std::string, Vars>> sets;
    if (which != "bench")
      for (const auto& s : p.tests) sets.emplace_back("test", s);
    if (which != "test") sets.emplace_back("bench", p.bench);
    json meta = {{"id", p.id}, {"torch", p.torch}, {"sets", json::array()}};
    for (size_t i = 0; i < sets.size(); ++i) {
      const Vars& sizes = sets[i].second;
      fs::path d = out / ("set" + std::to_string(i));
      fs::create_directories(d);
      TensorMap in = make_inputs(p, sizes, seed + i, torch::Device(device));
      json set = {{"kind", sets[i].first},
                  {"sizes", sizes},
                  {"scalars", p.scalar_values()},
                  {"inputs", json::array()},
                  {"parameters", json::array()},
                  {"outputs", json::array()},
                  {"dir", d.string()}};
      for (const auto* list : {&p.inputs, &p.parameters})
        for (const auto& t : *list) {
          json j = write_tensor(d, t.name, in.at(t.name));
          j["name"] = t.name;
          set[list == &p.inputs ? "inputs" : "parameters"].push_back(j);
        }
      TensorMap ref;
      if (!inputs_only) ref = run_reference(p, in, sizes);
      for (const auto& t : p.outputs) {
        json o = inputs_only ? json{{"dtype", t.dtype.name}}
                             : write_tensor(d, "out_" + t.name, ref.at(t.name));
        o["name"] = t.name;
        o["compare"] = t.compare;
        o["atol"] = t.tolerance.atol;
        o["rtol"] = t.tolerance.rtol;
        o["rel_l2"] = t.tolerance.rel_l2;
        o["count"] = t.count;
        set["outputs"].push_back(o);
      }
      meta["sets"].push_back(set);
    }
    std::ofstream(out / "meta.json") << meta.dump(1);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kernrl_refdump: " << e.what() << "\n";
    return 1;
  }
}
