// What the record tests share: their fixtures, and whether a record holds only keys its types
// know.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "record/trace_record.h"

namespace kernrl {

inline const std::filesystem::path kFixtures = std::filesystem::path(KERNRL_TEST_DIR) / "fixtures";

// The whole of a file, as bytes.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// True when no object of the record holds a key its type does not know.
inline bool all_known(const TraceRecord& r) {
  bool ok = r.extra.empty();
  if (r.error) ok = ok && r.error->extra.empty();
  if (r.compile) ok = ok && r.compile->extra.empty();
  if (r.work) ok = ok && r.work->extra.empty() && (!r.work->units || r.work->units->extra.empty());
  if (r.baseline) ok = ok && r.baseline->extra.empty();
  if (r.throughput) ok = ok && r.throughput->extra.empty();
  if (r.grader) ok = ok && r.grader->extra.empty();
  if (r.watchdog) ok = ok && r.watchdog->extra.empty();
  if (r.problem_unknown) ok = ok && r.problem_unknown->extra.empty();
  if (r.converted) ok = ok && r.converted->extra.empty();
  if (r.launches)
    for (const trace::Launch& l : *r.launches) {
      ok = ok && l.extra.empty();
      if (l.occupancy) ok = ok && l.occupancy->extra.empty();
    }
  if (r.timing) {
    ok = ok && r.timing->extra.empty();
    if (r.timing->kernel) ok = ok && r.timing->kernel->extra.empty();
    if (r.timing->baseline) ok = ok && r.timing->baseline->extra.empty();
    if (r.timing->kernel_baseline) ok = ok && r.timing->kernel_baseline->extra.empty();
  }
  return ok;
}

}  // namespace kernrl
