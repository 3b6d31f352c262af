#include "grading/prepare.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/hash.h"
#include "core/paths.h"
#include "extract/extract.h"
#include "record/record.h"
#include "triton_compile/compiler.h"
#include "triton_compile/wrapper_plan.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Where `opt`'s problem is looked up: its suite's problems folder, else the process's.
fs::path problems_root(const GradeOptions& opt) {
  return opt.problems_root.empty() ? problems_dir() : fs::path(opt.problems_root);
}

bool problem_exists(const std::string& id) {
  try {
    find_problem_dir(problems_dir(), id);
    return true;
  } catch (const SpecError&) {
    return false;
  }
}

// The dominant dtype of the tensors read, for the matching matrix ceiling.
std::string dtype_class(const ProblemSpec& p) {
  std::map<std::string, int64_t> bytes;
  for (const auto* t : p.read_tensors())
    bytes[t->dtype.name] += p.numel_of(*t, p.bench) * t->dtype.bytes;
  std::string best = "float32";
  int64_t most = -1;
  for (const auto& [n, b] : bytes)
    if (b > most) most = b, best = n;
  if (best == "float16") return "fp16";
  if (best == "bfloat16") return "bf16";
  return dtype_from_name(best)->is_float ? "fp32" : "int";
}

}  // namespace

namespace {

// The problem a path names (its folder, its folder's problem dir, its name, KernelBench's layout),
// if kernrl has it; "" otherwise.
// "batch_size=128, dim=4096": a size set as --size would give it.
std::string size_set_text(const std::vector<std::string>& names, const Vars& v) {
  std::string s;
  for (const auto& n : names) {
    auto it = v.find(n);
    if (it == v.end()) continue;
    s += (s.empty() ? "" : ", ") + n + "=" + std::to_string(it->second);
  }
  return s;
}

// Why --size cannot be used with `p` (empty when it can): a size it does not have, or a
// TorchScript reference (a suite's problem), which runs only at the problem's own size sets.
std::string size_option_error(const ProblemSpec& p, const std::map<std::string, int64_t>& sizes) {
  for (const auto& [k, v] : sizes)
    if (!p.bench.count(k)) return "--size " + k + ": " + p.id + " has no size named " + k;
  if (p.torchscript.empty()) return "";
  std::string sets = "bench (" + size_set_text(p.size_names, p.bench) + ")";
  for (size_t i = 0; i < p.tests.size(); ++i)
    sets += "; test" + std::to_string(i) + " (" + size_set_text(p.size_names, p.tests[i]) + ")";
  return "--size: " + p.id +
         "'s reference is a TorchScript module saved per size set, so it runs only at its own "
         "sizes: " +
         sets + "; grade it without --size";
}

std::string problem_from_path(const std::string& file) {
  fs::path p = fs::absolute(file);
  std::vector<std::string> candidates = {p.parent_path().filename().string(),
                                         problem_id_of_dir(p.parent_path()), p.stem().string()};
  if (std::string kb = kernelbench_problem_id(p.filename().string()); !kb.empty())
    candidates.insert(candidates.begin(), kb);
  for (const auto& c : candidates)
    if (!c.empty() && c.size() < 256 && c[0] == 'L' && problem_exists(c)) return c;
  return "";
}

// A file's bytes, or an error naming the file and the reason (errno's text).
bool read_bytes(const std::string& file, bool regular_only, std::string* out, std::string* error) {
  if (regular_only) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      *error = "cannot read " + file + ": " + std::strerror(errno);
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      *error = "cannot read " + file + ": " +
               (S_ISDIR(st.st_mode) ? "it is a folder" : "not a regular file");
      return false;
    }
  }
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0));
  if (fd < 0) {
    *error = "cannot read " + file + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    *error = "cannot read " + file + ": it is a folder";
    return false;
  }
  out->clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read " + file + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

}  // namespace

std::string resolve_problem_id(const std::string& file, const std::string& option,
                               const std::string& from_block) {
  if (!option.empty()) return option;
  if (!from_block.empty()) return from_block;
  return problem_from_path(file);
}

RecordLimits record_limits(const Config& cfg) {
  RecordLimits l;
  l.compile_log_bytes = static_cast<size_t>(cfg.record_compile_log_bytes);
  l.worker_log_bytes = static_cast<size_t>(cfg.record_worker_log_bytes);
  l.message_bytes = static_cast<size_t>(cfg.record_message_bytes);
  return l;
}

uint64_t parse_seed(const std::string& text, const std::string& option) {
  uint64_t v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [ptr, ec] = std::from_chars(b, e, v);
  bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only || ec != std::errc() || ptr != e)
    throw UsageError(option + ": expected a whole number from 0 to 18446744073709551615, got '" +
                     text + "'" +
                     (digits_only && ec == std::errc::result_out_of_range ? " (too large)" : ""));
  return v;
}

namespace {

// The size sets the worker runs: the tests and the bench, or the --size set alone.
std::vector<Vars> run_size_sets(const GradeOptions& opt, const ProblemSpec& p) {
  std::vector<Vars> size_sets;
  if (opt.sizes) {
    Vars v = p.bench;
    for (const auto& [k, val] : *opt.sizes) v[k] = val;
    size_sets.push_back(v);
  } else {
    size_sets = p.tests;
    size_sets.push_back(p.bench);
  }
  return size_sets;
}

// A host wrapper's plan must hold at every size set the plan is checked at (the tests and the
// bench) and run at (those, or the --size set).
std::vector<Vars> wrapper_size_sets(const GradeOptions& opt, const ProblemSpec& p) {
  std::vector<Vars> sets = p.tests;
  sets.push_back(p.bench);
  if (opt.sizes) {
    Vars v = run_size_sets(opt, p).front();
    if (std::find(sets.begin(), sets.end(), v) == sets.end()) sets.push_back(v);
  }
  return sets;
}

// Step 3 for a Triton file: its kernels compiled in the sandboxed Triton compiler, the plan
// replaced by the one the worker runs.
template <typename Finish>
Prepared compile_triton_file(Prepared& out, const ExtractedSource& src, const std::string& name,
                             const GradeOptions& opt, const Config& cfg, const std::string& arch,
                             int64_t num_sms, Finish& finish,
                             std::chrono::steady_clock::time_point t0) {
  std::vector<Vars> size_sets = run_size_sets(opt, out.problem);
  TritonCompileResult t;
  try {
    t = compile_triton(src, name, out.plan, out.problem, size_sets, num_sms, arch, cfg);
  } catch (const UsageError& e) {
    // No Python with Triton, or its sandbox cannot be set up: the grading machine's problem, said
    // in the record, and a set-up error for the command (nothing was compiled).
    out.usage_error = e.what();
    return finish(Status::InternalError, e.what(), 0, "");
  }
  TraceRecord& r = out.record;
  trace::Compile& rc = r.compile.emplace();
  rc.ms = t.compile.ms;
  rc.arch = arch;
  rc.cached = t.compile.cached;
  if (!t.triton_version.empty()) rc.triton = t.triton_version;
  if (!t.kernels.empty()) rc.kernels = t.kernels;
  if (!t.timing.empty()) rc.triton_timing = t.timing;
  out.tune_groups = t.tune_groups;
  out.compiled = t.compile;
  out.compiled.triton_version = t.triton_version;
  if (t.format_error) return finish(Status::FormatError, t.compile.error, t.error_line, "");
  if (!t.compile.ok()) {
    std::string msg =
        t.compile.status == CompileResult::Timeout ? t.compile.error : "Triton: " + t.compile.error;
    return finish(Status::CompileError, msg, t.error_line, t.compile.log);
  }
  out.plan = t.launch.plan;
  out.compiled.lowered = t.launch.lowered;
  out.compiled.modules = t.launch.modules;
  if (!t.compile.log.empty()) rc.log = t.compile.log;
  r.status = Status::Compiled;
  out.cpu_ms = ms_since(t0);
  if (opt.compile_only) out.done = true;
  return out;
}

Prepared prepare(const std::string& file, const std::string* given_text, const GradeOptions& opt,
                 const Config& cfg, const std::string& arch, int64_t num_sms) {
  auto t0 = std::chrono::steady_clock::now();
  Prepared out;
  out.limits = record_limits(cfg);
  TraceRecord& r = out.record;
  r = TraceRecord::begin(file, opt.run, opt.sample, opt.seed);
  auto finish = [&](Status status, const std::string& msg, int line, const std::string& log) {
    r.status = status;
    trace::Error& e = r.error.emplace();
    e.category = status;
    e.message = msg;
    if (line) e.line = line;
    if (!log.empty()) e.log = log;
    out.done = true;
    out.cpu_ms = ms_since(t0);
    return out;
  };
  // Why `problem` is null: the reason, the name given (if any) and where it came from.
  auto unknown = [&](const char* reason, const std::string& named, const char* from) {
    trace::ProblemUnknown& u = r.problem_unknown.emplace();
    u.reason = reason;
    u.named = named.empty() ? Field<std::string>(nullptr) : Field<std::string>(named);
    u.from = from ? Field<std::string>(from) : Field<std::string>(nullptr);
  };
  auto set_problem = [&](const std::string& id) {
    out.problem = load_problem(find_problem_dir(problems_root(opt), id));
    r.problem = out.problem.id;
    r.level = out.problem.level;
  };
  const char* option_source = opt.problem_from_path ? "path" : "option";

  std::string text, read_error;
  if (given_text) {
    text = *given_text;
  } else if (!read_bytes(file, opt.regular_files_only, &text, &read_error)) {
    // Nothing of the sample was read, so it is no sample of any problem: unattributed, with the
    // problem the option or the path named, for the reader.
    std::string named = !opt.problem.empty() ? opt.problem : problem_from_path(file);
    unknown("unreadable", named,
            named.empty()          ? nullptr
            : !opt.problem.empty() ? option_source
                                   : "path");
    out.usage_error = read_error;
    return finish(Status::FormatError, read_error, 0, "");
  }
  r.source_sha256 = sha256_hex(text);  // of the raw bytes, whatever their encoding

  ExtractedSource src;
  LaunchPlan plan;
  std::string block_problem;
  std::optional<FormatError> format_problem;
  bool from_wrapper = false;  // a Triton answer whose plan is derived from its host wrapper
  // A file of another format (a KernelBench module) is converted into a kernel file for the
  // problem its path or the option names; compiler messages then name lines of the converted file.
  std::string kernel_text = text, kernel_name = file;
  const SourceConverter* converter =
      is_triton_source(text) ? nullptr : converter_for(opt.converters, file);
  if (converter) {
    std::string named = resolve_problem_id(file, opt.problem, "");
    std::optional<ProblemSpec> spec;
    try {
      if (!named.empty()) spec = load_problem(find_problem_dir(problems_root(opt), named));
    } catch (const SpecError&) {
      // Recorded below as the unknown problem it is.
    }
    if (spec) {
      std::vector<std::string> notes;
      try {
        kernel_text = converter->convert(text, file, *spec, &notes);
        kernel_name = file + ".cu";
        trace::Converted& c = r.converted.emplace();
        c.from = converter->name();
        c.notes = notes;
      } catch (const FormatError& e) {
        format_problem = e;
      }
    } else if (named.empty()) {
      format_problem = FormatError(converter->needs_problem());
    }
  }
  if (!format_problem) {
    try {
      src = extract_kernel(kernel_text, kernel_name);
      r.language = src.language;
      from_wrapper = wants_wrapper_plan(src);
      if (!from_wrapper) {
        plan = parse_launch_block(src);
        block_problem = plan.problem;
      }
    } catch (const FormatError& e) {
      format_problem = e;
    }
  }

  // The problem: the option (or grade-dir's layout), else the launch block, else the path.
  std::string id = resolve_problem_id(file, opt.problem, block_problem);
  const char* from = !opt.problem.empty()     ? option_source
                     : !block_problem.empty() ? "launch_block"
                                              : "path";
  if (!id.empty()) {
    try {
      set_problem(id);
    } catch (const SpecError& e) {
      unknown("unknown_problem", id, from);
      if (!opt.problem.empty() && !opt.problem_from_path) {
        out.usage_error = e.what();
        return finish(Status::FormatError, e.what(), 0, "");
      }
      if (!opt.problem.empty())
        return finish(
            Status::FormatError,
            "the file's path names a problem kernrl does not have: " + std::string(e.what()), 0,
            "");
      return finish(Status::FormatError,
                    std::string("the launch block names an unknown problem: ") + e.what(),
                    plan.line, "");
    }
    // --size is kernrl's input: checked once the problem is known, before the file's own faults.
    if (opt.sizes) {
      out.usage_error = size_option_error(out.problem, *opt.sizes);
      if (!out.usage_error.empty()) return finish(Status::FormatError, out.usage_error, 0, "");
    }
  }
  if (format_problem) {
    if (id.empty()) unknown("not_named", "", nullptr);
    return finish(Status::FormatError, format_problem->what(), format_problem->line, "");
  }
  if (id.empty()) {
    unknown("not_named", "", nullptr);
    return finish(Status::FormatError,
                  "cannot tell which problem this file is for: give --problem, or `problem:` in "
                  "the launch block",
                  0, "");
  }
  if (from_wrapper) {
    // The plan from the host wrapper, run in the Triton compiler's sandbox on shape-only tensors.
    try {
      WrapperPlan w = derive_wrapper_plan(src, kernel_name, out.problem,
                                          wrapper_size_sets(opt, out.problem), num_sms, cfg);
      plan = w.plan;
      src.code += w.extra_source;  // kernrl's own kernels the plan launches (zero fills)
      trace::WrapperPlan& rw = r.wrapper_plan.emplace();
      rw.cls = w.cls;
      rw.launch_block = w.launch_block;
      rw.notes = w.notes;
    } catch (const FormatError& e) {
      return finish(Status::FormatError, e.what(), e.line, "");
    } catch (const WrapperRunError& e) {
      return finish(Status::CompileError, e.what(), 0, "");
    } catch (const UsageError& e) {
      out.usage_error = e.what();  // no Triton or no sandbox: the grading machine's problem
      return finish(Status::InternalError, e.what(), 0, "");
    }
  }
  if (!plan.problem.empty() && !opt.problem.empty()) {
    std::optional<fs::path> named;
    try {
      named = find_problem_dir(problems_root(opt), plan.problem);
    } catch (const SpecError&) {
    }
    if (!named || *named != out.problem.dir)
      return finish(Status::FormatError,
                    "the launch block names problem " + plan.problem +
                        (named ? "" : " (unknown to kernrl)") + " but " +
                        (opt.problem_from_path ? "the file's path names " : "--problem is ") +
                        opt.problem,
                    plan.line, "");
  }
  try {
    check_plan(plan, out.problem, num_sms);
  } catch (const LaunchConfigError& e) {
    return finish(Status::LaunchError, e.what(), e.line, "");
  } catch (const FormatError& e) {
    return finish(Status::FormatError, e.what(), e.line, "");
  }
  out.plan = plan;

  if (plan.language == "triton")
    return compile_triton_file(out, src, kernel_name, opt, cfg, arch, num_sms, finish, t0);
  out.compiled = compile_kernel(src, kernel_name, arch, plan.kernel_names(), cfg);
  const CompileResult& c = out.compiled;
  trace::Compile& rc = r.compile.emplace();
  rc.ms = c.ms;
  rc.arch = arch;
  rc.cached = c.cached;
  rc.nvrtc = c.nvrtc_version;
  if (!c.cached && c.pch != "off" && !c.pch.empty()) rc.pch = c.pch;
  if (!c.ok()) {
    std::string msg = c.status == CompileResult::Timeout ? c.error : "NVRTC: " + c.error;
    return finish(Status::CompileError, msg, 0, c.log);
  }
  if (!c.log.empty()) rc.log = c.log;  // warnings
  r.status = Status::Compiled;
  out.cpu_ms = ms_since(t0);
  if (opt.compile_only) out.done = true;
  return out;
}

}  // namespace

Prepared prepare_file(const std::string& file, const GradeOptions& opt, const Config& cfg,
                      const std::string& arch, int64_t num_sms) {
  return prepare(file, nullptr, opt, cfg, arch, num_sms);
}

Prepared prepare_source(const std::string& text, const std::string& label, const GradeOptions& opt,
                        const Config& cfg, const std::string& arch, int64_t num_sms) {
  return prepare(label, &text, opt, cfg, arch, num_sms);
}

void apply_autotune(TraceRecord& r, const std::map<std::string, std::vector<std::string>>& groups,
                    const std::vector<AutotuneChoice>& choices) {
  if (!r.compile || !r.compile->kernels) return;
  json* kernels = &*r.compile->kernels;
  for (const AutotuneChoice& ch : choices) {
    if (!ch.group || !ch.config || !ch.times_ms) continue;
    auto g = groups.find(*ch.group);
    if (g == groups.end()) continue;
    const json times = Codec<std::vector<std::optional<double>>>::encode(*ch.times_ms);
    for (json& k : *kernels) {
      if (!k.contains("autotune") ||
          std::find(g->second.begin(), g->second.end(), k.value("key", "")) == g->second.end())
        continue;
      json& a = k["autotune"];
      a["chosen"] = *ch.config;
      a["timed"] = true;
      a["times_ms"] = times;
      for (const json& cand : a.value("candidates", json::array()))
        if (cand.value("config", -1) == *ch.config && !cand.contains("error"))
          for (const char* f : {"num_warps", "num_stages", "num_ctas", "shared", "constexprs"})
            if (cand.contains(f)) k[f] = cand[f];
    }
  }
}

void complete_record(Prepared& p, const EvalAnswer* answer, const json& device,
                     const json& versions, const RewardPreset& preset, const json& ceilings,
                     const std::string& not_run_reason) {
  TraceRecord& r = p.record;
  json v = versions.is_object() ? versions : json::object();
  v["kernrl"] = KERNRL_VERSION;
  if (p.compiled.nvrtc_version.size()) v["nvrtc"] = p.compiled.nvrtc_version;
  if (p.compiled.triton_version.size()) v["triton"] = p.compiled.triton_version;
  r.versions = v;
  r.device = device.is_object() ? Field<json>(device) : Field<json>(nullptr);
  if (answer) {
    r.ran = true;
    // The answer's parts are the record's: carried over as they are.
    r.status = answer->status;
    if (answer->error)
      r.error = answer->error;
    else
      r.error = nullptr;
    if (answer->correctness) r.correctness = answer->correctness;
    if (answer->timing) r.timing = answer->timing;
    if (answer->launches && !answer->launches->empty()) r.launches = answer->launches;
    if (answer->watchdog) r.watchdog = answer->watchdog;
    if (answer->autotune) apply_autotune(r, p.tune_groups, *answer->autotune);
  } else if (r.status_is(Status::Compiled) || !r.error) {
    r.not_run_reason = not_run_reason;
  } else {
    r.not_run_reason = "stopped at " + r.status_text();
  }
  if (!p.problem.id.empty()) {
    Vars at = p.problem.bench;
    if (const trace::Timing* t = r.timing.get())
      if (t->sizes)
        for (const auto& [k, val] : *t->sizes) at[k] = val;
    trace::Work& w = r.work.emplace();
    w.flops = p.problem.flops_at(at);
    w.bytes = p.problem.bytes_at(at);
    w.dtype_class = dtype_class(p.problem);
    if (!p.problem.throughput.unit.empty()) {  // the problem's own unit (problem.yaml throughput)
      trace::WorkUnits& u = w.units.emplace();
      u.unit = p.problem.throughput.unit;
      u.count = eval_expr(p.problem.throughput.count, at);
    }
  }
  r.reward_preset = preset.name;
  bound_record(r, p.limits);  // before the feedback is made from it
  finalize_record(r, preset, ceilings);
}

}  // namespace kernrl
