#include "cli/grade.h"

#include <chrono>
#include <filesystem>

#include "core/hash.h"
#include "core/paths.h"
#include "extract/extract.h"
#include "record/record.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
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
  for (const auto* t : p.read_tensors()) bytes[t->dtype.name] += p.numel_of(*t, p.bench) * t->dtype.bytes;
  std::string best = "float32";
  int64_t most = -1;
  for (const auto& [n, b] : bytes)
    if (b > most) most = b, best = n;
  if (best == "float16") return "fp16";
  if (best == "bfloat16") return "bf16";
  return dtype_from_name(best)->is_float ? "fp32" : "int";
}

}  // namespace

std::string resolve_problem_id(const std::string& file, const std::string& option, const std::string& from_block) {
  if (!option.empty()) return option;
  if (!from_block.empty()) return from_block;
  fs::path p = fs::absolute(file);
  std::vector<std::string> candidates = {p.parent_path().filename().string(), problem_id_of_dir(p.parent_path()),
                                         p.stem().string()};
  if (std::string kb = kernelbench_problem_id(p.filename().string()); !kb.empty())
    candidates.insert(candidates.begin(), kb);
  for (const auto& c : candidates)
    if (!c.empty() && c[0] == 'L' && problem_exists(c)) return c;
  return "";
}

Prepared prepare_file(const std::string& file, const GradeOptions& opt, const Config& cfg, const std::string& arch,
                      int64_t num_sms) {
  auto t0 = std::chrono::steady_clock::now();
  Prepared out;
  json& r = out.record;
  r = {{"schema", kTraceSchema}, {"kernel_format", kKernelFormatVersion},
       {"run", opt.run.empty() ? json(nullptr) : json(opt.run)},
       {"sample", opt.sample ? json(*opt.sample) : json(nullptr)}, {"file", file}, {"problem", nullptr},
       {"level", nullptr}, {"status", "format_error"}, {"ran", false}, {"error", nullptr}, {"compile", nullptr},
       {"correctness", nullptr}, {"timing", nullptr}, {"seed", opt.seed}, {"timestamp", now_iso8601()}};
  auto finish = [&](const std::string& status, const std::string& msg, int line, const std::string& log) {
    r["status"] = status;
    r["error"] = {{"category", status}, {"message", msg}};
    if (line) r["error"]["line"] = line;
    if (!log.empty()) r["error"]["log"] = log;
    out.done = true;
    out.cpu_ms = ms_since(t0);
    return out;
  };
  std::string text;
  try {
    text = read_file(file);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  r["source_sha256"] = sha256_hex(text);

  ExtractedSource src;
  LaunchPlan plan;
  std::string block_problem;
  std::optional<FormatError> format_problem;
  try {
    src = extract_kernel(text, file);
    plan = parse_launch_block(src);
    block_problem = plan.problem;
  } catch (const FormatError& e) {
    format_problem = e;
  }
  std::string id = resolve_problem_id(file, opt.problem, block_problem);
  if (!id.empty()) {
    try {
      out.problem = load_problem(find_problem_dir(problems_dir(), id));
      r["problem"] = out.problem.id;
      r["level"] = out.problem.level;
    } catch (const SpecError& e) {
      if (!opt.problem.empty()) throw UsageError(e.what());
      return finish("format_error", std::string("launch block names an unknown problem: ") + e.what(), plan.line, "");
    }
  }
  if (format_problem) return finish("format_error", format_problem->what(), format_problem->line, "");
  if (id.empty())
    return finish("format_error",
                  "cannot tell which problem this file is for: give --problem, or `problem:` in the launch block", 0, "");
  if (!plan.problem.empty() && !opt.problem.empty() && find_problem_dir(problems_dir(), plan.problem) != out.problem.dir)
    return finish("format_error", "the launch block names problem " + plan.problem + " but --problem is " + opt.problem,
                  plan.line, "");
  try {
    check_plan(plan, out.problem, num_sms);
  } catch (const LaunchConfigError& e) {
    return finish("launch_error", e.what(), e.line, "");
  } catch (const FormatError& e) {
    return finish("format_error", e.what(), e.line, "");
  }
  out.plan = plan;

  out.compiled = compile_kernel(src, file, arch, plan.kernel_names(), cfg);
  const CompileResult& c = out.compiled;
  r["compile"] = {{"ms", c.ms}, {"arch", arch}, {"cached", c.cached}, {"nvrtc", c.nvrtc_version}};
  if (!c.ok()) {
    std::string msg = c.status == CompileResult::Timeout ? c.error : "NVRTC: " + c.error;
    return finish("compile_error", msg, 0, c.log);
  }
  if (!c.log.empty()) r["compile"]["log"] = c.log;  // warnings
  r["status"] = "compiled";
  out.cpu_ms = ms_since(t0);
  if (opt.compile_only) out.done = true;
  return out;
}

json eval_request(const Prepared& p, const GradeOptions& opt, const Config& cfg, const std::optional<json>& baseline) {
  std::optional<Vars> sizes;
  if (opt.sizes) {
    Vars v = p.problem.bench;
    for (const auto& [k, val] : *opt.sizes) v[k] = val;
    sizes = v;
  }
  json req = {{"cmd", "eval"},
              {"problem_dir", p.problem.dir.string()},
              {"cubin", p.compiled.cubin_path},
              {"lowered", p.compiled.lowered},
              {"plan", p.plan.to_json()},
              {"sizes", sizes ? json(*sizes) : json(nullptr)},
              {"seed", opt.seed},
              {"config", cfg.to_json()},
              {"time", true},
              {"baseline", baseline ? *baseline : json(nullptr)}};
  return req;
}

void complete_record(Prepared& p, const json* answer, const json& device, const json& versions,
                     const RewardPreset& preset, const json& ceilings, const std::string& not_run_reason) {
  json& r = p.record;
  json v = versions.is_object() ? versions : json::object();
  v["kernrl"] = KERNRL_VERSION;
  if (p.compiled.nvrtc_version.size()) v["nvrtc"] = p.compiled.nvrtc_version;
  r["versions"] = v;
  r["device"] = device.is_object() ? device : json(nullptr);
  if (answer) {
    r["ran"] = true;
    r["status"] = answer->value("status", "runtime_error");
    r["error"] = answer->contains("error") ? (*answer)["error"] : json(nullptr);
    if (answer->contains("correctness")) r["correctness"] = (*answer)["correctness"];
    if (answer->contains("timing")) r["timing"] = (*answer)["timing"];
  } else if (r["status"] == "compiled" || !r["error"].is_object()) {
    r["not_run_reason"] = not_run_reason;
  } else {
    r["not_run_reason"] = "stopped at " + r["status"].get<std::string>();
  }
  if (!p.problem.id.empty()) {
    Vars at = p.problem.bench;
    if (r.contains("timing") && r["timing"].is_object() && r["timing"].contains("sizes"))
      for (auto& [k, val] : r["timing"]["sizes"].items()) at[k] = val.get<int64_t>();
    r["work"] = {{"flops", p.problem.flops_at(at)}, {"bytes", p.problem.bytes_at(at)}, {"dtype_class", dtype_class(p.problem)}};
  }
  r["reward_preset"] = preset.name;
  finalize_record(r, preset, ceilings);
}

}  // namespace kernrl
