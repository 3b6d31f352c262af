// kernrl export: trace records joined with the graded sources as JSONL rows for training data
// (src/report/training_export.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "contract/prompt.h"
#include "core/paths.h"
#include "core/problem.h"
#include "core/safe_text.h"
#include "extract/extract.h"
#include "record/trace_file.h"
#include "report/kernelbench.h"
#include "report/training_export.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

CommandRun add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export",
      "Join trace records with the graded sources: one JSONL row per sample for training.");
  cmd->footer(
      "Each row: {schema, run, sample, problem, level, file, source_sha256, prompt (as `kernrl "
      "show\n"
      "ID --prompt` prints it), answer (the graded file's text), answer_missing, status, speedup,\n"
      "reward, reward_preset, feedback, trajectory, turn, return (a trajectory turn's discounted\n"
      "return, --gamma)}. Regrades of a resumed run count once (the last); records\n"
      "with no problem are left out. A file that is gone, unreadable or changed since it was "
      "graded\n"
      "(SHA-256) gets answer null and the reason in answer_missing; the summary on stderr counts\n"
      "them. Exit: 0 written, 2 usage error (no readable trace, unknown --run, --out not "
      "writable).");
  struct Opts {
    std::vector<std::string> inputs;
    std::string out, run, root;
    double gamma = 0.4;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("traces", o->inputs, "TRACE.jsonl files or directories (every *.jsonl inside)")
      ->required()
      ->type_name("TRACE.jsonl|DIR");
  cmd->add_option("--out", o->out,
                  "The JSONL file to write (replaced; its folder is created; - for stdout)")
      ->required();
  cmd->add_option("--run", o->run, "Only this run's records");
  cmd->add_option("--root", o->root,
                  "Folder that relative `file` paths of the records are read from (default: the "
                  "current folder)");
  cmd->add_option(
         "--gamma", o->gamma,
         "Discount of a trajectory's returns R_t = s_t + gamma s_{t+1} + ... (default 0.4)")
      ->check(CLI::Range(0.0, 1.0));
  return [o]() {
    std::vector<TraceRecord> records;
    if (!read_trace_inputs(o->inputs, &records, std::cerr)) {
      std::cerr << "kernrl export: no readable trace file among the inputs\n";
      return kExitUsage;
    }
    if (!o->run.empty()) {
      std::vector<TraceRecord> mine;
      std::set<std::string> runs;
      for (auto& r : records) {
        std::string run = r.run_or("(none)");
        runs.insert(run);
        if (run == o->run) mine.push_back(std::move(r));
      }
      if (mine.empty()) {
        std::string present;
        for (const auto& r : runs) present += (present.empty() ? "" : ", ") + r;
        std::cerr << "kernrl export: no records of run '" << o->run
                  << "' (runs present: " << (present.empty() ? "none" : present) << ")\n";
        return kExitUsage;
      }
      records = std::move(mine);
    }
    PromptSource prompt_of = [](const std::string& id) -> std::optional<std::string> {
      try {
        return task_prompt(load_problem(find_problem_dir(problems_dir(), id)));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    };
    fs::path root = o->root;
    FileSource read = [&root](const std::string& path,
                              std::string* error) -> std::optional<std::string> {
      fs::path p = path;
      if (p.is_relative() && !root.empty()) p = root / p;
      std::error_code ec;
      if (!fs::exists(p, ec)) {
        *error = "file not found: " + escape_invalid_utf8(p.string());
        return std::nullopt;
      }
      try {
        return read_file(p.string());
      } catch (const std::exception& e) {
        *error = "unreadable: " + escape_invalid_utf8(e.what());
        return std::nullopt;
      }
    };
    ExportSummary summary;
    std::vector<json> rows = export_rows(records, prompt_of, read, &summary, o->gamma);

    if (o->out != "-" && !fs::path(o->out).parent_path().empty()) {
      std::error_code ec;
      fs::create_directories(fs::path(o->out).parent_path(), ec);
      if (ec) {
        std::cerr << "kernrl export: --out " << escape_invalid_utf8(o->out)
                  << ": cannot create its folder: " << ec.message() << "\n";
        return kExitUsage;
      }
    }
    // Each row is one write of one line, so a reader never sees half a row.
    int fd = o->out == "-" ? ::dup(1)
                           : ::open(o->out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::cerr << "kernrl export: --out " << escape_invalid_utf8(o->out) << ": "
                << std::strerror(errno) << "\n";
      return kExitUsage;
    }
    for (const json& row : rows) {
      std::string line = json_line(row) + "\n";
      const char* p = line.data();
      size_t n = line.size();
      while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
          std::cerr << "kernrl export: --out " << escape_invalid_utf8(o->out)
                    << ": cannot write: " << std::strerror(errno) << "\n";
          ::close(fd);
          return kExitUsage;
        }
        p += w;
        n -= static_cast<size_t>(w);
      }
    }
    if (::close(fd) != 0) {
      std::cerr << "kernrl export: --out " << escape_invalid_utf8(o->out) << ": "
                << std::strerror(errno) << "\n";
      return kExitUsage;
    }
    std::cerr << "kernrl export: " << summary.rows << " row(s), " << summary.with_answer
              << " with the answer";
    if (summary.rows > summary.with_answer)
      std::cerr << "; " << summary.rows - summary.with_answer << " without:";
    bool first = true;
    for (const auto& [why, n] : summary.missing) {
      std::cerr << (first ? " " : "; ") << n << " " << why;
      first = false;
    }
    std::cerr << "\n";
    if (summary.unattributed)
      std::cerr << "kernrl export: " << summary.unattributed
                << " record(s) name no problem (no prompt): left out\n";
    if (summary.duplicates)
      std::cerr << "kernrl export: " << summary.duplicates
                << " regrade(s) of a resumed run counted once\n";
    return kExitOk;
  };
}

}  // namespace kernrl
