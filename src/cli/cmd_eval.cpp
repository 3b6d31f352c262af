// kernrl eval: grade one kernel file (or a model's markdown answer) against its problem.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli/commands.h"
#include "cli/summary.h"
#include "core/safe_text.h"
#include "grading/session.h"
#include "import/kernelbench_import.h"
#include "record/record.h"
#include "record/trace_file.h"
#include "serve/client.h"

namespace kernrl {
using nlohmann::json;

namespace {

struct EvalOpts {
  std::string file, problem, trace, config, baselines, reward, server;
  int gpu = 0;
  bool json = false, compile_only = false, feedback = false, profile = false;
  std::vector<std::string> sizes;
  std::string seed;
};

// The options a running service cannot honour for this call (it grades with its own config,
// baselines and reward on its own GPUs); empty when there are none.
std::string local_only_option(const EvalOpts& o) {
  if (!o.sizes.empty()) return "--size";
  if (o.compile_only) return "--compile-only";
  if (o.profile) return "--profile";
  if (!o.config.empty()) return "--config";
  if (!o.baselines.empty()) return "--baselines";
  if (!o.reward.empty()) return "--reward";
  if (o.gpu != 0) return "--gpu";
  return "";
}

// Prints a record as eval does, appends it to the trace; the exit code.
int print_record(const EvalOpts& o, const TraceRecord& rec, TraceWriter* trace) {
  if (trace) trace->append(rec);
  if (o.feedback)
    std::cout << rec.feedback.value_or("") << "\n";
  else if (o.json)
    std::cout << rec.to_line() << "\n";
  else
    std::cout << human_summary(rec, use_color());
  std::cout.flush();
  return exit_code_for(rec);
}

// Grades through the service at o.server: the exit code, or nullopt when it cannot be reached
// (nothing was sent; eval then grades by itself).
std::optional<int> eval_on_server(const EvalOpts& o, const std::string& source,
                                  TraceWriter* trace) {
  json req = {{"source", source}, {"label", o.file == "-" ? "<stdin>" : o.file}};
  if (!o.problem.empty()) req["problem"] = o.problem;
  if (!o.seed.empty()) req["seed"] = parse_seed(o.seed);
  std::string token;
  if (const char* t = std::getenv("KERNRL_SERVE_TOKEN"); t) token = t;
  std::string unreachable;
  auto reply = serve::post_json(o.server, "/v1/grade",
                                req.dump(-1, ' ', false, json::error_handler_t::replace), token,
                                3600, &unreachable);
  if (!reply) {
    std::cerr << "kernrl eval: " << unreachable << "; grading here\n";
    return std::nullopt;
  }
  json body = json::parse(reply->body, nullptr, false);
  if (reply->status == 200 && body.is_object())
    return print_record(o, TraceRecord::from_json(body), trace);
  std::string code = body.is_object() && body.contains("error") && body["error"].is_object()
                         ? body["error"].value("code", "")
                         : "";
  std::string msg = body.is_object() && body.contains("error") && body["error"].is_object()
                        ? body["error"].value("message", reply->body)
                        : reply->body;
  std::cerr << "kernrl eval: the service at " << o.server << " answered " << reply->status
            << (code.empty() ? "" : " " + code) << ": " << escape_invalid_utf8(msg) << "\n";
  return reply->status >= 400 && reply->status < 500 && reply->status != 401 ? kExitUsage
                                                                             : kExitInternal;
}

}  // namespace

// NAME=VALUE pairs of --size into size overrides; throws UsageError.
static Vars parse_size_overrides(const std::vector<std::string>& items) {
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

namespace {

// eval as it runs without a service: a session of its own. `stdin_text`: the answer, when
// standard input was already read.
int run_local_eval(const EvalOpts& o_ref, const std::optional<std::string>& stdin_text) {
  const EvalOpts* o = &o_ref;
  {
    Config cfg = load_config(o->config);
    if (!o->reward.empty()) cfg.reward_preset = o->reward;
    Submission sub;
    sub.file = o->file;
    if (o->file == "-") {  // the answer on standard input
      sub.file = "<stdin>";
      sub.source =
          stdin_text ? *stdin_text : std::string(std::istreambuf_iterator<char>(std::cin), {});
    }
    sub.opt.problem = o->problem;
    sub.opt.seed = o->seed.empty() ? fresh_seed() : parse_seed(o->seed);
    if (!o->sizes.empty()) sub.opt.sizes = parse_size_overrides(o->sizes);
    // Fail before grading when the trace cannot be written.
    std::unique_ptr<TraceWriter> trace;
    if (!o->trace.empty()) {
      try {
        trace = std::make_unique<TraceWriter>(o->trace);
      } catch (const std::runtime_error& e) {
        throw UsageError(std::string("--trace: ") + e.what());
      }
    }
    SessionOptions so;
    so.cfg = cfg;
    // One kernel: no next kernel for a spare worker to take (workers.spare pays in grade-dir and
    // serve).
    so.cfg.spare_worker = false;
    so.gpus = {o->gpu};
    so.compile_only = o->compile_only;
    so.baselines_path = o->baselines;
    so.compile_jobs = 1;
    so.profile = o->profile;
    so.converters = {kernelbench_converter()};  // KernelBench modules (.py) are graded too
    // The worker starts first, so that its libtorch load overlaps the sandbox check; nothing is
    // graded before the check passes (fail closed).
    GradingSession session(so);
    require_sandbox(cfg);
    Outcome out = session.grade(sub);
    if (out.kind == Outcome::Failed) throw std::runtime_error(out.error);
    if (out.kind != Outcome::Graded) throw std::runtime_error("no record for " + sub.file);
    const TraceRecord& rec = out.record;
    int code = print_record(*o, rec, trace.get());
    if (!out.usage_error.empty()) {
      // The record says what happened; the exit code says it was kernrl's input, not the kernel.
      std::cerr << "kernrl eval: " << escape_invalid_utf8(out.usage_error) << "\n";
      return kExitUsage;
    }
    if (rec.status_is(Status::Compiled) && !o->compile_only) {
      std::cerr << "kernrl eval: compiled, but nothing ran: " << session.no_gpu_reason() << "\n";
      return kExitNothingRan;
    }
    return code;
  }
}

}  // namespace

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
      "Exit: 0 correct (with --compile-only: compiled), 1 graded and not correct, 2 usage or "
      "config error\n"
      "(an unreadable FILE or an unknown --problem still prints a record with --json and appends "
      "it with --trace),\n"
      "3 compiled but nothing ran because no GPU is usable (the record says why), 4 internal "
      "error.");
  auto o = std::make_shared<EvalOpts>();
  cmd->add_option("FILE", o->file,
                  "Kernel file (.cu) or model answer (.md/.txt); - reads it from standard input")
      ->required();
  cmd->add_option("--problem,-p", o->problem,
                  "Problem id, e.g. L1_23_Softmax, or a unique prefix (L1_23) or part of one "
                  "(softmax); case-insensitive");
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
  cmd->add_flag(
      "--profile", o->profile,
      "After grading, profile one more run of the kernel at the bench size with Nsight "
      "Compute (ncu: PATH, $KERNRL_NCU or CUDA's bin) and add a `profile` object to the "
      "record: per launch its duration, DRAM and SM throughput (% of peak), achieved "
      "occupancy and main stall reasons. Slow (seconds); timings are never taken from it");
  cmd->add_option("--reward", o->reward,
                  "Reward preset (configs/rewards/NAME.yaml or a path); default from the config");
  cmd->add_option("--server", o->server,
                  "Grade through the running `kernrl serve` at this URL (http://HOST:PORT; "
                  "default $KERNRL_SERVER): same output and exit code, without starting a GPU "
                  "worker here; graded here when it cannot be reached ($KERNRL_SERVE_TOKEN: its "
                  "bearer token)");
  return [o]() {
    if (o->server.empty())
      if (const char* s = std::getenv("KERNRL_SERVER"); s) o->server = s;
    if (!o->server.empty()) {
      std::string local = local_only_option(*o);
      bool explicit_server =
          std::getenv("KERNRL_SERVER") == nullptr || o->server != std::getenv("KERNRL_SERVER");
      if (!local.empty() && explicit_server)
        throw UsageError("--server grades with the service's own settings; " + local +
                         " is for a local eval only");
      std::string source;
      bool readable = true;
      if (o->file == "-") {
        source = std::string(std::istreambuf_iterator<char>(std::cin), {});
      } else {
        std::ifstream in(o->file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        readable = static_cast<bool>(in);
        source = text.str();
      }
      if (local.empty() && readable) {
        std::unique_ptr<TraceWriter> trace;
        if (!o->trace.empty()) trace = std::make_unique<TraceWriter>(o->trace);
        if (auto code = eval_on_server(*o, source, trace.get())) return *code;
      }
      if (o->file == "-") {  // already read: graded here from what was read
        o->server.clear();
        return run_local_eval(*o, source);
      }
    }
    return run_local_eval(*o, std::nullopt);
  };
}

}  // namespace kernrl
