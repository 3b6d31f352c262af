// The next turn's prompt of a multi-turn episode (docs/prompts.md, "Next-turn prompt"): the
// problem's task prompt, the previous answer (bounded), what became of it (status, key error
// lines, launch facts, the record's feedback) and a fix-oriented instruction. Used by
// `kernrl show --prompt --previous --record`, serve's POST /v1/prompt and the OpenEnv step
// observation's `prompt`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "record/trace_record.h"

namespace kernrl {

// The next-turn prompt's version: bumped whenever its text changes for the same inputs.
constexpr int kNextTurnPromptVersion = 1;
constexpr const char* kNextTurnPromptName = "kernrl.next_turn.v1";

// The languages a prompt can ask for, by name ("cuda").
std::vector<std::string> prompt_languages();

struct NextTurnInput {
  std::string task_prompt;              // the problem's task prompt (examples included, when any)
  std::string previous;                 // the previous answer's text, as the model wrote it
  const TraceRecord* record = nullptr;  // its record; null: not graded (the status is unknown)
  std::string language = "cuda";        // one of prompt_languages()
  size_t previous_bytes = 12000;        // the most of the previous answer quoted (>= 256)
  int turn = 0;                         // the turn the previous answer was (0: not said)
};

// The prompt. Throws std::invalid_argument for a language not in prompt_languages().
std::string next_turn_prompt(const NextTurnInput& in);

// The parts of the prompt about the record, each empty when the record has none: the key error
// lines (compiler errors, the error message, the worker's last output lines) and the launch facts
// (one line per launch).
std::string key_error_lines(const TraceRecord& rec, int max_lines);
std::string launch_facts_text(const TraceRecord& rec);

}  // namespace kernrl
