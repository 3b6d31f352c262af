// The prompts `kernrl serve` hands out (docs/training.md): the task prompt with retrieved examples
// (--examples K, --corpus) and the next turn's prompt after a graded answer (the OpenEnv step
// observation's `prompt`, POST /v1/prompt).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "record/trace_record.h"
#include "serve/problems.h"

namespace kernrl {
class ExampleCorpus;
}

namespace kernrl::serve {

struct BuiltPrompt {
  std::string text;
  std::string name;  // kernrl.task.v1 or kernrl.next_turn.v1
  int version = 1;
  std::vector<std::string> examples;  // ids of the examples it carries
};

class Prompts {
 public:
  // `examples`: how many examples the task prompts carry by default; `corpus`: trace files or
  // folders whose verified kernels join the bundled solutions; `problems_root`: empty for the
  // installed problems.
  Prompts(int examples, std::vector<std::string> corpus, std::string problems_root);
  ~Prompts();

  int examples() const { return examples_; }
  // Loads the corpus now (it is loaded on first use otherwise); what could not be used goes to
  // *warnings.
  void load(std::vector<std::string>* warnings) const;

  // The task prompt of `p` with `k` examples (k < 0: the default); the problem's own kernels are
  // examples only with `include_own`.
  // The task prompt in `language` ("cuda" or "triton"); examples only in the CUDA prompt.
  BuiltPrompt task(const ProblemInfo& p, int k = -1, bool include_own = false,
                   const std::string& language = "cuda") const;
  // The next turn's prompt after `previous` (its record `rec`, null when not graded) in turn
  // `turn`, with the task prompt task(p, k, include_own). Throws std::invalid_argument for an
  // unknown language.
  BuiltPrompt next_turn(const ProblemInfo& p, const std::string& previous, const TraceRecord* rec,
                        int turn, const std::string& language = "cuda", int k = -1,
                        bool include_own = false) const;

 private:
  const ExampleCorpus& corpus(std::vector<std::string>* warnings) const;

  int examples_;
  std::vector<std::string> corpus_files_;
  std::string root_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<ExampleCorpus> corpus_;
};

}  // namespace kernrl::serve
