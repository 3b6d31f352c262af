// kernrl bench: measure this GPU's ceilings (--device) and time every selected problem's reference
// at its bench size into a baseline file (--baselines) that eval and grade-dir reuse.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "cli/commands.h"
#include "core/config.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/paths.h"
#include "core/problem.h"
#include "core/suite_paths.h"
#include "extract/extract.h"
#include "grading/baselines.h"
#include "grading/session.h"
#include "grading/worker_client.h"
#include "record/record.h"
#include "record/trace_file.h"

namespace kernrl {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Throws UsageError when `out` cannot be written: said before minutes of measuring, not after.
void require_writable(const std::string& out) {
  fs::path parent = fs::path(out).parent_path();
  std::error_code ec;
  fs::path dir = parent.empty() ? fs::path(".") : parent;
  while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();  // created when written
  if (dir.empty()) dir = ".";
  if (fs::is_directory(out, ec)) throw UsageError("--out " + out + ": it is a folder");
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError("--out " + out + ": cannot write into " + dir.string() + ": " +
                     std::strerror(errno));
}

// Writes the document whole; when it cannot, says why, and the document is on standard output
// (printed here unless `printed`), so that the measurements are not lost.
int write_document(const std::string& out, const json& doc, int indent, bool printed) {
  if (std::string err = write_whole_file(out, doc.dump(indent) + "\n"); !err.empty()) {
    std::fprintf(stderr, "kernrl bench: cannot write %s: %s; the document is on standard output\n",
                 out.c_str(), err.c_str());
    if (!printed) std::cout << doc.dump(indent) << "\n";
    return kExitFail;
  }
  std::fprintf(stderr, "kernrl bench: wrote %s\n", out.c_str());
  return kExitOk;
}

}  // namespace

CommandRun add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench", "Measure device ceilings (--device) or write a baseline file (--baselines).");
  cmd->footer(
      "--device: memory bandwidth (device-to-device copy, bytes read + written), cuBLAS matrix "
      "throughput\n"
      "(fp32, tf32, fp16, bf16, and fp8 through cuBLASLt where the GPU has it) and launch latency, "
      "written\n"
      "as JSON keyed by GPU name and driver.\n"
      "--baselines: the device ceilings plus every selected problem's PyTorch reference timed at "
      "its bench\n"
      "size with the grading protocol, and its reference kernel (solution.cu) graded and timed as "
      "a\n"
      "submission is (the second baseline, docs/grading.md; --torch-only leaves it out); eval and "
      "grade-dir\n"
      "reuse them when GPU name and versions match.");
  struct Opts {
    bool device = false, baselines = false, torch_only = false;
    std::string out, problem, config;
    int level = 0, gpu = 0, repeats = 3;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_flag("--device", o->device, "Measure the GPU's ceilings");
  cmd->add_flag("--baselines", o->baselines, "Time the references into a baseline file");
  cmd->add_option(
      "--out", o->out,
      "Output file (default: kernrl-device-<gpu>-<driver>.json, or baselines/<gpu>.json)");
  cmd->add_flag("--torch-only", o->torch_only,
                "--baselines: time only the PyTorch references, not the reference kernels");
  cmd->add_option("--level", o->level, "Baselines for this level only")->check(CLI::Range(1, 10));
  cmd->add_option("--problem", o->problem, "Baseline for this problem only");
  cmd->add_option("--gpu", o->gpu, "GPU index (default 0)");
  cmd->add_option("--repeats", o->repeats,
                  "Device measurements to take; the best is the ceiling (default 3)");
  cmd->add_option("--config", o->config, "Config file (timing settings)");
  return [o]() {
    if (o->device == o->baselines) {
      std::cerr << "kernrl bench: give exactly one of --device or --baselines\n";
      return kExitUsage;
    }
    Config cfg = load_config(o->config);
    if (!o->out.empty()) require_writable(o->out);
    auto worker_owner = std::make_unique<WorkerClient>(o->gpu);
    WorkerClient& worker = *worker_owner;
    worker.spawn();
    std::string err;
    if (!worker.wait_ready(&err)) throw UsageError(err);  // no usable GPU: a set-up error
    json dev = worker.device().to_json();
    std::string slug = gpu_slug(dev.value("name", "gpu"));
    std::fprintf(stderr, "kernrl bench: %s (driver %s)\n", dev.value("name", "?").c_str(),
                 worker.versions_json().value("driver", "?").c_str());
    BenchDeviceRequest dreq;
    dreq.repeats = o->repeats;
    BenchAnswer dans = worker.bench(dreq.to_json(), 600);
    if (!dans.succeeded()) {
      std::cerr << "kernrl bench: device measurement failed: " << dans.error.value_or("") << "\n";
      return kExitFail;
    }
    const json ceil = dans.result.value_or(json(nullptr));
    json doc = {{"device", dev},
                {"versions", worker.versions_json()},
                {"date", now_iso8601()},
                {"ceilings", ceil["ceilings"]}};
    if (o->device) {
      doc["schema"] = "kernrl.device.v1";
      doc["repeats"] = ceil["repeats"];
      std::string out = o->out.empty() ? "kernrl-device-" + slug + "-" +
                                             worker.versions_json().value("driver", "") + ".json"
                                       : o->out;
      std::cout << doc.dump(2) << "\n";
      return write_document(out, doc, 2, /*printed=*/true);
    }
    doc["schema"] = kBaselineSchema;
    doc["config"] = {{"warmup", cfg.warmup},           {"min_samples", cfg.min_samples},
                     {"max_samples", cfg.max_samples}, {"target_rel_stderr", cfg.target_rel_stderr},
                     {"time_cap_s", cfg.time_cap_s},   {"input_sets", cfg.input_sets},
                     {"flush_l2", cfg.flush_l2}};
    doc["problems"] = json::object();
    std::string only =
        o->problem.empty() ? "" : problem_id_of_dir(find_problem_dir(problems_dir(), o->problem));
    std::vector<ProblemSpec> selected;
    for (const auto& dir : problem_dirs(problems_dir())) {
      ProblemSpec p = load_problem(dir);
      if ((o->level && p.level != o->level) || (!only.empty() && p.id != only)) continue;
      selected.push_back(p);
      BenchReferenceRequest rreq;
      rreq.problem_dir = dir.string();
      rreq.cfg = cfg;
      BenchAnswer ans = worker.bench(rreq.to_json(), cfg.run_timeout_s);
      if (!ans.succeeded()) {
        std::fprintf(stderr, "  %-48s FAILED: %s\n", p.id.c_str(), ans.error.value_or("").c_str());
        continue;
      }
      const json r = ans.result.value_or(json(nullptr));
      json bench = json::object();
      for (const auto& n : p.size_names) bench[n] = p.bench.at(n);
      double ms = r["baseline"].value("median_ms", 0.0);
      doc["problems"][p.id] = {{"sizes", bench}, {"baseline", r["baseline"]}};
      try {  // which reference was timed: a changed reference.cpp is timed afresh
        doc["problems"][p.id]["reference_sha256"] =
            sha256_hex(read_file((p.dir / "reference.cpp").string()));
      } catch (const std::exception&) {
      }
      std::fprintf(stderr, "  %-48s %10.4f ms\n", p.id.c_str(), ms);
    }
    std::string out_label = o->out.empty() ? (baselines_dir() / (slug + ".json")).string() : o->out;
    if (!o->torch_only) {
      // The second baseline: each problem's solution.cu graded and timed exactly as a submission,
      // in a grading session that reuses the PyTorch timings just taken.
      worker_owner.reset();
      std::fprintf(stderr, "kernrl bench: reference kernels (solution.cu)\n");
      SessionOptions so;
      so.cfg = cfg;
      so.cfg.kernel_baseline = "never";
      so.gpus = {o->gpu};
      so.baselines_doc = doc;
      so.baselines_label = out_label;
      GradingSession session(so);
      if (session.wait_ready() == 0) throw UsageError(session.no_gpu_reason());
      for (const ProblemSpec& p : selected) {
        if (!doc["problems"].contains(p.id)) continue;  // its reference failed: no entry to add to
        Submission sub;
        sub.file = (p.dir / "solution.cu").string();
        sub.opt.problem = p.id;
        sub.opt.seed = 1;
        Outcome res = session.grade(sub);
        const TraceRecord* r = res.kind == Outcome::Graded ? &res.record : nullptr;
        if (r && r->status_is(Status::Correct) && r->timing && r->timing->kernel) {
          doc["problems"][p.id]["kernel_baseline"] = {{"timing", r->timing->kernel.to_json()},
                                                      {"source_sha256", r->source_sha256.to_json()},
                                                      {"file", "solution.cu"}};
          std::fprintf(stderr, "  %-48s %10.4f ms\n", p.id.c_str(),
                       r->timing->kernel->median_ms.value_or(0.0));
        } else {
          std::string why = res.kind == Outcome::Failed ? res.error
                            : r ? (r->status_text().empty() ? "?" : r->status_text())
                                : std::string("not graded");
          std::fprintf(stderr, "  %-48s FAILED: %s\n", p.id.c_str(), why.c_str());
        }
      }
    }
    return write_document(out_label, doc, 1, /*printed=*/false);
  };
}

}  // namespace kernrl
