#include "cli/prompt_options.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "contract/examples.h"
#include "contract/kernelbench_prompt.h"
#include "contract/next_turn.h"
#include "contract/prompt.h"
#include "core/errors.h"
#include "core/hash.h"
#include "core/paths.h"
#include "record/trace_file.h"

namespace kernrl {

namespace {

std::string read_whole(const std::string& option, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(option + " " + path + ": cannot read it");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The previous answer's record: the file's one JSON object, or, in a trace file, the last record
// of the previous answer's bytes (else the last record).
TraceRecord read_record(const std::string& path, const std::string& previous) {
  std::string text = read_whole("--record", path);
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.is_object()) return TraceRecord::from_json(j);
  } catch (const std::exception&) {
    // Not one object: a trace file.
  }
  std::vector<TraceProblem> bad;
  std::vector<TraceRecord> recs = read_trace(path, &bad);
  if (recs.empty())
    throw UsageError("--record " + path + ": no trace record in it" +
                     (bad.empty() ? "" : " (" + bad.front().message + ")"));
  std::string sha = sha256_hex(previous);
  for (auto it = recs.rbegin(); it != recs.rend(); ++it)
    if (it->source_sha256 && *it->source_sha256 == sha) return *it;
  return recs.back();
}

}  // namespace

void add_prompt_options(CLI::App& cmd, PromptCliOptions& o) {
  cmd.add_option("--previous", o.previous,
                 "With --prompt: the next turn's prompt after this answer (a file: the model's "
                 "previous answer)")
      ->type_name("ANSWER");
  cmd.add_option("--record", o.record,
                 "With --previous: that answer's trace record (a file with one record, e.g. eval "
                 "--json's output, or a trace file: its last record of that answer)")
      ->type_name("RECORD");
  cmd.add_option("--turn", o.turn,
                 "With --previous: the turn that answer was (shown in the prompt)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--language", o.language,
                 "The kernel language of --prompt and the template (and, with --previous, of the "
                 "answer): cuda (default) or triton")
      ->check(CLI::IsMember({"cuda", "triton"}))
      ->capture_default_str();
  cmd.add_option("--examples", o.examples,
                 "With --prompt: put the K verified kernels of the most similar problems before "
                 "the task (docs/training.md)")
      ->type_name("K")
      ->check(CLI::Range(0, 16));
  cmd.add_option("--corpus", o.corpus,
                 "With --examples: trace files or folders whose correct records (with their "
                 "source unchanged) join the bundled solutions as examples")
      ->type_name("TRACE.jsonl|DIR");
  cmd.add_flag("--include-own", o.include_own,
               "With --examples: the problem's own kernels may be examples too");
}

PromptText build_prompt(const ProblemSpec& p, const PromptCliOptions& o) {
  if (!o.record.empty() && o.previous.empty()) throw UsageError("--record needs --previous");
  if (!o.corpus.empty() && o.examples == 0) throw UsageError("--corpus needs --examples K");
  if (o.examples > 0 && (o.language != "cuda" || o.style != "kernrl"))
    throw UsageError(
        "--examples retrieves verified CUDA kernel files: it goes with the CUDA task "
        "prompt (--language cuda, --style kernrl)");
  PromptText t;
  t.text = o.style == "kernelbench" ? kernelbench_prompt(p) : task_prompt(p, o.language);
  t.name = kTaskPromptName;
  t.version = kTaskPromptVersion;
  if (o.style == "kernelbench") {
    t.name = kKernelBenchPromptName;
    t.version = kKernelBenchPromptVersion;
  }
  if (o.style == "kernelbench" && o.language == "triton") {
    t.text = kernelbench_triton_prompt(p);
    t.name = kKernelBenchTritonPromptName;
    t.version = kKernelBenchTritonPromptVersion;
  }
  if (o.examples > 0) {
    std::vector<std::string> warnings;
    ExampleCorpus corpus(problems_dir(), o.corpus, &warnings);
    for (const auto& w : warnings) std::cerr << "kernrl show: --corpus: " << w << "\n";
    auto ex = corpus.nearest(p.id, static_cast<size_t>(o.examples), o.include_own);
    t.text = corpus.section(ex) + t.text;
    t.examples = example_ids(ex);
  }
  if (o.previous.empty()) return t;
  NextTurnInput in;
  in.task_prompt = t.text;
  in.previous = read_whole("--previous", o.previous);
  in.language = o.language;
  in.turn = o.turn;
  TraceRecord rec;
  if (!o.record.empty()) {
    rec = read_record(o.record, in.previous);
    in.record = &rec;
  }
  try {
    t.text = next_turn_prompt(in);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--language: ") + e.what());
  }
  t.name = kNextTurnPromptName;
  t.version = kNextTurnPromptVersion;
  return t;
}

}  // namespace kernrl
