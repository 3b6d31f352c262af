// Config files: Config::merge_file on the bytes, written to a file of this process.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/kernrl-fuzz-config-" + std::to_string(getpid()) + ".yaml";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  kernrl::Config c;
  try {
    c.merge_file(path);
    c.to_json();
  } catch (const kernrl::SpecError&) {
  }
  return 0;
}
