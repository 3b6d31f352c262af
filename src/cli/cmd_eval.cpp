// kernrl eval: grade one kernel file (or a model's markdown answer) against its problem.
#include <chrono>
#include <future>
#include <iostream>
#include <random>

#include "cli/commands.h"
#include "cli/grade.h"
#include "record/record.h"
#include "record/safe_text.h"
#include "record/trace_file.h"
#include "run/worker_client.h"
#include "time/baselines.h"

namespace kernrl {
using nlohmann::json;

// NAME=VALUE pairs of --size into size overrides; throws UsageError.
Vars parse_size_overrides(const std::vector<std::string>& items) {
  Vars v;
  for (const auto& s : items) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--size expects NAME=VALUE, got '" + s + "'");
    try {
      size_t used = 0;
      long long val = std::stoll(s.substr(eq + 1), &used);
      if (used != s.size() - eq - 1 || val <= 0) throw std::invalid_argument("");
      v[s.substr(0, eq)] = val;
    } catch (const std::exception&) {
      throw UsageError("--size " + s + ": the value must be a positive integer");
    }
  }
  return v;
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32 | rd()) & 0x7fffffffffffffffULL;
}

CommandRun add_eval_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Grade one kernel file: compile, check on fresh random inputs, time against PyTorch.");
  cmd->footer(
      "FILE is a .cu kernel file or a model's raw answer (.md/.txt: the last fenced code block "
      "holding a /* kernrl\n"
      "launch block is used). The problem comes from --problem, else the launch block's "
      "`problem:`, else the\n"
      "file's folder or name. Without a GPU (or with --compile-only) only extraction, parsing and "
      "compilation\n"
      "run, and the record says \"ran\": false.\n"
      "Exit: 0 correct (or compiled, when nothing ran), 1 graded and not correct, 2 usage or "
      "config error\n"
      "(an unreadable FILE or an unknown --problem still prints a record with --json and appends "
      "it with --trace).");
  struct Opts {
    std::string file, problem, trace, config, baselines, reward;
    int gpu = 0;
    bool json = false, compile_only = false, feedback = false;
    std::vector<std::string> sizes;
    std::string seed;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("FILE", o->file, "Kernel file (.cu) or model answer (.md/.txt)")->required();
  cmd->add_option("--problem,-p", o->problem,
                  "Problem id, e.g. L1_23_Softmax (or a unique prefix like L1_23)");
  cmd->add_option("--gpu", o->gpu, "GPU index to run on (default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o->json,
                "Print exactly one JSON record (schema kernrl.trace.v1) instead of the summary");
  cmd->add_option("--trace", o->trace, "Also append the record to this JSONL file");
  cmd->add_flag("--compile-only", o->compile_only, "Extract, parse and compile only; nothing runs");
  cmd->add_flag("--feedback", o->feedback,
                "Print only the feedback text meant for the model's next turn");
  cmd->add_option("--size", o->sizes,
                  "Override a size, NAME=VALUE (repeatable); these sizes replace all size sets");
  cmd->add_option(
      "--seed", o->seed,
      "Run seed for the random inputs, 0 to 2^64-1 (default: a fresh random seed, recorded)");
  cmd->add_option("--config", o->config, "Config file over configs/default.yaml");
  cmd->add_option(
      "--baselines", o->baselines,
      "Baseline file from `kernrl bench --baselines` (default: baselines/<gpu>.json if present)");
  cmd->add_option("--reward", o->reward,
                  "Reward preset (configs/rewards/NAME.yaml or a path); default from the config");
  return [o]() {
    auto t0 = std::chrono::steady_clock::now();
    Config cfg = load_config(o->config);
    if (!o->reward.empty()) cfg.reward_preset = o->reward;
    require_sandbox(cfg);  // fail closed, before anything is graded
    RewardPreset preset = load_reward_preset(cfg.reward_preset);
    GradeOptions opt;
    opt.problem = o->problem;
    opt.compile_only = o->compile_only;
    try {
      opt.seed = o->seed.empty() ? fresh_seed() : parse_seed(o->seed);
      // Fail before grading when the trace cannot be written.
      std::unique_ptr<TraceWriter> trace;
      if (!o->trace.empty()) {
        try {
          trace = std::make_unique<TraceWriter>(o->trace);
        } catch (const std::runtime_error& e) {
          throw UsageError(std::string("--trace: ") + e.what());
        }
      }
      if (!o->sizes.empty()) opt.sizes = parse_size_overrides(o->sizes);

      // The worker loads libtorch while we extract, parse and compile for the likely arch.
      WorkerClient worker(o->gpu);
      if (!o->compile_only) worker.spawn();
      std::string guess = cfg.arch == "auto" ? cfg.fallback_arch : cfg.arch;
      int64_t guess_sms = 132;
      auto pending = std::async(std::launch::async,
                                [&] { return prepare_file(o->file, opt, cfg, guess, guess_sms); });
      std::string no_gpu;
      bool have_gpu = !o->compile_only && worker.wait_ready(&no_gpu);
      Prepared prep = pending.get();
      if (have_gpu) {
        std::string arch = cfg.arch == "auto" ? worker.device().value("arch", guess) : cfg.arch;
        int64_t sms = worker.device().value("sms", guess_sms);
        if (arch != guess || sms != guess_sms) prep = prepare_file(o->file, opt, cfg, arch, sms);
      }
      if (opt.sizes && !prep.problem.id.empty() && prep.usage_error.empty())
        for (const auto& [k, v] : *opt.sizes)
          if (!prep.problem.bench.count(k))
            throw UsageError("--size " + k + ": " + prep.problem.id + " has no size named " + k);

      json device = have_gpu ? worker.device() : json(nullptr);
      if (device.is_object()) device["gpu_index"] = o->gpu;
      BaselineStore baselines;
      baselines.configure(o->baselines);
      if (have_gpu) baselines.load_for(worker.device(), worker.versions());
      if (!prep.done && have_gpu) {
        std::optional<json> base;
        if (!opt.sizes) {
          json bench = json::object();
          for (const auto& n : prep.problem.size_names) bench[n] = prep.problem.bench.at(n);
          base = baselines.baseline(prep.problem.id, bench);
        }
        json answer = worker.request(eval_request(prep, opt, cfg, base), cfg.run_timeout_s);
        if (base && answer.contains("timing"))
          answer["timing"]["baseline_source"] = baselines.source();
        complete_record(prep, &answer, device, worker.versions(), preset, baselines.ceilings(), "");
      } else {
        std::string why = o->compile_only ? "--compile-only" : "no GPU: " + no_gpu;
        complete_record(prep, nullptr, device, have_gpu ? worker.versions() : json::object(),
                        preset, baselines.ceilings(), why);
      }
      json& rec = prep.record;
      rec["wall_ms"] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (trace) trace->append(rec);
      if (o->feedback)
        std::cout << rec["feedback"].get<std::string>() << "\n";
      else if (o->json)
        std::cout << json_line(rec) << "\n";
      else
        std::cout << human_summary(rec, use_color());
      if (!prep.usage_error.empty()) {
        // The record says what happened; the exit code says it was kernrl's input, not the kernel.
        std::cerr << "kernrl eval: " << escape_invalid_utf8(prep.usage_error) << "\n";
        return kExitUsage;
      }
      return exit_code_for(rec["status"]);
    } catch (const UsageError& e) {
      std::cerr << "kernrl eval: " << e.what() << "\n";
      return kExitUsage;
    }
  };
}

}  // namespace kernrl
