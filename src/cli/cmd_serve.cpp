// kernrl serve: a long-lived grading service for RL loops. OpenEnv's protocol (WebSocket sessions
// at /ws, /reset, /step, ...) and kernrl's own API (/v1/...), or JSON lines with --stdio; one warm
// GPU worker per GPU behind one shared queue (docs/serve.md).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "cli/commands.h"
#include "compile/compiler.h"
#include "core/config.h"
#include "core/hash.h"
#include "core/paths.h"
#include "core/suite_paths.h"
#include "grading/prepare.h"
#include "grading/session.h"
#include "import/kernelbench_import.h"
#include "record/reward.h"
#include "serve/grader.h"
#include "serve/http_server.h"
#include "serve/service.h"
#include "serve/stdio.h"

namespace kernrl {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_token(const std::string& file) {
  std::string token;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw UsageError("--token-file " + file + ": cannot read it");
    std::getline(in, token);
  } else if (const char* env = std::getenv("KERNRL_SERVE_TOKEN"); env) {
    token = env;
  } else {
    return "";
  }
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty())
    throw UsageError(file.empty() ? "KERNRL_SERVE_TOKEN is set but empty"
                                  : "--token-file " + file + ": the file is empty");
  for (char c : token)
    if (c <= ' ' || c == 0x7f)
      throw UsageError("the bearer token must be printable, without blanks");
  return token;
}

}  // namespace

CommandRun add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "serve",
      "Grade answers as a service: OpenEnv's protocol (/ws, /reset, /step) and kernrl's "
      "API (/v1), or JSON lines (--stdio).");
  cmd->footer(
      "Binds to 127.0.0.1 unless --host says otherwise. Every graded answer is appended to "
      "--trace.\n"
      "SIGTERM or SIGINT: answers not yet started are answered with an error, running ones "
      "finish and are\n"
      "answered, then every connection is closed and kernrl exits 0. Endpoints and messages: "
      "docs/serve.md.");
  struct Opts {
    std::string host = "127.0.0.1", gpus, trace, config, reward, baselines, seed, run = "serve",
                token_file;
    int port = 8000, max_sessions = 64, max_queue = 256, max_turns = 10, threads = 2, jobs = 0,
        max_connections = 512, examples = 0;
    std::vector<std::string> corpus, suites;
    double step_timeout = 50, cache_mb = 128, max_body_mb = 8;
    bool compile_only = false, stdio = false, unauthenticated = false;
    std::vector<std::string> allow_origins, allow_hosts;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--host", o->host, "Address to listen on (default 127.0.0.1: this machine only)");
  cmd->add_option("--port", o->port, "Port (default 8000; 0: any free port, printed at start)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--suites", o->suites,
                  "Suites offered beside the problems (names under the suites folder or "
                  "folders, comma-separated): clients name one in reset's and the /v1 "
                  "requests' `suite`")
      ->delimiter(',');
  cmd->add_flag("--stdio", o->stdio,
                "No network: grade requests read as JSON lines on stdin, answers written as JSON "
                "lines on stdout");
  cmd->add_option("--gpus", o->gpus, "GPU indices to use, e.g. 0,1 (default: all visible)");
  cmd->add_flag("--compile-only", o->compile_only, "Extract, parse and compile only; nothing runs");
  cmd->add_option("--jobs,-j", o->jobs, "Parallel compiles (default: number of cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--trace", o->trace, "Append every graded answer's record to this JSONL file");
  cmd->add_option("--run", o->run, "Run name written into every record (default serve)");
  cmd->add_option("--seed", o->seed,
                  "Run seed, 0 to 2^64-1, from which each answer's seed is derived (default: "
                  "fresh, recorded as run_seed)");
  cmd->add_option("--max-sessions", o->max_sessions,
                  "WebSocket sessions at once; more are refused with CAPACITY_REACHED (default 64)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--max-queue", o->max_queue,
                  "Answers admitted and not yet graded, over all sessions and requests; more are "
                  "refused with CAPACITY_REACHED (default 256)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option(
         "--step-timeout", o->step_timeout,
         "Seconds from an answer's arrival to its record (default 50, below OpenEnv's 60 s "
         "client timeout); a kernel's GPU run gets at most half of it")
      ->check(CLI::Range(1.0, 86400.0));
  cmd->add_option("--max-turns", o->max_turns, "Turns of an OpenEnv episode (default 10)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--examples", o->examples,
                  "Put the K verified kernels of the most similar problems before every task "
                  "prompt (docs/training.md)")
      ->type_name("K")
      ->check(CLI::Range(0, 16));
  cmd->add_option("--corpus", o->corpus,
                  "Trace files or folders whose correct records (source unchanged) join the "
                  "bundled solutions as examples")
      ->type_name("TRACE.jsonl|DIR");
  cmd->add_option("--cache-mb", o->cache_mb,
                  "Result cache size in MiB, keyed by the answer's hash, problem and config "
                  "(default 128; 0: no cache)")
      ->check(CLI::Range(0.0, 1048576.0));
  cmd->add_option("--max-body-mb", o->max_body_mb,
                  "Largest HTTP body, WebSocket message or --stdio line in MiB (default 8)")
      ->check(CLI::Range(0.001, 1024.0));
  cmd->add_option("--threads", o->threads, "Network threads (default 2)")
      ->check(CLI::Range(1, 256));
  cmd->add_option(
      "--token-file", o->token_file,
      "Require `Authorization: Bearer <token>` on every endpoint but /health, the token "
      "being this file's first line (or $KERNRL_SERVE_TOKEN)");
  cmd->add_flag("--allow-unauthenticated", o->unauthenticated,
                "Serve a non-loopback --host without a token (anyone who can reach the port can "
                "grade and read; a warning is printed)");
  cmd->add_option("--allow-origin", o->allow_origins,
                  "Accept requests and WebSocket sessions from web pages of this origin (e.g. "
                  "https://lab.example:8443; '*': any); others carrying an Origin are refused 403");
  cmd->add_option("--allow-host", o->allow_hosts,
                  "A Host name clients may use besides the bind address (and, on loopback, "
                  "localhost); others are refused 403");
  cmd->add_option("--max-connections", o->max_connections,
                  "Open connections at once; more are answered 503 and closed (default 512)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--config", o->config, "Config file over configs/default.yaml");
  cmd->add_option("--baselines", o->baselines,
                  "Baseline file (default: baselines/<gpu>.json if present)");
  cmd->add_option("--reward", o->reward, "Reward preset (default from the config)");
  return [o]() {
    try {
      // SIGTERM and SIGINT are caught from here to the very end: one arriving while the GPU
      // workers start stops the service as soon as it is up.
      serve::ShutdownSignal signal;
      Config cfg = load_config(o->config);
      if (!o->reward.empty()) cfg.reward_preset = o->reward;
      require_sandbox(cfg);  // fail closed, before anything is graded
      RewardPreset preset = load_reward_preset(cfg.reward_preset);
      // A kernel's run must fit in a step: it gets at most half the step deadline.
      cfg.run_timeout_s = std::min(cfg.run_timeout_s, o->step_timeout / 2);
      std::string token = read_token(o->token_file);
      if (!o->stdio && token.empty() && !serve::is_loopback_host(o->host)) {
        if (!o->unauthenticated)
          throw UsageError("--host " + o->host +
                           " is reachable from other machines: give --token-file (or "
                           "KERNRL_SERVE_TOKEN), or --allow-unauthenticated to serve it without");
        std::fprintf(stderr,
                     "kernrl serve: WARNING: serving %s without a token: anyone who can reach "
                     "this port can grade answers and read the problems\n",
                     o->host.c_str());
      }
      uint64_t run_seed = o->seed.empty() ? fresh_seed() : parse_seed(o->seed);

      std::vector<std::string> warnings;
      auto problems = std::make_shared<serve::ProblemCatalog>(problems_dir().string(), &warnings);
      for (const auto& w : warnings) std::fprintf(stderr, "kernrl serve: %s\n", w.c_str());
      if (problems->all().empty())
        throw UsageError("no problems found in " + problems_dir().string());

      serve::GraderOptions go;
      go.compile_only = o->compile_only;
      go.compile_jobs = o->jobs;
      go.baselines = o->baselines;
      go.converters = {kernelbench_converter()};  // KernelBench modules (.py) are graded too
      if (!o->gpus.empty()) go.gpus = parse_gpu_list(o->gpus);
      if (!o->compile_only) std::fprintf(stderr, "kernrl serve: starting the GPU workers\n");
      std::shared_ptr<serve::Grader> grader = serve::make_grader(cfg, go);

      serve::ServiceOptions so;
      so.max_sessions = static_cast<size_t>(o->max_sessions);
      so.max_queue = static_cast<size_t>(o->max_queue);
      so.step_timeout_s = o->step_timeout;
      so.max_turns = o->max_turns;
      so.cache_bytes = static_cast<size_t>(o->cache_mb * 1024 * 1024);
      so.trace = o->trace;
      so.run = o->run;
      so.run_seed = run_seed;
      so.reward_preset = preset.name;
      so.examples = o->examples;
      so.corpus = o->corpus;
      if (!o->corpus.empty() && o->examples == 0) throw UsageError("--corpus needs --examples K");
      json digest = {{"config", cfg.to_json()},
                     {"reward", preset.name},
                     {"kind", preset.kind},
                     {"params", preset.params},
                     {"compile_only", grader->compile_only()},
                     // The verdict depends on the grader too: its version, the GPUs it runs on
                     // and the baselines it compares with.
                     {"kernrl_version", KERNRL_VERSION},
                     {"gpus", grader->gpu_info()},
                     {"baselines", o->baselines}};
      so.config_digest = sha256_hex(digest.dump());
      auto svc = std::make_unique<serve::Service>(so, grader, problems);  // UsageError: --trace
      for (const auto& name : o->suites) {
        fs::path dir = find_suite(name);
        if (dir.empty())
          throw UsageError("--suites: no suite '" + name + "': neither it nor " +
                           (suites_dir() / name).string() + " holds a problems/ folder");
        std::vector<std::string> suite_warnings;
        auto cat =
            std::make_shared<serve::ProblemCatalog>((dir / "problems").string(), &suite_warnings);
        for (const auto& w : suite_warnings)
          std::fprintf(stderr, "kernrl serve: suite %s: %s\n", name.c_str(), w.c_str());
        // A folder is named by its own name; a suite of the suites folder by the name given.
        std::string shown = fs::is_directory(fs::path(name) / "problems")
                                ? fs::path(name).lexically_normal().filename().string()
                                : name;
        if (shown.empty()) shown = dir.filename().string();
        if (svc->problems(shown)) throw UsageError("--suites: '" + shown + "' is given twice");
        std::fprintf(stderr, "kernrl serve: suite %s: %zu problems (%s)\n", shown.c_str(),
                     cat->all().size(), dir.string().c_str());
        svc->add_suite({shown, (dir / "problems").string(), cat});
      }
      if (o->examples > 0) {
        std::vector<std::string> corpus_warnings;
        svc->prompts().load(&corpus_warnings);
        for (const auto& w : corpus_warnings)
          std::fprintf(stderr, "kernrl serve: --corpus: %s\n", w.c_str());
      }
      size_t max_body = static_cast<size_t>(o->max_body_mb * 1024 * 1024);
      std::string mode = grader->gpu_info();

      if (o->stdio) {
        std::fprintf(stderr, "kernrl serve: reading requests on stdin; %s\n", mode.c_str());
        int sig = serve::run_stdio(*svc, signal, 0, stdout, max_body);
        if (sig) std::fprintf(stderr, "kernrl serve: stopped (signal %d)\n", sig);
        return kExitOk;
      }
      serve::ServerOptions net;
      net.host = o->host;
      net.port = static_cast<uint16_t>(o->port);
      net.token = token;
      net.max_body_bytes = max_body;
      net.threads = o->threads;
      net.max_connections = static_cast<size_t>(o->max_connections);
      net.allow_origins = o->allow_origins;
      net.allow_hosts = o->allow_hosts;
      serve::Server server(*svc, net);
      try {
        server.start();
      } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
      }
      std::fprintf(stderr,
                   "kernrl serve: listening on http://%s:%u (WebSocket sessions at /ws); %s; up to "
                   "%d sessions, %d answers in flight, %.0f s per step%s\n",
                   o->host.c_str(), server.port(), mode.c_str(), o->max_sessions, o->max_queue,
                   o->step_timeout, token.empty() ? "" : "; bearer token required");
      int sig = signal.wait();
      std::fprintf(stderr, "kernrl serve: signal %d: shutting down\n", sig);
      server.stop_accepting();
      svc->begin_shutdown();
      svc->stop_grader();    // answers not yet started: an error; running ones: their record
      svc->wait_answered();  // every answer handed to its connection
      server.close_connections();
      server.wait_closed(std::chrono::seconds(5));
      server.stop();
      std::fprintf(stderr, "kernrl serve: stopped\n");
      return kExitOk;
    } catch (const UsageError& e) {
      std::cerr << "kernrl serve: " << e.what() << "\n";
      return kExitUsage;
    }
  };
}

}  // namespace kernrl
