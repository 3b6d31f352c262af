// kernrl show: a problem's description, sizes, tensors, tolerance, PyTorch code and a kernel
// template; --prompt prints a complete task prompt for a model.
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/prompt_options.h"
#include "contract/contract.h"
#include "contract/examples.h"
#include "contract/kernelbench_prompt.h"
#include "contract/next_turn.h"
#include "contract/prompt.h"
#include "core/paths.h"
#include "core/problem.h"
#include "grading/prepare.h"
#include "record/trace_file.h"

namespace kernrl {
using nlohmann::json;

namespace {

// How the problem's speed is scored (problem.yaml score, throughput), when not the defaults.
std::string scoring_text(const ProblemSpec& p) {
  std::string s;
  if (p.score.baseline == "kernel")
    s += "\nSpeedups are over the problem's reference kernel (solution.cu), not PyTorch.";
  if (!p.score.pooled) s += "\nLeft out of pooled (cross-level) speedup figures.";
  if (p.score.lead == "sol") s += "\nReports lead with the SOL fraction for this problem.";
  if (!p.score.note.empty()) s += " (" + p.score.note + ")";
  if (!p.throughput.unit.empty())
    s += "\nThroughput unit: " + p.throughput.unit + " (" + p.throughput.count + " per run, " +
         std::to_string(eval_expr(p.throughput.count, p.bench)) + " at bench)";
  return s;
}

}  // namespace

CommandRun add_show_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "show",
      "Show a problem: description, sizes, tensors, tolerance, PyTorch code, kernel template.");
  auto id = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto prompt = std::make_shared<bool>(false);
  auto contract = std::make_shared<bool>(false);
  auto headers = std::make_shared<bool>(false);
  cmd->add_option("ID", *id, "Problem id (e.g. L1_23_Softmax, or a unique prefix such as L1_23)");
  cmd->add_flag("--contract", *contract,
                "Print the kernel-file contract as a model's prompt states it (no ID needed)");
  cmd->add_flag("--headers", *headers,
                "Print every header a kernel file may include, as a Markdown table (no ID needed)");
  cmd->add_flag("--json", *as_json,
                "The specification as one JSON object (with the template); with --prompt: "
                "{prompt, prompt_name, prompt_version, examples}");
  cmd->add_flag("--prompt", *prompt,
                "A complete task prompt for a model: problem, kernel-file contract, template");
  auto po = std::make_shared<PromptCliOptions>();
  add_prompt_options(*cmd, *po);
  cmd->add_option("--style", po->style,
                  "With --prompt: kernrl (a kernel file, the default) or kernelbench (a ModelNew "
                  "module with load_inline kernels, as KernelBench asks; with --language triton, "
                  "a ModelNew launching Triton kernels from forward)")
      ->check(CLI::IsMember({"kernrl", "kernelbench"}));
  return [=]() {
    if (*contract || *headers) {
      std::cout << (*contract ? contract_summary() + "\n" + triton_contract_summary()
                              : headers_table_markdown());
      return kExitOk;
    }
    if (id->empty()) throw UsageError("show needs a problem ID (or --contract, --headers)");
    if (po->used() && !*prompt)
      throw UsageError("--previous, --record and --examples need --prompt");
    ProblemSpec p = load_problem(find_problem_dir(problems_dir(), *id));
    if (*as_json && !*prompt) {
      auto j = p.to_json();
      j["template"] = kernel_template(p);
      j["triton_template"] = triton_template(p);
      j["score"] = {{"baseline", p.score.baseline},
                    {"pooled", p.score.pooled},
                    {"lead", p.score.lead},
                    {"note", p.score.note}};
      j["throughput"] = p.throughput.unit.empty()
                            ? json(nullptr)
                            : json{{"unit", p.throughput.unit},
                                   {"count", p.throughput.count},
                                   {"bench_count", eval_expr(p.throughput.count, p.bench)}};
      std::cout << json_line(j) << "\n";
      return kExitOk;
    }
    if (*prompt) {
      PromptText t = build_prompt(p, *po);
      if (*as_json)
        std::cout << json_line({{"prompt", t.text},
                                {"prompt_version", t.version},
                                {"prompt_name", t.name},
                                {"examples", t.examples}})
                  << "\n";
      else
        std::cout << t.text;
      return kExitOk;
    }
    std::cout << p.id << " (level " << p.level << "): " << p.name << "\n\n"
              << p.description << "\nSizes:\n"
              << sizes_text(p) << "\nTensors:\n"
              << tensors_text(p) << "\nDefault tolerance: atol " << p.tolerance.atol << ", rtol "
              << p.tolerance.rtol << ", relative L2 <= " << p.tolerance.rel_l2
              << "\nWork at bench: " << p.flops_at(p.bench) << " flops, " << p.bytes_at(p.bench)
              << " bytes" << scoring_text(p) << "\n\nPyTorch:\n"
              << p.torch << "\nKernel template:\n"
              << (po->language == "triton" ? triton_template(p) : kernel_template(p));
    return kExitOk;
  };
}

}  // namespace kernrl
