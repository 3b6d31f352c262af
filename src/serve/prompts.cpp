#include "serve/prompts.h"

#include "contract/examples.h"
#include "contract/next_turn.h"
#include "contract/prompt.h"
#include "core/paths.h"

namespace kernrl::serve {
namespace fs = std::filesystem;

Prompts::Prompts(int examples, std::vector<std::string> corpus, std::string problems_root)
    : examples_(examples), corpus_files_(std::move(corpus)), root_(std::move(problems_root)) {}

Prompts::~Prompts() = default;

const ExampleCorpus& Prompts::corpus(std::vector<std::string>* warnings) const {
  std::call_once(once_, [&] {
    corpus_ = std::make_unique<ExampleCorpus>(root_.empty() ? problems_dir() : fs::path(root_),
                                              corpus_files_, warnings);
  });
  return *corpus_;
}

void Prompts::load(std::vector<std::string>* warnings) const {
  corpus(warnings);
}

BuiltPrompt Prompts::task(const ProblemInfo& p, int k, bool include_own,
                          const std::string& language) const {
  BuiltPrompt b{p.prompt_for(language), kTaskPromptName, kTaskPromptVersion, {}};
  // Retrieved examples are verified CUDA kernels: only the CUDA task prompt carries them.
  if (language != "cuda") return b;
  if (k < 0) k = examples_;
  if (k == 0) return b;
  auto ex = corpus(nullptr).nearest(p.id, static_cast<size_t>(k), include_own);
  b.text = corpus(nullptr).section(ex) + b.text;
  b.examples = example_ids(ex);
  return b;
}

BuiltPrompt Prompts::next_turn(const ProblemInfo& p, const std::string& previous,
                               const TraceRecord* rec, int turn, const std::string& language, int k,
                               bool include_own) const {
  BuiltPrompt b = task(p, k, include_own, language);
  NextTurnInput in;
  in.task_prompt = b.text;
  in.previous = previous;
  in.record = rec;
  in.turn = turn;
  in.language = language;
  b.text = next_turn_prompt(in);
  b.name = kNextTurnPromptName;
  b.version = kNextTurnPromptVersion;
  return b;
}

}  // namespace kernrl::serve
