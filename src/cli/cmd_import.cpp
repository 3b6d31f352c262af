// kernrl import-kernelbench: KernelBench load_inline generations (.py) converted into kernel files
// (src/import/kernelbench_import.h), with a reason for every file that cannot be converted.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "core/paths.h"
#include "core/problem.h"
#include "core/safe_text.h"
#include "extract/extract.h"
#include "import/kernelbench_import.h"
#include "record/trace_file.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool is_python(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ".py";
}

// The problem a generation is for: --problem, else KernelBench's file name, its folder, its stem.
std::string problem_for(const fs::path& file, const std::string& option) {
  if (!option.empty()) return option;
  std::vector<std::string> candidates;
  if (std::string kb = kernelbench_problem_id(file.filename().string()); !kb.empty())
    candidates.push_back(kb);
  candidates.push_back(fs::absolute(file).parent_path().filename().string());
  candidates.push_back(file.stem().string());
  for (const auto& c : candidates) {
    if (c.empty() || c.size() > 255 || c[0] != 'L') continue;
    try {
      return problem_id_of_dir(find_problem_dir(problems_dir(), c));
    } catch (const SpecError&) {
    }
  }
  return "";
}

}  // namespace

CommandRun add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import-kernelbench",
      "Convert KernelBench load_inline generations (.py with class ModelNew) into kernel files.");
  cmd->footer(
      "Each .py (FILE, or every .py under DIR) becomes a kernel file: the CUDA source without\n"
      "torch/extension.h and the host wrapper, and a launch block made from what the wrapper "
      "launches.\n"
      "A file that cannot be converted gets a reason (a PyTorch op left in forward, host logic, a\n"
      "library call, ...). The problem comes from --problem, else KernelBench's file name\n"
      "(level_L_problem_P_sample_S_kernel.py), else the file's folder or name.\n"
      "With --out DIR: converted files are written as DIR/<path>.cu, unconverted ones are copied "
      "as\n"
      "they are (so `kernrl grade-dir DIR` records each with its reason), and "
      "DIR/import-report.jsonl\n"
      "holds one line per file. Without --out, a single FILE's kernel file goes to stdout.\n"
      "Exit: 0 every file converted, 1 some could not be converted (each named with its reason), 2 "
      "usage\n"
      "error (no such path, unknown --problem, unwritable --out).");
  struct Opts {
    std::string path, out, problem;
    bool json = false, quiet = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("PATH", o->path, "A generation (.py) or a directory of them")->required();
  cmd->add_option("--out", o->out,
                  "Directory for the kernel files and import-report.jsonl (created if missing)");
  cmd->add_option("--problem,-p", o->problem, "Problem id for every file (else from each path)");
  cmd->add_flag("--json", o->json, "Print one JSON line per file instead of the summary");
  cmd->add_flag("--quiet,-q", o->quiet, "Only the summary (and errors)");
  return [o]() {
    fs::path root = o->path;
    std::error_code ec;
    if (!fs::exists(root, ec)) {
      std::cerr << "kernrl import-kernelbench: " << escape_invalid_utf8(o->path)
                << ": no such file or folder\n";
      return kExitUsage;
    }
    std::string fixed_problem;
    if (!o->problem.empty()) {
      try {
        fixed_problem = problem_id_of_dir(find_problem_dir(problems_dir(), o->problem));
      } catch (const SpecError& e) {
        std::cerr << "kernrl import-kernelbench: " << e.what() << "\n";
        return kExitUsage;
      }
    }
    bool dir_input = fs::is_directory(root, ec);
    std::vector<fs::path> files;
    if (dir_input) {
      for (auto it = fs::recursive_directory_iterator(
               root, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (!name.empty() && name[0] == '.') {
          if (it->is_directory(ec)) it.disable_recursion_pending();
          continue;
        }
        if (it->is_regular_file(ec) && is_python(it->path())) files.push_back(it->path());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(root);
    }
    std::unique_ptr<TraceWriter> report;
    if (!o->out.empty()) {
      fs::create_directories(o->out, ec);
      if (ec) {
        std::cerr << "kernrl import-kernelbench: --out " << o->out << ": " << ec.message() << "\n";
        return kExitUsage;
      }
      fs::path report_path = fs::path(o->out) / "import-report.jsonl";
      fs::remove(report_path, ec);
      try {
        report = std::make_unique<TraceWriter>(report_path.string());
      } catch (const std::runtime_error& e) {
        std::cerr << "kernrl import-kernelbench: --out: " << e.what() << "\n";
        return kExitUsage;
      }
    }

    size_t converted = 0, failed = 0;
    std::map<std::string, size_t> by_category;
    std::string single_output;
    for (const fs::path& f : files) {
      std::string shown = escape_invalid_utf8(f.string());
      json row = {{"file", shown},         {"problem", nullptr},  {"converted", false},
                  {"out", nullptr},        {"category", nullptr}, {"reason", nullptr},
                  {"notes", json::array()}};
      std::string text;
      std::string problem_id = fixed_problem.empty() ? problem_for(f, "") : fixed_problem;
      KernelBenchImport r;
      try {
        text = read_file(f.string());
      } catch (const std::exception& e) {
        r.category = "unreadable";
        r.reason = e.what();
      }
      if (r.category.empty() && problem_id.empty()) {
        r.category = "unknown_problem";
        r.reason =
            "cannot tell which problem this file is for: give --problem, or name it "
            "level_L_problem_P_sample_S_kernel.py";
      }
      if (r.category.empty()) {
        row["problem"] = problem_id;
        ProblemSpec p = load_problem(find_problem_dir(problems_dir(), problem_id));
        r = import_kernelbench(text, p, f.filename().string());
      }
      fs::path rel = dir_input ? fs::relative(f, root, ec) : f.filename();
      if (r.converted) {
        ++converted;
        row["converted"] = true;
        row["notes"] = r.notes;
        if (!o->out.empty()) {
          fs::path dest = fs::path(o->out) / rel;
          dest.replace_extension(".cu");
          fs::create_directories(dest.parent_path(), ec);
          std::ofstream out(dest, std::ios::binary | std::ios::trunc);
          out << r.kernel_file;
          out.flush();
          if (!out) {
            std::cerr << "kernrl import-kernelbench: cannot write " << dest.string() << "\n";
            return kExitUsage;
          }
          row["out"] = escape_invalid_utf8(dest.string());
        } else if (!dir_input) {
          single_output = r.kernel_file;
        }
      } else {
        ++failed;
        ++by_category[r.category];
        row["category"] = r.category;
        row["reason"] = escape_invalid_utf8(r.reason);
        if (o->quiet || (!dir_input && o->out.empty()))
          std::cerr << "kernrl import-kernelbench: " << shown
                    << ": could not convert: " << escape_invalid_utf8(r.reason) << "\n";
        if (!o->out.empty() && !text.empty()) {
          // The original goes along, so grading DIR records it with its reason.
          fs::path dest = fs::path(o->out) / rel;
          fs::create_directories(dest.parent_path(), ec);
          std::ofstream out(dest, std::ios::binary | std::ios::trunc);
          out << text;
          out.flush();
          if (!out) {
            std::cerr << "kernrl import-kernelbench: cannot write " << dest.string() << "\n";
            return kExitUsage;
          }
          row["out"] = escape_invalid_utf8(dest.string());
        }
      }
      if (report) {
        try {
          report->append(row);
        } catch (const std::runtime_error& e) {
          std::cerr << "kernrl import-kernelbench: " << e.what() << "\n";
          return kExitUsage;
        }
      }
      if (o->json) {
        std::cout << json_line(row) << "\n" << std::flush;
      } else if (!o->quiet && (dir_input || !o->out.empty())) {
        std::cout << (r.converted ? "converted      " : "not converted  ")
                  << (problem_id.empty() ? "-" : problem_id) << "  " << shown;
        if (!r.converted) std::cout << ": " << escape_invalid_utf8(r.reason);
        std::cout << "\n";
      }
    }
    if (!single_output.empty() && !o->json) std::cout << single_output;
    size_t total = converted + failed;
    if (!o->json && (dir_input || !o->out.empty() || failed)) {
      std::fprintf(
          stderr,
          "kernrl import-kernelbench: %zu file(s): %zu converted (%.1f%%), %zu not converted",
          total, converted, total ? 100.0 * converted / total : 0.0, failed);
      for (const auto& [c, n] : by_category)
        std::fprintf(stderr, "%s %s %zu", c == by_category.begin()->first ? ":" : ",", c.c_str(),
                     n);
      std::fprintf(stderr, "\n");
    }
    if (total == 0) {
      std::cerr << "kernrl import-kernelbench: no .py file found under "
                << escape_invalid_utf8(o->path) << "\n";
      return kExitUsage;
    }
    return failed ? kExitFail : kExitOk;
  };
}

}  // namespace kernrl
