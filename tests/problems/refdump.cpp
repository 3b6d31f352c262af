// kernrl_refdump ID DIR: draws a problem's inputs at each test size on CPU, runs the C++ reference
// and writes both as raw little-endian arrays plus meta.json, for torch_text_check.py.
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
  t = t.contiguous();
  std::string dtype = c10::toString(t.scalar_type());
  std::ofstream f(dir / (name + ".bin"), std::ios::binary);
  f.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
  return {{"file", name + ".bin"}, {"dtype", dtype}, {"shape", t.sizes().vec()}};
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: kernrl_refdump PROBLEM_ID OUT_DIR\n";
    return 2;
  }
  try {
    ProblemSpec p = load_problem(find_problem_dir(problems_dir(), argv[1]));
    fs::path out = argv[2];
    json meta = {{"id", p.id}, {"torch", p.torch}, {"sets", json::array()}};
    for (size_t i = 0; i < p.tests.size(); ++i) {
      fs::path d = out / ("set" + std::to_string(i));
      fs::create_directories(d);
      TensorMap in = make_inputs(p, p.tests[i], 77 + i, torch::kCPU);
      TensorMap ref = run_reference(p, in, p.tests[i]);
      json set = {{"sizes", p.tests[i]}, {"scalars", p.scalar_values()}, {"inputs", json::array()},
                  {"parameters", json::array()}, {"outputs", json::array()}, {"dir", d.string()}};
      for (const auto* list : {&p.inputs, &p.parameters})
        for (const auto& t : *list) {
          json j = write_tensor(d, t.name, in.at(t.name));
          j["name"] = t.name;
          set[list == &p.inputs ? "inputs" : "parameters"].push_back(j);
        }
      for (const auto& t : p.outputs) {
        json o = write_tensor(d, "out_" + t.name, ref.at(t.name));
        o["name"] = t.name;
        o["compare"] = t.compare;
        o["atol"] = t.tolerance.atol;
        o["rtol"] = t.tolerance.rtol;
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
