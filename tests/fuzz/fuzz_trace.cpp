// Trace files: read_trace on the bytes, written to a file of this process. Malformed lines are
// listed, never thrown; every record read is written back, and reading that again gives the same
// bytes (TraceRecord's reader and serializer agree on whatever they were given).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "record/trace_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/kernrl-fuzz-trace-" + std::to_string(getpid()) + ".jsonl";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  std::vector<kernrl::TraceProblem> problems;
  auto records = kernrl::read_trace(path, &problems);
  for (const auto& r : records) {
    std::string line = r.to_line();
    if (kernrl::TraceRecord::from_json(nlohmann::json::parse(line)).to_line() != line) std::abort();
  }
  return 0;
}
