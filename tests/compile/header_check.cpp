// Compiles the probe of one supported header (src/headers/headers.txt) through the real compile
// path (sandbox included): `kernrl_header_check NAME`. Exit 0 when it compiles without warnings.
#include <cstdio>
#include <string>

#include "compile/compiler.h"
#include "core/config.h"
#include "headers/builtin_headers.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kernrl_header_check HEADER\n");
    return 2;
  }
  const std::string name = argv[1];
  for (const auto& h : kernrl::supported_headers()) {
    if (h.name != name) continue;
    kernrl::ExtractedSource src;
    src.code = "#include <" + h.name + ">\nextern \"C\" __global__ void probe(float* out) {\n  " +
               h.probe + "\n}\n";
    kernrl::Config cfg = kernrl::load_config("");
    kernrl::CompileResult r = kernrl::compile_kernel(src, "probe.cu", "sm_90a", {"probe"}, cfg);
    std::printf("%s: %s%s\n%s", name.c_str(), r.ok() ? "compiled" : "FAILED: ", r.error.c_str(),
                r.log.c_str());
    if (r.ok() && r.log.find("warning") != std::string::npos) {
      std::printf("%s: compiled with warnings\n", name.c_str());
      return 1;
    }
    return r.ok() ? 0 : 1;
  }
  std::fprintf(stderr, "%s is not in the supported list\n", name.c_str());
  return 2;
}
