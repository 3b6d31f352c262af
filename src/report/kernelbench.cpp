#include "report/kernelbench.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "core/errors.h"
#include "core/files.h"
#include "core/safe_text.h"
#include "record/trace_file.h"
#include "report/report.h"

namespace kernrl {
using nlohmann::json;
using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// "L1_23..." -> (1, 23).
std::optional<std::pair<int, int>> level_and_number(const std::string& id) {
  int level = 0, number = 0;
  char l = 0;
  if (std::sscanf(id.c_str(), "%c%d_%d", &l, &level, &number) == 3 && l == 'L' && level >= 0 &&
      number >= 0)
    return std::make_pair(level, number);
  return std::nullopt;
}

// The KernelBench level and problem number of a record: from its problem, else from the name
// the record says it was given (an unknown problem named in KernelBench's layout).
std::optional<std::pair<int, int>> kb_key(const TraceRecord& r) {
  if (auto k = level_and_number(r.problem.value_or(""))) return k;
  if (r.problem_unknown && r.problem_unknown->named)
    return level_and_number(*r.problem_unknown->named);
  return std::nullopt;
}

// KernelBench rounds its timing statistics to 3 significant digits (float(f"{x:.3g}")).
double three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return std::strtod(buf, nullptr);
}

ojson device_fields(const json& device) {
  ojson d = ojson::object();
  if (device.is_object()) {
    d["hardware"] = device.value("name", std::string());
    d["device"] = "cuda:" + std::to_string(device.value("gpu_index", 0));
  }
  return d;
}

// KernelBench's runtime_stats: mean/std/min/max in ms (3 significant digits), num_trials, and the
// device.
ojson runtime_stats(const trace::Stats& stats, const json& device) {
  ojson s = {{"mean", three_digits(stats.mean_ms.value_or(-1.0))},
             {"std", three_digits(stats.std_ms.value_or(0.0))},
             {"min", three_digits(stats.min_ms.value_or(-1.0))},
             {"max", three_digits(stats.max_ms.value_or(-1.0))},
             {"num_trials", stats.n.value_or(0)}};
  ojson d = device_fields(device);
  for (auto& [k, v] : d.items()) s[k] = v;
  return s;
}

// kernrl's own view of the record, kept under metadata.kernrl.
// kernrl's own view of the record, kept under metadata.kernrl: the fields as the record has them.
ojson kernrl_fields(const TraceRecord& r) {
  ojson k = {{"status", r.status.to_json()},
             {"problem", r.problem.to_json()},
             {"file", r.file.to_json()},
             {"source_sha256", r.source_sha256.to_json()},
             {"speedup", r.speedup.to_json()},
             {"sol_fraction", r.sol_fraction.to_json()},
             {"suspicious", r.suspicious.to_json()},
             {"reward", r.reward.to_json()}};
  if (r.error && !r.error->message.absent()) k["message"] = r.error->message.to_json();
  if (!r.problem_unknown.absent()) k["problem_unknown"] = r.problem_unknown.to_json();
  if (const trace::Timing* t = r.timing.get()) {
    if (t->kernel) k["timing_ms"] = t->kernel.to_json();
    if (t->baseline) k["baseline_runtime_stats"] = runtime_stats(*t->baseline, r.device.to_json());
  }
  return k;
}

ojson entry(const TraceRecord& r, int sample_id) {
  std::string status = r.status_text();
  const trace::Timing* t = r.timing.get();
  const json device = r.device.to_json();
  const trace::Error* e = r.error.get();
  std::string message = e ? e->message.value_or("") : "";
  std::string log = e ? e->log.value_or("") : "";
  // KernelBench: compiled is false for build failures and for evaluations that timed out.
  // A record without a `compile` field at all (written by other tools) is judged by its status.
  bool compile_ran = r.compile.has_value() || r.compile.absent();
  bool compiled = compile_ran && !r.status_is(Status::FormatError) &&
                  !r.status_is(Status::CompileError) && !r.status_is(Status::Timeout);
  bool timed = r.status_is(Status::Correct) && t && t->kernel;

  ojson m = device_fields(device);
  if (r.status_is(Status::Timeout)) {
    m = ojson::object();
    m["error"] = "Evaluation timed out";
  } else if (r.status_is(Status::CompileError) || r.status_is(Status::FormatError)) {
    m["compilation_error_name"] = status;
    m["compilation_error"] = log.empty() ? message : message + "\n" + log;
  } else if (r.status_is(Status::LaunchError) || r.status_is(Status::RuntimeError)) {
    m["runtime_error"] = log.empty() ? message : message + "\n" + log;
    m["runtime_error_name"] = status;
  } else if (r.status_is(Status::Incorrect)) {
    m["correctness_issue"] = message;
    m["correctness_issue_name"] = "correctness_issue";
  }
  if (auto counts = r.correctness_counts())
    m["correctness_trials"] =
        "(" + std::to_string(counts->first) + " / " + std::to_string(counts->second) + ")";
  m["kernrl"] = kernrl_fields(r);
  ojson rt = timed ? runtime_stats(*t->kernel, device) : ojson::object();
  return ojson{{"sample_id", sample_id},
               {"compiled", compiled},
               {"correctness", r.status_is(Status::Correct)},
               {"metadata", m},
               {"runtime", timed ? rt["mean"].get<double>() : -1.0},
               {"runtime_stats", rt}};
}

// KernelBench's calc_pass_at_k: 1 - prod(1 - k / arange(n - c + 1, n + 1)).
double kb_pass_at_k(int n, int c, int k) {
  if (n - c < k) return 1.0;
  double prod = 1.0;
  for (int i = n - c + 1; i <= n; ++i) prod *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - prod;
}

// pass_at_k_results.json as KernelBench's calculate_pass_at_k writes it, quirks included: k larger
// than a problem's samples is clamped to them (and stored under pass@<clamped>); averages divide
// by every problem.
ojson pass_at_k_file(const ojson& eval_results, const std::vector<int>& ks) {
  ojson problems = ojson::object();
  for (const auto& [pid, list] : eval_results.items()) {
    int total = static_cast<int>(list.size());
    int correct = 0;
    for (const auto& s : list)
      if (s["correctness"].get<bool>() && s["compiled"].get<bool>()) ++correct;
    ojson p = {{"total_samples", total}, {"correct_samples", correct}};
    for (int k : ks) {
      int kk = std::min(k, total);
      p["pass@" + std::to_string(kk)] = kb_pass_at_k(total, correct, kk);
    }
    problems[pid] = p;
  }
  size_t total_problems = problems.size();
  ojson averages = ojson::object();
  ojson metadata = ojson::object();
  if (total_problems > 0)
    for (int k : ks) {
      std::string key = "pass@" + std::to_string(k);
      double sum = 0;
      for (const auto& [pid, p] : problems.items())
        if (p.contains(key)) sum += p[key].get<double>();
      averages["avg_pass@" + std::to_string(k)] = sum / static_cast<double>(total_problems);
    }
  size_t with_samples = 0, samples = 0, correct = 0;
  for (const auto& [pid, p] : problems.items()) {
    with_samples += p["total_samples"].get<int>() > 0;
    samples += p["total_samples"].get<size_t>();
    correct += p["correct_samples"].get<size_t>();
  }
  metadata["total_problems"] = total_problems;
  metadata["problems_with_samples"] = with_samples;
  metadata["total_evaluated_samples"] = samples;
  metadata["total_correct_samples"] = correct;
  for (int k : ks) {
    std::string key = "pass@" + std::to_string(k);
    size_t n = 0;
    for (const auto& [pid, p] : problems.items()) n += p.contains(key);
    metadata[key + "_count"] = n;
  }
  return ojson{{"averages", averages}, {"metadata", metadata}, {"problems", problems}};
}

std::string safe_folder(const std::string& run) {
  std::string s;
  for (unsigned char c : run)
    s += std::isalnum(c) || c == '-' || c == '_' || c == '.' ? static_cast<char>(c) : '_';
  if (s.empty() || s == "." || s == "..") s = "run";
  return s;
}

}  // namespace

KernelBenchOutput kernelbench_output(const std::vector<TraceRecord>& records,
                                     const KernelBenchOptions& opt) {
  KernelBenchOutput out;
  std::vector<TraceRecord> recs = drop_duplicates(records, &out.duplicates);
  std::vector<int> ks = opt.ks;
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  ks.erase(std::remove_if(ks.begin(), ks.end(), [](int k) { return k < 1; }), ks.end());
  if (ks.empty()) ks = {1};

  // run -> level -> problem number -> records, in record order.
  std::map<std::string, std::map<int, std::map<int, std::vector<const TraceRecord*>>>> grouped;
  for (const TraceRecord& r : recs) {
    std::string run = r.run_or("(none)");
    if (!opt.run.empty() && run != opt.run) continue;
    auto key = kb_key(r);
    if (!key) {
      // No level or problem number (an unreadable file, no problem named): listed apart, also
      // under a level filter, since it may belong to that level.
      out.unattributed[run].push_back(
          ojson{{"file", r.file.to_json()},
                {"source_sha256", r.source_sha256.to_json()},
                {"status", r.status.to_json()},
                {"reason", r.problem_unknown ? r.problem_unknown->reason.to_json() : json(nullptr)},
                {"message", r.error ? r.error->message.to_json() : json(nullptr)}});
      ++out.unattributed_count;
      continue;
    }
    if (opt.level && key->first != *opt.level) continue;
    grouped[run][key->first][key->second].push_back(&r);
  }

  for (const auto& [run, levels] : grouped)
    for (const auto& [level, problems] : levels) {
      KernelBenchRun kr;
      kr.run = run;
      kr.level = level;
      kr.folder = safe_folder(run) + "_level_" + std::to_string(level);
      kr.eval_results = ojson::object();
      bool several = false;
      for (const auto& [number, list] : problems) {  // numeric order, as KernelBench sorts
        // Samples keep their number; records without one (or a number already taken) get the
        // lowest free ones, so every sample_id is unique within a problem.
        std::set<int> taken;
        std::vector<std::optional<int>> ids(list.size());
        for (size_t i = 0; i < list.size(); ++i) {
          const Field<int>& s = list[i]->sample;
          if (s && taken.insert(*s).second) ids[i] = *s;
        }
        int next = 0;
        for (size_t i = 0; i < list.size(); ++i)
          if (!ids[i]) {
            while (taken.count(next)) ++next;
            ids[i] = next;
            taken.insert(next);
          }
        std::vector<std::pair<int, ojson>> entries;
        for (size_t i = 0; i < list.size(); ++i) {
          ojson e = entry(*list[i], *ids[i]);
          const Field<int>& s = list[i]->sample;
          if (s && *s != *ids[i])
            e["metadata"]["kernrl"]["sample"] = s.to_json();  // renumbered: the record's own number
          entries.push_back({*ids[i], std::move(e)});
        }
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        ojson arr = ojson::array();
        for (auto& [id, e] : entries) arr.push_back(std::move(e));
        several |= arr.size() > 1;
        kr.samples += arr.size();
        kr.eval_results[std::to_string(number)] = std::move(arr);
      }
      if (several) kr.pass_at_k = pass_at_k_file(kr.eval_results, ks);
      out.runs.push_back(std::move(kr));
    }
  return out;
}

std::string kernelbench_text(const ojson& j, int indent) {
  return j.dump(indent, ' ', true, ojson::error_handler_t::replace);
}

std::vector<std::pair<std::string, std::string>> kernelbench_files(const KernelBenchOutput& out) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& r : out.runs) {
    files.push_back({r.folder + "/eval_results.json", kernelbench_text(r.eval_results, 4)});
    if (r.pass_at_k)
      files.push_back({r.folder + "/pass_at_k_results.json", kernelbench_text(*r.pass_at_k, 2)});
  }
  if (out.unattributed_count)
    files.push_back({"unattributed.json", kernelbench_text(out.unattributed, 2) + "\n"});
  return files;
}

std::string write_kernelbench(const KernelBenchOutput& out, const std::string& dir) {
  for (const auto& [rel, content] : kernelbench_files(out)) {
    std::string path = (fs::path(dir) / rel).string();
    if (std::string err = write_whole_file(path, content); !err.empty()) return path + ": " + err;
  }
  return "";
}

KernelBenchOutput kernelbench_output(const std::vector<json>& records,
                                     const KernelBenchOptions& opt) {
  return kernelbench_output(records_from_json(records), opt);
}

ojson kernelbench_results(const std::vector<TraceRecord>& records) {
  KernelBenchOutput out = kernelbench_output(records, {});
  if (out.runs.empty()) return ojson::object();
  return out.runs.front().eval_results;
}

ojson kernelbench_results(const std::vector<json>& records) {
  return kernelbench_results(records_from_json(records));
}

bool read_trace_inputs(const std::vector<std::string>& inputs, std::vector<TraceRecord>* records,
                       std::ostream& err) {
  return report::read_inputs(inputs, records, nullptr, nullptr, &err);
}

void run_kernelbench_report(const std::vector<std::string>& inputs, const KernelBenchOptions& opt,
                            const std::string& dir, std::ostream& out, std::ostream& err) {
  std::vector<TraceRecord> records;
  if (!read_trace_inputs(inputs, &records, err))
    throw UsageError("no readable trace file among the inputs");
  if (!opt.run.empty()) {
    std::set<std::string> runs;
    for (const TraceRecord& r : records) runs.insert(r.run_or("(none)"));
    if (!runs.count(opt.run)) {
      std::string present;
      for (const auto& r : runs) present += (present.empty() ? "" : ", ") + r;
      throw UsageError("no records of run '" + opt.run +
                       "' (runs present: " + (present.empty() ? "none" : present) + ")");
    }
  }
  KernelBenchOutput kb = kernelbench_output(records, opt);
  if (std::string e = write_kernelbench(kb, dir); !e.empty()) throw UsageError("cannot write " + e);
  for (const auto& r : kb.runs)
    out << escape_invalid_utf8((fs::path(dir) / r.folder).string()) << "/eval_results.json"
        << (r.pass_at_k ? " (+ pass_at_k_results.json)" : "") << ": run "
        << escape_invalid_utf8(r.run) << ", level " << r.level << ", " << r.eval_results.size()
        << " problem(s), " << r.samples << " sample(s)\n";
  if (kb.runs.empty())
    out << "no record names a KernelBench level and problem: no eval_results.json written\n";
  if (kb.unattributed_count)
    out << kb.unattributed_count
        << " record(s) name no problem and are in no eval_results.json: listed in "
        << escape_invalid_utf8((fs::path(dir) / "unattributed.json").string()) << "\n";
  if (kb.duplicates)
    out << kb.duplicates << " duplicate record(s) (regraded by a resumed run) left out\n";
}

}  // namespace kernrl
