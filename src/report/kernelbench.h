// Trace records as KernelBench's run folders (scripts/eval_from_generations.py): one
// eval_results.json per run and level, and pass_at_k_results.json when a problem has several
// samples, with KernelBench's layout and semantics. Mapping documented in docs/report.md.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "record/trace_record.h"

namespace kernrl {

struct KernelBenchOptions {
  std::vector<int> ks = {1};  // pass@k values (KernelBench clamps k to each problem's samples)
  std::optional<int> level;   // only this level
  std::string run;            // only this run ("" = every run; a null run is "(none)")
};

// One run folder: `<run>_level_<L>` (KernelBench runs hold one level each).
struct KernelBenchRun {
  std::string run;
  int level = 0;
  std::string folder;  // the run name made safe for a path, plus _level_<L>
  nlohmann::ordered_json eval_results;
  std::optional<nlohmann::ordered_json> pass_at_k;  // when a problem has more than one sample
  size_t samples = 0;
};

struct KernelBenchOutput {
  std::vector<KernelBenchRun> runs;  // by run name, then level
  // Records with no level or problem number (unreadable files, no problem named): not in any
  // eval_results.json, listed by run: {run: [{file, source_sha256, status, reason, message}]}.
  nlohmann::ordered_json unattributed = nlohmann::ordered_json::object();
  size_t unattributed_count = 0;
  size_t duplicates = 0;  // records dropped as a resumed run's regrades
};

// Builds every run folder from trace records. Never throws on odd records.
KernelBenchOutput kernelbench_output(const std::vector<TraceRecord>& records,
                                     const KernelBenchOptions& opt);
// The same for records as JSON objects (read with TraceRecord::from_json).
KernelBenchOutput kernelbench_output(const std::vector<nlohmann::json>& records,
                                     const KernelBenchOptions& opt);

// The files of the output as KernelBench writes them (json.dump with indent 4 for
// eval_results.json, 2 for pass_at_k_results.json, ASCII only): path relative to the output
// folder -> text. `unattributed.json` is added when there are unattributed records.
std::vector<std::pair<std::string, std::string>> kernelbench_files(const KernelBenchOutput& out);

// KernelBench's json.dump text of one file (indent 4 or 2, non-ASCII escaped, newline-less as
// Python writes it).
std::string kernelbench_text(const nlohmann::ordered_json& j, int indent);

// Writes every file of kernelbench_files(out) under `dir`. Returns "" or "FILE: reason" for the
// first file that could not be written.
std::string write_kernelbench(const KernelBenchOutput& out, const std::string& dir);

// The eval_results.json of records of one run and level (the shape of
// runs/<run>/eval_results.json): numeric problem keys in numeric order. Records of other levels
// than the first level found are left out; use kernelbench_output for several levels.
nlohmann::ordered_json kernelbench_results(const std::vector<TraceRecord>& records);
nlohmann::ordered_json kernelbench_results(const std::vector<nlohmann::json>& records);

// Every record of the trace files or folders (a folder: every *.jsonl inside, recursively, in path
// order), as `kernrl report` reads them; malformed lines and unreadable paths are reported to
// `err` as "PATH[:LINE]: message". False when no input could be read.
bool read_trace_inputs(const std::vector<std::string>& inputs, std::vector<TraceRecord>* records,
                       std::ostream& err);

// `kernrl report --format kernelbench --out DIR`: reads the inputs, writes every run folder (and
// unattributed.json) under `dir`, prints what it wrote to `out`. Throws UsageError when no input
// could be read, `--run` names no run, or a file could not be written.
void run_kernelbench_report(const std::vector<std::string>& inputs, const KernelBenchOptions& opt,
                            const std::string& dir, std::ostream& out, std::ostream& err);

}  // namespace kernrl
