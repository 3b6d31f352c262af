// `kernrl show --prompt`'s options for training loops (docs/training.md): the next turn's prompt
// (--previous, --record, --turn, --language) and retrieved examples (--examples, --corpus,
// --include-own).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/problem.h"

namespace kernrl {

struct PromptCliOptions {
  std::string previous, record, language = "cuda";
  std::string style =
      "kernrl";  // --style: kernrl (a kernel file) or kernelbench (a ModelNew module)
  int turn = 0;
  int examples = 0;
  std::vector<std::string> corpus;
  bool include_own = false;
  bool used() const { return !previous.empty() || !record.empty() || examples > 0; }
};

struct PromptText {
  std::string text;
  std::string name;  // kernrl.task.v1 or kernrl.next_turn.v1
  int version = 1;
  std::vector<std::string> examples;  // the ids of the examples it carries
};

void add_prompt_options(CLI::App& cmd, PromptCliOptions& o);

// The prompt the options ask for. Throws UsageError for unreadable files, a record that cannot be
// read, a bad language.
PromptText build_prompt(const ProblemSpec& p, const PromptCliOptions& o);

}  // namespace kernrl
